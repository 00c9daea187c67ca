from __future__ import annotations

from pathlib import Path

from ragchat.agents.bootstrap import ensure_knowledge_bases, resolve_config
from ragchat.agents.config import AppConfig
from ragchat.embed.base import Embedder
from ragchat.settings import Settings
from ragchat.vectorstores.embedded.kb import KnowledgeBase


def test_resolve_config(tmp_path: Path, settings: Settings) -> None:
    assert set(resolve_config("sample", settings).agents) == {
        "support", "medical", "parenting", "tutor", "documents", "companion",
    }  # fmt: skip
    own = tmp_path / "mine.yaml"
    own.write_text("agents:\n  helper:\n    kind: support\n    description: listens\n")
    assert list(resolve_config(str(own), settings).agents) == ["helper"]
    # A knowledge base's name: the configured knowledge-base agent over it, as the server
    # answers a conversation bound to it.
    single = resolve_config("handbook", settings)
    agent = single.agents["documents"]
    assert (agent.kind, agent.knowledge_base, list(single.knowledge_bases)) == (
        "conversational_rag", "handbook", ["handbook"],
    )  # fmt: skip
    assert agent.any_knowledge_base and agent.routable
    # Its own gate and search-before-asking (the offline answerer's refusal checks judge what
    # the lower gate lets through): docs/benchmarks.md, issue 25.
    assert (agent.gate_threshold, agent.clarify_below) == (0.15, 0.4)


def test_sample_knowledge_bases_are_ingested_once(
    settings: Settings,
    app_config: AppConfig,
    embedder: Embedder,
    kbs: dict[str, KnowledgeBase],
) -> None:
    again = ensure_knowledge_bases(settings, app_config, embedder)
    assert [k.name for k in again] == ["medical", "parenting", "textbook", "companion"]
    assert not any(k.changed for k in again)
    assert all(k.report.unchanged_files == k.report.files > 0 for k in again)
    assert kbs["companion"].child_count() > 0


def test_a_missing_knowledge_base_says_where_it_looked_and_how_to_make_it(
    tmp_path: Path,
) -> None:
    """``Chatbot(kb="sailing")`` and ``ragchat chat --kb sailing`` run from the wrong folder:
    one line naming the data directory, what it holds and the command that creates it."""
    import pytest

    from ragchat import Chatbot
    from ragchat.errors import KnowledgeBaseNotFound

    elsewhere = Settings(data_dir=tmp_path / "elsewhere")
    with pytest.raises(KnowledgeBaseNotFound) as missing:
        Chatbot(elsewhere, kb="sailing")
    message = str(missing.value)
    assert str((tmp_path / "elsewhere").resolve()) in message
    assert "RAGCHAT_DATA_DIR" in message
    assert "ragchat ingest <files or folder> --kb sailing" in message
    assert "holds: none yet" in message
