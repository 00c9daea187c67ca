"""Leases on replies being answered and on upload jobs: the answering process renews its
own; start-up with ``api.recovery = "expired"`` (several servers on one database) ends only
the work whose lease ran out, not another server's live turns and uploads."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from fastapi.testclient import TestClient

from ragchat.agents.request import TurnRequest
from ragchat.api import create_app
from ragchat.api.services.chat import ChatService
from ragchat.api.services.leases import renew
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings
from ragchat.store import build_store
from ragchat.store.rows import MessageRow

from ..fakes import FakeEngine


class _NoJobs:
    """The document service's side of ``renew``: this process runs no upload."""

    def unfinished(self) -> list[str]:
        return []


def _status(store: object, reply: MessageRow) -> str:
    rows = store.list_messages("ann", reply.conversation_id)  # type: ignore[attr-defined]
    return next(m.status for m in rows if m.id == reply.id)


def test_a_reply_being_answered_is_renewed_until_it_settles(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path)
    store = build_store(settings)
    store.ensure_user("ann")
    chat = ChatService(settings, store, FakeEngine())
    turn = chat._prepare(TurnRequest("hello there", user_id="ann"), False, False)
    assert chat.in_flight() == [turn.reply_message.id]
    assert renew(_NoJobs(), store, chat) == 1  # type: ignore[arg-type]

    chat._store_failure(turn, "internal_error")

    assert chat.in_flight() == []
    assert renew(_NoJobs(), store, chat) == 0  # type: ignore[arg-type]
    store.close()


def _old_and_fresh(settings: Settings) -> tuple[MessageRow, MessageRow, str, str]:
    """A reply and a job left an hour ago (their server died), and a reply and a job of a
    server that is alive (renewed just now)."""
    hour_ago = datetime.now(UTC) - timedelta(hours=1)
    old_store = build_store(settings, clock=lambda: hour_ago)
    old_store.ensure_user("ann")
    _, _, old_reply = old_store.start_conversation("ann", "an old question")
    old_job = old_store.update_job(old_store.create_job("ann", "notes").id, status="running")
    old_store.close()
    store = build_store(settings)
    _, _, fresh_reply = store.start_conversation("ann", "a question being answered")
    fresh_job = store.update_job(store.create_job("ann", "notes").id, status="running")
    store.close()
    return old_reply, fresh_reply, old_job.id, fresh_job.id


def test_start_up_with_expired_recovery_keeps_other_servers_work(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, api=ApiSettings(recovery="expired", lease_s=60))
    old_reply, fresh_reply, old_job, fresh_job = _old_and_fresh(settings)

    app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder())
    with TestClient(app):
        store = app.state.ragchat.store
        assert _status(store, old_reply) == "interrupted"
        assert _status(store, fresh_reply) == "streaming"
        assert store.get_job("ann", old_job).status == "failed"
        assert store.get_job("ann", fresh_job).status == "running"


def test_start_up_by_default_recovers_everything_unfinished(tmp_path: Path) -> None:
    """One server per database (the default): whatever is unfinished was its own crash's."""
    settings = Settings(data_dir=tmp_path)
    old_reply, fresh_reply, old_job, fresh_job = _old_and_fresh(settings)

    app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder())
    with TestClient(app):
        store = app.state.ragchat.store
        assert {_status(store, old_reply), _status(store, fresh_reply)} == {"interrupted"}
        assert store.get_job("ann", old_job).status == "failed"
        assert store.get_job("ann", fresh_job).status == "failed"
