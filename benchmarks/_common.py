"""Helpers shared by the benchmark scripts (data loading, timing statistics, tables, workers).

Data comes from ``../shared/data`` (relative to the repository root); nothing is downloaded.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("RAGCHAT_BENCH_DATA", REPO.parent / "shared" / "data"))
CACHE = Path(os.environ.get("RAGCHAT_BENCH_CACHE", "/tmp/ragchat-bench"))
RESULT_TAG = "BENCH_RESULT "
# (question, agent) over the bundled sample knowledge bases, for the turn-latency benchmarks.
SAMPLE_QUESTIONS = [
    ("What are the side effects of ibuprofen?", "medical"),
    ("How much sleep does a toddler need?", "parenting"),
    ("How is cardiac output calculated?", "tutor"),
    ("Can I take amoxicillin if I am allergic to penicillin?", "medical"),
    ("What should I do about tantrums at bedtime?", "parenting"),
    ("What does bile do in digestion?", "tutor"),
    ("What is a normal blood pressure?", "medical"),
    ("When do babies start to crawl?", "parenting"),
    ("What helps with hay fever?", "medical"),
    ("Why are alveoli well suited to gas exchange?", "tutor"),
]


def read_jsonl(path: Path, limit: int | None = None) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                out.append(json.loads(line))
                if limit is not None and len(out) >= limit:
                    break
    return out


def doc_text(doc: dict[str, Any]) -> str:
    """How the benchmarks turn a BEIR-style record into a passage: title + newline + text."""
    title = (doc.get("title") or "").strip()
    text = (doc.get("text") or "").strip()
    return f"{title}\n{text}" if title else text


def scifact_corpus(limit: int | None = None) -> list[dict[str, Any]]:
    return read_jsonl(DATA / "scifact" / "corpus.jsonl", limit)


def scifact_queries(limit: int | None = None) -> list[str]:
    return [q["text"] for q in read_jsonl(DATA / "scifact" / "queries.train.jsonl", limit)]


def medquad_corpus(limit: int | None = None) -> list[dict[str, Any]]:
    return read_jsonl(DATA / "medquad" / "corpus.jsonl", limit)


def medquad_queries(limit: int | None = None) -> list[str]:
    return [q["text"] for q in read_jsonl(DATA / "medquad" / "queries.dev.jsonl", limit)]


# -- statistics -----------------------------------------------------------------------------
def pct(values: Sequence[float], q: float) -> float:
    """Percentile with linear interpolation (numpy's default), without importing numpy."""
    xs = sorted(values)
    if not xs:
        return float("nan")
    pos = (len(xs) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def summarise_ms(seconds: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000.0 for s in seconds]
    return {"p50": pct(ms, 50), "p95": pct(ms, 95), "mean": statistics.fmean(ms), "n": len(ms)}


def median(values: Iterable[float]) -> float:
    vals = list(values)
    return statistics.median(vals) if vals else float("nan")


def timed(fn: Any, *args: Any, **kwargs: Any) -> tuple[float, Any]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


# -- output ---------------------------------------------------------------------------------
def fmt(value: Any, digits: int = 2) -> str:
    if isinstance(value, float):
        if value != value:  # NaN
            return "n/a"
        if abs(value) >= 1000:
            return f"{value:,.0f}"
        return f"{value:.{digits}f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], digits: int = 2) -> None:
    """A Markdown table, so the output can be pasted into docs/benchmarks.md as is."""
    cells = [[fmt(v, digits) for v in row] for row in rows]
    numeric = [all(isinstance(row[i], int | float) for row in rows) for i in range(len(headers))]
    widths = [
        max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)
    ]
    print("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print(
            "| "
            + " | ".join(
                c.rjust(w) if num else c.ljust(w)
                for c, w, num in zip(row, widths, numeric, strict=True)
            )
            + " |"
        )
    print()


def rss_mib(pid: int | str = "self") -> float:
    """Resident memory of a process (this one by default) from /proc, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def machine_line() -> str:
    load = os.getloadavg()
    return (
        f"# machine: {platform.machine()}, {os.cpu_count()} logical cores, "
        f"python {platform.python_version()}, load average {load[0]:.2f} {load[1]:.2f} "
        f"{load[2]:.2f}, {time.strftime('%Y-%m-%d %H:%M %Z')}"
    )


def loadavg1() -> float:
    return os.getloadavg()[0]


# -- workers in fresh processes ---------------------------------------------------------------
def emit_result(payload: dict[str, Any]) -> None:
    print(RESULT_TAG + json.dumps(payload), flush=True)


def run_worker(
    script: Path,
    spec: dict[str, Any],
    env_overrides: dict[str, str | None] | None = None,
    timeout: float = 900,
) -> dict[str, Any]:
    """Re-run ``script --worker SPEC`` in a fresh interpreter; env values of None are unset."""
    env = dict(os.environ)
    for key, value in (env_overrides or {}).items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run(
        [sys.executable, str(script), "--worker", json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    for line in proc.stdout.splitlines():
        if line.startswith(RESULT_TAG):
            return json.loads(line[len(RESULT_TAG) :])
    raise RuntimeError(f"worker {spec} failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")


class Spinners:
    """N busy-looping processes that simulate other work on the machine. Each stops by itself
    after ``limit`` seconds even if this process dies; ``stop`` ends them by pid."""

    def __init__(self, count: int, limit: float = 900) -> None:
        code = f"import time\nend = time.time() + {limit}\nwhile time.time() < end:\n    pass\n"
        self.procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(count)]

    def stop(self) -> None:
        for proc in self.procs:
            proc.terminate()
        for proc in self.procs:
            proc.wait(timeout=10)
        self.procs = []

    def __enter__(self) -> Spinners:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def sample_engine(pace_ms: float = 0.0, prefix: str = "ragchat-bench-") -> Any:
    """An offline ``ChatEngine`` (no LLM, packaged embedder) over the sample knowledge bases,
    ingested into a fresh temporary data directory; replies streamed at ``pace_ms``."""
    import tempfile

    from ragchat.agents.bootstrap import ensure_knowledge_bases
    from ragchat.agents.config import load_config
    from ragchat.agents.factory import build_engine
    from ragchat.embed.factory import load_embedder
    from ragchat.settings import LLMSettings, Settings

    data = Path(tempfile.mkdtemp(prefix=prefix))
    settings = Settings(data_dir=data, config_file=None, llm=LLMSettings(stream_pace_ms=pace_ms))
    app_config = load_config()
    embedder = load_embedder(settings)
    print("ingesting the sample knowledge bases…", file=sys.stderr)
    ensure_knowledge_bases(settings, app_config, embedder)
    return build_engine(settings, app_config, embedder=embedder)


def start_offline_server(
    src: Path,
    port: int,
    env: dict[str, str],
    *,
    prefix: str = "ragchat-bench-",
    timeout_s: float = 600,
) -> tuple[subprocess.Popen[bytes], Path]:
    """``ragchat serve`` from the source tree ``src`` on a fresh data directory, offline (no
    LLM), rate limits off, plus ``env``; returns once ``/health`` answers and the sentence
    vectors are prewarmed (a server measured before that pays for them in its first turns)."""
    import httpx  # only the server benchmarks need it

    data = Path(tempfile.mkdtemp(prefix=prefix))
    full = dict(os.environ)
    full.update(
        PYTHONPATH=str(src),
        RAGCHAT_DATA_DIR=str(data),
        RAGCHAT_API__RATE_LIMIT_PER_MINUTE="0",
        RAGCHAT_API__RATE_LIMIT_PER_IP_PER_MINUTE="0",
        RAGCHAT_API__SESSION_CLEANUP_INTERVAL_S="3600",
        RAGCHAT_LLM__BACKEND="none",
        RAGCHAT_LOG_LEVEL="WARNING",
    )
    full.update(env)
    cmd = [sys.executable, "-c", "from ragchat.cli import main; main()", "serve"]
    proc = subprocess.Popen(
        [*cmd, "--port", str(port)], env=full, cwd=data, stdout=subprocess.DEVNULL
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"server from {src} exited with {proc.returncode}")
        try:
            health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=5)
            embedder = health.json().get("components", {}).get("embedder", {})
            if health.status_code == 200 and embedder.get("sentences_prewarmed", True):
                return proc, data
        except httpx.HTTPError:
            pass
        time.sleep(1)
    proc.kill()
    raise SystemExit(f"server from {src} did not start")
