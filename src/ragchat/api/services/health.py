"""``GET /health``: is each part working, and how big is each knowledge base.

``status`` is "healthy" or "degraded": "healthy" is the word the replaced systems' clients
and load-balancer checks compare against (ragchat's own page reads it too); ``vectors`` is the
total vector count over the knowledge bases (the companion's clients show it).

Overall "degraded" when the store, the embedder, the language model backend (when one is
configured) or a configured knowledge base fails, or when any knowledge base on disk cannot be
opened (status "broken", with what is wrong and the ``ragchat kb repair`` command; a quick
check of headers and counts, milliseconds per knowledge base). A missing reranker is reported
("no reranker: <reason>") but does not degrade: retrieval runs without it, which is the
offline default."""

from __future__ import annotations

import logging
import os
import time
from dataclasses import dataclass, field
from typing import Any

import httpx

from ragchat import __version__
from ragchat.embed.base import Embedder
from ragchat.retrieve.factory import shared_reranker
from ragchat.settings import READER_RERANKER, Settings
from ragchat.store.base import Store
from ragchat.vectorstores.registry import KnowledgeBaseRegistry

from .engine_loop import Engine

log = logging.getLogger(__name__)
LLM_PROBE_TTL_S = 30.0
LLM_PROBE_TIMEOUT_S = 3.0


@dataclass
class Component:
    status: str  # "ok" | "degraded" | "off"
    detail: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


class HealthService:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        engine: Engine,
        embedder: Embedder,
        registry: KnowledgeBaseRegistry,
    ) -> None:
        self.settings = settings
        self.store = store
        self.engine = engine
        self.embedder = embedder
        self.registry = registry
        self._llm_probe: tuple[float, Component] | None = None

    def report(self) -> dict[str, Any]:
        """Blocking (a SELECT 1, an HTTP probe, manifest reads): call from a worker thread."""
        components = {
            "store": self._store(),
            "embedder": Component(
                "ok",
                f"{self.embedder.model_name} (dim {self.embedder.dim})",
                dict(getattr(self.embedder, "stats", dict)()),  # the fast path's caches
            ),
            "reranker": self._reranker(),
            "llm": self._llm(),
        }
        kbs, kb_problems = self.knowledge_bases()
        degraded = [n for n, c in components.items() if c.status == "degraded"] + kb_problems
        vectors = sum(int(kb.get("vectors") or 0) for kb in kbs.values())
        return {
            "status": "degraded" if degraded else "healthy",
            "version": __version__,
            "vectors": vectors,
            "degraded": degraded,
            "components": {
                name: {"status": c.status, "detail": c.detail, **c.extra}
                for name, c in components.items()
            },
            "knowledge_bases": kbs,
            "agents": sorted(self.engine.agents),
            # Which server process answered (``serve --workers N`` runs several on one port).
            "worker_pid": os.getpid(),
        }

    def _store(self) -> Component:
        try:
            self.store.ping()
        except Exception as exc:
            log.warning("health: store check failed: %s", exc)
            return Component("degraded", "database unreachable")
        return Component("ok", "reachable")

    def _reranker(self) -> Component:
        if not self.settings.retrieval.rerank or not self.settings.reranker.model:
            return Component("off", "no reranker: disabled in settings")
        if self.settings.reranker.model.strip() == READER_RERANKER:
            return Component("ok", "reader (the packaged trained reader)")
        reranker, reason = shared_reranker(self.settings)
        if reranker is None:
            return Component("off", reason or "no reranker")
        return Component("ok", self.settings.reranker.model)

    def _llm(self) -> Component:
        llm = self.settings.llm
        model = self.engine.chat_model
        if model is None:
            return Component("ok", "offline extractive answerer", {"backend": "offline"})
        if llm.backend == "local":
            return Component("ok", f"local model {model.name}", {"backend": "local"})
        now = time.monotonic()
        if self._llm_probe and now - self._llm_probe[0] < LLM_PROBE_TTL_S:
            return self._llm_probe[1]
        component = self._probe_openai()
        self._llm_probe = (now, component)
        return component

    def _probe_openai(self) -> Component:
        llm = self.settings.llm
        base = {"backend": "openai", "model": llm.model, "reachable": False}
        headers = {}
        if llm.api_key is not None:
            headers["Authorization"] = f"Bearer {llm.api_key.get_secret_value()}"
        url = f"{(llm.base_url or '').rstrip('/')}/models"
        try:
            response = httpx.get(url, headers=headers, timeout=LLM_PROBE_TIMEOUT_S)
        except httpx.HTTPError as exc:
            return Component("degraded", f"unreachable: {type(exc).__name__}", base)
        base["reachable"] = True
        if response.status_code >= 400:
            return Component("degraded", f"HTTP {response.status_code} from {url}", base)
        return Component("ok", f"{llm.model} at {llm.base_url}", base)

    def knowledge_bases(self) -> tuple[dict[str, Any], list[str]]:
        configured = set(self.engine.app_config.knowledge_bases)
        out: dict[str, Any] = {}
        problems = []
        on_disk = set(self.registry.names())
        for name in sorted(configured | on_disk):
            info: dict[str, Any]
            try:
                info = self.registry.describe(name).as_dict()
            except Exception as exc:
                if name not in on_disk:
                    out[name] = {"status": "missing", "detail": str(exc)}
                    if name in configured:
                        problems.append(f"kb:{name}")
                    continue
                info = {}
            live = self.registry.vector_count(name)
            problems_found = self.registry.problems(name) if live is None else []
            if not info and not problems_found:
                problems_found = ["its manifest cannot be read"]
            if problems_found:
                # Names and counts only: the detail never carries a path or a document.
                out[name] = {
                    "status": "broken",
                    "detail": "cannot be opened: " + "; ".join(problems_found),
                    "repair": f"ragchat kb repair {name}",
                }
                problems.append(f"kb:{name}")
                continue
            out[name] = {
                "status": "ok",
                "documents": info.get("documents"),
                "chunks": info.get("children"),
                "parent_chunks": info.get("parents"),
                "vectors": live if live is not None else info.get("children"),
                "embedding_model": info.get("embedding_model"),
                "configured": name in configured,
            }
        return out, problems
