"""A real ``ragchat serve`` killed with SIGKILL (``Settings.crash_at``) at each point of a
streamed chat turn, then restarted: every acknowledged user message is there, every reply is
complete or ``interrupted`` (never left ``streaming``, never missing), each turn is exactly one
question and one reply, the conversation carries on, and SQLite's integrity check passes.

The server runs the offline support agent (no model, no knowledge base): its reply streams
word groups like a model's tokens, and it needs nothing but the packaged embedder."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

pytestmark = pytest.mark.slow

START_TIMEOUT_S = float(os.environ.get("RAGCHAT_UI_START_TIMEOUT", "240"))
CONFIG = """
[agents.support]
kind = "support"
description = "Emotional support: a kind listener when someone feels stressed or sad."
examples = ["I'm feeling really stressed about work", "I feel sad and lonely"]
"""
# Where the server dies, and what the reply must be after the restart.
POINTS = {
    "chat.acknowledged": "interrupted",  # the client has the metadata event (and a cookie)
    "chat.user_message_stored": "interrupted",  # committed, no response sent yet
    "chat.token#3": "interrupted",  # mid-stream
    "chat.before_reply_stored": "interrupted",  # the final reply built, not stored
    "store.reply_uncommitted": "interrupted",  # inside the reply's transaction
    "chat.reply_stored": "complete",  # stored, the final event not sent
    "chat.title": "complete",  # the stream done, the title being made
}
SERVE = "import sys; from ragchat.cli import app; sys.argv[0] = 'ragchat'; app()"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    data_dir: Path
    config: Path
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, crashpoint: str | None = None) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")}
        env.update(
            RAGCHAT_DATA_DIR=str(self.data_dir),
            RAGCHAT_CONFIG_FILE=str(self.config),
            RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES="false",
            RAGCHAT_API__RATE_LIMIT_PER_MINUTE="0",
            RAGCHAT_EMBEDDING__PREWARM_SENTENCES="false",
        )
        if crashpoint:
            env["RAGCHAT_CRASH_AT"] = crashpoint
        args = ["serve", "--host", "127.0.0.1", "--port", str(self.port)]
        log = (self.data_dir.parent / "serve.log").open("ab")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVE, *args], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the server exited {self.proc.returncode}: {self.log()}")
            with contextlib.suppress(httpx.HTTPError):
                # Up once it listens (/health checks models: slower on a busy machine).
                if httpx.get(self.base + "/v1/models", timeout=2).status_code == 200:
                    return self.proc
            time.sleep(0.1)
        raise AssertionError(f"the server did not start: {self.log()}")

    def log(self) -> str:
        return (self.data_dir.parent / "serve.log").read_text(errors="replace")[-3000:]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(10)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Server]:
    config = tmp_path / "agents.toml"
    config.write_text(CONFIG)
    s = Server(tmp_path / "data", config)
    yield s
    s.stop()


@dataclass
class Turn:
    message: str
    events: list[tuple[str, Any]] = field(default_factory=list)

    def first(self, name: str) -> Any:
        return next((data for event, data in self.events if event == name), None)


def stream_turn(client: httpx.Client, message: str, session_id: str | None = None) -> Turn:
    """The events received before the stream ended or the connection died."""
    turn = Turn(message)
    body: dict[str, Any] = {"message": message}
    if session_id:
        body["session_id"] = session_id
    event = None
    with (
        contextlib.suppress(httpx.HTTPError),
        client.stream("POST", "/chat/stream", json=body, timeout=30) as r,
    ):
        for line in r.iter_lines():
            if line.startswith("event:"):
                event = line[6:].strip()
            elif line.startswith("data:") and event:
                turn.events.append((event, json.loads(line[5:])))
    return turn


def all_messages(client: httpx.Client) -> dict[str, list[dict[str, Any]]]:
    conversations = client.get("/conversations", params={"limit": 100}).json()
    return {c["id"]: client.get(f"/conversations/{c['id']}/messages").json() for c in conversations}


def test_a_server_killed_at_any_point_of_a_turn_keeps_every_acknowledged_message(
    server: Server,
) -> None:
    client = httpx.Client(base_url=server.base)  # one user: the cookie of the first turn
    turns: dict[str, Turn] = {}
    for i, point in enumerate(POINTS):
        proc = server.start(point)
        turns[point] = stream_turn(client, f"I feel anxious about exam number {i}")
        assert proc.wait(30) == -signal.SIGKILL, (point, server.log())

    server.start()
    stored = all_messages(client)
    by_id = {m["id"]: m for messages in stored.values() for m in messages}
    assert len(stored) == len(POINTS)  # one conversation per turn, nothing else
    for point, turn in turns.items():
        meta = turn.first("metadata")
        if point != "chat.user_message_stored":  # acknowledged: the client has the ids
            assert meta is not None, point
        if meta is None:  # never acknowledged: find it by its text
            found = [cid for cid, ms in stored.items() if ms and ms[0]["content"] == turn.message]
            assert len(found) == 1, point
            cid = found[0]
        else:
            question = by_id[meta["user_message_id"]]
            assert question["content"] == turn.message, point
            cid = meta["session_id"]
        conversation = stored[cid]
        # Exactly one question and one reply, the reply settled as expected.
        assert [m["role"] for m in conversation] == ["user", "assistant"], point
        reply = conversation[1]
        assert reply["status"] == POINTS[point], (point, reply)
        if reply["status"] == "complete":
            assert reply["content"] and reply["agent"] == "support", point
        # The conversation carries on after the crash.
        again = stream_turn(client, "Thank you, that helps a little", cid)
        assert again.first("final") is not None, (point, again.events)
    after = all_messages(client)
    assert all(m["status"] != "streaming" for ms in after.values() for m in ms)
    assert sum(len(ms) for ms in after.values()) == 2 * 2 * len(POINTS)
    server.stop()

    db = sqlite3.connect(server.data_dir / "ragchat.sqlite3")
    try:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert db.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        db.close()
