"""Process-wide environment that must be in place before torch or huggingface_hub load.

``OMP_WAIT_POLICY=PASSIVE``: with OpenMP's default busy-waiting a single query embedding took
~0.5 s on a busy 2-core machine instead of ~10 ms. Hub access is switched off unless the user
allows downloads, so a missing model fails fast instead of hanging on a network that is not there.
"""

from __future__ import annotations

import os

from ragchat.settings import Settings


def prepare_runtime(settings: Settings) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if not settings.allow_downloads:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
