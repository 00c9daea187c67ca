"""Clients as the web page is one: identified before they store anything."""

from __future__ import annotations

from fastapi.testclient import TestClient


def signed_in(client: TestClient) -> TestClient:
    """``client`` after its first contact (the page asks ``GET /users/me`` first): it holds the
    identity cookie, so its uploads and new conversations have an owner it can come back as."""
    r = client.get("/users/me")
    assert r.status_code == 200, r.text
    return client
