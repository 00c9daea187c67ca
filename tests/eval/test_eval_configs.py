from pathlib import Path

import pytest

from ragchat.errors import ConfigError
from ragchat.eval.configs import DEFAULT_CONFIGS, ConfigRegistry, parse_names
from ragchat.settings import RetrievalSettings

DEFAULTS = RetrievalSettings(candidates=50, gate_threshold=0.3, rerank=True, parents=True)


def test_defaults_resolve_and_bases_switch_optional_steps_off() -> None:
    reg = ConfigRegistry()
    configs = reg.resolve_many(list(DEFAULT_CONFIGS), DEFAULTS)
    assert len(configs) == len(DEFAULT_CONFIGS) >= 12
    hybrid = reg.resolve("hybrid", DEFAULTS).settings
    assert (hybrid.mode, hybrid.fusion, hybrid.alpha) == ("hybrid", "minmax", 0.5)
    assert not (hybrid.rerank or hybrid.parents or hybrid.neighbours or hybrid.query_expansion)
    # knobs the name does not mention come from the settings (gate for NO_ANSWER rate)
    assert (hybrid.candidates, hybrid.gate_threshold) == (50, 0.3)
    rrf = reg.resolve("hybrid_rrf", DEFAULTS).settings
    assert (rrf.fusion, rrf.rrf_k) == ("rrf", 60)
    assert reg.resolve("dense_first", DEFAULTS).settings.mode == "dense_first"


def test_modifiers_compose() -> None:
    reg = ConfigRegistry()
    cfg = reg.resolve(" hybrid_rrf+qe+rerank+nb+parents ", DEFAULTS)
    s = cfg.settings
    assert cfg.name == "hybrid_rrf+qe+rerank+nb+parents"
    assert (s.query_expansion, s.rerank, s.neighbours, s.parents) == (True, True, True, True)
    assert cfg.needs_reranker
    assert not reg.resolve("bm25+qe", DEFAULTS).needs_reranker


def test_unknown_names_list_known_ones() -> None:
    reg = ConfigRegistry()
    with pytest.raises(ConfigError, match=r"unknown retrieval configuration 'hybird'.*hybrid_rrf"):
        reg.resolve("hybird", DEFAULTS)
    with pytest.raises(ConfigError, match=r"unknown modifier '\+rrank'.*\+rerank"):
        reg.resolve("hybrid+rrank", DEFAULTS)
    with pytest.raises(ConfigError, match="repeated"):
        reg.resolve("hybrid+qe+qe", DEFAULTS)


def test_parse_names_and_dedupe() -> None:
    assert parse_names(" bm25, hybrid+rerank ,,") == ["bm25", "hybrid+rerank"]
    assert parse_names("") == []
    reg = ConfigRegistry()
    assert [c.name for c in reg.resolve_many(["bm25", "bm25"], DEFAULTS)] == ["bm25"]


def test_user_configs_from_toml(tmp_path: Path) -> None:
    path = tmp_path / "ragchat.toml"
    path.write_text(
        "[retrieval_configs.hybrid_a07]\nmode = 'hybrid'\nalpha = 0.7\ncandidates = 200\n\n"
        "[retrieval_configs.rrf30]\nbase = 'hybrid_rrf'\nk = 3\nrrf_k = 30\nreranker = true\n"
    )
    reg = ConfigRegistry.from_file(path)
    assert reg.default_names()[-2:] == ["hybrid_a07", "rrf30"]
    a07 = reg.resolve("hybrid_a07+rerank", DEFAULTS).settings
    assert (a07.alpha, a07.candidates, a07.rerank, a07.parents) == (0.7, 200, True, False)
    rrf30 = reg.resolve("rrf30", DEFAULTS).settings
    assert (rrf30.fusion, rrf30.rrf_k, rrf30.top_k, rrf30.rerank) == ("rrf", 30, 3, True)


def test_user_configs_from_yaml_and_errors(tmp_path: Path) -> None:
    yml = tmp_path / "ragchat.yaml"
    yml.write_text("retrieval_configs:\n  bm25_only:\n    mode: bm25\n")
    assert ConfigRegistry.from_file(yml).resolve("bm25_only", DEFAULTS).settings.mode == "bm25"
    bad = tmp_path / "bad.toml"
    bad.write_text("[retrieval_configs.x]\nalfa = 0.3\n")
    with pytest.raises(ConfigError, match=r"bad\.toml: x: unknown setting 'alfa'.*alpha"):
        ConfigRegistry.from_file(bad)
    bad.write_text("[retrieval_configs.x]\nalpha = 3.0\n")
    with pytest.raises(ConfigError, match=r"bad\.toml.*'x' is invalid"):
        ConfigRegistry.from_file(bad)
    bad.write_text("[retrieval_configs.'a+b']\nmode = 'dense'\n")
    with pytest.raises(ConfigError, match="invalid configuration name"):
        ConfigRegistry.from_file(bad)
    bad.write_text("retrieval_configs = [\n")
    with pytest.raises(ConfigError, match="is invalid"):
        ConfigRegistry.from_file(bad)
    assert ConfigRegistry.from_file(None).user_names == ()
