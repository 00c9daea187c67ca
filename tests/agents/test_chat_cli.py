"""``ragchat chat`` driven through piped stdin: it routes, cites, refuses out-of-scope
questions, remembers the conversation and handles its slash commands."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from ragchat import resources
from ragchat.agents.chat_cli import chat_app
from ragchat.embed.base import Embedder
from ragchat.vectorstores.embedded.kb import KnowledgeBase


@pytest.fixture(autouse=True)
def _shared_embedder(monkeypatch: pytest.MonkeyPatch, embedder: Embedder) -> None:
    """The CLI loads its embedder through ragchat.resources; hand it the session's (memoised) one so
    each run does not re-embed the safety exemplars and agent cards."""
    monkeypatch.setattr(resources, "embedder", lambda settings: embedder)


SCRIPT = """What is ibuprofen used for?
what are its side effects?
/agent
Who won the 2014 football World Cup?
/new
/agent
How much sleep does a two-year-old need?
/quit
this line is never read
"""


def test_scripted_conversation(data_dir: Path, kbs: dict[str, KnowledgeBase]) -> None:
    result = CliRunner().invoke(chat_app, ["--data-dir", str(data_dir)], input=SCRIPT)
    assert result.exit_code == 0, result.output
    out = result.output
    turns = out.split("you ›")[1:]
    assert len(turns) == 8 and "never read" not in out
    assert "ingested" not in out  # the sample KBs were already up to date
    # routes and cites
    assert "medical ›" in turns[0] and "[1] Ibuprofen — Ibuprofen >" in turns[0]
    # remembers: the follow-up is about ibuprofen's side effects
    assert "medical ›" in turns[1] and "[1] Ibuprofen — Ibuprofen > Side effects" in turns[1]
    assert "indigestion" in turns[1] or "stomach" in turns[1]
    assert "agent: medical" in turns[2]
    # refuses what the knowledge base does not cover, without citations
    assert "won't guess" in turns[3] and "[1]" not in turns[3]
    # /new forgets the conversation and its agent
    assert "New conversation" in turns[4] and "agent: none yet" in turns[5]
    assert "parenting ›" in turns[6] and "[1]" in turns[6]


def test_forced_agent_and_unknown_agent(data_dir: Path, kbs: dict[str, KnowledgeBase]) -> None:
    runner = CliRunner()
    result = runner.invoke(
        chat_app,
        ["--data-dir", str(data_dir), "--agent", "tutor"],
        input="What does bile do in digestion?\n",
    )
    assert result.exit_code == 0 and "tutor ›" in result.output and "[1]" in result.output
    result = runner.invoke(chat_app, ["--data-dir", str(data_dir), "--agent", "nobody"], input="")
    assert result.exit_code != 0 and "unknown agent" in result.output


def test_chat_with_a_single_knowledge_base(data_dir: Path, kbs: dict[str, KnowledgeBase]) -> None:
    result = CliRunner().invoke(
        chat_app,
        ["--data-dir", str(data_dir), "--kb", "textbook"],
        input="How is cardiac output calculated?\n",
    )
    assert result.exit_code == 0, result.output
    assert "documents ›" in result.output and "stroke volume" in result.output.lower()
