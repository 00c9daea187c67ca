"""Process-wide environment that must be in place before torch or huggingface_hub load.

``OMP_WAIT_POLICY=PASSIVE``: with OpenMP's default busy-waiting a single query embedding took
~0.5 s on a busy 2-core machine instead of ~10 ms. OpenBLAS is held to one thread: numpy's
default of one thread per core made an exact search over 5k vectors take 4–16 ms instead of
0.13 ms on a busy 2-core machine (docs/benchmarks.md). Hub access is switched off unless the
user allows downloads, so a missing model fails fast instead of hanging on a network that is
not there.
"""

from __future__ import annotations

import os

from threadpoolctl import threadpool_limits

from ragchat.settings import Settings


def prepare_runtime(settings: Settings) -> None:
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    threadpool_limits(1, user_api="blas")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # Libraries' progress bars ("Loading weights 103/103") are noise in a server's log; the
    # export says in one line what it does and ``ragchat serve`` says when it is ready.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    if not settings.allow_downloads:
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
