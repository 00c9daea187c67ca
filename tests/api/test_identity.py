"""Identity: the signed cookie (anonymous users that survive reloads) and API keys."""

from __future__ import annotations

from fastapi.testclient import TestClient

from ragchat.api.services.identity import COOKIE_NAME

from .conftest import AppFactory


def test_cookie_creates_an_anonymous_user_once_and_keeps_it(make_app: AppFactory) -> None:
    client = make_app()
    first = client.get("/users/me")
    cookie = first.headers["set-cookie"]
    assert cookie.startswith(f"{COOKIE_NAME}=")
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Path=/" in cookie
    me = first.json()
    assert me["kind"] == "anonymous"
    second = client.get("/users/me")
    assert second.json()["id"] == me["id"]
    assert "set-cookie" not in second.headers  # no new identity on later requests
    conv = client.post("/conversations", json={}).json()["id"]
    assert [c["id"] for c in client.get("/conversations").json()] == [conv]


def test_a_tampered_cookie_is_a_new_user(make_app: AppFactory) -> None:
    client = make_app()
    me = client.get("/users/me").json()["id"]
    forged = TestClient(client.app, cookies={COOKIE_NAME: me})  # the bare id, unsigned
    assert forged.get("/users/me").json()["id"] != me


def test_post_users_is_idempotent_for_an_identified_caller(make_app: AppFactory) -> None:
    client = make_app()
    created = client.post("/users", json={})
    assert created.status_code == 201 and created.json()["kind"] == "anonymous"
    again = client.post("/users", json={"display_name": "ignored"})
    assert again.status_code == 200 and again.json()["id"] == created.json()["id"]


def test_named_user_with_api_key(make_app: AppFactory) -> None:
    browser = make_app()
    created = TestClient(browser.app).post(
        "/users", json={"display_name": "Ada", "create_api_key": True}
    )
    assert created.status_code == 201
    user = created.json()
    assert user["kind"] == "named" and user["display_name"] == "Ada"
    secret = user["api_key"]["secret"]
    assert secret.startswith("rc_") and user["api_key"]["prefix"] == secret[:8]

    bearer = TestClient(browser.app, headers={"Authorization": f"Bearer {secret}"})
    header = TestClient(browser.app, headers={"X-API-Key": secret})
    assert bearer.get("/users/me").json()["id"] == user["id"]
    assert header.get("/users/me").json()["id"] == user["id"]
    assert "set-cookie" not in bearer.get("/users/me").headers
    cid = bearer.post("/chat", json={"message": "hello"}).json()["session_id"]
    assert [c["id"] for c in header.get("/conversations").json()] == [cid]
    # The key is not usable by anyone else's browser session.
    assert browser.get(f"/conversations/{cid}").status_code == 404

    keys = bearer.get("/users/me/api-keys").json()
    assert len(keys) == 1 and "secret" not in keys[0]
    extra = bearer.post("/users/me/api-keys", json={"name": "ci"})
    assert extra.status_code == 201 and extra.json()["secret"] != secret
    assert bearer.delete(f"/users/me/api-keys/{keys[0]['id']}").status_code == 204
    revoked = bearer.get("/users/me")
    assert revoked.status_code == 401 and revoked.json()["error"]["type"] == "unauthorized"
    assert (
        TestClient(browser.app, headers={"X-API-Key": extra.json()["secret"]})
        .get("/users/me")
        .json()["id"]
        == user["id"]
    )


def test_wrong_api_key_is_401_not_a_new_user(make_app: AppFactory) -> None:
    client = make_app()
    r = client.get("/conversations", headers={"Authorization": "Bearer rc_nope"})
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert "set-cookie" not in r.headers


def test_api_key_needs_a_name(make_app: AppFactory) -> None:
    r = make_app().post("/users", json={"create_api_key": True})
    assert r.status_code == 400
