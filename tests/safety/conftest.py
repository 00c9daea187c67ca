"""Shared fixtures: the real all-MiniLM-L6-v2 embedder (loaded once) and the offline classifier
built on it, plus the labelled calibration, hold-out and ordinary-distress sets."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.embed.base import Embedder
from ragchat.safety.evaluate import load_labelled
from ragchat.safety.offline import OfflineSafetyClassifier

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    from ragchat.embed.factory import load_embedder
    from ragchat.settings import Settings

    return load_embedder(Settings())


@pytest.fixture(scope="session")
def offline(embedder: Embedder) -> OfflineSafetyClassifier:
    return OfflineSafetyClassifier(embedder)


@pytest.fixture(scope="session")
def labelled() -> list[tuple[str, str]]:
    return load_labelled(HERE / "labelled.yaml")


@pytest.fixture(scope="session")
def holdout() -> list[tuple[str, str]]:
    return load_labelled(HERE / "holdout.yaml")


@pytest.fixture(scope="session")
def distress() -> list[tuple[str, str]]:
    """Ordinary sadness, loneliness, stress and grief: all labelled safe."""
    return load_labelled(HERE / "distress.yaml")
