"""The repository contract, run against every backend (see conftest.py)."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, text

from ragchat.errors import Conflict, NotFound, StoreUnavailable
from ragchat.store import SqlStore, _messages
from ragchat.store._messages import MessagesMixin
from ragchat.store.models import ApiKeyRecord, MemoryRecord, MessageRecord
from ragchat.store.rows import ConversationChanges, MessageRow
from ragchat.types import Citation, HistoryMessage

from .conftest import FakeClock, StoreFactory


def _count(store: SqlStore, model: Any) -> int:
    with store.engine.connect() as conn:
        return int(conn.scalar(select(func.count()).select_from(model)) or 0)


def test_ensure_user_is_idempotent(store: SqlStore) -> None:
    first = store.ensure_user("alice", kind="named", display_name="Alice")
    again = store.ensure_user("alice")
    assert again == first
    assert (again.kind, again.display_name) == ("named", "Alice")
    fresh = store.ensure_user()
    assert fresh.id != first.id and fresh.kind == "anonymous"
    results: list[str] = []
    threads = [
        threading.Thread(target=lambda: results.append(store.ensure_user("bob").id))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["bob"] * 6
    store.touch_user("alice")
    assert store.get_user("alice").last_seen_at > first.last_seen_at
    with pytest.raises(NotFound):
        store.get_user("nobody")


def test_api_keys_store_only_the_hash(store: SqlStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    row, secret = store.create_api_key("alice", "laptop")
    assert secret.startswith("rc_") and len(secret) > 40
    assert row.prefix == secret[:8] and row.user_id == "alice" and row.revoked_at is None
    assert store.user_for_api_key(secret) == "alice"
    assert store.user_for_api_key(secret + "x") is None
    assert store.user_for_api_key("") is None
    with store.engine.connect() as conn:
        stored = conn.execute(select(ApiKeyRecord.__table__)).all()
    assert secret not in repr(stored)
    assert stored[0].key_hash == hashlib.sha256(secret.encode()).hexdigest()
    assert store.list_api_keys("alice")[0].last_used_at is not None
    with pytest.raises(NotFound):
        store.revoke_api_key("bob", row.id)
    store.revoke_api_key("alice", row.id)
    assert store.user_for_api_key(secret) is None
    assert store.list_api_keys("alice")[0].revoked_at is not None
    with pytest.raises(NotFound):
        store.create_api_key("nobody", "x")


def test_someone_elses_conversation_is_indistinguishable_from_a_missing_one(
    store: SqlStore,
) -> None:
    store.ensure_user("alice")
    store.ensure_user("mallory")
    conv = store.create_conversation("alice", "private")
    calls: list[Callable[[str], object]] = [
        lambda cid: store.get_conversation("mallory", cid),
        lambda cid: store.rename("mallory", cid, "mine"),
        lambda cid: store.set_assigned_agent("mallory", cid, "x"),
        lambda cid: store.set_user_profile("mallory", cid, {"name": "Mallory"}),
        lambda cid: store.flag_crisis("mallory", cid),
        lambda cid: store.close_conversation("mallory", cid),
        lambda cid: store.delete_conversation("mallory", cid),
        lambda cid: store.list_messages("mallory", cid),
    ]
    for call in calls:
        with pytest.raises(NotFound) as foreign:
            call(conv.id)
        with pytest.raises(NotFound) as missing:
            call("00000000-0000-0000-0000-000000000000")
        assert (type(foreign.value), str(foreign.value)) == (
            type(missing.value),
            str(missing.value),
        )
    assert store.get_conversation("alice", conv.id).title == "private"
    assert store.list_conversations("mallory") == []


def test_messages_keep_order_content_citations_and_metadata(store: SqlStore) -> None:
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    question = store.add_user_message(conv.id, "What is ibuprofen?")
    draft = store.begin_assistant_message(conv.id, "pharmacist")
    assert (question.seq, draft.seq, draft.status, draft.content) == (1, 2, "streaming", "")
    citation = Citation(1, "c1", "drugs.md", "Drugs", "Ibuprofen", 0.9, "An NSAID…")
    done = store.finish_assistant_message(
        draft.id, "An NSAID [1].", [citation], {"confidence": 0.8, "steps": ("a", "b")}
    )
    assert done.status == "complete" and done.agent == "pharmacist"
    messages = store.list_messages("alice", conv.id)
    assert [(m.seq, m.role, m.content) for m in messages] == [
        (1, "user", "What is ibuprofen?"),
        (2, "assistant", "An NSAID [1]."),
    ]
    assert messages[1].citations == [citation.to_dict()]
    assert messages[1].metadata == {"confidence": 0.8, "steps": ["a", "b"]}
    with pytest.raises(Conflict):
        store.finish_assistant_message(draft.id, "again")
    for i in range(3, 8):
        store.add_user_message(conv.id, f"m{i}")
    page = store.list_messages("alice", conv.id, limit=2, before_seq=5)
    assert [m.seq for m in page] == [3, 4]


def test_recent_history_skips_failed_streaming_and_empty(store: SqlStore) -> None:
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    store.add_user_message(conv.id, "q1")
    store.finish_assistant_message(store.begin_assistant_message(conv.id, "a").id, "r1")
    store.add_user_message(conv.id, "q2")
    store.finish_assistant_message(
        store.begin_assistant_message(conv.id, "a").id, "boom", status="failed"
    )
    store.add_user_message(conv.id, "q3")
    store.mark_interrupted(store.begin_assistant_message(conv.id, "b").id, "partial")
    current = store.add_user_message(conv.id, "q4")
    store.begin_assistant_message(conv.id, "b")  # still streaming
    history = store.recent_history(conv.id, n_turns=10, before_seq=current.seq)
    assert history == [
        HistoryMessage("user", "q1"),
        HistoryMessage("assistant", "r1", "a"),
        HistoryMessage("user", "q2"),
        HistoryMessage("user", "q3"),
        HistoryMessage("assistant", "partial", "b"),
    ]
    assert [m.content for m in store.recent_history(conv.id, n_turns=1)] == ["partial", "q4"]
    assert store.recent_history(conv.id, n_turns=0) == []


def test_concurrent_appends_get_unique_consecutive_seqs(store: SqlStore) -> None:
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    n_threads, per_thread = 8, 15
    errors: list[BaseException] = []
    start = threading.Barrier(n_threads)

    def writer(t: int) -> None:
        try:
            start.wait()
            for i in range(per_thread):
                store.add_user_message(conv.id, f"{t}:{i}")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(n_threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    messages = store.list_messages("alice", conv.id, limit=1000)
    assert [m.seq for m in messages] == list(range(1, n_threads * per_thread + 1))
    for t in range(n_threads):  # each writer's messages keep its own order
        mine = [int(m.content.split(":")[1]) for m in messages if m.content.startswith(f"{t}:")]
        assert mine == list(range(per_thread))


def test_a_seq_collision_is_retried(store: SqlStore, monkeypatch: pytest.MonkeyPatch) -> None:
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    store.add_user_message(conv.id, "first")
    real = MessagesMixin._next_seq
    stale = [1]  # the first pick collides with the committed seq 1, as a racing writer would

    def next_seq(self: MessagesMixin, s: Any, conversation_id: str) -> int:
        return stale.pop() if stale else real(self, s, conversation_id)

    monkeypatch.setattr(MessagesMixin, "_next_seq", next_seq)
    assert store.add_user_message(conv.id, "second").seq == 2
    assert [m.content for m in store.list_messages("alice", conv.id)] == ["first", "second"]
    monkeypatch.setattr(MessagesMixin, "_next_seq", lambda self, s, cid: 1)
    monkeypatch.setattr(_messages, "SEQ_RETRIES", 3)
    with pytest.raises(StoreUnavailable):
        store.add_user_message(conv.id, "never")
    assert len(store.list_messages("alice", conv.id)) == 2


def test_restart_marks_half_written_replies_interrupted(open_store: StoreFactory) -> None:
    store = open_store()
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    store.add_user_message(conv.id, "hi")
    draft = store.begin_assistant_message(conv.id, "companion")
    # the process dies here; the next start recovers
    restarted = open_store()
    recovered = restarted.list_messages("alice", conv.id)[-1]
    assert (recovered.id, recovered.status) == (draft.id, "interrupted")
    with pytest.raises(Conflict):
        restarted.finish_assistant_message(draft.id, "too late")
    assert restarted.recover_interrupted() == 0
    other = restarted.begin_assistant_message(conv.id, "companion")
    assert restarted.mark_interrupted(other.id, "half a sen").content == "half a sen"


def test_a_turn_stores_its_question_and_reply_row_together(store: SqlStore) -> None:
    store.ensure_user("alice")
    conv, question, reply = store.start_conversation("alice", "first question")
    assert store.get_conversation("alice", conv.id) == conv
    assert (question.seq, question.role, question.content) == (1, "user", "first question")
    assert (reply.seq, reply.role, reply.status, reply.agent) == (2, "assistant", "streaming", None)
    changes = ConversationChanges(
        assigned_agent="medical", user_profile={"name": "Al"}, crisis=True
    )
    done = store.finish_assistant_message(reply.id, "an answer", agent="medical", changes=changes)
    assert (done.status, done.agent, done.content) == ("complete", "medical", "an answer")
    after = store.get_conversation("alice", conv.id)
    assert (after.assigned_agent, after.user_profile, after.crisis) == (
        "medical",
        {"name": "Al"},
        True,
    )
    again, draft = store.begin_turn(conv.id, "second question")
    assert (again.seq, draft.seq, draft.status) == (3, 4, "streaming")
    store.mark_interrupted(draft.id, "half", agent="medical")
    with pytest.raises(Conflict):  # settled: a late finish cannot overwrite it
        store.finish_assistant_message(draft.id, "late")
    unchanged = ConversationChanges(assigned_agent="support")  # profile and flag stay
    _, last = store.begin_turn(conv.id, "third")
    store.finish_assistant_message(last.id, "ok", changes=unchanged)
    final = store.get_conversation("alice", conv.id)
    assert (final.assigned_agent, final.user_profile, final.crisis) == (
        "support",
        {"name": "Al"},
        True,
    )
    statuses = [m.status for m in store.list_messages("alice", conv.id)]
    assert statuses == ["complete", "complete", "complete", "interrupted", "complete", "complete"]
    with pytest.raises(NotFound):
        store.start_conversation("nobody", "hi")
    store.close_conversation("alice", conv.id)
    with pytest.raises(Conflict):
        store.begin_turn(conv.id, "closed")


def test_many_concurrent_writers_queue_instead_of_timing_out(store: SqlStore) -> None:
    """Forty threads starting conversations at once (the server's worker pool): every one is
    stored, none meets a locked database or waits forever for another writer."""
    store.ensure_user("alice")
    errors: list[BaseException] = []
    start = threading.Barrier(40)

    def writer() -> None:
        try:
            start.wait()
            for _ in range(5):
                store.start_conversation("alice", "hello")
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer) for _ in range(40)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(store.list_conversations("alice", limit=500)) == 200


def test_delete_conversation_cascades(store: SqlStore) -> None:
    store.ensure_user("alice")
    keep = store.create_conversation("alice")
    gone = store.create_conversation("alice")
    for conv in (keep, gone):
        store.add_user_message(conv.id, "hello")
        store.add_memory("alice", "likes tea", conversation_id=conv.id)
    store.delete_conversation("alice", gone.id)
    with pytest.raises(NotFound):
        store.get_conversation("alice", gone.id)
    assert _count(store, MessageRecord) == 1
    assert _count(store, MemoryRecord) == 1
    assert [c.id for c in store.list_conversations("alice")] == [keep.id]


def test_conversations_list_newest_first_and_can_be_renamed(store: SqlStore) -> None:
    store.ensure_user("alice")
    a, b, c = (store.create_conversation("alice", title) for title in "abc")
    assert [x.id for x in store.list_conversations("alice")] == [c.id, b.id, a.id]
    store.add_user_message(a.id, "bump")
    assert [x.title for x in store.list_conversations("alice")] == ["a", "c", "b"]
    assert store.rename("alice", b.id, "renamed").title == "renamed"
    assert [x.title for x in store.list_conversations("alice", limit=2)] == ["renamed", "a"]
    assert [x.title for x in store.list_conversations("alice", limit=2, offset=2)] == ["c"]
    assert store.set_assigned_agent("alice", c.id, "pharmacist").assigned_agent == "pharmacist"
    fixed = store.create_conversation(
        "alice", conversation_id="11111111-1111-1111-1111-111111111111"
    )
    assert fixed.user_profile == {}
    assert fixed.id == "11111111-1111-1111-1111-111111111111"
    with pytest.raises(Conflict):
        store.create_conversation("alice", conversation_id=fixed.id)


def test_a_crisis_flag_stays_with_the_conversation(open_store: StoreFactory) -> None:
    store = open_store()
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    other = store.create_conversation("alice")
    assert not conv.crisis and conv.crisis_at is None
    flagged = store.flag_crisis("alice", conv.id)
    assert flagged.crisis and flagged.crisis_at is not None
    again = store.flag_crisis("alice", conv.id)
    assert again.crisis_at == flagged.crisis_at  # the first time is kept
    reopened = open_store()  # a restart: the flag is in the database
    assert reopened.get_conversation("alice", conv.id).crisis
    assert not reopened.get_conversation("alice", other.id).crisis
    listed = {c.id: c.crisis for c in reopened.list_conversations("alice")}
    assert listed == {conv.id: True, other.id: False}


def test_idle_conversations_expire_after_the_ttl(store: SqlStore, clock: FakeClock) -> None:
    store.ensure_user("alice")
    idle = store.create_conversation("alice")
    busy = store.create_conversation("alice")
    clock.advance(timedelta(minutes=45))
    store.add_user_message(busy.id, "still here")
    clock.advance(timedelta(minutes=30))
    assert store.cleanup() == [idle.id]  # settings: session_ttl_minutes=60
    assert store.get_conversation("alice", idle.id).status == "closed"
    assert store.get_conversation("alice", busy.id).status == "active"
    assert store.cleanup() == []
    with pytest.raises(Conflict):
        store.add_user_message(idle.id, "hello again")
    now = clock()
    assert store.expire_idle(now + timedelta(hours=2), timedelta(hours=1)) == [busy.id]
    assert store.close_conversation("alice", busy.id).status == "closed"


def test_jobs_are_owned_and_updated(store: SqlStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    job = store.create_job("alice", "drugs", total=4)
    assert (job.status, job.progress, job.done, job.result) == ("queued", 0.0, 0, None)
    store.update_job(job.id, status="running", done=2, progress=0.5, message="2/4 files")
    done = store.update_job(job.id, status="done", done=4, progress=1.0, result={"chunks": 12})
    assert store.get_job("alice", job.id) == done
    assert (done.status, done.done, done.result) == ("done", 4, {"chunks": 12})
    with pytest.raises(NotFound):
        store.get_job("bob", job.id)
    later = store.create_job("alice", "faq")
    assert [j.id for j in store.list_jobs("alice")] == [later.id, job.id]
    assert store.list_jobs("bob") == []
    with pytest.raises(NotFound):
        store.update_job("missing", status="failed")


def test_unfinished_jobs_fail_with_the_message_and_finished_ones_stay(store: SqlStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    queued = store.create_job("alice", "notes", total=1, message="queued")
    running = store.update_job(
        store.create_job("bob", "notes", total=3).id,
        status="running",
        progress=0.4,
        done=1,
        message="embed 2/5",
    )
    done = store.update_job(store.create_job("alice", "notes").id, status="done", message="ok")
    failed = store.update_job(store.create_job("alice", "notes").id, status="failed", message="x")

    assert store.fail_unfinished_jobs("interrupted by a restart") == 2
    for before, owner in ((queued, "alice"), (running, "bob")):
        after = store.get_job(owner, before.id)
        assert (after.status, after.message) == ("failed", "interrupted by a restart")
        assert (after.progress, after.done) == (before.progress, before.done)
        assert after.updated_at > before.updated_at
    assert store.get_job("alice", done.id) == done
    assert store.get_job("alice", failed.id) == failed
    assert store.fail_unfinished_jobs("again") == 0


def test_jobs_whose_lease_ran_out_fail_and_heartbeats_keep_the_others(
    store: SqlStore, clock: FakeClock
) -> None:
    store.ensure_user("alice")
    lease = timedelta(seconds=30)
    orphan = store.update_job(store.create_job("alice", "notes").id, status="running")
    queued_orphan = store.create_job("alice", "notes", message="queued")
    alive = store.update_job(store.create_job("alice", "notes").id, status="running")
    done = store.update_job(store.create_job("alice", "notes").id, status="done", message="ok")
    clock.advance(timedelta(seconds=20))
    assert store.touch_jobs([alive.id, done.id, "missing"]) == 1  # finished jobs keep their time
    assert store.expire_jobs(lease, "gone") == []  # nobody is past the lease yet
    clock.advance(timedelta(seconds=15))

    expired = store.expire_jobs(lease, "interrupted: gone", {"interrupted": True})

    assert sorted(expired) == sorted([orphan.id, queued_orphan.id])
    for job_id in expired:
        row = store.get_job("alice", job_id)
        assert (row.status, row.message, row.result) == (
            "failed",
            "interrupted: gone",
            {"interrupted": True},
        )
    assert store.get_job("alice", alive.id).status == "running"
    assert store.get_job("alice", done.id) == done
    assert store.touch_jobs([]) == 0
    clock.advance(timedelta(seconds=31))  # the survivor's owner stopped beating too
    assert store.expire_jobs(lease, "gone") == [alive.id]


def test_replies_whose_lease_ran_out_are_interrupted_and_renewed_ones_kept(
    store: SqlStore, clock: FakeClock
) -> None:
    store.ensure_user("alice")
    lease = timedelta(seconds=30)
    _, _, orphan = store.start_conversation("alice", "first question")
    _, _, alive = store.start_conversation("alice", "second question")
    _, _, answered = store.start_conversation("alice", "third question")
    store.finish_assistant_message(answered.id, "the answer", [], {})
    clock.advance(timedelta(seconds=20))
    assert store.touch_messages([alive.id, answered.id, "missing"]) == 1  # finished: untouched
    assert store.expire_streaming(lease) == 0
    clock.advance(timedelta(seconds=15))

    assert store.expire_streaming(lease) == 1

    def status(reply: MessageRow) -> str:
        rows = store.list_messages("alice", reply.conversation_id)
        return next(m.status for m in rows if m.id == reply.id)

    assert (status(orphan), status(alive), status(answered)) == (
        "interrupted",
        "streaming",
        "complete",
    )
    assert store.touch_messages([]) == 0
    clock.advance(timedelta(seconds=31))  # the survivor's server stopped renewing too
    assert store.expire_streaming(lease) == 1 and status(alive) == "interrupted"


def test_memories_per_user(store: SqlStore) -> None:
    store.ensure_user("alice")
    store.ensure_user("bob")
    vector = bytes(range(16))
    first = store.add_memory("alice", "has a cat", embedding=vector)
    store.add_memory("alice", "likes tea")
    store.add_memory("bob", "likes coffee")
    assert [m.text for m in store.list_memories("alice")] == ["likes tea", "has a cat"]
    assert store.list_memories("alice", limit=1)[0].text == "likes tea"
    assert store.list_memories("alice")[-1].embedding == vector == first.embedding
    assert store.delete_memories("alice") == 2
    assert store.list_memories("alice") == []
    assert len(store.list_memories("bob")) == 1


def test_sqlite_connections_use_wal_and_foreign_keys(store: SqlStore) -> None:
    if store.engine.dialect.name != "sqlite":
        pytest.skip("SQLite pragmas")
    with store.engine.connect() as conn:
        assert conn.execute(text("PRAGMA journal_mode")).scalar() == "wal"
        assert conn.execute(text("PRAGMA foreign_keys")).scalar() == 1
        assert conn.execute(text("PRAGMA busy_timeout")).scalar() == 5000


def test_the_agents_state_lives_on_the_conversation(open_store: StoreFactory) -> None:
    """The assigned agent and the user profile are read from the conversation row, so a turn
    never scans messages for them; both survive a restart."""
    store = open_store()
    store.ensure_user("alice")
    conv = store.create_conversation("alice")
    assert (conv.assigned_agent, conv.user_profile) == (None, {})
    store.set_assigned_agent("alice", conv.id, "companion")
    updated = store.set_user_profile("alice", conv.id, {"name": "Alice"})
    assert updated.user_profile == {"name": "Alice"} and updated.assigned_agent == "companion"
    reopened = open_store().get_conversation("alice", conv.id)
    assert (reopened.assigned_agent, reopened.user_profile) == ("companion", {"name": "Alice"})
    assert store.set_user_profile("alice", conv.id, {}).user_profile == {}
