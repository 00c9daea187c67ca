"""The OpenAI ``/chat/completions`` wire format: request bodies out, replies and SSE streams in.

Pure conversions with no I/O, so ``ragchat.llm.openai_compat`` is left with the HTTP client,
retries and the ``ChatModel`` methods.

Prompt caching: providers cache the longest identical prompt prefix. Every request therefore
starts with the same bytes for the same node: the leading system messages are merged into
``messages[0]``, tools are sorted by name, everything is serialized with sorted keys, and the
body's keys are written in the order model → tools → tool_choice → messages → per-call knobs,
so two requests that differ only in the user turn share their prefix byte for byte.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ragchat.errors import LLMError
from ragchat.llm.base import ChatResult, GenerationOptions, Message, ToolCall, ToolSpec
from ragchat.llm.http_errors import provider_message
from ragchat.llm.parsing import (
    canonical_json,
    looks_like_tool_call,
    make_tool_call,
    parse_text_tool_calls,
)

log = logging.getLogger(__name__)


# --- request body ---------------------------------------------------------------------------


def message_dict(message: Message) -> dict[str, Any]:
    """One ``messages`` entry; assistant tool calls carry their arguments as canonical JSON."""
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


def with_system_first(messages: Sequence[Message], extra_system: str | None) -> list[Message]:
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


def tool_dict(tool: ToolSpec) -> dict[str, Any]:
    """One ``tools`` entry (a function tool)."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }


def request_body(
    model: str,
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
    parts: list[tuple[str, Any]] = [("model", model)]
    if tools:
        parts.append(("tools", [tool_dict(t) for t in sorted(tools, key=lambda t: t.name)]))
        parts.append(("tool_choice", "auto"))
    msgs = with_system_first(messages, extra_system)
    parts.append(("messages", [message_dict(m) for m in msgs]))
    if response_format is not None:
        parts.append(("response_format", response_format))
    parts.append(("temperature", opts.temperature))
    parts.append(("max_tokens", opts.max_tokens))
    if opts.stop:
        parts.append(("stop", list(opts.stop)))
    parts.append(("stream", stream))
    body = "{" + ",".join(f"{json.dumps(k)}:{canonical_json(v)}" for k, v in parts) + "}"
    return body.encode("utf-8")


# --- replies --------------------------------------------------------------------------------


def parse_result(data: dict[str, Any], tools: Sequence[ToolSpec], model: str) -> ChatResult:
    """A completion reply (with ``choices``) → ``ChatResult``. Invalid tool calls are dropped;
    a tool call printed in the text instead of ``tool_calls`` is recovered. ``model`` is used
    when the reply does not name one."""
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
        model=str(data.get("model") or model),
    )


def recover_failed_generation(text: str, tools: Sequence[ToolSpec], model: str) -> ChatResult:
    """The tool calls in a provider's ``failed_generation``, or the text as a plain answer."""
    calls = parse_text_tool_calls(text, tools)
    if calls:
        log.info("recovered %d tool call(s) from failed_generation", len(calls))
        return ChatResult(content="", tool_calls=calls, finish_reason="tool_calls", model=model)
    log.warning("unparsable failed_generation; returning it as a plain answer")
    return ChatResult(content=text.strip(), finish_reason="stop", model=model)


# --- streams --------------------------------------------------------------------------------


async def stream_deltas(lines: AsyncIterator[str]) -> AsyncIterator[str]:
    """The text deltas of a streamed completion's SSE lines, up to ``[DONE]``; an error event
    raises ``LLMError``, non-JSON events are skipped."""
    async for data in sse_data(lines):
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
            raise LLMError(f"LLM stream error: {provider_message(event, data)}")
        for choice in event.get("choices") or []:
            delta = (choice or {}).get("delta") or {}
            text = delta.get("content")
            if isinstance(text, str) and text:
                yield text


async def sse_data(lines: AsyncIterator[str]) -> AsyncIterator[str]:
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
