"""The user-documents evaluation asked the way a user asks (issues 25 and 26): the documents are
uploaded over HTTP into a new knowledge base (``POST /kb``, ``POST /kb/{name}/documents``),
every question goes through ``POST /chat`` bound to it (``"kb": name``), each conversation
turn by turn by its ``session_id``; the replies are judged exactly as ``ragchat eval
documents`` judges them (``eval/documents.py``).

    PYTHONPATH=src .venv/bin/python benchmarks/eval_documents_http.py \
        [--docs benchmarks/devsets/userdocs/docs] [--questions …/questions.jsonl] \
        [--conversations …/conversations.jsonl] [--output eval-out/documents-http]

Runs the real server app in-process (FastAPI's test client, the packaged embedding model),
offline answerer, in a temporary data directory."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from fastapi.testclient import TestClient

from ragchat import resources
from ragchat.api import create_app
from ragchat.eval.documents import (
    Judged,
    Reply,
    judge,
    load_doc_conversations,
    load_questions,
    summarise_replies,
)
from ragchat.settings import ApiSettings, Settings
from ragchat.types import Citation

DEV = Path(__file__).resolve().parent / "devsets" / "userdocs"
KB = "my-documents"
_FIELDS = {f.name for f in dataclasses.fields(Citation)}


def _citation(data: dict[str, Any]) -> Citation:
    kept = {k: v for k, v in data.items() if k in _FIELDS}
    for key in ("section_path", "speakers"):
        kept[key] = tuple(kept.get(key) or ())
    if kept.get("rows") is not None:
        kept["rows"] = tuple(kept["rows"])
    return Citation(**kept)


def _as_result(reply: dict[str, Any]) -> Any:
    """What ``judge`` reads of a turn, from the JSON ``POST /chat`` answered."""
    meta = reply.get("metadata") or {}
    return SimpleNamespace(
        reply=reply["message"],
        no_answer=bool(reply.get("no_answer")),
        citations=[_citation(c) for c in reply.get("citations") or []],
        metadata=SimpleNamespace(search_query=meta.get("search_query"), retrieval=None),
    )


def _chat(client: TestClient, body: dict[str, Any]) -> tuple[dict[str, Any], float]:
    start = time.perf_counter()
    r = client.post("/chat", json=body)
    assert r.status_code == 200, r.text
    return r.json(), (time.perf_counter() - start) * 1000.0


def _upload(client: TestClient, folder: Path) -> dict[str, Any]:
    assert client.post("/kb", json={"name": KB, "description": "My documents"}).status_code == 201
    files = [("files", (p.name, p.read_bytes())) for p in sorted(folder.iterdir()) if p.is_file()]
    job = client.post(f"/kb/{KB}/documents", files=files).json()
    deadline = time.time() + 600
    while time.time() < deadline:
        status: dict[str, Any] = client.get(f"/jobs/{job['job_id']}").json()
        if status["status"] in ("done", "failed"):
            return status
        time.sleep(0.2)
    raise SystemExit("the upload did not finish in 10 minutes")


def run(docs: Path, questions: Path, conversations: Path | None) -> list[Reply]:
    data = Path(tempfile.mkdtemp(prefix="eval-documents-http-"))
    settings = Settings(data_dir=data, api=ApiSettings(rate_limit_per_minute=0))
    app = create_app(settings, embedder=resources.embedder(settings), bootstrap=False)
    replies: list[Reply] = []
    with TestClient(app) as client:
        client.get("/users/me")  # the identity cookie, as the page takes it
        job = _upload(client, docs)
        print(f"upload: {job['status']}, {job['message']}", file=sys.stderr)
        _chat(client, {"message": "warm-up question", "kb": KB})  # model loading off the clock
        for q in load_questions(questions):
            reply, ms = _chat(client, {"message": q.question, "kb": KB})
            kind = "answerable" if q.gold is not None else "unanswerable"
            replies.append(judge(q.qid, q.question, kind, q.gold, _as_result(reply), ms))
        for conv in load_doc_conversations(conversations) if conversations else []:
            session: str | None = None
            for number, (message, gold) in enumerate(conv.turns, start=1):
                body: dict[str, Any] = {"message": message}
                body.update({"session_id": session} if session else {"kb": KB})
                reply, ms = _chat(client, body)
                session = reply["session_id"]
                kind = "first turn" if number == 1 else "follow-up"
                judged: Judged | None = gold
                replies.append(
                    judge(f"{conv.cid}#{number}", message, kind, judged, _as_result(reply), ms)
                )
    return replies


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=Path, default=DEV / "docs")
    parser.add_argument("--questions", type=Path, default=DEV / "questions.jsonl")
    parser.add_argument("--conversations", type=Path, default=DEV / "conversations.jsonl")
    parser.add_argument("--output", type=Path, default=None)
    args = parser.parse_args()
    replies = run(args.docs, args.questions, args.conversations)
    summary = summarise_replies(replies)
    print(json.dumps(summary, indent=2))
    if args.output is not None:
        args.output.mkdir(parents=True, exist_ok=True)
        (args.output / "summary.json").write_text(json.dumps(summary, indent=2))
        rows = [dataclasses.asdict(r) for r in replies]
        (args.output / "replies.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
