"""Is configuration B really better than A? A paired bootstrap over queries.

Both configurations answered the same queries, so the per-query differences are resampled
(with replacement) rather than the two means separately: query difficulty varies far more than
the effect being measured, and pairing removes it. The 95% interval is the 2.5th-97.5th
percentile of the resampled mean differences; an interval that excludes 0 is a difference the
query set supports. Reads the ``per_query.csv`` that ``ragchat eval retrieval`` writes."""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ragchat.eval.data import EvalDataError as EvalError


@dataclass(frozen=True)
class Comparison:
    config: str
    mean: float
    diff: float  # mean(config) - mean(baseline)
    low: float  # 95% interval of diff
    high: float
    better: int  # queries where config scores higher
    worse: int
    queries: int

    @property
    def significant(self) -> bool:
        return self.low > 0 or self.high < 0


def load_per_query(path: Path, metric: str) -> dict[str, dict[str, float]]:
    """``{config: {query_id: value}}`` from a per_query.csv."""
    scores: defaultdict[str, dict[str, float]] = defaultdict(dict)
    try:
        with path.open(encoding="utf-8", newline="") as fh:
            reader = csv.DictReader(fh)
            if reader.fieldnames is None or metric not in reader.fieldnames:
                found = ", ".join(reader.fieldnames or [])
                raise EvalError(f"{path}: no column {metric!r} (columns: {found})")
            for row in reader:
                scores[row["config"]][row["query_id"]] = float(row[metric])
    except OSError as exc:
        raise EvalError(f"cannot read {path}: {exc}") from exc
    return dict(scores)


def paired_bootstrap(
    baseline: Sequence[float] | npt.NDArray[np.float64],
    other: Sequence[float] | npt.NDArray[np.float64],
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> tuple[float, float]:
    """95% interval of ``mean(other - baseline)`` over resampled queries."""
    diffs = np.asarray(other, dtype=np.float64) - np.asarray(baseline, dtype=np.float64)
    if diffs.size == 0:
        raise EvalError("no queries to compare")
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, diffs.size, size=(resamples, diffs.size))
    means = diffs[picks].mean(axis=1)
    low, high = np.percentile(means, [2.5, 97.5])
    return float(low), float(high)


def compare(
    scores: dict[str, dict[str, float]],
    baseline: str,
    configs: Sequence[str] | None = None,
    *,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Comparison]:
    """Every configuration (or ``configs``) against ``baseline`` on the queries both ran."""
    if baseline not in scores:
        raise EvalError(f"baseline {baseline!r} not in the results ({', '.join(sorted(scores))})")
    names = list(configs) if configs else [c for c in scores if c != baseline]
    unknown = [c for c in names if c not in scores]
    if unknown:
        raise EvalError(f"not in the results: {', '.join(unknown)}")
    base = scores[baseline]
    out = []
    for name in names:
        qids = sorted(set(base) & set(scores[name]))
        a = np.asarray([base[q] for q in qids], dtype=np.float64)
        b = np.asarray([scores[name][q] for q in qids], dtype=np.float64)
        low, high = paired_bootstrap(a, b, resamples=resamples, seed=seed)
        out.append(
            Comparison(
                config=name,
                mean=float(b.mean()) if qids else 0.0,
                diff=float((b - a).mean()) if qids else 0.0,
                low=low,
                high=high,
                better=int((b > a).sum()),
                worse=int((b < a).sum()),
                queries=len(qids),
            )
        )
    return out
