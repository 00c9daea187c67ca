"""Clients as the web page is one: identified before they store anything; and a shared
knowledge base where several of them upload side by side."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from ragchat.ingestion.ingest import ingest_paths
from ragchat.ingestion.job import chunker_for


def signed_in(client: TestClient) -> TestClient:
    """``client`` after its first contact (the page asks ``GET /users/me`` first): it holds the
    identity cookie, so its uploads and new conversations have an owner it can come back as."""
    r = client.get("/users/me")
    assert r.status_code == 200, r.text
    return client


def shared_kb(app: Any, name: str) -> None:
    """A knowledge base everyone shares (as ``ragchat ingest`` makes one), holding one shared
    document: the place where several people's private uploads sit side by side."""
    state = app.state.ragchat
    seed = Path(state.settings.data_dir) / f"{name}-rules.md"
    seed.write_text("# House rules\n\nBe kind to each other and tidy up after every meeting.\n")
    with state.registry.writing(name, create=True) as kb:
        ingest_paths(kb, [seed], chunker_for(kb, state.settings.chunking))


def own_documents(client: TestClient, kb: str) -> list[dict[str, Any]]:
    """The caller's uploads in ``kb`` (the shared seed left out)."""
    return [d for d in client.get(f"/kb/{kb}/documents").json() if not d["shared"]]
