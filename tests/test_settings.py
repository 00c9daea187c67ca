"""The chat model from the conventions users bring (the openai SDK's and LangChain's
``OPENAI_API_KEY``/``OPENAI_BASE_URL``, seed 000's ``OPENAI_API_BASE``/``MODEL_NAME``, seed
001's ``GROQ_API_KEY``) when ragchat's own ``RAGCHAT_LLM__*`` settings are absent, and the
sentence the server logs about it at start."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from ragchat.api.serve import log_llm
from ragchat.settings import CONVENTIONAL_LLM_VARIABLES, Settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    for name in CONVENTIONAL_LLM_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name in ("BACKEND", "BASE_URL", "API_KEY", "MODEL"):
        monkeypatch.delenv(f"RAGCHAT_LLM__{name}", raising=False)


def settings_with(monkeypatch: pytest.MonkeyPatch, **env: str) -> Settings:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return Settings()


def key(settings: Settings) -> str | None:
    return None if settings.llm.api_key is None else settings.llm.api_key.get_secret_value()


def test_out_of_the_box_the_offline_answerer_and_how_to_change_it() -> None:
    settings = Settings()
    assert settings.llm.backend == "none"
    assert "offline" in settings.llm_origin and "OPENAI_API_KEY" in settings.llm_origin


def test_the_openai_sdk_convention(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_with(monkeypatch, OPENAI_API_KEY="sk-test")
    llm = settings.llm
    assert (llm.backend, llm.base_url, llm.model) == (
        "openai",
        "https://api.openai.com/v1",
        "gpt-4o-mini",
    )
    assert key(settings) == "sk-test"
    assert "OPENAI_API_KEY" in settings.llm_origin and "sk-test" not in settings.llm_origin
    assert "sk-test" not in repr(settings) and "openai_api_key" not in settings.model_dump()


def test_openai_base_url_points_at_any_compatible_server(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_with(
        monkeypatch, OPENAI_BASE_URL="http://127.0.0.1:11434/v1", MODEL_NAME="llama3.1"
    )
    assert settings.llm.backend == "openai" and key(settings) is None
    assert (settings.llm.base_url, settings.llm.model) == ("http://127.0.0.1:11434/v1", "llama3.1")
    assert "OPENAI_BASE_URL" in settings.llm_origin and "MODEL_NAME" in settings.llm_origin


def test_seed_000s_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_with(
        monkeypatch,
        OPENAI_API_KEY="or-key",
        OPENAI_API_BASE="https://openrouter.ai/api/v1",
        MODEL_NAME="qwen/qwen3-max",
    )
    llm = settings.llm
    assert (llm.backend, llm.base_url, llm.model) == (
        "openai",
        "https://openrouter.ai/api/v1",
        "qwen/qwen3-max",
    )
    assert key(settings) == "or-key" and "OPENAI_API_BASE" in settings.llm_origin


def test_seed_001s_groq_key(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = settings_with(monkeypatch, GROQ_API_KEY="gsk-test")
    assert settings.llm.base_url == "https://api.groq.com/openai/v1"
    assert settings.llm.model and key(settings) == "gsk-test"
    assert "GROQ_API_KEY" in settings.llm_origin


def test_ragchats_own_settings_win(monkeypatch: pytest.MonkeyPatch) -> None:
    off = settings_with(monkeypatch, OPENAI_API_KEY="sk-test", RAGCHAT_LLM__BACKEND="none")
    assert off.llm.backend == "none" and "RAGCHAT_LLM__BACKEND" in off.llm_origin
    mine = settings_with(
        monkeypatch,
        RAGCHAT_LLM__BACKEND="openai",
        RAGCHAT_LLM__BASE_URL="http://10.0.0.2:8080/v1",
        RAGCHAT_LLM__MODEL="mistral",
        MODEL_NAME="ignored",
    )
    assert (mine.llm.base_url, mine.llm.model) == ("http://10.0.0.2:8080/v1", "mistral")
    assert key(mine) == "sk-test"  # the one part ragchat's settings left unset
    assert "RAGCHAT_LLM__MODEL" in mine.llm_origin


def test_a_dotenv_file_works_too(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    (tmp_path / ".env").write_text("OPENAI_API_KEY=from-dotenv\nMODEL_NAME=gpt-4.1\n")
    settings = Settings()
    assert key(settings) == "from-dotenv" and settings.llm.model == "gpt-4.1"


def test_the_server_says_which_llm_and_where_from(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    settings = settings_with(monkeypatch, GROQ_API_KEY="gsk-test")
    with caplog.at_level(logging.INFO, logger="ragchat.api.serve"):
        log_llm(settings)
    assert "api.groq.com" in caplog.text and "GROQ_API_KEY" in caplog.text
    assert "gsk-test" not in caplog.text
