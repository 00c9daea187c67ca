"""Dense and BM25 search of a pgvector knowledge base, in SQL.

Dense: the HNSW index (inner product on L2-normalised vectors = cosine) with pgvector 0.8's
iterative scans in strict order, so a filter is applied while the graph is walked rather than
to a fixed candidate list. A filter that matches at most ``exact_below`` children is answered by
an exact scan of those rows instead (faster than walking past everything else, and exact); a
walk that stops short of ``k`` rows (``hnsw.max_scan_tuples``) while more match is redone
exactly. No neighbour is ever dropped silently.

BM25: exact, over the stored term counts: the same tokens (``bm25.tokenize``), formula (bm25s'
"lucene": ``idf = ln(1 + (N - df + 0.5) / (df + 0.5))``, ``tf / (tf + k1 (1 - b + b dl /
avgdl))``) and collection statistics (every searchable chunk) as the embedded ``BM25Index``,
so scores and rankings equal its own.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from ragchat.embed.base import Vector
from ragchat.vectorstores.bm25 import tokenize

Ranked = list[tuple[str, float]]


def term_counts(texts: Sequence[str]) -> list[tuple[Counter[str], int]]:
    """Per text: its term counts and its length in tokens."""
    return [(Counter(tokens), len(tokens)) for tokens in tokenize(texts)]


def _and(conds: Sequence[str]) -> str:
    return "".join(f" AND {c}" for c in conds)


def dense(
    conn: Any,
    chunks: str,
    query_vec: Vector,
    k: int,
    conds: Sequence[str],
    params: Sequence[Any],
    exact_below: int,
    ef: int,
) -> Ranked:
    q = np.asarray(query_vec, dtype=np.float32)
    where = f"c.embedding IS NOT NULL{_and(conds)}"
    if conds:
        sql = f"SELECT count(*) FROM (SELECT 1 FROM {chunks} c WHERE {where} LIMIT %s) s"
        matching = int(conn.execute(sql, [*params, exact_below + 1]).fetchone()[0])
        if matching <= exact_below:
            return _exact(conn, chunks, q, k, where, params)
    # The graph is searched at least twice as wide as the answer (recall@100 on random
    # vectors: 0.92 at ef_search 100, measured in docs/benchmarks.md).
    conn.execute("SELECT set_config('hnsw.ef_search', %s, false)", [str(min(1000, max(ef, 2 * k)))])
    sql = (
        f"SELECT c.chunk_id, -(c.embedding <#> %s) FROM {chunks} c WHERE {where} "
        "ORDER BY c.embedding <#> %s LIMIT %s"
    )
    found = [(r[0], float(r[1])) for r in conn.execute(sql, [q, *params, q, k]).fetchall()]
    if len(found) < k:
        # The walk may have stopped early; the exact answer says whether more match.
        exact = _exact(conn, chunks, q, k, where, params)
        if len(exact) > len(found):
            return exact
    return found


def _exact(conn: Any, chunks: str, q: Vector, k: int, where: str, params: Sequence[Any]) -> Ranked:
    # "+ 0" keeps the planner off the HNSW index: every matching row is scored.
    sql = (
        f"SELECT c.chunk_id, -(c.embedding <#> %s) FROM {chunks} c WHERE {where} "
        "ORDER BY (c.embedding <#> %s) + 0, c.row_id LIMIT %s"
    )
    return [(r[0], float(r[1])) for r in conn.execute(sql, [q, *params, q, k]).fetchall()]


def dense_scores(
    conn: Any, chunks: str, query_vec: Vector, chunk_ids: Sequence[str]
) -> list[float]:
    q = np.asarray(query_vec, dtype=np.float32)
    sql = (
        f"SELECT chunk_id, -(embedding <#> %s) FROM {chunks} "
        "WHERE chunk_id = ANY(%s) AND embedding IS NOT NULL"
    )
    scores = {r[0]: float(r[1]) for r in conn.execute(sql, [q, list(chunk_ids)]).fetchall()}
    return [scores.get(c, 0.0) for c in chunk_ids]


def _bm25_sql(chunks: str, terms: str, where: str, limit: bool) -> str:
    """Scores from the postings alone (each term's is one range of the covering primary key:
    ``OFFSET 0`` keeps each lookup a parameterised index scan); the chunks table is joined
    for the filters, or, without any, only for the best ``k``."""
    if limit and where == "true":
        top, tail = "ORDER BY score DESC, row_id LIMIT %s", "ORDER BY s.score DESC, s.row_id"
    elif limit:
        top, tail = "", "ORDER BY s.score DESC, s.row_id LIMIT %s"
    else:
        top, tail = "", ""
    return f"""
WITH q(term, qtf) AS (SELECT * FROM unnest(%s::text[], %s::int[])),
st AS (
    SELECT n_children::float8 AS n,
           greatest(total_len::float8 / greatest(n_children, 1), 1e-9) AS avgdl
    FROM kbs WHERE id = %s
),
w AS (
    SELECT q.term, q.qtf * ln(1 + (st.n - d.df + 0.5) / (d.df + 0.5)) AS wq
    FROM q CROSS JOIN st
    CROSS JOIN LATERAL (SELECT count(*)::float8 AS df FROM {terms} t WHERE t.term = q.term) d
    WHERE d.df > 0
),
s AS (
    SELECT p.row_id,
           sum(w.wq * p.tf / (p.tf + %s * (1 - %s + %s * p.dl / st.avgdl)))::float8 AS score
    FROM w CROSS JOIN st
    CROSS JOIN LATERAL (
        SELECT t.row_id, t.tf, t.dl FROM {terms} t WHERE t.term = w.term OFFSET 0
    ) p
    GROUP BY p.row_id
    {top}
)
SELECT c.chunk_id, s.score FROM s JOIN {chunks} c ON c.row_id = s.row_id
WHERE {where}
{tail}"""


def _query(query: str) -> tuple[list[str], list[int]]:
    counts = Counter(tokenize([query])[0])  # a repeated query term counts repeatedly
    return list(counts), list(counts.values())


def bm25(
    conn: Any,
    chunks: str,
    terms: str,
    kb_id: int,
    query: str,
    k: int,
    conds: Sequence[str],
    params: Sequence[Any],
    k1: float,
    b: float,
) -> Ranked:
    words, counts = _query(query)
    if not words or k <= 0:
        return []
    sql = _bm25_sql(chunks, terms, "true" + _and(conds), limit=True)
    args = [words, counts, kb_id, k1, b, b, *params, k]
    return [(r[0], float(r[1])) for r in conn.execute(sql, args).fetchall() if r[1] > 0]


def bm25_scores(
    conn: Any,
    chunks: str,
    terms: str,
    kb_id: int,
    query: str,
    chunk_ids: Sequence[str],
    k1: float,
    b: float,
) -> list[float]:
    words, counts = _query(query)
    if not words or not chunk_ids:
        return [0.0] * len(chunk_ids)
    sql = _bm25_sql(chunks, terms, "c.chunk_id = ANY(%s)", limit=False)
    rows = conn.execute(sql, [words, counts, kb_id, k1, b, b, list(chunk_ids)]).fetchall()
    scores = {r[0]: float(r[1]) for r in rows}
    return [scores.get(c, 0.0) for c in chunk_ids]
