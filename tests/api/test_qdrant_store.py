"""The document endpoints and private uploads, end to end, with knowledge bases in Qdrant
(local mode): the same flows as ``test_documents.py`` must hold on either store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragchat.api import create_app
from ragchat.embed.base import Embedder
from ragchat.settings import ApiSettings, Settings, VectorStoreSettings

from . import test_documents

pytest.importorskip("qdrant_client")


@pytest.fixture(scope="module")
def qdrant_app(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[FastAPI]:
    from ragchat.vectorstores.qdrant.conn import release

    settings = Settings(
        data_dir=tmp_path_factory.mktemp("qdrant-api"),
        api=ApiSettings(rate_limit_per_minute=10_000),
        vector_store=VectorStoreSettings(backend="qdrant"),
    )
    app = create_app(settings, embedder=embedder, bootstrap=False)
    with TestClient(app):
        yield app
    release(settings)
    assert (Path(settings.data_dir) / "qdrant").is_dir()
    assert not (Path(settings.data_dir) / "kb").exists()  # nothing went to the embedded store


def test_upload_ingest_search_delete_on_qdrant(qdrant_app: FastAPI) -> None:
    test_documents.test_upload_ingest_search_delete(TestClient(qdrant_app))


def test_an_upload_grounds_only_its_owners_answers_on_qdrant(qdrant_app: FastAPI) -> None:
    test_documents.test_an_upload_grounds_only_its_owners_answers(qdrant_app)
