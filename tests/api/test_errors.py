"""Error mapping: outages are 503 with a message, unknown failures a generic 500; never a
stack trace."""

from __future__ import annotations

from ragchat.errors import LLMUnavailable

from .conftest import AppFactory
from .fakes import FakeEngine


def test_llm_outage_is_503_with_a_message(make_app: AppFactory) -> None:
    client = make_app(FakeEngine(error=LLMUnavailable("connect to 10.9.9.9:11434 refused")))
    r = client.post("/chat", json={"message": "hello"})
    assert r.status_code == 503 and r.headers["Retry-After"] == "5"
    error = r.json()["error"]
    assert error["type"] == "llm_unavailable"
    assert "unavailable" in error["message"] and "10.9.9.9" not in error["message"]
    assert error["request_id"] == r.headers["x-request-id"]
    # The user's message was stored before the model call; the failed reply is recorded.
    conv = client.get("/conversations").json()[0]
    messages = client.get(f"/conversations/{conv['id']}/messages").json()
    assert [(m["role"], m["status"]) for m in messages] == [
        ("user", "complete"),
        ("assistant", "failed"),
    ]


def test_unexpected_errors_are_a_generic_500(make_app: AppFactory) -> None:
    client = make_app(FakeEngine(error=RuntimeError("secret internals at /srv/app.py:12")))
    r = client.post("/chat", json={"message": "hello"})
    assert r.status_code == 500
    assert r.json()["error"]["type"] == "internal_error"
    assert "secret" not in r.text and "Traceback" not in r.text
    assert r.headers["x-request-id"]


def test_error_shapes(make_app: AppFactory) -> None:
    client = make_app()
    not_found = client.get("/no/such/route")
    assert not_found.status_code == 404 and not_found.json()["error"]["type"] == "not_found"
    invalid = client.post("/chat", json={"message": ""})
    assert invalid.status_code == 422
    assert invalid.json()["error"]["message"].startswith("Invalid request: message")
    bad_json = client.post("/chat", content=b"{nope", headers={"Content-Type": "application/json"})
    assert bad_json.status_code == 422
    wrong_method = client.put("/chat", json={})
    assert wrong_method.status_code == 405
