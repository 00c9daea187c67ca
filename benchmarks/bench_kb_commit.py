"""Cost of one commit of an embedded knowledge base (issue 18, atomic commits).

Builds a knowledge base of ``--chunks`` searchable chunks (fake 384-dim vectors: no model), then
times, ``--repeat`` times each: a small ingestion (one document of 10 chunks + save), a
catalogue-only write (one file record + save), and an open. Only the ``KnowledgeBase`` API
common to every version is used, so the same script measures main (before) and a branch
(after)::

    PYTHONPATH=/work/main/src python benchmarks/bench_kb_commit.py     # before
    PYTHONPATH=src python benchmarks/bench_kb_commit.py                # after
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from ragchat.embed.fake import HashingEmbedder
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow
from ragchat.vectorstores.embedded.kb import KnowledgeBase

WORDS = ["aspirin", "cohort", "marker", "trial", "dose", "outcome", "placebo", "effect", "risk"]


def _doc(doc_id: str, n: int) -> list[Chunk]:
    parent = Chunk(f"{doc_id}_P", doc_id, f"parent of {doc_id}", 0, None, True, {})
    out = [parent]
    for i in range(n):
        text = " ".join(WORDS[(i + j) % len(WORDS)] + str(j % 97) for j in range(90))
        out.append(Chunk(f"{doc_id}_c{i}", doc_id, text, i, parent.chunk_id, False, {}))
    return out


def _row(doc_id: str) -> DocumentRow:
    return DocumentRow(doc_id, doc_id, "text", doc_id, f"/f/{doc_id}", 10, 1, {}, "t")


def _ms(samples: list[float]) -> str:
    return f"median {statistics.median(samples) * 1000:.0f} ms (min {min(samples) * 1000:.0f})"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunks", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    emb = HashingEmbedder(dim=384)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        kb = KnowledgeBase.create(root, "bench", emb)
        chunks = [c for d in range(args.chunks // 10) for c in _doc(f"d{d}", 10)]
        t0 = time.perf_counter()
        kb.add_chunks(chunks, save=False)
        for d in range(args.chunks // 10):
            kb.add_document_row(_row(f"d{d}"))
        kb.save()
        build = time.perf_counter() - t0
        add, catalogue, opens = [], [], []
        for r in range(args.repeat):
            t0 = time.perf_counter()
            kb.add_chunks(_doc(f"new{r}", 10), save=False)
            kb.add_document_row(_row(f"new{r}"))
            kb.save()
            add.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            kb.catalogue.record_file(f"/f/extra{r}", "sha", "t")
            kb.save()
            catalogue.append(time.perf_counter() - t0)
        kb.close()
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            KnowledgeBase.open(root, "bench", emb).close()
            opens.append(time.perf_counter() - t0)
        size = sum(f.stat().st_size for f in (root / "bench").rglob("*") if f.is_file())
        print(f"knowledge base: {args.chunks} chunks, built and saved in {build:.1f} s")
        print(f"commit of a 10-chunk ingestion: {_ms(add)}")
        print(f"commit of a catalogue-only write: {_ms(catalogue)}")
        print(f"open: {_ms(opens)}")
        print(f"on disk after the runs: {size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
