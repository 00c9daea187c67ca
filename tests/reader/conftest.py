"""The real MiniLM embedder (packaged weights, loaded once) and the shipped reader model."""

from __future__ import annotations

import pytest

from ragchat.embed.base import Embedder
from ragchat.reader.model import ReaderModel, shipped
from ragchat.settings import Settings


@pytest.fixture(scope="session")
def real_embedder() -> Embedder:
    from ragchat.embed.factory import load_embedder

    return load_embedder(Settings(config_file=None))


@pytest.fixture(scope="session")
def model() -> ReaderModel:
    return shipped()
