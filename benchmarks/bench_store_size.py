"""Disk per conversation message in the chat store (SQLite file, or PostgreSQL tables), for
sizing (docs/deployment.md). Writes ``--turns`` turns through the store API as the server does
(``begin_turn`` then ``finish_assistant_message`` with citations), ``--per-conversation`` turns
per conversation: user messages are real SciFact claims, replies 600-character windows of
MedQuAD answers with three 240-character citation previews (the server's preview length).

PostgreSQL: give a database of its own (the tables are created there), e.g. one made with
``CREATE DATABASE ragchat_size OWNER ragchat`` on ``scripts/postgres start``'s server.

Example::

    .venv/bin/python benchmarks/bench_store_size.py --turns 5000
    .venv/bin/python benchmarks/bench_store_size.py --turns 5000 \\
        --url postgresql+psycopg://ragchat:ragchat@127.0.0.1:55432/ragchat_size
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import doc_text, machine_line, medquad_corpus, print_table, scifact_queries
from sqlalchemy import text

from ragchat.settings import Settings
from ragchat.store.factory import build_store
from ragchat.types import Citation

TABLES = ("users", "conversations", "messages")


def fill(settings: Settings, turns: int, per_conversation: int, seed: int) -> float:
    rnd = random.Random(seed)
    claims = scifact_queries()
    answers = [doc_text(d) for d in medquad_corpus(2000)]
    store = build_store(settings)
    t0 = time.perf_counter()
    user = store.ensure_user().id
    conversation = ""
    for i in range(turns):
        if i % per_conversation == 0:
            user = store.ensure_user().id if i % (per_conversation * 4) == 0 else user
            conversation = store.create_conversation(user).id
        _, reply = store.begin_turn(conversation, rnd.choice(claims))
        body = rnd.choice(answers)
        start = rnd.randrange(max(1, len(body) - 600))
        cites = [
            Citation(n, f"d{rnd.randrange(10**6)}_c{n}", "medquad", "A title", "", 0.5, body[:240])
            for n in (1, 2, 3)
        ]
        store.finish_assistant_message(
            reply.id, body[start : start + 600], cites, {"agent": "medical"}
        )
    elapsed = time.perf_counter() - t0
    store.close()
    return elapsed


def pg_sizes(url: str) -> dict[str, int]:
    from sqlalchemy import create_engine

    engine = create_engine(url, isolation_level="AUTOCOMMIT")  # VACUUM runs outside a transaction
    with engine.connect() as conn:
        conn.execute(text("VACUUM ANALYZE"))
        sizes = {
            t: int(conn.execute(text(f"SELECT pg_total_relation_size('{t}')")).scalar_one())
            for t in TABLES
        }
        sizes["whole database"] = int(
            conn.execute(text("SELECT pg_database_size(current_database())")).scalar_one()
        )
    engine.dispose()
    return sizes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--turns", type=int, default=5000, help="two messages per turn")
    ap.add_argument("--per-conversation", type=int, default=10)
    ap.add_argument("--url", default=None, help="PostgreSQL URL (default: a fresh SQLite file)")
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    print(machine_line())
    messages = 2 * args.turns
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(data_dir=Path(tmp), database_url=args.url)
        elapsed = fill(settings, args.turns, args.per_conversation, args.seed)
        if args.url:
            sizes = pg_sizes(args.url)
        else:
            db = Path(tmp) / "ragchat.sqlite3"
            with sqlite3.connect(db) as conn:  # the WAL's pages into the file, as at rest
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            sizes = {"SQLite file": db.stat().st_size}
    rows = [[name, size / 2**20, size / messages] for name, size in sizes.items()]
    print(
        f"\n## {messages:,} messages ({args.turns:,} turns, {args.per_conversation} per "
        f"conversation), written in {elapsed:.1f} s; {machine_line()[2:]}\n"
    )
    print_table(["relation", "MiB", "bytes per message"], rows)


if __name__ == "__main__":
    main()
