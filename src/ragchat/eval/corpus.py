"""The user-documents corpus (``corpus/`` of a checkout): documents of the kinds people upload,
split by document into train / val / test, and the questions, conversations and everyday
messages written about each. A split is asked group by group: each group's documents become one
knowledge base (a user's own collection), asked through the chat engine as ``eval documents``
does; everyday messages are asked too, to count the safety replies they get.

Files (JSONL): ``documents.jsonl`` (``file``, ``kind``, ``format``, ``split``, ``group``…),
``questions.jsonl`` and ``conversations.jsonl`` in the ``eval documents`` format plus the tags
``split``, ``group``, ``kind``, ``format``, ``style``; ``messages.jsonl`` (``id``, ``message``,
``looks_like``, ``split``, ``group``)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragchat.errors import KnowledgeBaseNotFound
from ragchat.eval.data import EvalDataError
from ragchat.eval.documents import (
    DocConversation,
    DocQuestion,
    Reply,
    ask_all,
    load_doc_conversations,
    load_questions,
)

if TYPE_CHECKING:
    from ragchat.embed.base import Embedder
    from ragchat.settings import Settings

SPLITS = ("train", "val", "test")
Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class CorpusDoc:
    file: str
    kind: str
    format: str
    split: str
    group: str
    scan: bool = False


@dataclass(frozen=True)
class Message:
    mid: str
    message: str
    looks_like: str
    split: str
    group: str


@dataclass(frozen=True)
class Corpus:
    root: Path
    documents: tuple[CorpusDoc, ...]
    questions: tuple[DocQuestion, ...]
    conversations: tuple[DocConversation, ...]
    messages: tuple[Message, ...]

    @property
    def docs_dir(self) -> Path:
        return self.root / "docs"

    def groups(self, split: str) -> list[str]:
        return sorted({d.group for d in self.documents if d.split == split})

    def files(self, group: str) -> list[Path]:
        return [self.docs_dir / d.file for d in self.documents if d.group == group]

    def in_group(self, group: str) -> Corpus:
        """The part of the corpus one group's knowledge base answers."""
        return replace(
            self,
            documents=tuple(d for d in self.documents if d.group == group),
            questions=tuple(q for q in self.questions if dict(q.tags).get("group") == group),
            conversations=tuple(
                c for c in self.conversations if dict(c.tags).get("group") == group
            ),
            messages=tuple(m for m in self.messages if m.group == group),
        )


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise EvalDataError(f"{path}: cannot read: {exc}") from exc
    return [json.loads(line) for line in lines if line.strip()]


def load_corpus(root: Path) -> Corpus:
    docs = tuple(
        CorpusDoc(
            file=str(r["file"]),
            kind=str(r.get("kind", "")),
            format=str(r.get("format", "")),
            split=str(r["split"]),
            group=str(r["group"]),
            scan=bool(r.get("scan", False)),
        )
        for r in _jsonl(root / "documents.jsonl")
    )
    messages = tuple(
        Message(
            str(r["id"]),
            str(r["message"]),
            str(r.get("looks_like", "plain")),
            str(r["split"]),
            str(r["group"]),
        )
        for r in _jsonl(root / "messages.jsonl")
    )
    return Corpus(
        root=root,
        documents=docs,
        questions=tuple(load_questions(root / "questions.jsonl")),
        conversations=tuple(load_doc_conversations(root / "conversations.jsonl")),
        messages=messages,
    )


def group_kb(group: str) -> str:
    return f"corpus-{group}"


def build_group_kb(settings: Settings, embedder: Embedder, corpus: Corpus, group: str) -> str:
    """A fresh knowledge base of the group's documents, ingested as an upload is."""
    from ragchat.ingestion.ingest import ingest_paths
    from ragchat.ingestion.job import chunker_for
    from ragchat.vectorstores import factory as stores

    name = group_kb(group)
    with contextlib.suppress(KnowledgeBaseNotFound):
        stores.delete_kb(settings, name)
    base = stores.open_or_create_kb(settings, name, embedder)
    try:
        report = ingest_paths(base, corpus.files(group), chunker_for(base, settings.chunking))
    finally:
        base.close()
    if report.errors:
        problems = "; ".join(f"{e.source}: {e.reason}" for e in report.errors)
        raise EvalDataError(f"{group}: files not ingested: {problems}")
    return name


async def ask_group(
    settings: Settings,
    embedder: Embedder,
    corpus: Corpus,
    group: str,
    *,
    chat_model: Any = None,
    messages: bool = True,
    progress: Progress | None = None,
) -> list[Reply]:
    """Every question, conversation and (with ``messages``) everyday message of ``group``,
    asked over that group's knowledge base by the agent the server binds a user's knowledge
    base to."""
    from ragchat.agents.bootstrap import resolve_config
    from ragchat.agents.factory import build_engine

    part = corpus.in_group(group)
    kb = build_group_kb(settings, embedder, corpus, group)
    config = resolve_config(kb, settings)
    agent = next(iter(config.agents))
    engine = build_engine(settings, config, chat_model=chat_model, embedder=embedder)
    questions: list[DocQuestion] = list(part.questions)
    if messages:
        questions += [
            DocQuestion(
                m.mid,
                m.message,
                None,
                "",
                (("group", m.group), ("looks_like", m.looks_like), ("split", m.split)),
            )
            for m in part.messages
        ]
    replies = await ask_all(
        engine, questions, list(part.conversations), agent=agent, progress=progress
    )
    message_ids = {m.mid for m in part.messages}
    for reply in replies:
        if reply.qid in message_ids:
            reply.kind = "message"
    return replies


async def ask_split(
    settings: Settings,
    embedder: Embedder,
    corpus: Corpus,
    split: str,
    *,
    groups: Sequence[str] = (),
    chat_model: Any = None,
    messages: bool = True,
    progress: Progress | None = None,
) -> list[Reply]:
    if split not in SPLITS:
        raise EvalDataError(f"unknown split {split!r}; use one of {', '.join(SPLITS)}")
    out: list[Reply] = []
    for group in groups or corpus.groups(split):
        out += await ask_group(
            settings,
            embedder,
            corpus,
            group,
            chat_model=chat_model,
            messages=messages,
            progress=progress,
        )
    return out
