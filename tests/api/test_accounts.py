"""Accounts (issue 36): sign-up, sign-in and sign-out with a page session; the same person on
any browser and over their API keys; a claim of what the browser did before signing in; and
OWASP's rules for passwords and sessions (cookie flags, a new session at every sign-in, rate
limited attempts, one answer for an unknown name and a wrong password)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.api.services.accounts import SESSION_COOKIE, WRONG_CREDENTIALS
from ragchat.api.services.identity import COOKIE_NAME
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, AuthSettings, Settings

from .fakes import FakeEngine

PASSWORD = "correct horse battery"
Browser = Callable[..., TestClient]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[Callable[..., Browser]]:
    """``server(**auth_settings)`` → a browser factory over one app (each call of the factory
    is a new browser: its own cookie jar)."""
    apps: list[TestClient] = []

    def start(**auth: Any) -> Browser:
        settings = Settings(
            data_dir=tmp_path / f"data{len(apps)}",
            api=ApiSettings(rate_limit_per_minute=10_000),
            auth=AuthSettings(**auth),
        )
        app = create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder())
        first = TestClient(app)
        first.__enter__()
        apps.append(first)

        def browser(**headers: str) -> TestClient:
            return TestClient(app, headers=headers)

        return browser

    yield start
    for client in apps:
        client.__exit__(None, None, None)


def sign_up(client: TestClient, name: str = "ada", password: str = PASSWORD, **extra: Any) -> Any:
    return client.post("/auth/sign-up", json={"username": name, "password": password, **extra})


def sign_in(client: TestClient, name: str = "ada", password: str = PASSWORD, **extra: Any) -> Any:
    return client.post("/auth/sign-in", json={"username": name, "password": password, **extra})


def test_sign_up_signs_in_with_a_safe_cookie(server: Callable[..., Browser]) -> None:
    browser = server()()
    status = browser.get("/auth").json()
    assert status == {"signed_in": False, "user": None, "sign_up": True, "anonymous": True}
    assert "set-cookie" not in browser.get("/auth").headers  # asking makes no identity

    r = sign_up(browser, "Ada", display_name="Ada Lovelace")
    assert r.status_code == 201, r.text
    cookie = next(c for c in r.headers.get_list("set-cookie") if c.startswith(SESSION_COOKIE))
    for flag in ("HttpOnly", "SameSite=Lax", "Path=/", "Max-Age="):
        assert flag in cookie
    assert r.headers["cache-control"] == "no-store"
    me = browser.get("/users/me").json()
    assert (me["kind"], me["username"], me["display_name"]) == ("account", "ada", "Ada Lovelace")
    assert browser.get("/auth").json()["signed_in"] is True
    # The name is one account whatever its case.
    assert sign_up(server()(), "ADA").status_code == 201  # another server: free there


def test_the_same_person_on_any_browser_and_over_their_keys(
    server: Callable[..., Browser],
) -> None:
    new_browser = server()
    laptop = new_browser()
    assert sign_up(laptop).status_code == 201
    laptop.post("/kb", json={"name": "sailing", "description": "the club"})
    conv = laptop.post("/conversations", json={"title": "Regatta"}).json()["id"]
    key = laptop.post("/users/me/api-keys", json={"name": "script"}).json()["secret"]

    phone = new_browser()
    assert [c["id"] for c in phone.get("/conversations").json()] == []  # not signed in
    r = sign_in(phone, "Ada")
    assert r.status_code == 200, r.text
    assert [c["id"] for c in phone.get("/conversations").json()] == [conv]
    assert "sailing" in [kb["name"] for kb in phone.get("/kb").json()]
    keys = phone.get("/users/me/api-keys").json()
    assert [k["name"] for k in keys] == ["script"]

    script = new_browser(Authorization=f"Bearer {key}")
    assert script.get("/users/me").json()["username"] == "ada"
    models = [m["id"] for m in script.get("/v1/models").json()["data"]]
    assert "kb/sailing" in models
    assert [c["id"] for c in script.get("/conversations").json()] == [conv]
    # A knowledge base made with the key shows in the page, and the key can be revoked there.
    script.post("/kb", json={"name": "tides"})
    assert "tides" in [kb["name"] for kb in phone.get("/kb").json()]
    phone.delete(f"/users/me/api-keys/{keys[0]['id']}")
    assert script.get("/users/me").status_code == 401


def test_wrong_name_and_wrong_password_get_one_answer(server: Callable[..., Browser]) -> None:
    browser = server()
    assert sign_up(browser()).status_code == 201
    wrong_password = sign_in(browser(), "ada", "not the password")
    unknown_name = sign_in(browser(), "nobody", "not the password")
    for r in (wrong_password, unknown_name):
        assert r.status_code == 401
        assert r.json()["error"]["message"] == WRONG_CREDENTIALS
        assert SESSION_COOKIE not in r.headers.get("set-cookie", "")
    assert wrong_password.json()["error"]["type"] == unknown_name.json()["error"]["type"]


def test_sign_in_attempts_are_rate_limited_per_name(server: Callable[..., Browser]) -> None:
    browser = server(sign_in_attempts_per_minute=3)
    assert sign_up(browser()).status_code == 201
    codes = [sign_in(browser(), "ada", f"guess {i}").status_code for i in range(3)]
    assert codes == [401, 401, 401]
    blocked = sign_in(browser(), "ada", PASSWORD)  # even the right password, for a minute
    assert blocked.status_code == 429 and int(blocked.headers["retry-after"]) >= 1
    assert sign_in(browser(), "someone-else", "guess").status_code == 401  # other names: not


def session_of(response: Any) -> str:
    """The session token a response sets."""
    for header in response.headers.get_list("set-cookie"):
        if header.startswith(f"{SESSION_COOKIE}="):
            return str(header.split(";")[0].split("=", 1)[1])
    raise AssertionError(f"no session cookie in {response.headers}")


def holding(browser: Browser, token: str) -> TestClient:
    tab = browser()
    tab.cookies.set(SESSION_COOKIE, token)
    return tab


def test_every_sign_in_is_a_new_session_and_sign_out_ends_it(
    server: Callable[..., Browser],
) -> None:
    browser = server()
    assert sign_up(browser()).status_code == 201
    fixed = holding(browser, "chosen-by-an-attacker")  # session fixation
    assert fixed.get("/auth").json()["signed_in"] is False
    tab = browser()
    first = session_of(sign_in(tab))
    assert first and first != "chosen-by-an-attacker"
    second = session_of(sign_in(tab))
    assert second != first
    # The old one ended at sign-in (the browser's previous session).
    assert holding(browser, first).get("/auth").json()["signed_in"] is False

    copy = holding(browser, second)
    assert copy.get("/auth").json()["signed_in"] is True
    out = tab.post("/auth/sign-out")
    assert out.status_code == 204 and "Max-Age=0" in out.headers["set-cookie"]
    assert copy.get("/auth").json()["signed_in"] is False  # ended on the server, not just here


def test_a_password_change_ends_the_other_sessions(server: Callable[..., Browser]) -> None:
    browser = server()
    laptop, phone = browser(), browser()
    assert sign_up(laptop).status_code == 201
    assert sign_in(phone).status_code == 200
    wrong = laptop.post(
        "/auth/password", json={"current_password": "nope nope", "new_password": "x" * 12}
    )
    assert wrong.status_code == 401
    r = laptop.post(
        "/auth/password", json={"current_password": PASSWORD, "new_password": "a new long one"}
    )
    assert r.status_code == 204
    assert laptop.get("/auth").json()["signed_in"] is True
    assert phone.get("/auth").json()["signed_in"] is False
    assert sign_in(browser(), password=PASSWORD).status_code == 401
    assert sign_in(browser(), password="a new long one").status_code == 200


def test_passwords_and_names_are_checked(server: Callable[..., Browser]) -> None:
    browser = server()
    short = sign_up(browser(), password="short")
    assert short.status_code == 422 and "at least 8" in short.json()["error"]["message"]
    assert sign_up(browser(), name="a b").status_code == 422
    assert sign_up(browser(), name="ada").status_code == 201
    taken = sign_up(browser(), name=" ADA ")
    assert taken.status_code == 409


def test_a_session_acts_only_from_the_page_itself(server: Callable[..., Browser]) -> None:
    browser = server()
    tab = browser()
    assert sign_up(tab).status_code == 201
    forged = tab.post(
        "/conversations", json={"title": "x"}, headers={"Origin": "http://evil.example"}
    )
    assert forged.status_code == 403
    # Nor can another site sign a visitor in or up (to an account of its choosing).
    evil = {"Origin": "http://evil.example"}
    assert (
        tab.post(
            "/auth/sign-in", json={"username": "ada", "password": PASSWORD}, headers=evil
        ).status_code
        == 403
    )
    assert (
        browser()
        .post("/auth/sign-up", json={"username": "eve", "password": PASSWORD}, headers=evil)
        .status_code
        == 403
    )
    own = tab.post("/conversations", json={"title": "x"}, headers={"Origin": "http://testserver"})
    assert own.status_code == 201
    assert tab.get("/conversations", headers={"Origin": "http://evil.example"}).status_code == 200


def test_sign_in_claims_what_the_browser_did_before(server: Callable[..., Browser]) -> None:
    browser = server()
    assert sign_up(browser(), "ada").status_code == 201
    anonymous = browser()
    before = anonymous.get("/users/me").json()["id"]
    conv = anonymous.post("/conversations", json={"title": "before"}).json()["id"]
    anonymous.post("/kb", json={"name": "notes"})
    r = sign_in(anonymous, "ada")
    assert r.json()["claimed"] == {"conversations": 1, "knowledge_bases": 1, "api_keys": 0}
    cleared = [c for c in r.headers.get_list("set-cookie") if c.startswith(f"{COOKIE_NAME}=")]
    assert cleared and "Max-Age=0" in cleared[0]
    other = browser()
    assert sign_in(other, "ada").status_code == 200
    assert conv in [c["id"] for c in other.get("/conversations").json()]
    assert "notes" in [kb["name"] for kb in other.get("/kb").json()]
    # The old anonymous cookie no longer signs anyone in as that identity.
    replay = browser()
    replay.cookies.set(COOKIE_NAME, anonymous.app.state.ragchat.signer.sign(before))
    assert replay.get("/users/me").json()["id"] != before

    # Without claim, nothing moves.
    stranger = browser()
    stranger.post("/conversations", json={"title": "mine"})
    r = sign_in(stranger, "ada", claim=False)
    assert r.json()["claimed"] == {"conversations": 0, "knowledge_bases": 0, "api_keys": 0}


def test_sign_up_keeps_what_a_key_made(server: Callable[..., Browser]) -> None:
    """The README's first steps made a user and a key with curl: signing up with that key
    makes it an account, so the page shows what the key made."""
    browser = server()
    made = browser().post("/users", json={"display_name": "Ada", "create_api_key": True}).json()
    key = made["api_key"]["secret"]
    script = browser(Authorization=f"Bearer {key}")
    script.post("/kb", json={"name": "wildlife"})
    r = sign_up(script, "ada")
    assert r.status_code == 201 and r.json()["user"]["id"] == made["id"]
    assert r.json()["user"]["display_name"] == "Ada"  # the key's user keeps its name
    page = browser()
    assert sign_in(page, "ada").status_code == 200
    assert "wildlife" in [kb["name"] for kb in page.get("/kb").json()]


def test_the_operator_decides_who_may_use_the_server(server: Callable[..., Browser]) -> None:
    browser = server(sign_up=False, anonymous=False)
    tab = browser()
    assert tab.get("/auth").json() == {
        "signed_in": False,
        "user": None,
        "sign_up": False,
        "anonymous": False,
    }
    assert sign_up(tab).status_code == 403
    assert tab.get("/users/me").status_code == 401
    assert tab.post("/chat", json={"message": "hello"}).status_code == 401
    assert tab.post("/users", json={}).status_code == 403
    assert tab.get("/v1/models").status_code == 401
    accounts = tab.app.state.ragchat.accounts
    accounts.add("ada", PASSWORD)
    assert sign_in(tab).status_code == 200
    assert tab.post("/chat", json={"message": "hello"}).status_code == 200


def test_the_page_choice_is_remembered_for_the_person(server: Callable[..., Browser]) -> None:
    browser = server()
    laptop = browser()
    assert sign_up(laptop).status_code == 201
    laptop.post("/kb", json={"name": "sailing"})
    r = laptop.patch("/users/me", json={"answer_from": {"kb": "Sailing"}})
    assert r.status_code == 200 and r.json()["answer_from"] == {"kb": "sailing", "agent": None}
    phone = browser()
    sign_in(phone)
    assert phone.get("/users/me").json()["answer_from"]["kb"] == "sailing"
    laptop.patch("/kb/sailing", json={"name": "club"})
    assert phone.get("/users/me").json()["answer_from"]["kb"] == "club"  # follows a rename
    r = laptop.patch("/users/me", json={"answer_from": {"agent": "echo"}})
    assert r.json()["answer_from"] == {"kb": None, "agent": "echo"}
    assert laptop.patch("/users/me", json={"answer_from": {"agent": "nope"}}).status_code == 400
    assert laptop.patch("/users/me", json={"answer_from": {"kb": "missing"}}).status_code == 404
