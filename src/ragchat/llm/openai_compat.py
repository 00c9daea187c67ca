"""Chat over the OpenAI ``/chat/completions`` API, the lingua franca of hosted and local servers.

Only the subset every provider implements is used (OpenRouter, OpenAI, Groq, Ollama, vLLM,
llama.cpp's server): ``messages``, ``tools``/``tool_choice: auto``, ``temperature``,
``max_tokens``, ``stop``, ``stream`` and ``response_format: {"type": "json_object"}``.

This module holds the client: one HTTP connection pool per event loop, retries with backoff,
and the ``ChatModel`` methods. The wire format (request bodies laid out for prompt caching,
reply and SSE parsing) is in ``ragchat.llm.openai_wire``; error bodies, ``Retry-After`` and
the errors raised are in ``ragchat.llm.http_errors``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections.abc import AsyncGenerator, Awaitable, Callable, Sequence
from typing import Any

import httpx
from pydantic import BaseModel

from ragchat.errors import LLMError, LLMOutputError, LLMUnavailable
from ragchat.llm.base import ChatResult, GenerationOptions, M, Message, ToolSpec
from ragchat.llm.http_errors import (
    RETRY_STATUS,
    RETRY_TRANSPORT,
    HTTPStatusLLMError,
    ToolUseFailed,
    json_or_none,
    provider_message,
    raise_http_error,
    retry_after_seconds,
)
from ragchat.llm.openai_wire import (
    parse_result,
    recover_failed_generation,
    request_body,
    stream_deltas,
)
from ragchat.llm.parsing import parse_structured, retry_instruction, schema_instruction

log = logging.getLogger(__name__)

Sleep = Callable[[float], Awaitable[None]]


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
        """The request body, static parts first (see ``ragchat.llm.openai_wire``)."""
        return request_body(
            self.model,
            messages,
            options=options,
            tools=tools,
            stream=stream,
            extra_system=extra_system,
            response_format=response_format,
        )

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
            except RETRY_TRANSPORT as exc:
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
                body_json = json_or_none(response)
                message = provider_message(body_json, response.text)
                if response.status_code not in RETRY_STATUS:
                    raise_http_error(response.status_code, message, body_json)
                failure = f"HTTP {response.status_code}: {message}"
                retry_after = retry_after_seconds(response)
            if attempt >= self.max_retries:
                raise LLMUnavailable(
                    f"LLM at {self.base_url} failed after {attempt + 1} attempts: {failure}"
                )
            delay = self._delay(attempt, retry_after)
            log.warning("LLM request failed (%s); retry %d in %.2fs", failure, attempt + 1, delay)
            await self._sleep(delay)
            attempt += 1

    async def _post_json(self, body: bytes) -> dict[str, Any]:
        response = await self._send(body, stream=False)
        data = json_or_none(response)
        if not isinstance(data, dict):
            raise LLMError(f"LLM provider sent a non-JSON reply: {response.text[:200]!r}")
        if not data.get("choices"):
            if "error" in data:  # some gateways (OpenRouter) report errors with HTTP 200
                raise LLMError(f"LLM provider error: {provider_message(data, response.text)}")
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
        except ToolUseFailed as exc:
            return recover_failed_generation(exc.failed_generation, tools, self.model)
        return parse_result(data, tools, self.model)

    async def stream(
        self, messages: Sequence[Message], *, options: GenerationOptions | None = None
    ) -> AsyncGenerator[str, None]:
        """SSE deltas. Closing (or cancelling) this generator closes the HTTP response, so a
        client that goes away stops the generation upstream."""
        body = self.build_body(messages, options=options, stream=True)
        response = await self._send(body, stream=True)
        try:
            async for text in stream_deltas(response.aiter_lines()):
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
            reply = parse_result(data, (), self.model).content
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
