"""Chat over the OpenAI ``/chat/completions`` API, the lingua franca of hosted and local servers.

Only the subset every provider implements is used (OpenRouter, OpenAI, Groq, Ollama, vLLM,
llama.cpp's server): ``messages``, ``tools``/``tool_choice: auto``, ``temperature``,
``max_tokens``, ``stop``, ``stream`` and ``response_format: {"type": "json_object"}``.

Prompt caching: providers cache the longest identical prompt prefix. Every request therefore
starts with the same bytes for the same node: the leading system messages are merged into
``messages[0]``, tools are sorted by name, everything is serialized with sorted keys, and the
body's keys are written in the order model → tools → tool_choice → messages → per-call knobs,
so two requests that differ only in the user turn share their prefix byte for byte.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import random
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, NoReturn

import httpx
from pydantic import BaseModel

from ragchat.errors import LLMError, LLMOutputError, LLMUnavailable
from ragchat.llm.base import ChatResult, GenerationOptions, M, Message, ToolCall, ToolSpec
from ragchat.llm.parsing import (
    canonical_json,
    looks_like_tool_call,
    make_tool_call,
    parse_structured,
    parse_text_tool_calls,
    retry_instruction,
    schema_instruction,
)

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]

_RETRY_STATUS = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
# Connection-level failures worth another attempt; read/write timeouts are not retried
# (a model that was too slow once will be too slow again, and the user is waiting).
_RETRY_TRANSPORT: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
    httpx.RemoteProtocolError,
    httpx.ReadError,
    httpx.WriteError,
)


class HTTPStatusLLMError(LLMError):
    """A non-retryable HTTP error from the provider; ``status`` lets callers branch on it."""

    def __init__(self, status: int, message: str, body: Any = None) -> None:
        super().__init__(f"LLM provider returned HTTP {status}: {message}")
        self.status = status
        self.body = body


class _ToolUseFailed(HTTPStatusLLMError):
    """Groq-style 400 ``tool_use_failed``: the model's attempt is in ``failed_generation``."""

    def __init__(self, status: int, message: str, body: Any, failed_generation: str) -> None:
        super().__init__(status, message, body)
        self.failed_generation = failed_generation


def _provider_message(body: Any, text: str) -> str:
    if isinstance(body, dict):
        err = body.get("error", body)
        if isinstance(err, dict):
            for key in ("message", "detail", "msg"):
                if isinstance(err.get(key), str):
                    return str(err[key])
        elif isinstance(err, str):
            return err
        for key in ("message", "detail"):
            if isinstance(body.get(key), str):
                return str(body[key])
    return text.strip()[:500] or "<empty body>"


def _json_or_none(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:
        return None


def _retry_after(response: httpx.Response) -> float | None:
    """Seconds from ``Retry-After`` (delta-seconds or HTTP date) or ``retry-after-ms``."""
    ms = response.headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = response.headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _message_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if message.tool_calls:
        out["content"] = message.content or None
        out["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": canonical_json(call.arguments)},
            }
            for call in message.tool_calls
        ]
    if message.tool_call_id is not None:
        out["tool_call_id"] = message.tool_call_id
    if message.name is not None:
        out["name"] = message.name
    return out


def _with_system_first(messages: Sequence[Message], extra_system: str | None) -> list[Message]:
    """Merge the leading system messages (plus a static extra instruction) into one
    ``messages[0]`` so the cacheable prefix is one stable block."""
    leading: list[str] = []
    rest_start = 0
    while rest_start < len(messages) and messages[rest_start].role == "system":
        leading.append(messages[rest_start].content)
        rest_start += 1
    if extra_system:
        leading.append(extra_system)
    head = [Message(role="system", content="\n\n".join(leading))] if leading else []
    return head + list(messages[rest_start:])


def _tool_dict(tool: ToolSpec) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


class OpenAICompatChatModel:
    """``ChatModel`` over any OpenAI-compatible endpoint (``base_url`` ends in ``/v1``)."""

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 3,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        json_mode: bool = True,
        json_schema: bool = False,
        headers: dict[str, str] | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
        client: httpx.AsyncClient | None = None,
        sleep: Sleep | None = None,
        rng: random.Random | None = None,
    ) -> None:
        """``json_mode`` asks for ``response_format: json_object`` in ``structured``;
        ``json_schema`` also puts the schema in it (llama-cpp-python's server turns that into
        a grammar; strict providers reject the extra key). ``transport``/``client``, ``sleep``
        and ``rng`` are injectable so tests run without network or real waiting."""
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.name = model
        self.timeout = timeout
        self.max_retries = max(0, max_retries)
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.json_mode = json_mode
        self.json_schema = json_schema
        self._sleep: Sleep = sleep or asyncio.sleep
        self._rng = rng or random.Random()
        hdrs = {"Content-Type": "application/json", "Accept": "application/json"}
        if api_key:
            hdrs["Authorization"] = f"Bearer {api_key}"
        hdrs.update(headers or {})
        self._headers = hdrs
        self._transport = transport
        self._given_client = client  # the caller's: used on every loop, never closed here
        # An httpx pool's connections belong to the event loop that opened them, and this
        # model is awaited on more than one loop (the engine's, and ragchat.llm.sync's for
        # query expansion), so it opens one client per loop.
        self._clients: dict[asyncio.AbstractEventLoop, httpx.AsyncClient] = {}
        self._clients_lock = threading.Lock()

    @property
    def _client(self) -> httpx.AsyncClient:
        """The HTTP client for the running event loop."""
        if self._given_client is not None:
            return self._given_client
        loop = asyncio.get_running_loop()
        with self._clients_lock:
            client = self._clients.get(loop)
            if client is None:
                for closed in [other for other in self._clients if other.is_closed()]:
                    del self._clients[closed]  # its connections died with it
                client = httpx.AsyncClient(
                    transport=self._transport, timeout=httpx.Timeout(self.timeout)
                )
                self._clients[loop] = client
            return client

    async def aclose(self) -> None:
        """Closes the clients this model opened, each on its own loop while that still runs
        (a stopped loop's connections can no longer be closed politely)."""
        with self._clients_lock:
            clients = list(self._clients.items())
            self._clients.clear()
        current = asyncio.get_running_loop()
        for loop, client in clients:
            if loop is current:
                await client.aclose()
            elif loop.is_running():
                try:
                    await asyncio.wrap_future(
                        asyncio.run_coroutine_threadsafe(client.aclose(), loop)
                    )
                except Exception:  # closing is best effort
                    log.debug("closing an HTTP client on another loop failed", exc_info=True)

    async def __aenter__(self) -> OpenAICompatChatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # --- request building -----------------------------------------------------------------

    def build_body(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
        stream: bool = False,
        extra_system: str | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> bytes:
        """The request body, static parts first (see the module docstring)."""
        opts = options or GenerationOptions()
        parts: list[tuple[str, Any]] = [("model", self.model)]
        if tools:
            parts.append(("tools", [_tool_dict(t) for t in sorted(tools, key=lambda t: t.name)]))
            parts.append(("tool_choice", "auto"))
        msgs = _with_system_first(messages, extra_system)
        parts.append(("messages", [_message_dict(m) for m in msgs]))
        if response_format is not None:
            parts.append(("response_format", response_format))
        parts.append(("temperature", opts.temperature))
        parts.append(("max_tokens", opts.max_tokens))
        if opts.stop:
            parts.append(("stop", list(opts.stop)))
        parts.append(("stream", stream))
        body = "{" + ",".join(f"{json.dumps(k)}:{canonical_json(v)}" for k, v in parts) + "}"
        return body.encode("utf-8")

    # --- transport with retries -----------------------------------------------------------

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, max(self.max_backoff, 60.0))
        base = min(self.max_backoff, self.backoff * (2**attempt))
        return base / 2 + self._rng.uniform(0, base / 2)  # "equal jitter"

    async def _send(self, body: bytes, *, stream: bool) -> httpx.Response:
        """A 2xx response (unread when ``stream``), after retrying 429/5xx and connection
        failures with exponential backoff; other failures become ``LLMError``s."""
        url = f"{self.base_url}/chat/completions"
        attempt = 0
        while True:
            retry_after: float | None = None
            request = self._client.build_request("POST", url, content=body, headers=self._headers)
            try:
                response = await self._client.send(request, stream=stream)
            except httpx.UnsupportedProtocol as exc:
                raise LLMError(f"bad LLM base_url {self.base_url!r}: {exc}") from exc
            except _RETRY_TRANSPORT as exc:
                failure = f"{type(exc).__name__}: {exc}"
            except httpx.TimeoutException as exc:
                raise LLMUnavailable(
                    f"LLM request to {self.base_url} timed out after {self.timeout}s"
                ) from exc
            except httpx.HTTPError as exc:
                raise LLMUnavailable(f"LLM request to {self.base_url} failed: {exc}") from exc
            else:
                if response.is_success:
                    return response
                if stream:
                    try:
                        await response.aread()
                    finally:
                        await response.aclose()
                body_json = _json_or_none(response)
                message = _provider_message(body_json, response.text)
                if response.status_code not in _RETRY_STATUS:
                    self._raise_http(response.status_code, message, body_json)
                failure = f"HTTP {response.status_code}: {message}"
                retry_after = _retry_after(response)
            if attempt >= self.max_retries:
                raise LLMUnavailable(
                    f"LLM at {self.base_url} failed after {attempt + 1} attempts: {failure}"
                )
            delay = self._delay(attempt, retry_after)
            log.warning("LLM request failed (%s); retry %d in %.2fs", failure, attempt + 1, delay)
            await self._sleep(delay)
            attempt += 1

    @staticmethod
    def _raise_http(status: int, message: str, body: Any) -> NoReturn:
        err = body.get("error") if isinstance(body, dict) else None
        if isinstance(err, dict) and (
            err.get("code") == "tool_use_failed" or "failed_generation" in err
        ):
            raise _ToolUseFailed(status, message, body, str(err.get("failed_generation") or ""))
        raise HTTPStatusLLMError(status, message, body)

    async def _post_json(self, body: bytes) -> dict[str, Any]:
        response = await self._send(body, stream=False)
        data = _json_or_none(response)
        if not isinstance(data, dict):
            raise LLMError(f"LLM provider sent a non-JSON reply: {response.text[:200]!r}")
        if not data.get("choices"):
            if "error" in data:  # some gateways (OpenRouter) report errors with HTTP 200
                raise LLMError(f"LLM provider error: {_provider_message(data, response.text)}")
            raise LLMError(f"LLM provider reply has no choices: {response.text[:200]!r}")
        return data

    # --- ChatModel ------------------------------------------------------------------------

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        """One completion. Malformed tool calls never raise: they are repaired, recovered from
        the provider's ``failed_generation``, or dropped in favour of the plain text."""
        body = self.build_body(messages, options=options, tools=tools)
        try:
            data = await self._post_json(body)
        except _ToolUseFailed as exc:
            return self._recover_failed_generation(exc.failed_generation, tools)
        return self._parse_result(data, tools)

    def _recover_failed_generation(self, text: str, tools: Sequence[ToolSpec]) -> ChatResult:
        calls = parse_text_tool_calls(text, tools)
        if calls:
            log.info("recovered %d tool call(s) from failed_generation", len(calls))
            return ChatResult(
                content="", tool_calls=calls, finish_reason="tool_calls", model=self.model
            )
        log.warning("unparsable failed_generation; returning it as a plain answer")
        return ChatResult(content=text.strip(), finish_reason="stop", model=self.model)

    def _parse_result(self, data: dict[str, Any], tools: Sequence[ToolSpec]) -> ChatResult:
        choice = data["choices"][0]
        if not isinstance(choice, dict):
            raise LLMError(f"LLM provider sent a malformed choice: {choice!r}")
        message = choice.get("message") or {}
        content = message.get("content") or ""
        if isinstance(content, list):  # content parts (rare in replies)
            content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        content = str(content)
        finish = str(choice.get("finish_reason") or "stop")
        calls: list[ToolCall] = []
        raw_calls = message.get("tool_calls") or []
        for raw in raw_calls if isinstance(raw_calls, list) else []:
            fn = raw.get("function") if isinstance(raw, dict) else None
            if not isinstance(fn, dict):
                continue
            call = make_tool_call(fn.get("name"), fn.get("arguments"), tools, raw.get("id"))
            if call is None:
                log.warning("dropping invalid tool call %r", fn)
            else:
                calls.append(call)
        if raw_calls and not calls:
            finish = "stop"
        if not raw_calls and tools and looks_like_tool_call(content):
            # Some models print the call instead of using the tool_calls field.
            calls = parse_text_tool_calls(content, tools)
            if calls:
                content, finish = "", "tool_calls"
        usage = {k: v for k, v in (data.get("usage") or {}).items() if isinstance(v, int)}
        return ChatResult(
            content=content,
            tool_calls=calls,
            finish_reason=finish,
            usage=usage,
            model=str(data.get("model") or self.model),
        )

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        """SSE deltas. Closing (or cancelling) this generator closes the HTTP response, so a
        client that goes away stops the generation upstream."""
        body = self.build_body(messages, options=options, stream=True)
        response = await self._send(body, stream=True)
        try:
            async for data in _sse_data(response.aiter_lines()):
                if data.strip() == "[DONE]":
                    return
                try:
                    event = json.loads(data)
                except ValueError:
                    log.warning("skipping non-JSON SSE event %r", data[:200])
                    continue
                if not isinstance(event, dict):
                    continue
                if "error" in event:
                    raise LLMError(f"LLM stream error: {_provider_message(event, data)}")
                for choice in event.get("choices") or []:
                    delta = (choice or {}).get("delta") or {}
                    text = delta.get("content")
                    if isinstance(text, str) and text:
                        yield text
        except httpx.TimeoutException as exc:
            raise LLMUnavailable(f"LLM stream timed out after {self.timeout}s") from exc
        except httpx.TransportError as exc:
            raise LLMUnavailable(f"LLM stream broke: {exc}") from exc
        finally:
            await response.aclose()

    async def structured(
        self,
        messages: Sequence[Message],
        schema: type[M],
        *,
        options: GenerationOptions | None = None,
    ) -> M:
        """JSON reply validated into ``schema``; one corrective retry, then ``LLMOutputError``."""
        instruction = schema_instruction(schema)
        response_format = self._response_format(schema)
        convo = list(messages)
        last_error: Exception | None = None
        for _ in range(2):
            body = self.build_body(
                convo,
                options=options,
                extra_system=instruction,
                response_format=response_format,
            )
            try:
                data = await self._post_json(body)
            except HTTPStatusLLMError as exc:
                if response_format is None or exc.status not in (400, 404, 422):
                    raise
                # Maybe this provider/model does not take response_format: try without it,
                # and if that works stay prompt-only from now on.
                body = self.build_body(convo, options=options, extra_system=instruction)
                data = await self._post_json(body)
                log.warning("provider rejected response_format (%s); JSON mode disabled", exc)
                self.json_mode = self.json_schema = False
                response_format = None
            reply = self._parse_result(data, ()).content
            try:
                return parse_structured(reply, schema)
            except ValueError as exc:
                last_error = exc
                convo += [
                    Message(role="assistant", content=reply),
                    Message(role="user", content=retry_instruction(exc)),
                ]
        raise LLMOutputError(
            f"{self.model} did not produce a valid {schema.__name__}: {last_error}"
        )

    def _response_format(self, schema: type[BaseModel]) -> dict[str, Any] | None:
        if not self.json_mode:
            return None
        if self.json_schema:
            return {"type": "json_object", "schema": schema.model_json_schema()}
        return {"type": "json_object"}


async def _sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """Server-sent events → the ``data`` payload of each event (multi-line data joined)."""
    buffer: list[str] = []
    async for raw in lines:
        line = raw.rstrip("\r")
        if not line:
            if buffer:
                yield "\n".join(buffer)
                buffer = []
            continue
        if line.startswith(":"):
            continue  # comment / keep-alive (OpenRouter sends ": OPENROUTER PROCESSING")
        field, _, value = line.partition(":")
        if field == "data":
            buffer.append(value[1:] if value.startswith(" ") else value)
    if buffer:
        yield "\n".join(buffer)
