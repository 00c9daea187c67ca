"""``ragchat eval synth`` on the sample ``medical`` knowledge base (real MiniLM embedder,
offline templates): determinism, the filters, and output the retrieval evaluator consumes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from ragchat import resources
from ragchat.embed.base import Embedder
from ragchat.eval.chunk_units import is_chunk_qrels
from ragchat.eval.cli import retriever_factory
from ragchat.eval.configs import NamedConfig
from ragchat.eval.data import load_queries
from ragchat.eval.gold import load_gold
from ragchat.eval.retrieval import run_evaluation
from ragchat.eval.synth import (
    DuplicateFilter,
    SynthQuestion,
    SynthReport,
    candidate_order,
    definition_question,
    synthesize,
    write_synth,
)
from ragchat.ingest.chunking import Chunker
from ragchat.ingestion.ingest import ingest_paths
from ragchat.llm.base import ChatResult, Message
from ragchat.llm.fake import ScriptedChatModel
from ragchat.retrieve.factory import build_retriever
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.embedded.kb import KnowledgeBase

N = 12


class YesNoModel(ScriptedChatModel):
    """Writes the same question for every passage and answers the check with ``verdict``."""

    QUESTION = "What are the side effects of ibuprofen?"

    def __init__(self, verdict: str) -> None:
        super().__init__()
        self.verdict = verdict

    async def generate(self, messages: Sequence[Message], **kw: Any) -> ChatResult:
        asks_check = "Does the passage answer" in messages[-1].content
        return ChatResult(self.verdict if asks_check else f"Question: {self.QUESTION}")


class Medical:
    def __init__(self, settings: Settings, embedder: Embedder, kb: KnowledgeBase) -> None:
        self.settings, self.embedder, self.kb = settings, embedder, kb
        self.chunks = list(kb.catalogue.iter_children())
        self.retriever = build_retriever(settings, kb)

    def retrieve(self, question: str) -> list[str]:
        hits = self.retriever.retrieve(question, top_k=10, filters=None).hits
        return [h.chunk.chunk_id for h in hits]

    def run(self, seed: int = 0, **kw: object) -> tuple[list[SynthQuestion], SynthReport]:
        args = {"n": N, "seed": seed, "embedder": self.embedder, "retrieve": self.retrieve, **kw}
        return asyncio.run(synthesize(self.chunks, **args))  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def medical(tmp_path_factory: pytest.TempPathFactory) -> Medical:
    settings = Settings(data_dir=tmp_path_factory.mktemp("synth"), config_file=None)
    embedder = resources.embedder(settings)
    kb = KnowledgeBase.create(settings.kb_root, "medical", embedder)
    # The Markdown documents only: the PDF adds parsing time and nothing these tests need.
    files = sorted((resources.SAMPLE_KB_DIR / "medical").glob("*.md"))
    ingest_paths(kb, files, Chunker(settings.chunking))
    return Medical(settings, embedder, kb)


def test_same_seed_same_questions_spread_across_documents(medical: Medical) -> None:
    first, report = medical.run(seed=0)
    again, _ = medical.run(seed=0)
    assert first == again and len(first) == N == report.kept
    assert report.methods == {"template": N}
    assert all(q.text.endswith("?") for q in first)
    docs = {c.doc_id for c in medical.chunks}
    assert len({q.doc_id for q in first}) >= min(len(docs), N) - 2  # one document at a time
    order = candidate_order(medical.chunks, 1)
    assert [c.chunk_id for c in order] != [c.chunk_id for c in candidate_order(medical.chunks, 0)]
    assert sorted(c.chunk_id for c in order) == sorted(
        c.chunk_id for c in candidate_order(medical.chunks, 0)
    )


def test_definition_template() -> None:
    assert definition_question("Ibuprofen is a nonsteroidal anti-inflammatory drug.") == (
        "What is Ibuprofen?"
    )
    text = "Migraine is a headache disorder. A migraine can last days."
    assert definition_question("Migraine is a headache disorder.", text) == "What is migraine?"
    assert definition_question("It is a common medicine.") is None
    assert definition_question("Take two tablets daily.") is None


def test_duplicate_filter(medical: Medical) -> None:
    dups = DuplicateFilter(medical.embedder)
    duplicate, vec = dups.is_duplicate("What is ibuprofen?")
    assert not duplicate and vec is not None
    dups.add("What is ibuprofen?", vec)
    assert dups.is_duplicate("what is  Ibuprofen")[0]  # same normalised text
    assert dups.is_duplicate("What is ibuprofen ??")[0]
    assert not dups.is_duplicate("How should amoxicillin be stored?")[0]
    # Two identical chunks in two documents: the second question is dropped as a duplicate.
    text = "Ibuprofen is a nonsteroidal anti-inflammatory drug used for pain and fever relief."
    twins = [Chunk(f"c{i}", f"d{i}", text, 0) for i in range(2)]

    def everything(question: str) -> Sequence[str]:
        return ["c0", "c1"]

    kept, report = asyncio.run(synthesize(
        twins, n=2, seed=0, embedder=medical.embedder, retrieve=everything
    ))  # fmt: skip
    assert [q.text for q in kept] == ["What is Ibuprofen?"]
    assert report.dropped["duplicate"] == 1


def test_unanswerable_filter(medical: Medical) -> None:
    def never(question: str) -> Sequence[str]:
        return ["some-other-chunk"]

    kept, report = medical.run(retrieve=never)
    assert kept == [] and report.dropped["unanswerable"] == report.tried == report.candidates
    # Every question kept by the real retriever has its source chunk in the top 10.
    questions, _ = medical.run()
    assert all(q.chunk_id in medical.retrieve(q.text) for q in questions)

    # With a model: its question is kept only if it also says the passage answers it.
    def all_chunks(question: str) -> Sequence[str]:
        return [c.chunk_id for c in medical.chunks]

    kept, report = medical.run(model=YesNoModel("no"), retrieve=all_chunks)
    assert kept == [] and report.dropped["model_says_no"] == report.tried == report.candidates
    kept, report = medical.run(model=YesNoModel("Yes."), retrieve=all_chunks)
    assert [(q.text, q.method) for q in kept] == [(YesNoModel.QUESTION, "llm")]
    assert report.dropped["duplicate"] == report.tried - 1  # the model repeats itself


def test_output_is_consumed_by_the_retrieval_evaluator(medical: Medical, tmp_path: Path) -> None:
    questions, report = medical.run()
    paths = write_synth(questions, report, tmp_path)
    gold = load_gold(paths["qrels.tsv"], None)
    assert gold.kind == "chunks" and is_chunk_qrels(gold.qrels)
    queries = load_queries(paths["queries.jsonl"])
    assert [q.qid for q in queries] == [q.qid for q in questions]
    factory, _, _ = retriever_factory(medical.settings, "medical", reranker=False)
    # No reranker loads offline: the configured settings without one (what synth's filter ran).
    plain = medical.settings.retrieval.model_copy(update={"rerank": False})
    config = NamedConfig("settings", plain)
    run = run_evaluation([config], factory, queries, gold, kb="medical")
    assert run.queries == N and run.skipped_no_qrels == 0
    assert run.summaries[0].metrics["R@10"] == 1.0  # the filter kept only findable questions
    assert run.summaries[0].metrics["MRR@10"] > 0.5
