"""Settings → backend selection, and the forgiving parsers shared by all backends."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from ragchat.errors import ConfigError, ModelLoadError
from ragchat.llm.base import GenerationOptions, ToolSpec
from ragchat.llm.factory import build_chat_model
from ragchat.llm.local_gguf import default_gguf_path
from ragchat.llm.openai_compat import OpenAICompatChatModel
from ragchat.llm.parsing import (
    first_balanced,
    loads_lenient,
    parse_string_list,
    parse_structured,
    parse_text_tool_calls,
    strip_fences,
)
from ragchat.settings import LLMSettings, Settings

TOOLS = [ToolSpec(name="search", description="d", parameters={"type": "object"})]


@pytest.fixture(autouse=True)
def _restore_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """prepare_runtime() sets process env vars; make sure they are undone after each test."""
    for key in ("OMP_WAIT_POLICY", "TOKENIZERS_PARALLELISM", "HF_HUB_OFFLINE"):
        monkeypatch.setenv(key, "x")
        monkeypatch.delenv(key)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")


def test_default_backend_is_none() -> None:
    assert Settings().llm.backend == "none"
    assert build_chat_model(Settings()) is None


def test_openai_backend_needs_url_and_model() -> None:
    with pytest.raises(ConfigError, match=r"base_url and llm\.model"):
        build_chat_model(Settings(llm=LLMSettings(backend="openai")))


def test_openai_backend_is_built_from_settings() -> None:
    llm = LLMSettings(
        backend="openai",
        base_url="http://localhost:11434/v1",
        model="qwen2.5:0.5b",
        api_key="sk-1",  # type: ignore[arg-type]
        timeout_s=5,
        max_retries=1,
        json_mode=False,
    )
    model = build_chat_model(Settings(llm=llm))
    assert isinstance(model, OpenAICompatChatModel)
    assert model.name == "qwen2.5:0.5b" and model.max_retries == 1 and not model.json_mode
    assert model._headers["Authorization"] == "Bearer sk-1"
    assert "sk-1" not in repr(llm)


def test_local_backend_without_llama_cpp_explains_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails
    with pytest.raises(ModelLoadError, match=r"pip install 'ragchat\[local\]'"):
        build_chat_model(Settings(llm=LLMSettings(backend="local", model_path=gguf)))
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"


def test_local_backend_missing_file(tmp_path: Path) -> None:
    settings = Settings(llm=LLMSettings(backend="local", model_path=tmp_path / "nope.gguf"))
    with pytest.raises(ModelLoadError, match="not found"):
        build_chat_model(settings)


def test_default_gguf_path_points_at_smollm2_when_installed() -> None:
    path = default_gguf_path()
    if path is not None:
        assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()


def test_options_for_node() -> None:
    llm = LLMSettings(options={"router": {"temperature": 0, "max_tokens": 64}, "answer": {}})  # type: ignore[dict-item]
    assert llm.options_for("router") == GenerationOptions(temperature=0.0, max_tokens=64)
    assert llm.options_for("answer") == GenerationOptions()
    assert llm.options_for("unknown") == GenerationOptions()
    assert LLMSettings().options_for("router").temperature == 0.0


def test_llm_settings_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RAGCHAT_LLM__BACKEND", "openai")
    monkeypatch.setenv("RAGCHAT_LLM__API_KEY", "secret")
    monkeypatch.setenv("RAGCHAT_LLM__MODEL", "m")
    llm = Settings(_env_file=None).llm  # type: ignore[call-arg]
    assert llm.backend == "openai" and llm.model == "m"
    assert llm.api_key is not None and llm.api_key.get_secret_value() == "secret"


# --- parsing ------------------------------------------------------------------------------


class Answer(BaseModel):
    text: str
    score: int = 0


def test_strip_fences_and_balanced_object() -> None:
    assert strip_fences('```json\n{"a": 1}\n```') == '{"a": 1}'
    assert strip_fences('```\n{"a": 1}') == '{"a": 1}'  # cut off by max_tokens
    assert first_balanced('x {"a": "}{", "b": {"c": 1}} y {"d": 2}') == '{"a": "}{", "b": {"c": 1}}'
    assert first_balanced("no object") is None


def test_loads_lenient_repairs() -> None:
    assert loads_lenient("{'a': 'it\\'s', 'b': [1, 2,],}") == {"a": "it's", "b": [1, 2]}
    assert loads_lenient("{'a': True, 'b': None}") == {"a": True, "b": None}
    assert loads_lenient('{\'q\': "say \\"hi\\""}') == {"q": 'say "hi"'}
    with pytest.raises(ValueError):
        loads_lenient("{nope")


def test_parse_structured_picks_the_first_object() -> None:
    reply = 'The answer: {"text": "a {b}", "score": 3} and {"text": "other"}'
    assert parse_structured(reply, Answer) == Answer(text="a {b}", score=3)
    with pytest.raises(ValueError):
        parse_structured('{"score": 1}', Answer)


def test_parse_string_list_tolerates_fences_prose_and_slips() -> None:
    assert parse_string_list('```json\n["a", "b"]\n```') == ["a", "b"]
    assert parse_string_list('Sure! ["one", " two ", ""] hope that helps') == ["one", "two"]
    assert parse_string_list("['single', 'quotes',]") == ["single", "quotes"]
    assert parse_string_list('{"queries": ["inside", "an object"]}') == ["inside", "an object"]
    assert parse_string_list("no list here") is None
    assert parse_string_list("[1, 2]") is None
    assert parse_string_list('["", "  "]') is None


def test_text_tool_call_dialects() -> None:
    def args(text: str) -> object:
        calls = parse_text_tool_calls(text, TOOLS)
        return calls[0].arguments if calls else None

    assert args('{"tool": "search", "arguments": {"q": 1}}') == {"q": 1}
    assert args('{"name": "search", "arguments": "{\\"q\\": 2}"}') == {"q": 2}
    assert args('<tool_call>{"name": "search", "arguments": {}}</tool_call>') == {}
    assert args('{"type": "function", "function": {"name": "search", "arguments": "{}"}}') == {}
    assert args('{"name": "other", "arguments": {}}') is None
    assert args("just text") is None
    assert parse_text_tool_calls('{"tool": "search", "arguments": {}}', []) == []
