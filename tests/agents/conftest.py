"""Session fixtures: the real MiniLM embedder (packaged weights, ~3 s) and the four sample
knowledge bases ingested once into a temporary data directory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragchat import resources
from ragchat.agents.bootstrap import ensure_knowledge_bases
from ragchat.agents.config import AppConfig, load_config
from ragchat.agents.engine import ChatEngine
from ragchat.agents.factory import build_engine
from ragchat.embed.base import Embedder
from ragchat.settings import Settings
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .helpers import CachingEmbedder, EngineFactory


@pytest.fixture(scope="session")
def data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("agents-data")


@pytest.fixture(scope="session")
def settings(data_dir: Path) -> Settings:
    return Settings(data_dir=data_dir, config_file=None)


@pytest.fixture(scope="session")
def embedder(settings: Settings) -> Embedder:
    return CachingEmbedder(resources.embedder(settings))


@pytest.fixture(scope="session")
def app_config() -> AppConfig:
    return load_config()


@pytest.fixture(scope="session")
def kbs(settings: Settings, app_config: AppConfig, embedder: Embedder) -> dict[str, KnowledgeBase]:
    """The sample KBs, ingested once and opened once (tests must not modify them)."""
    ensure_knowledge_bases(settings, app_config, embedder)
    return {
        name: KnowledgeBase.open(settings.kb_root, name, embedder)
        for name in app_config.knowledge_bases
    }


@pytest.fixture(scope="session")
def make_engine(
    settings: Settings,
    app_config: AppConfig,
    embedder: Embedder,
    kbs: dict[str, KnowledgeBase],
) -> EngineFactory:
    """``make_engine(config=None, **build_engine options)``: over the sample KBs opened once,
    with no safety classifier unless one is given."""

    def make(config: AppConfig | None = None, **options: Any) -> ChatEngine:
        options.setdefault("kb_opener", kbs.__getitem__)
        options.setdefault("safety", None)
        return build_engine(
            options.pop("settings", settings), config or app_config, embedder=embedder, **options
        )

    return make


@pytest.fixture(scope="session")
def engine(make_engine: EngineFactory) -> ChatEngine:
    """The offline engine (no chat model, no safety classifier) over the default config."""
    return make_engine()
