"""``ingestion/wire.py``: the worker answers the child's typed messages through one dispatch,
and refuses anything else by name."""

from __future__ import annotations

import subprocess
import sys
from multiprocessing import Pipe
from pathlib import Path
from typing import Any, cast

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.ingestion import worker
from ragchat.ingestion.wire import (
    DocsOfFile,
    FileSha,
    Go,
    Progress,
    RecordFile,
    Refused,
    Reply,
    UnknownMessage,
    Warm,
)
from ragchat.vectorstores.embedded.kb import KnowledgeBase


@pytest.fixture
def kb(tmp_path: Path) -> KnowledgeBase:
    return KnowledgeBase.open_or_create(tmp_path / "kb", "kb", HashingEmbedder())


def test_a_message_is_answered_on_the_knowledge_base(kb: KnowledgeBase) -> None:
    assert worker.dispatch(kb, RecordFile("/a.md", "abc", "2026-01-01T00:00:00+00:00")) is None
    assert worker.dispatch(kb, FileSha("/a.md")) == "abc"
    assert worker.dispatch(kb, DocsOfFile("/a.md")) == []


@pytest.mark.parametrize("message", [("call", "store.file_sha", ("/a.md",), {}), Go("kb")])
def test_an_unknown_message_is_refused_by_name(kb: KnowledgeBase, message: Any) -> None:
    with pytest.raises(UnknownMessage, match=f"unknown message .*{type(message).__name__}"):
        worker.dispatch(kb, message)
    answer = worker._answer(kb, message)
    assert isinstance(answer, Refused) and "UnknownMessage" in answer.message
    assert kb.catalogue.file_sha("/a.md") is None  # nothing was done


def test_the_worker_fails_on_a_message_it_does_not_know(kb: KnowledgeBase) -> None:
    ours, theirs = Pipe()
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    theirs.send(Progress("read", 0, 1))
    theirs.send(FileSha("/a.md"))
    theirs.send(("call", "save", (), {}))  # the old, untyped form
    seen: list[tuple[str, int, int]] = []
    with pytest.raises(UnknownMessage, match=r"unexpected message .*tuple"):
        worker._serve(
            ours,
            proc,
            kb,
            lambda *e: seen.append(e),
            None,
            until=Warm,
        )
    assert seen == [("read", 0, 1)]
    assert cast(Reply, theirs.recv()) == Reply(None)  # the typed call was answered
