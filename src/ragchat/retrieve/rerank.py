"""Cross-encoder reranking, and a loader that degrades to "no reranker" instead of failing.

No installed package ships cross-encoder weights, so offline the default model usually cannot
load; ragchat must then run without a reranker and say why, never crash or wait on a network.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from ragchat.errors import ModelLoadError
from ragchat.retrieve.base import Reranker
from ragchat.settings import READER_RERANKER, Settings
from ragchat.types import Hit

log = logging.getLogger(__name__)
_warned: set[str] = set()


class CrossEncoderReranker:
    """``sentence_transformers.CrossEncoder`` on CPU; scores are raw logits (only the order
    matters, so no sigmoid). Loads from a local directory, or the hub cache only unless
    ``allow_downloads``. Any load failure raises ``ModelLoadError``."""

    def __init__(
        self, model_name_or_path: str, *, allow_downloads: bool = False, batch_size: int = 16
    ) -> None:
        self.model_name = model_name_or_path
        self.batch_size = batch_size
        local_dir = Path(model_name_or_path).is_dir()
        try:
            import torch
            from sentence_transformers import CrossEncoder

            self._identity = torch.nn.Identity()
            self._model = CrossEncoder(
                model_name_or_path,
                device="cpu",
                local_files_only=local_dir or not allow_downloads,
            )
        except Exception as exc:
            if not local_dir and not allow_downloads:  # not in the cache: the usual offline case
                raise ModelLoadError(not_installed(model_name_or_path)) from exc
            where = "local directory" if local_dir else "hub"
            raise ModelLoadError(
                f"cannot load cross-encoder {model_name_or_path!r} from the {where}: "
                f"{type(exc).__name__}: {first_line(exc)}. {INSTALL_HINT}"
            ) from exc

    def scores(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        out: Any = self._model.predict(
            [(query, t) for t in texts],
            batch_size=self.batch_size,
            show_progress_bar=False,
            activation_fn=self._identity,
            convert_to_numpy=True,
        )
        return [float(s) for s in out.reshape(-1)]

    def rerank(self, query: str, hits: Sequence[Hit]) -> list[Hit]:
        """Hits re-ordered by the model's score of (query, child text), best first."""
        scores = self.scores(query, [h.chunk.text for h in hits])
        rescored = [
            replace(h, score=s, scores={**h.scores, "rerank": s})
            for h, s in zip(hits, scores, strict=True)
        ]
        return sorted(rescored, key=lambda h: (-h.score, h.chunk.chunk_id))


def load_reranker(settings: Settings) -> tuple[Reranker | None, str]:
    """``(reranker, status)``; ``(None, "no reranker: <reason>")`` when disabled or unloadable.
    The reason is logged at WARNING once per process."""
    name = settings.reranker.model.strip()
    if not name:
        return _without("no reranker: disabled (reranker.model is empty)")
    if name == READER_RERANKER:  # built above this layer, where the reader may be imported
        return _without("no reranker: 'reader' is built by ragchat.agents.rerankers")
    try:
        reranker = CrossEncoderReranker(name, allow_downloads=settings.allow_downloads)
    except Exception as exc:  # never crash: retrieval works without a reranker
        return _without(f"no reranker: {exc}")
    return reranker, f"reranker: {name}"


def reranker_status(settings: Settings) -> str:
    """One plain line on the reranker without loading it (for ``ragchat health`` and
    ``kb stats``): configured and available, or why results are not reranked."""
    name = settings.reranker.model.strip()
    if not settings.retrieval.rerank or not name:
        return "off: reranking is disabled in the settings"
    if name == READER_RERANKER:
        return "reader (the packaged trained reader)"
    if Path(name).is_dir() or settings.allow_downloads:
        return f"{name}"
    from huggingface_hub import try_to_load_from_cache

    if isinstance(try_to_load_from_cache(name, "config.json"), str):
        return f"{name}"
    return f"off: {not_installed(name)}"


INSTALL_HINT = (
    "To rerank, copy a CrossEncoder model folder to this machine (saved with "
    "CrossEncoder(name).save(folder) where there is a network) and set "
    "RAGCHAT_RERANKER__MODEL=/path/to/folder, or let it download once with "
    "RAGCHAT_ALLOW_DOWNLOADS=true; RAGCHAT_RERANKER__MODEL= (empty) turns reranking off "
    "without this note"
)


def not_installed(name: str) -> str:
    return (
        f"the cross-encoder {name!r} is not on this machine and downloads are off, so "
        f"results are not reranked. {INSTALL_HINT}."
    )


_URL = re.compile(r"\s*\(?['\"]?https?://\S+")


def first_line(exc: BaseException) -> str:
    """Library errors carry multi-line hints about hubs; the first line says what failed,
    without the addresses it tried (a user offline cannot use them)."""
    text = str(exc).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    return _URL.sub("", line).strip() or type(exc).__name__


def _without(reason: str) -> tuple[None, str]:
    """Logs the reason once per process: one plain line (the way to install a cross-encoder
    is for ``ragchat health``, not for every script's output)."""
    if reason not in _warned:
        _warned.add(reason)
        short = reason.replace(f". {INSTALL_HINT}.", " (optional: `ragchat health` says how).")
        log.warning("%s", short)
    return None, reason
