"""Schema-driven fuzzing of the whole HTTP API, in process, as a signed-in user with an API key:
every operation of the OpenAPI document gets generated requests (valid and invalid); no answer
may be a 5xx, and every answer must match the schema the documentation promises."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from fastapi import FastAPI
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, settings
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from ragchat.api import create_app
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings

from .fakes import FakeEngine

_STATE: dict[str, Any] = {}


def _app(tmp: Path) -> FastAPI:
    settings = Settings(
        data_dir=tmp,
        api=ApiSettings(rate_limit_per_minute=0, upload_max_bytes=64 * 1024),
    )
    return create_app(settings, engine=FakeEngine(), embedder=HashingEmbedder(), bootstrap=False)


@pytest.fixture(scope="module", autouse=True)
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The app's lifespan (its store, engine and executor) runs for the whole module."""
    with TestClient(_STATE["app"]) as client:
        made = client.post("/users", json={"display_name": "fuzzer", "create_api_key": True})
        assert made.status_code in (200, 201), made.text
        _STATE["headers"] = {"Authorization": f"Bearer {made.json()['api_key']['secret']}"}
        yield


_STATE["app"] = _app(Path(tempfile.mkdtemp(prefix="ragchat-fuzz-")))
schema = schemathesis.openapi.from_asgi("/openapi.json", _STATE["app"])


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    suppress_health_check=list(HealthCheck),
)
def test_no_server_errors_and_schema_conformance(case: schemathesis.Case) -> None:
    response = case.call(headers=_STATE["headers"])
    assert response.status_code < 500, (case.method, case.path, response.text[:500])
    case.validate_response(
        response,
        checks=[status_code_conformance, content_type_conformance, response_schema_conformance],
    )
