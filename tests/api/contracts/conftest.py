"""Contract tests of the replaced systems' clients (one module per seed document in
``../shared/seeds``): each talks to the app as that client does, through a plain ``httpx``
client. Clients without an identity send no cookie: every request is a stranger's."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragchat.api.app import create_app
from ragchat.embed.base import Embedder
from ragchat.settings import CompatSettings, Settings

# One deployment's ``Settings.compat`` (README, "Coming from …"): the companion answers turns
# that name no agent (001), seed 000's agent names, the tutor's refusal in the book's words.
DEPLOYED = CompatSettings(
    default_agent="companion",
    agent_aliases={"support": "emotional_support", "medical": "rag_agent"},
    no_answer_messages={"tutor": "Not in this book, sorry."},
)


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


@pytest.fixture(scope="session")
def deployed(
    real_app: FastAPI,
    settings: Settings,
    embedder: Embedder,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[httpx.Client]:
    """A cookieless client of a server with ``DEPLOYED`` set, over a copy of the sample
    knowledge bases ``real_app`` ingested (one server per data directory)."""
    data = tmp_path_factory.mktemp("deployed")
    shutil.copytree(settings.kb_root, data / "kb")
    custom = settings.model_copy(update={"data_dir": data, "compat": DEPLOYED})
    with TestClient(create_app(custom, embedder=embedder, bootstrap=False)) as client:
        client.event_hooks = {"request": [_drop_cookies], "response": []}
        yield client
