"""The real MiniLM embedder (packaged weights, loaded once), the hashing embedder and the hit
factory of the heuristic steps' tests, and the shipped reader model."""

from __future__ import annotations

import pytest
from tests.agents.heuristics.conftest import hashing, hit, real_embedder

from ragchat.reader.model import ReaderModel, shipped

__all__ = ["hashing", "hit", "real_embedder"]


@pytest.fixture(scope="session")
def model() -> ReaderModel:
    return shipped()
