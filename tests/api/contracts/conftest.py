"""Contract tests of the replaced systems' clients (one module per seed document in
``../shared/seeds``): each talks to the app as that client does, through a plain ``httpx``
client. Clients without an identity send no cookie: every request is a stranger's."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient


def _drop_cookies(request: httpx.Request) -> None:
    request.headers.pop("cookie", None)


@pytest.fixture
def cookieless(real_app: FastAPI) -> Iterator[httpx.Client]:
    """A client that never sends a cookie (000, 001, 004: their clients keep no identity).
    ``TestClient`` is an ``httpx.Client`` over the app in process; only httpx's API is used."""
    client = TestClient(real_app)
    client.event_hooks = {"request": [_drop_cookies], "response": []}
    yield client


@pytest.fixture
def browser(real_app: FastAPI) -> Iterator[httpx.Client]:
    """A client that keeps its cookie (003's UI keeps a cookie identity)."""
    yield TestClient(real_app)


def signed_in(client: httpx.Client, name: str) -> dict[str, str]:
    """Headers of a new named user with an API key (``POST /users`` → ``api_key.secret``)."""
    r = client.post("/users", json={"display_name": name, "create_api_key": True})
    assert r.status_code == 201, r.text
    return {"Authorization": f"Bearer {r.json()['api_key']['secret']}"}
