"""Runs ``ragchat eval conversations`` with the follow-up heuristics of an older revision
(``agents/heuristics/reformulate.py`` at ``--rev``, default 77858a8: before the topic tracking)
patched into today's code, so the "before" row of docs/benchmarks.md is measured by the same
eval command and retriever as the "after" row.

Usage: ``.venv/bin/python benchmarks/conversations_baseline.py [--rev REV] -- <eval args>``
e.g. ``... -- --kb medquad_conv --data ../shared/data/medquad/conversations.dev.jsonl
--output /tmp/conv-before --data-dir /tmp/i9-mq``.
"""

from __future__ import annotations

import argparse
import importlib.util
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import REPO

PATH = "src/ragchat/agents/heuristics/reformulate.py"


def load_old(rev: str) -> object:
    source = subprocess.run(
        ["git", "show", f"{rev}:{PATH}"], cwd=REPO, check=True, capture_output=True, text=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "reformulate_old.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location("reformulate_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rev", default="77858a8")
    parser.add_argument("eval_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    old = load_old(args.rev)
    from ragchat.agents.heuristics import compose, intent, router
    from ragchat.agents.shared import answering

    # Every module that imported the follow-up functions by name gets the old ones.
    for module in (answering, intent, router, compose):
        for name in ("is_follow_up", "reformulate", "topic", "GENERIC", "reference_word"):
            if hasattr(module, name):
                setattr(module, name, getattr(old, name))
    from ragchat.eval.cli import eval_app

    rest = [a for a in args.eval_args if a != "--"]
    sys.exit(eval_app(["conversations", *rest], standalone_mode=False) or 0)


if __name__ == "__main__":
    main()
