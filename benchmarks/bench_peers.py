"""ragchat's hybrid retrieval against the peers in the repository, side by side in one run.

Systems (all given the same vectors, so query embedding is outside every timing; it is
measured on its own in bench_ingest.py):

* **ragchat hybrid**: a real ``KnowledgeBase`` (chunk store, BM25, dense index) built from
  the vectors, searched through ``build_retriever`` with the ``hybrid`` configuration (min-max
  fusion, α 0.5, 100 candidates per retriever, no rerank/parents). Run once per dense kernel
  (``--kernels faiss,numpy``): FAISS's scan and the numpy one it replaced.
* **LangChain**: ``EnsembleRetriever([BM25Retriever, FAISS.as_retriever()], weights [.5, .5])``
  (langchain-classic, langchain-community; rank_bm25 inside the BM25 retriever, whitespace
  tokens), each retriever with k=10. ``FAISS.from_embeddings`` takes the same vectors; its
  embedding object returns the precomputed query vectors and falls back to ragchat's packaged
  embedder, so nothing is downloaded.
* **rank_bm25 + FAISS, as the seed design document describes its HybridRetriever**: BM25Okapi
  over lower-cased whitespace tokens, ``faiss.IndexFlatL2``, 3×top_k candidates from each,
  FAISS similarity 1/(1+L2 distance), both min-max normalised, 0.5·dense + 0.5·BM25 with a
  missing score counted as 0.

Corpora: SciFact (5,183 abstracts, ``title\\ntext``) and a synthetic ``--big`` (default 100k)
collection: SciFact plus distractors, each a perturbed copy of a random SciFact abstract (a
random 60–100 % word window with 10 % of its words dropped; its vector the source vector plus
Gaussian noise, re-normalised, cosine ≈ 0.9 to the source). Queries: SciFact train claims with
their qrels, so nDCG@10 is measured on both (distractors are never relevant). Per query, the
systems run in a rotated order. Vectors come from ragchat's embedder (``--backend``) and are
cached in the bench cache.

Example::

    ./scripts/install dev,local,bench && .venv/bin/python benchmarks/bench_peers.py --quick
"""

from __future__ import annotations

import argparse
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np
from _common import CACHE, DATA, doc_text, machine_line, print_table, read_jsonl, summarise_ms

K = 10
Search = Callable[[str, np.ndarray], list[str]]


# -- data ----------------------------------------------------------------------------------------
def load_scifact() -> tuple[list[str], list[str], list[dict[str, Any]], dict[str, dict[str, int]]]:
    corpus = read_jsonl(DATA / "scifact" / "corpus.jsonl")
    queries = read_jsonl(DATA / "scifact" / "queries.train.jsonl")
    qrels: dict[str, dict[str, int]] = {}
    with (DATA / "scifact" / "qrels.train.tsv").open() as fh:
        for line in fh:
            parts = line.rstrip("\n").split("\t")
            if len(parts) < 3 or parts[0] == "query-id":
                continue
            qrels.setdefault(parts[0], {})[parts[1]] = int(parts[2])
    queries = [q for q in queries if q["_id"] in qrels]
    return [str(d["_id"]) for d in corpus], [doc_text(d) for d in corpus], queries, qrels


def vectors(backend: str, texts: list[str], queries: list[str]) -> tuple[np.ndarray, np.ndarray]:
    path = CACHE / f"peers_{backend}.npz"
    if path.exists():
        data = np.load(path)
        if data["docs"].shape[0] == len(texts) and data["queries"].shape[0] == len(queries):
            return data["docs"], data["queries"]
    from ragchat.embed.factory import load_embedder
    from ragchat.settings import EmbeddingSettings, Settings

    emb = load_embedder(Settings(embedding=EmbeddingSettings(backend=backend)))  # type: ignore[arg-type]
    print(f"# embedding {len(texts)} abstracts with {backend} (cached)…", file=sys.stderr)
    docs = emb.embed_documents(texts)
    qv = np.stack([emb.embed_query(q) for q in queries])
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(path, docs=docs, queries=qv)
    return docs, qv


def synthetic(
    ids: list[str], texts: list[str], vecs: np.ndarray, total: int, seed: int
) -> tuple[list[str], list[str], np.ndarray]:
    """The real corpus plus perturbed copies up to ``total`` documents."""
    extra = max(0, total - len(ids))
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    sigma = math.sqrt((1 / 0.9**2 - 1) / vecs.shape[1])  # expected cosine 0.9 to the source
    src = [rng.randrange(len(ids)) for _ in range(extra)]
    new_texts = []
    for s in src:
        words = texts[s].split()
        n = max(1, int(len(words) * rng.uniform(0.6, 1.0)))
        start = rng.randrange(len(words) - n + 1)
        kept = [w for w in words[start : start + n] if rng.random() > 0.1]
        new_texts.append(" ".join(kept) or words[0])
    noisy = vecs[src] + nrng.standard_normal((extra, vecs.shape[1]), dtype=np.float32) * sigma
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    all_vecs = np.concatenate([vecs, noisy.astype(np.float32)])
    return ids + [f"synthetic-{i}" for i in range(extra)], texts + new_texts, all_vecs


class _Lookup:
    """Query vectors by text for systems that embed the query themselves."""

    def __init__(self, texts: list[str], vecs: np.ndarray) -> None:
        self.table = {t: v for t, v in zip(texts, vecs, strict=True)}
        self._fallback: Any = None

    def vector(self, text: str) -> np.ndarray:
        if text in self.table:
            return self.table[text]
        if self._fallback is None:
            from ragchat.embed.factory import load_embedder
            from ragchat.settings import Settings

            self._fallback = load_embedder(Settings())
        return np.asarray(self._fallback.embed_query(text), dtype=np.float32)


# -- systems -------------------------------------------------------------------------------------
def build_ragchat(
    ids: list[str], texts: list[str], vecs: np.ndarray, lookup: _Lookup, tmp: Path
) -> tuple[Any, Any]:
    from ragchat.eval.configs import BASES
    from ragchat.retrieve.factory import build_retriever
    from ragchat.settings import RetrievalSettings, Settings
    from ragchat.types import Chunk
    from ragchat.vectorstores.embedded.kb import KnowledgeBase

    class Embedder:
        model_name = "precomputed"
        dim = vecs.shape[1]

        def embed_documents(self, texts: Any, *, progress: bool = False) -> np.ndarray:
            raise AssertionError("the benchmark gives every vector")

        def embed_query(self, text: str) -> np.ndarray:
            return lookup.vector(text)

    kb = KnowledgeBase.create(tmp, "bench", Embedder())
    chunks = [
        Chunk(chunk_id=i, doc_id=i, text=t, position=0, metadata={"corpus_id": i})
        for i, t in zip(ids, texts, strict=True)
    ]
    kb.add_chunks(chunks, vectors=vecs)
    config = RetrievalSettings(**{**BASES["hybrid"], "top_k": K})
    return kb, build_retriever(Settings(), kb, config)


def ragchat_search(retriever: Any) -> Search:
    def search(query: str, qvec: np.ndarray) -> list[str]:
        return [h.chunk.chunk_id for h in retriever.retrieve(query, top_k=K).hits]

    return search


def build_langchain(ids: list[str], texts: list[str], vecs: np.ndarray, lookup: _Lookup) -> Search:
    from langchain_classic.retrievers import EnsembleRetriever
    from langchain_community.retrievers import BM25Retriever
    from langchain_community.vectorstores import FAISS
    from langchain_core.embeddings import Embeddings

    class Precomputed(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            raise AssertionError("the benchmark gives every vector")

        def embed_query(self, text: str) -> list[float]:
            return lookup.vector(text).tolist()

    meta = [{"id": i} for i in ids]
    bm25 = BM25Retriever.from_texts(texts, metadatas=meta, k=K)
    store = FAISS.from_embeddings(
        list(zip(texts, vecs.tolist(), strict=True)), Precomputed(), metadatas=meta
    )
    ensemble = EnsembleRetriever(
        retrievers=[bm25, store.as_retriever(search_kwargs={"k": K})], weights=[0.5, 0.5]
    )

    def search(query: str, qvec: np.ndarray) -> list[str]:
        return [d.metadata["id"] for d in ensemble.invoke(query)][:K]

    return search


def build_seed(ids: list[str], texts: list[str], vecs: np.ndarray, alpha: float = 0.5) -> Search:
    import faiss
    from rank_bm25 import BM25Okapi

    bm25 = BM25Okapi([t.lower().split() for t in texts])
    index = faiss.IndexFlatL2(vecs.shape[1])
    index.add(np.ascontiguousarray(vecs))

    def minmax(scores: dict[int, float]) -> dict[int, float]:
        if not scores:
            return {}
        lo, hi = min(scores.values()), max(scores.values())
        if hi == lo:
            return {d: 1.0 for d in scores}
        return {d: (s - lo) / (hi - lo) for d, s in scores.items()}

    def search(query: str, qvec: np.ndarray) -> list[str]:
        n = min(K * 3, len(ids))
        dist, found = index.search(qvec.reshape(1, -1), n)
        dense = minmax(
            {int(i): 1.0 / (1.0 + float(d)) for d, i in zip(dist[0], found[0], strict=True)}
        )
        raw = bm25.get_scores(query.lower().split())
        top = np.argsort(-raw)[:n]
        lexical = minmax({int(i): float(raw[i]) for i in top})
        combined = {
            d: alpha * dense.get(d, 0.0) + (1 - alpha) * lexical.get(d, 0.0)
            for d in set(dense) | set(lexical)
        }
        return [ids[d] for d in sorted(combined, key=lambda d: -combined[d])[:K]]

    return search


# -- measurement ---------------------------------------------------------------------------------
def ndcg(ranked: list[str], rels: dict[str, int]) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:K]))
    ideal = sorted(rels.values(), reverse=True)[:K]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def run_corpus(
    label: str,
    ids: list[str],
    texts: list[str],
    vecs: np.ndarray,
    queries: list[dict[str, Any]],
    qvecs: np.ndarray,
    qrels: dict[str, dict[str, int]],
    args: argparse.Namespace,
) -> None:
    lookup = _Lookup([q["text"] for q in queries], qvecs)
    systems: dict[str, Search] = {}
    builds: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="ragchat-peers-") as tmp:
        t0 = time.perf_counter()
        kb, retriever = build_ragchat(ids, texts, vecs, lookup, Path(tmp))
        builds["ragchat"] = time.perf_counter() - t0
        for kernel in args.kernels.split(","):
            systems[f"ragchat hybrid ({kernel} dense scan)"] = _with_kernel(
                ragchat_search(retriever), kb, kernel
            )
        t0 = time.perf_counter()
        systems["LangChain EnsembleRetriever(BM25Retriever, FAISS)"] = build_langchain(
            ids, texts, vecs, lookup
        )
        builds["LangChain"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        systems["rank_bm25 + FAISS (seed HybridRetriever)"] = build_seed(ids, texts, vecs)
        builds["seed"] = time.perf_counter() - t0
        names = list(systems)
        times: dict[str, list[float]] = {n: [] for n in names}
        scores: dict[str, list[float]] = {n: [] for n in names}
        for q, v in zip(queries[: args.warmup], qvecs, strict=False):
            for n in names:
                systems[n](q["text"], v)
        load0 = os.getloadavg()[0]
        for qi, (q, v) in enumerate(zip(queries, qvecs, strict=True)):
            for j in range(len(names)):
                n = names[(qi + j) % len(names)]  # rotate who goes first
                t = time.perf_counter()
                ranked = systems[n](q["text"], v)
                times[n].append(time.perf_counter() - t)
                scores[n].append(ndcg(ranked, qrels[q["_id"]]))
            if (qi + 1) % 100 == 0:
                print(f"# {label}: {qi + 1}/{len(queries)} queries", file=sys.stderr, flush=True)
        load1 = os.getloadavg()[0]
        kb.close()
    ref = summarise_ms(times[names[0]])["p50"]
    rows = []
    for n in names:
        st = summarise_ms(times[n])
        rows.append([n, st["p50"], st["p95"], st["p50"] / ref, float(np.mean(scores[n]))])
    print(
        f"## {label}: {len(ids):,} documents, {len(queries)} SciFact train claims, top-{K}; "
        f"load average {load0:.2f} → {load1:.2f}; build s: "
        + ", ".join(f"{k} {v:.1f}" for k, v in builds.items())
        + "\n"
    )
    print_table(
        ["system", "p50 ms", "p95 ms", f"p50 ÷ {names[0].split(' (')[0]}", "nDCG@10"],
        rows,
        digits=4,
    )


def _with_kernel(search: Search, kb: Any, kernel: str) -> Search:
    def run(query: str, qvec: np.ndarray) -> list[str]:
        kb.dense.kernel = kernel
        return search(query, qvec)

    return run


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--big", type=int, default=100_000, help="synthetic corpus size; 0 = skip")
    ap.add_argument("--queries", type=int, default=0, help="first N claims; 0 = all 505")
    ap.add_argument("--big-queries", type=int, default=0, help="claims at --big; 0 = all")
    ap.add_argument("--backend", default="onnx", help="embedding backend for the vectors")
    ap.add_argument("--kernels", default="faiss,numpy", help="ragchat dense scans to run")
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument(
        "--quick", action="store_true", help="200 claims at SciFact, 100 at --big (~10 min)"
    )
    args = ap.parse_args()
    if args.quick:
        args.queries = args.queries or 200
        args.big_queries = args.big_queries or 100
    from threadpoolctl import threadpool_limits

    threadpool_limits(1, user_api="blas")  # as ragchat.runtime does for the application
    ids, texts, queries, qrels = load_scifact()
    if args.queries:
        queries = queries[: args.queries]
    docs, qvecs = vectors(args.backend, texts, [q["text"] for q in queries])
    print(machine_line())
    print(f"# vectors: ragchat embedder, backend {args.backend}, packaged all-MiniLM-L6-v2\n")
    run_corpus("SciFact", ids, texts, docs, queries, qvecs, qrels, args)
    if args.big:
        b_ids, b_texts, b_vecs = synthetic(ids, texts, docs, args.big, args.seed)
        n = args.big_queries or len(queries)
        run_corpus(
            f"synthetic {args.big:,}", b_ids, b_texts, b_vecs, queries[:n], qvecs[:n], qrels, args
        )


if __name__ == "__main__":
    main()
