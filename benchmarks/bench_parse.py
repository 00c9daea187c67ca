"""Parsing and chunking cost of one big upload, and what the parse sandbox adds (issue 18).

Builds a WebVTT transcript of ``--cues`` cues (default 100,000, ~10 MB: the issue's 7.6 MB
reproduction had 100,000), then times, in this process: the loader, the chunker, and the
same file through ``ingest.sandbox.ParseWorker`` (a child process: its start, then each
parse). Nothing is embedded. Run it with another tree first on ``PYTHONPATH`` to compare.

Example::

    PYTHONPATH=src .venv/bin/python benchmarks/bench_parse.py --cues 100000
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from ragchat.ingest.chunking import Chunker
from ragchat.ingest.registry import loader_for
from ragchat.settings import ChunkingSettings


def vtt(cues: int) -> str:
    lines = ["WEBVTT", ""]
    for i in range(cues):
        s = 3 * i
        start = f"{s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}.000"
        end = f"{(s + 3) // 3600:02d}:{(s + 3) // 60 % 60:02d}:{(s + 3) % 60:02d}.000"
        lines += [f"{start} --> {end}", f"Speaker says sentence {i} about quokkas today.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cues", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "talk.vtt"
        path.write_text(vtt(args.cues), encoding="utf-8")
        print(
            f"{args.cues} cues, {path.stat().st_size / 1e6:.1f} MB; load {os.getloadavg()[0]:.1f}"
        )
        start = time.perf_counter()
        docs = loader_for(path).load(path)
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        chunks = [c for d in docs for c in Chunker(ChunkingSettings()).chunk(d)]
        chunked = time.perf_counter() - start
        children = sum(not c.is_parent for c in chunks)
        print(f"in process: load {loaded:.1f} s, chunk {chunked:.1f} s ({children} children)")
        try:
            from ragchat.ingest.sandbox import ParseLimits, ParseWorker
        except ImportError:
            print("no parse sandbox in this tree")
            return
        worker = ParseWorker(ParseLimits(timeout_s=600, memory_mb=2048))
        small = Path(tmp) / "note.md"
        small.write_text("# Note\n\nQuokkas eat leaves.\n", encoding="utf-8")
        start = time.perf_counter()
        worker.load(small)
        first = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(20):
            worker.load(small)
        each = (time.perf_counter() - start) / 20
        start = time.perf_counter()
        worker.load(path)
        big = time.perf_counter() - start
        worker.close()
        print(
            f"sandbox: child start + first small file {first * 1000:.0f} ms, then "
            f"{each * 1000:.1f} ms per small file; the transcript {big:.1f} s "
            f"(in process {loaded:.1f} s)"
        )


if __name__ == "__main__":
    main()
