"""Named retrieval configurations: ``base[+modifier...]``, e.g. ``hybrid_rrf+qe+rerank``.

A base fixes the ranking (mode, fusion) and turns every optional step off, so a name means the
same pipeline whatever ``settings.retrieval`` enables; modifiers switch one step on. Knobs a
name does not mention (candidates, gate threshold, neighbour floor ...) come from the settings.
Users add bases in the config file::

    [retrieval_configs.hybrid_a07]
    mode = "hybrid"
    alpha = 0.7

and compose them like built-ins (``hybrid_a07+rerank``).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ragchat.errors import ConfigError
from ragchat.settings import RetrievalSettings

_OFF: dict[str, Any] = {
    "rerank": False,
    "parents": False,
    "neighbours": False,
    "query_expansion": False,
    "adaptive_top_k": False,
    "complete_scores": False,
    "title_weight": 0.0,
    "prf_docs": 0,
}

# Second-generation hybrid: z-score normalised fusion plus BM25 over titles as a third signal
# (docs/benchmarks.md, "Retrieval quality": better than hybrid on SciFact and MedQuAD).
TITLE_WEIGHT = 0.2
_V2: dict[str, Any] = {
    "mode": "hybrid",
    "fusion": "zscore",
    "alpha": 0.5,
    "title_weight": TITLE_WEIGHT,
}

BASES: dict[str, dict[str, Any]] = {
    "bm25": {**_OFF, "mode": "bm25"},
    "dense": {**_OFF, "mode": "dense"},
    "hybrid": {**_OFF, "mode": "hybrid", "fusion": "minmax", "alpha": 0.5},
    "hybrid_rrf": {**_OFF, "mode": "hybrid", "fusion": "rrf", "rrf_k": 60},
    "hybrid_z": {**_OFF, "mode": "hybrid", "fusion": "zscore", "alpha": 0.5},
    "hybrid_v2": {**_OFF, **_V2},
    "dense_first": {**_OFF, "mode": "dense_first", "fusion": "minmax", "alpha": 0.5},
}

MODIFIERS: dict[str, dict[str, Any]] = {
    "rerank": {"rerank": True},
    "nb": {"neighbours": True},
    "parents": {"parents": True},
    "qe": {"query_expansion": True},
    # complete the hybrid score lists (look up the score a retriever did not return)
    "fill": {"complete_scores": True},
    # title BM25 as a third fused signal
    "title": {"title_weight": TITLE_WEIGHT},
    # dense Rocchio feedback from the top 3 first-pass hits
    "prf": {"prf_docs": 3, "prf_weight": 0.5},
}

DEFAULT_CONFIGS: tuple[str, ...] = (
    "bm25",
    "dense",
    "hybrid",
    "hybrid_rrf",
    "dense_first",
    "bm25+rerank",
    "hybrid+rerank",
    "hybrid_rrf+rerank",
    "hybrid+qe",
    "hybrid+parents",
    "hybrid+nb",
    "hybrid+qe+rerank",
    "hybrid+fill",
    "hybrid+title",
    "hybrid+prf",
    "hybrid_z",
    "hybrid_z+fill",
    "hybrid_v2",
    "hybrid_v2+fill",
    "hybrid_v2+prf",
    "hybrid_v2+parents",
    "hybrid_v2+rerank",
)

# Friendlier spellings accepted in user tables, mapped to RetrievalSettings fields.
ALIASES = {
    "reranker": "rerank",
    "neighbors": "neighbours",
    "nb": "neighbours",
    "qe": "query_expansion",
    "expansion": "query_expansion",
    "parent": "parents",
    "k": "top_k",
    "gate": "gate_threshold",
    "fill": "complete_scores",
    "title": "title_weight",
}


@dataclass(frozen=True)
class NamedConfig:
    name: str
    settings: RetrievalSettings

    @property
    def needs_reranker(self) -> bool:
        return self.settings.rerank


def _user_table(name: str, table: Any, source: str) -> dict[str, Any]:
    """One user table → field overrides: all optional steps off, then ``base`` (a built-in
    name), then the table's own fields, whatever their order in the file."""
    if not isinstance(table, Mapping):
        raise ConfigError(f"{source}: [retrieval_configs.{name}] must be a table of settings")
    if not name or "+" in name or "," in name or name in MODIFIERS:
        raise ConfigError(
            f"{source}: invalid configuration name {name!r} (no '+' or ',', not a modifier)"
        )
    out: dict[str, Any] = dict(_OFF)
    base = table.get("base")
    if base is not None:
        if base not in BASES:
            raise ConfigError(f"{source}: {name}: unknown base {base!r}; use {_known(BASES)}")
        out.update(BASES[base])
    fields = set(RetrievalSettings.model_fields)
    for key, value in table.items():
        field = ALIASES.get(key, key)
        if field == "base":
            continue
        if field not in fields:
            raise ConfigError(
                f"{source}: {name}: unknown setting {key!r}; use base or one of "
                f"{', '.join(sorted(fields))}"
            )
        out[field] = value
    try:
        RetrievalSettings.model_validate({**RetrievalSettings().model_dump(), **out})
    except ValidationError as exc:
        raise ConfigError(f"{source}: retrieval configuration {name!r} is invalid: {exc}") from exc
    return out


def _known(items: Mapping[str, Any]) -> str:
    return ", ".join(sorted(items))


def load_user_configs(path: Path | None) -> dict[str, dict[str, Any]]:
    """``retrieval_configs`` tables of a TOML or YAML config file (empty when there is none)."""
    if path is None:
        return {}
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
    try:
        if Path(path).suffix.lower() in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text) or {}
        else:
            data = tomllib.loads(text)
    except Exception as exc:  # TOMLDecodeError / YAMLError: both mean "fix the file"
        raise ConfigError(f"config file {path} is invalid: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigError(f"config file {path} must hold a table at the top level")
    tables = data.get("retrieval_configs") or {}
    if not isinstance(tables, Mapping):
        raise ConfigError(f"{path}: retrieval_configs must be a table of named tables")
    return {str(n): _user_table(str(n), t, str(path)) for n, t in tables.items()}


class ConfigRegistry:
    """Resolves configuration names against built-in and user bases; user bases win."""

    def __init__(self, user: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        self.bases: dict[str, dict[str, Any]] = {
            **BASES,
            **{k: dict(v) for k, v in (user or {}).items()},
        }
        self.user_names = tuple(sorted(user or {}))

    @classmethod
    def from_file(cls, path: Path | None) -> ConfigRegistry:
        return cls(load_user_configs(path))

    def default_names(self) -> list[str]:
        """The built-in default list, then the user's own configurations."""
        return [*DEFAULT_CONFIGS, *(n for n in self.user_names if n not in DEFAULT_CONFIGS)]

    def known(self) -> str:
        return (
            f"bases: {_known(self.bases)}; modifiers: "
            f"{', '.join('+' + m for m in sorted(MODIFIERS))}"
        )

    def resolve(self, name: str, defaults: RetrievalSettings) -> NamedConfig:
        base, *mods = [p.strip() for p in name.strip().split("+")]
        if base not in self.bases:
            raise ConfigError(f"unknown retrieval configuration {name!r}: {self.known()}")
        values: dict[str, Any] = {**defaults.model_dump(), **self.bases[base]}
        seen: set[str] = set()
        for mod in mods:
            if mod not in MODIFIERS:
                raise ConfigError(f"unknown modifier {'+' + mod!r} in {name!r}: {self.known()}")
            if mod in seen:
                raise ConfigError(f"modifier +{mod} repeated in {name!r}")
            seen.add(mod)
            values.update(MODIFIERS[mod])
        try:
            settings = RetrievalSettings.model_validate(values)
        except ValidationError as exc:
            raise ConfigError(f"retrieval configuration {name!r} is invalid: {exc}") from exc
        return NamedConfig("+".join([base, *mods]), settings)

    def resolve_many(self, names: Sequence[str], defaults: RetrievalSettings) -> list[NamedConfig]:
        """Resolves all names first, so a typo fails before any slow run starts."""
        out: list[NamedConfig] = []
        for name in names:
            config = self.resolve(name, defaults)
            if all(c.name != config.name for c in out):
                out.append(config)
        return out


def parse_names(text: str | None) -> list[str]:
    """``"a, b,c"`` → ``["a", "b", "c"]``; empty → [] (meaning the default list)."""
    return [p.strip() for p in (text or "").split(",") if p.strip()]
