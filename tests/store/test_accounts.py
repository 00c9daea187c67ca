"""Accounts and page sessions in the store (schema v6), on SQLite and Postgres alike: logins
are unique, sessions end when idle or past their end, a claim moves an identity's rows."""

from __future__ import annotations

from datetime import timedelta

import pytest

from ragchat.errors import Conflict
from ragchat.store import SqlStore

from .conftest import FakeClock

DAY = timedelta(days=1)


def test_an_account_has_one_login_and_keeps_only_a_hash(store: SqlStore) -> None:
    ada = store.create_account("ada", "$argon2id$hash", display_name="Ada")
    assert (ada.kind, ada.login, ada.display_name) == ("account", "ada", "Ada")
    with pytest.raises(Conflict):
        store.create_account("ada", "$argon2id$other")
    found = store.account_for_login("ada")
    assert found is not None and found[0].id == ada.id and found[1] == "$argon2id$hash"
    assert store.account_for_login("bob") is None
    assert [u.login for u in store.list_accounts()] == ["ada"]


def test_an_anonymous_identity_can_become_the_account(store: SqlStore) -> None:
    anon = store.ensure_user(None)
    conv = store.create_conversation(anon.id, "before")
    made = store.create_account("ada", "h", user_id=anon.id)
    assert made.id == anon.id and made.kind == "account"
    assert [c.id for c in store.list_conversations(anon.id)] == [conv.id]
    with pytest.raises(Conflict):  # an account cannot become another one
        store.create_account("ada2", "h", user_id=anon.id)


def test_a_claim_moves_the_identitys_rows_and_marks_it(store: SqlStore) -> None:
    ada = store.create_account("ada", "h")
    anon = store.ensure_user(None)
    conv = store.create_conversation(anon.id, "before")
    store.create_kb("notes", anon.id)
    store.create_api_key(anon.id, "script")
    store.create_job(anon.id, "notes", total=1)
    store.set_preferences(anon.id, {"answer_from": {"kb": "notes"}})
    claimed = store.claim(anon.id, ada.id)
    assert (claimed.conversations, claimed.knowledge_bases, claimed.api_keys) == (1, 1, 1)
    assert [c.id for c in store.list_conversations(ada.id)] == [conv.id]
    assert store.find_kb("notes").owner_id == ada.id  # type: ignore[union-attr]
    assert len(store.list_api_keys(ada.id)) == 1 and store.list_jobs(ada.id)
    assert store.get_user(anon.id).merged_into == ada.id
    assert store.merged_ids(ada.id) == [anon.id]
    assert store.get_user(ada.id).preferences == {"answer_from": {"kb": "notes"}}
    again = store.claim(anon.id, ada.id)  # claimed once only
    assert (again.conversations, again.knowledge_bases) == (0, 0)
    assert store.claim(ada.id, ada.id).conversations == 0


def test_sessions_end_when_idle_past_their_end_and_on_demand(
    store: SqlStore, clock: FakeClock
) -> None:
    ada = store.create_account("ada", "h")
    now = clock()
    store.start_web_session(ada.id, "a" * 64, now + 30 * DAY)
    store.start_web_session(ada.id, "b" * 64, now + 30 * DAY)
    store.start_web_session(ada.id, "c" * 64, now + 2 * DAY)
    idle = 7 * DAY
    assert store.web_session_user("a" * 64, idle) == ada.id
    assert store.web_session_user("z" * 64, idle) is None
    clock.advance(3 * DAY)
    assert store.web_session_user("c" * 64, idle) is None  # past its end
    assert store.web_session_user("a" * 64, idle) == ada.id  # used: its idle time restarts
    clock.advance(5 * DAY)
    assert store.web_session_user("a" * 64, idle) == ada.id
    assert store.web_session_user("b" * 64, idle) is None  # unused for 8 days
    assert store.expire_web_sessions(idle) == 2  # b and c are deleted
    store.end_web_session("a" * 64)
    assert store.web_session_user("a" * 64, idle) is None
    store.start_web_session(ada.id, "d" * 64, clock() + DAY)
    store.start_web_session(ada.id, "e" * 64, clock() + DAY)
    assert store.end_web_sessions(ada.id, keep="e" * 64) == 1
    assert store.web_session_user("e" * 64, idle) == ada.id


def test_knowledge_base_names_are_one_without_regard_to_case(store: SqlStore) -> None:
    store.create_kb("Sailing", None)
    with pytest.raises(Conflict):
        store.create_kb("sailing", None)
    assert store.find_kb("SAILING").name == "Sailing"  # type: ignore[union-attr]
    store.create_kb("tides", None)
    with pytest.raises(Conflict):
        store.update_kb("tides", name="sailing")
    assert store.update_kb("Sailing", name="sailing").name == "sailing"
