"""API test fixtures.

``real_app``/``client``: the real engine (offline) over the sample knowledge bases, built
once per session in a temporary data directory with the real MiniLM embedder. ``make_app``:
cheap apps over a fake engine and the hashing embedder, for error paths and limits."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragchat import resources
from ragchat.agents.bootstrap import ensure_knowledge_bases
from ragchat.agents.config import load_config
from ragchat.api import create_app
from ragchat.embed.base import Embedder
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings

from .fakes import FakeEngine

AppFactory = Callable[..., TestClient]


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("api-data")


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    # Generous rate limit: the suite makes many answer requests from one test client.
    return Settings(data_dir=data_dir, api=ApiSettings(rate_limit_per_minute=10_000))


@pytest.fixture(scope="session")
def embedder(settings: Settings) -> Embedder:
    return resources.embedder(settings)


@pytest.fixture(scope="session")
def real_app(settings: Settings, embedder: Embedder) -> Iterator[FastAPI]:
    ensure_knowledge_bases(settings, load_config(), embedder)
    app = create_app(settings, embedder=embedder, bootstrap=False)
    with TestClient(app):  # runs the lifespan once for the session
        yield app


@pytest.fixture
def client(real_app: FastAPI) -> TestClient:
    """A fresh browser: its own cookie jar, hence its own anonymous user."""
    return TestClient(real_app)


@pytest.fixture
def make_app(tmp_path: Path) -> Iterator[AppFactory]:
    """``make_app(engine=None, **api_settings)`` → a started client over a fake engine."""
    clients: list[TestClient] = []

    def make(engine: Any = None, *, store: Any = None, **api: Any) -> TestClient:
        api.setdefault("rate_limit_per_minute", 10_000)
        settings = Settings(data_dir=tmp_path / f"app{len(clients)}", api=ApiSettings(**api))
        app = create_app(
            settings,
            engine=engine or FakeEngine(),
            store=store,
            embedder=HashingEmbedder(),
            bootstrap=False,
        )
        client = TestClient(app)
        client.__enter__()
        clients.append(client)
        return client

    yield make
    for c in clients:
        c.__exit__(None, None, None)
