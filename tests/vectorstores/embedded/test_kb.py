import json
from pathlib import Path

import numpy as np
import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import (
    IndexStateError,
    InvalidKnowledgeBaseName,
    KnowledgeBaseNotFound,
    ModelMismatchError,
)
from ragchat.types import Chunk, Exclude
from ragchat.vectorstores.base import SearchableKB
from ragchat.vectorstores.embedded.kb import KnowledgeBase


def _doc(doc_id: str, texts: list[str], **meta: object) -> list[Chunk]:
    parent = Chunk(
        f"{doc_id}_s0_P0",
        doc_id,
        " ".join(texts),
        0,
        None,
        True,
        {"source": f"{doc_id}.md", **meta},
    )
    return [parent] + [
        Chunk(
            f"{doc_id}_s0_c{i}",
            doc_id,
            t,
            i,
            parent.chunk_id,
            False,
            {"source": f"{doc_id}.md", **meta},
        )
        for i, t in enumerate(texts)
    ]


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    base = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder())
    base.add_chunks(
        _doc(
            "a",
            [
                "ibuprofen relieves pain",
                "take ibuprofen with food",
                "stomach upset is a side effect",
            ],
            chapter=1,
        )
    )
    base.add_chunks(
        _doc("b", ["toddlers need eleven hours of sleep", "naps shorten with age"], chapter=2)
    )
    return base


def test_satisfies_protocol(kb: KnowledgeBase) -> None:
    assert isinstance(kb, SearchableKB)
    assert kb.child_count() == 5


def test_searches_return_chunk_ids(kb: KnowledgeBase) -> None:
    q = kb.embedder.embed_query("ibuprofen with food")
    assert kb.dense_search(q, 1)[0][0] == "a_s0_c1"
    assert kb.bm25_search("sleep toddlers", 1)[0][0] == "b_s0_c0"
    scores = kb.dense_scores(q, ["a_s0_c1", "missing"])
    assert scores[0] > 0.5 and scores[1] == 0.0


def test_filters_on_metadata_and_doc_id(kb: KnowledgeBase) -> None:
    q = kb.embedder.embed_query("ibuprofen")
    assert {c for c, _ in kb.dense_search(q, 10, {"chapter": 2})} == {"b_s0_c0", "b_s0_c1"}
    assert {c for c, _ in kb.dense_search(q, 10, {"chapter": ["2"]})} == {"b_s0_c0", "b_s0_c1"}
    assert {c for c, _ in kb.bm25_search("ibuprofen", 10, {"doc_id": "b"})} == set()
    assert kb.dense_search(q, 10, {"chapter": 99}) == []


@pytest.mark.parametrize("dense", ["flat", "hnsw"])
def test_excluded_documents_are_never_returned(tmp_path: Path, dense: str) -> None:
    """An exclusion drops every chunk of those documents and still fills k from the rest."""
    base = KnowledgeBase.create(tmp_path, "demo", HashingEmbedder(), dense_backend=dense)
    base.add_chunks(_doc("a", ["ibuprofen relieves pain", "take ibuprofen with food"]))
    base.add_chunks(_doc("b", ["ibuprofen for fever", "ibuprofen and asthma"], chapter=2))
    base.add_chunks(_doc("c", ["toddlers need eleven hours of sleep", "naps shorten"]))
    q = base.embedder.embed_query("ibuprofen")
    hide_a = {"doc_id": Exclude(("a",))}
    for found in (base.dense_search(q, 3, hide_a), base.bm25_search("ibuprofen", 2, hide_a)):
        ids = [c for c, _ in found]
        assert not any(c.startswith("a_") for c in ids) and {"b_s0_c0", "b_s0_c1"} <= set(ids)
    assert len(base.dense_search(q, 4, hide_a)) == 4  # every other child, k filled
    both = {"doc_id": Exclude(("a",)), "chapter": 2}
    assert {c for c, _ in base.dense_search(q, 10, both)} == {"b_s0_c0", "b_s0_c1"}
    hide_b = {"doc_id": Exclude(("b",)), "chapter": 2}
    assert (
        base.dense_search(q, 10, hide_b) == [] and base.bm25_search("ibuprofen", 10, hide_b) == []
    )
    assert len(base.dense_search(q, 10, {"doc_id": Exclude(())})) == 6  # nothing excluded


def test_parents_are_stored_not_searched(kb: KnowledgeBase) -> None:
    q = kb.embedder.embed_query("ibuprofen relieves pain take ibuprofen with food")
    assert all(not cid.endswith("_P0") for cid, _ in kb.dense_search(q, 10))
    (parent,) = kb.get_chunks(["a_s0_P0"])
    assert parent.is_parent and "take ibuprofen" in parent.text


def test_neighbours_stay_in_document(kb: KnowledgeBase) -> None:
    (first,) = kb.get_chunks(["a_s0_c0"])
    nxt = kb.neighbour(first, 1)
    assert nxt is not None and nxt.chunk_id == "a_s0_c1"
    assert kb.neighbour(first, -1) is None
    (last,) = kb.get_chunks(["a_s0_c2"])
    assert kb.neighbour(last, 1) is None


def test_round_trip_keeps_results(kb: KnowledgeBase, tmp_path: Path) -> None:
    q = kb.embedder.embed_query("side effect stomach")
    before = kb.dense_search(q, 3), kb.bm25_search("stomach", 3)
    kb.close()
    again = KnowledgeBase.open(tmp_path, "demo", HashingEmbedder())
    assert (again.dense_search(q, 3), again.bm25_search("stomach", 3)) == before
    assert again.manifest.children == 5 and again.manifest.parents == 2


def test_append_after_reopen_gets_new_labels(kb: KnowledgeBase, tmp_path: Path) -> None:
    kb.close()
    again = KnowledgeBase.open(tmp_path, "demo", HashingEmbedder())
    again.add_chunks(_doc("c", ["amoxicillin is an antibiotic"]))
    assert again.child_count() == 6
    assert again.bm25_search("amoxicillin", 1)[0][0] == "c_s0_c0"
    assert again.bm25_search("ibuprofen food", 1)[0][0] == "a_s0_c1"


def test_delete_document(kb: KnowledgeBase) -> None:
    assert kb.delete_document("a") == 3
    assert kb.child_count() == 2
    assert kb.bm25_search("ibuprofen", 5) == []
    assert kb.get_chunks(["a_s0_c0", "a_s0_P0"]) == []


def test_model_mismatch_is_refused(kb: KnowledgeBase, tmp_path: Path) -> None:
    with pytest.raises(ModelMismatchError, match="fake-hashing"):
        KnowledgeBase.open(tmp_path, "demo", HashingEmbedder(model_name="other"))
    with pytest.raises(ModelMismatchError):
        KnowledgeBase.open(tmp_path, "demo", HashingEmbedder(dim=64), strict_model=False)
    lenient = KnowledgeBase.open(
        tmp_path, "demo", HashingEmbedder(model_name="other"), strict_model=False
    )
    assert lenient.child_count() == 5


def _committed(tmp_path: Path) -> Path:
    kb_dir = tmp_path / "demo"
    return kb_dir / (kb_dir / "CURRENT").read_text().strip()


def test_count_mismatch_is_detected(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _committed(tmp_path) / "manifest.json"
    manifest = json.loads(path.read_text())
    manifest["children"] = 4
    path.unlink()  # committed files are hard links shared with other generations
    path.write_text(json.dumps(manifest))
    with pytest.raises(IndexStateError, match="inconsistent"):
        KnowledgeBase.open(tmp_path, "demo", HashingEmbedder())


def test_dense_file_out_of_step_is_detected(kb: KnowledgeBase, tmp_path: Path) -> None:
    path = _committed(tmp_path) / "dense_vectors.npy"
    vectors = np.load(path)
    path.unlink()
    np.save(path, vectors[:3])
    with pytest.raises(IndexStateError):
        KnowledgeBase.open(tmp_path, "demo", HashingEmbedder())


def test_names_describe_delete(kb: KnowledgeBase, tmp_path: Path) -> None:
    KnowledgeBase.create(tmp_path, "other", HashingEmbedder())
    assert KnowledgeBase.names(tmp_path) == ["demo", "other"]
    info = KnowledgeBase.describe(tmp_path, "demo")
    assert info["children"] == 5 and info["bytes_on_disk"] > 0
    KnowledgeBase.delete(tmp_path, "other")
    assert KnowledgeBase.names(tmp_path) == ["demo"]
    with pytest.raises(KnowledgeBaseNotFound):
        KnowledgeBase.open(tmp_path, "other", HashingEmbedder())
    with pytest.raises(InvalidKnowledgeBaseName, match="invalid knowledge base name"):
        KnowledgeBase.create(tmp_path, "../escape", HashingEmbedder())
    with pytest.raises(InvalidKnowledgeBaseName):  # a malformed name is never "not found"
        KnowledgeBase.open(tmp_path, "no spaces", HashingEmbedder())
    assert not issubclass(InvalidKnowledgeBaseName, KnowledgeBaseNotFound)
