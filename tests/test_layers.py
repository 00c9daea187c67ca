"""The package's import graph: no circle between modules, and no import that runs back up the
layers (ingest → embed/vectorstores → ingestion/retrieve → agents → api). Every import counts,
including those inside functions and under ``TYPE_CHECKING``: a lazy import hides a circle, it
does not remove it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ragchat

SRC = Path(ragchat.__file__).parent

# Lower layers first; a module may import from its own package or from a lower layer only.
LAYERS: list[set[str]] = [
    {"types", "errors", "crashpoints"},
    {"settings"},
    {"runtime", "cli_common"},
    {"llm", "embed", "ingest"},
    {"vectorstores"},
    {"ingestion", "retrieve", "safety", "store"},
    {"resources", "tenancy", "reader"},
    {"agents"},
    {"ui"},
    {"chatbot", "api", "eval"},
    {"kb_cli", "users_cli", "reader_cli"},
    {"cli"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def _modules() -> dict[str, Path]:
    out = {}
    for path in SRC.rglob("*.py"):
        parts = ["ragchat", *path.relative_to(SRC).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imports(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    def known(target: str) -> str | None:
        while target and target not in modules:
            target = target.rpartition(".")[0]
        return target or None

    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str | None] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {known(a.name) for a in node.names if a.name.startswith("ragchat")}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package[: len(package) - node.level + 1]
                base = ".".join([*up, *([base] if base else [])])
            if base.startswith("ragchat"):
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    found.add(full if full in modules else known(base))
    return {m for m in found if m is not None and m != name}


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _top(module: str) -> str:
    return module.split(".")[1] if "." in module else ""


def test_every_top_level_module_has_a_layer(graph: dict[str, set[str]]) -> None:
    assert {_top(m) for m in graph} - {""} - set(RANK) == set()


def test_no_import_runs_back_up_the_layers(graph: dict[str, set[str]]) -> None:
    upward = [
        f"{a} -> {b}"
        for a, targets in graph.items()
        for b in targets
        if _top(a) and _top(b) and _top(a) != _top(b) and RANK[_top(b)] >= RANK[_top(a)]
    ]
    assert upward == []


def test_no_circle_between_modules(graph: dict[str, set[str]]) -> None:
    import graphlib

    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as exc:
        pytest.fail(f"import circle: {' -> '.join(exc.args[1])}")
