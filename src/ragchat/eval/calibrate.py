"""Gate calibration: pick the relevance threshold below which ragchat answers NO_ANSWER.

In-domain questions (with gold) and out-of-domain questions are retrieved once; each keeps its
relevance score (the gate's input) and, in-domain, whether a relevant unit was in the top 10.
Sweeping the threshold then costs nothing, and the recommendation maximises balanced accuracy
(OOD refusal rate + in-domain answered rate) / 2, so neither set's size dominates.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from ragchat.eval.data import Query, load_queries, ranked_units
from ragchat.eval.metrics import first_relevant_rank
from ragchat.eval.report import write_csv
from ragchat.eval.retrieval import REFUSAL_K, Gold, Progress
from ragchat.retrieve.base import Retriever

SHOWN = (0.0, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.6)


def default_ood_path() -> Path:
    """The packaged out-of-domain questions (general knowledge, code, cooking, travel ...)."""
    return Path(str(resources.files("ragchat.eval") / "data" / "out_of_domain.jsonl"))


def load_ood(path: Path | None = None) -> list[Query]:
    return load_queries(path or default_ood_path())


@dataclass(frozen=True)
class Scored:
    qid: str
    in_domain: bool
    relevance: float
    has_hits: bool
    hit_at_k: bool  # in-domain only: a relevant unit in the top k

    def answered(self, threshold: float) -> bool:
        """Mirrors the gate: refuse without hits or when relevance < threshold."""
        return self.has_hits and self.relevance >= threshold


@dataclass(frozen=True)
class ThresholdRow:
    threshold: float
    in_answered: float  # in-domain answered rate
    in_recall_kept: float  # in-domain: answered and a relevant unit in the top 10
    ood_refusal: float
    balanced: float  # (ood_refusal + in_answered) / 2


def collect(
    retriever: Retriever,
    in_domain: Sequence[Query],
    gold: Gold,
    ood: Sequence[Query],
    *,
    k: int = REFUSAL_K,
    progress: Progress | None = None,
) -> list[Scored]:
    """Retrieves every question once and keeps what the sweep needs."""
    out: list[Scored] = []
    total = len(in_domain) + len(ood)
    for n, (query, inside) in enumerate(
        [(q, True) for q in in_domain] + [(q, False) for q in ood], start=1
    ):
        result = retriever.retrieve(query.text, top_k=k, filters=None)
        hit = False
        if inside:
            first = first_relevant_rank(
                ranked_units(result.hits, gold.mapper, k), gold.qrels[query.qid]
            )
            hit = first is not None
        out.append(Scored(query.qid, inside, float(result.relevance), bool(result.hits), hit))
        if progress is not None:
            progress("calibrate", n, total)
    return out


def thresholds(step: float = 0.01, stop: float = 1.0) -> list[float]:
    return [round(i * step, 4) for i in range(round(stop / step) + 1)]


def sweep(scored: Sequence[Scored], grid: Sequence[float] | None = None) -> list[ThresholdRow]:
    inside = [s for s in scored if s.in_domain]
    outside = [s for s in scored if not s.in_domain]
    n_in, n_out = max(len(inside), 1), max(len(outside), 1)
    rows: list[ThresholdRow] = []
    for t in grid if grid is not None else thresholds():
        answered = sum(s.answered(t) for s in inside) / n_in
        kept = sum(s.answered(t) and s.hit_at_k for s in inside) / n_in
        refused = sum(not s.answered(t) for s in outside) / n_out
        rows.append(ThresholdRow(t, answered, kept, refused, (answered + refused) / 2))
    return rows


def recommend(rows: Sequence[ThresholdRow]) -> ThresholdRow:
    """Highest balanced accuracy; on ties the lower threshold (refuse less when in doubt)."""
    if not rows:
        raise ValueError("no thresholds to choose from")
    return min(rows, key=lambda r: (-r.balanced, r.threshold))


@dataclass
class Calibration:
    scored: list[Scored]
    rows: list[ThresholdRow]
    best: ThresholdRow
    config: str

    def to_json(self) -> dict[str, Any]:
        inside = [s.relevance for s in self.scored if s.in_domain]
        outside = [s.relevance for s in self.scored if not s.in_domain]
        return {
            "config": self.config,
            "in_domain_queries": len(inside),
            "ood_queries": len(outside),
            "recommended": asdict(self.best),
            "thresholds": [asdict(r) for r in self.rows],
        }


def calibrate(
    retriever: Retriever,
    in_domain: Sequence[Query],
    gold: Gold,
    ood: Sequence[Query],
    *,
    config: str = "",
    progress: Progress | None = None,
) -> Calibration:
    scored = collect(retriever, in_domain, gold, ood, progress=progress)
    rows = sweep(scored)
    return Calibration(scored, rows, recommend(rows), config)


def print_calibration(cal: Calibration, console: Console, shown: Sequence[float] = SHOWN) -> None:
    n_in = sum(s.in_domain for s in cal.scored)
    table = Table(
        title=f"gate calibration ({cal.config or 'settings'}; {n_in} in-domain, "
        f"{len(cal.scored) - n_in} out-of-domain questions)"
    )
    for col in (
        "threshold",
        "in-domain answered",
        "in-domain R@10 kept",
        "OOD refused",
        "balanced",
    ):
        table.add_column(col, justify="right")
    wanted = {round(t, 4) for t in shown} | {cal.best.threshold}
    for r in cal.rows:
        if round(r.threshold, 4) in wanted:
            style = "bold green" if r == cal.best else None
            table.add_row(
                f"{r.threshold:.2f}",
                f"{r.in_answered:.3f}",
                f"{r.in_recall_kept:.3f}",
                f"{r.ood_refusal:.3f}",
                f"{r.balanced:.3f}",
                style=style,
            )
    console.print(table)
    b = cal.best
    console.print(
        f"recommended gate_threshold = [bold]{b.threshold:.2f}[/] (balanced accuracy "
        f"{b.balanced:.3f}: answers {b.in_answered:.1%} of in-domain questions, refuses "
        f"{b.ood_refusal:.1%} of out-of-domain ones); set RAGCHAT_RETRIEVAL__GATE_THRESHOLD"
    )


def plot_calibration(cal: Calibration, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    xs = [r.threshold for r in cal.rows]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    ax.plot(xs, [r.in_answered for r in cal.rows], label="in-domain answered")
    ax.plot(xs, [r.in_recall_kept for r in cal.rows], label="in-domain R@10 kept")
    ax.plot(xs, [r.ood_refusal for r in cal.rows], label="out-of-domain refused")
    ax.plot(xs, [r.balanced for r in cal.rows], label="balanced accuracy", linestyle="--")
    ax.axvline(cal.best.threshold, color="grey", linestyle=":")
    ax.set_xlabel("gate threshold (relevance)")
    ax.set_ylabel("rate")
    ax.set_ylim(-0.02, 1.02)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, metadata={"Software": None})
    plt.close(fig)
    return path


def write_calibration(cal: Calibration, out_dir: Path) -> dict[str, Path]:
    """``calibration.csv`` (the sweep), ``calibration_scores.csv`` (per question),
    ``calibration.json`` and ``calibration.png``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {
        "csv": write_csv(out_dir / "calibration.csv", [_rounded(asdict(r)) for r in cal.rows]),
        "scores": write_csv(
            out_dir / "calibration_scores.csv", [_rounded(asdict(s)) for s in cal.scored]
        ),
        "png": plot_calibration(cal, out_dir / "calibration.png"),
    }
    paths["json"] = out_dir / "calibration.json"
    paths["json"].write_text(json.dumps(cal.to_json(), indent=2, sort_keys=True) + "\n")
    return paths


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v, 6) if isinstance(v, float) else v for k, v in row.items()}
