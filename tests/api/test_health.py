"""/health, the web page and its security headers, request ids, OpenAPI."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient

from ragchat.embed.fake import HashingEmbedder
from ragchat.errors import StoreUnavailable
from ragchat.types import Chunk
from ragchat.vectorstores.embedded import generations as gens
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .conftest import AppFactory


def test_health_names_components_and_knowledge_bases(client: TestClient) -> None:
    r = client.get("/health")
    assert r.status_code == 200
    body = r.json()
    assert body["status"] == "healthy" and body["degraded"] == []
    assert body["version"]
    comps = body["components"]
    assert set(comps) == {"store", "embedder", "reranker", "llm"}
    assert comps["store"]["status"] == "ok"
    assert "MiniLM" in comps["embedder"]["detail"]
    assert comps["llm"] == {
        "status": "ok",
        "detail": "offline extractive answerer",
        "backend": "offline",
    }
    # No cross-encoder weights ship offline: reported, but not a degradation.
    assert comps["reranker"]["status"] in ("off", "ok")
    if comps["reranker"]["status"] == "off":
        assert comps["reranker"]["detail"].startswith("no reranker")
    medical = body["knowledge_bases"]["medical"]
    assert medical["status"] == "ok" and medical["configured"] is True
    assert medical["documents"] >= 9 and medical["chunks"] > 0 and medical["vectors"] > 0
    assert set(body["agents"]) >= {"medical", "tutor", "companion"}


class BrokenStore:
    """Every repository call fails as an unreachable database does."""

    engine = None

    def __getattr__(self, name: str) -> object:
        def fail(*args: object, **kwargs: object) -> object:
            raise StoreUnavailable("database unavailable: connection refused (10.0.0.5)")

        return fail


def test_store_outage_degrades_health_and_gives_503(make_app: AppFactory) -> None:
    client = make_app(store=BrokenStore())
    health = client.get("/health").json()
    assert health["status"] == "degraded" and health["degraded"] == ["store"]
    r = client.post("/chat", json={"message": "hello"})
    assert r.status_code == 503
    assert r.headers["Retry-After"]
    error = r.json()["error"]
    assert error["type"] == "store_unavailable"
    assert "10.0.0.5" not in error["message"]  # driver details stay in the log


def test_root_page_has_strict_security_headers(client: TestClient) -> None:
    r = client.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    csp = r.headers["content-security-policy"]
    for directive in (
        "default-src 'self'",
        "img-src 'self' data:",
        "object-src 'none'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
    ):
        assert directive in csp
    assert r.headers["x-content-type-options"] == "nosniff"
    assert r.headers["referrer-policy"] == "no-referrer"


def test_request_id_is_echoed_or_generated(client: TestClient) -> None:
    assert (
        client.get("/health", headers={"X-Request-ID": "abc-123"}).headers["x-request-id"]
        == "abc-123"
    )
    generated = client.get("/health", headers={"X-Request-ID": "bad id\n"}).headers["x-request-id"]
    assert generated and generated != "bad id\n" and len(generated) == 32


def test_openapi_documents_every_endpoint(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in (
        "/health",
        "/chat",
        "/chat/stream",
        "/query",
        "/users",
        "/users/me/api-keys",
        "/conversations",
        "/conversations/{conversation_id}",
        "/conversations/{conversation_id}/title",
        "/conversations/{conversation_id}/messages",
        "/end-session",
        "/kb/{name}/documents",
        "/kb/{name}/documents/{doc_id}",
        "/jobs/{job_id}",
        "/v1/chat/completions",
        "/v1/models",
    ):
        assert path in paths, path


def test_a_knowledge_base_that_cannot_be_opened_degrades_health_by_name(
    make_app: AppFactory, tmp_path: Path
) -> None:
    root = tmp_path / "app0" / "kb"  # make_app's first data directory
    kb = KnowledgeBase.create(root, "notes", HashingEmbedder())
    kb.add_chunks([Chunk("n_c0", "n", "quokkas eat leaves", 0, None, False, {})])
    kb.close()
    client = make_app()
    before = client.get("/health").json()
    assert before["knowledge_bases"]["notes"]["status"] == "ok"
    assert "kb:notes" not in before["degraded"]
    gen = gens.current(root / "notes")
    assert gen is not None
    (gen.dir / "bm25_labels.npy").unlink()  # damage from outside: the probe sees it at once
    health = client.get("/health").json()
    assert health["status"] == "degraded" and "kb:notes" in health["degraded"]
    notes = health["knowledge_bases"]["notes"]
    assert notes["status"] == "broken" and notes["repair"] == "ragchat kb repair notes"
    assert "BM25" in notes["detail"]
    assert str(tmp_path) not in json.dumps(health)  # names and counts, never a path


def test_a_knowledge_base_whose_committed_generation_is_gone_is_broken_not_missing(
    make_app: AppFactory, tmp_path: Path
) -> None:
    root = tmp_path / "app0" / "kb"
    KnowledgeBase.create(root, "notes", HashingEmbedder()).close()
    (root / "notes" / gens.CURRENT).write_text("g00000042\n")
    health = make_app().get("/health").json()
    notes = health["knowledge_bases"]["notes"]
    assert notes["status"] == "broken" and "kb:notes" in health["degraded"]
    assert "g00000042" in notes["detail"] and str(tmp_path) not in json.dumps(health)
