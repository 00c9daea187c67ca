"""Forgiving parsers for what language models actually emit.

Small and hosted models alike wrap JSON in code fences, add prose around it, use single
quotes or trailing commas, and print tool calls as text in several dialects. Every backend
shares these helpers so a sloppy reply degrades to a plain answer instead of an error.
"""

from __future__ import annotations

import ast
import json
import re
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ragchat.llm.base import ToolCall, ToolSpec

M = TypeVar("M", bound=BaseModel)

_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_FUNCTION_TAG = re.compile(
    r"<function[=\s]\s*([A-Za-z0-9_.\-]+)\s*>?\s*(.*?)\s*(?:</function>|$)", re.DOTALL
)
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def canonical_json(value: Any) -> str:
    """Byte-stable JSON (sorted keys, no spaces): identical input gives identical bytes,
    which is what provider-side prompt caches key on."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:16]}"


def strip_fences(text: str) -> str:
    """The inside of the first ``` fence, or the text itself when there is none."""
    match = _FENCE.search(text)
    if match:
        return match.group(1).strip()
    stripped = text.strip()
    if stripped.startswith("```"):  # an unterminated fence (reply cut by max_tokens)
        return stripped.split("\n", 1)[1] if "\n" in stripped else ""
    return stripped


def first_balanced(text: str, open_char: str = "{") -> str | None:
    """The first balanced ``{...}`` (or ``[...]``) span, skipping brackets inside strings."""
    close_char = "}" if open_char == "{" else "]"
    start = text.find(open_char)
    while start != -1:
        depth = 0
        quote: str | None = None
        escaped = False
        for i in range(start, len(text)):
            ch = text[i]
            if quote is not None:
                if escaped:
                    escaped = False
                elif ch == "\\":
                    escaped = True
                elif ch == quote:
                    quote = None
                continue
            if ch in "\"'":
                quote = ch
            elif ch == open_char:
                depth += 1
            elif ch == close_char:
                depth -= 1
                if depth == 0:
                    return text[start : i + 1]
        start = text.find(open_char, start + 1)
    return None


def _requote(text: str) -> str:
    """Turn single-quoted strings into double-quoted ones, leaving double-quoted ones alone."""
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            j = i + 1
            while j < len(text) and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i : j + 1])
            i = j + 1
        elif ch == "'":
            j = i + 1
            buf: list[str] = []
            while j < len(text) and text[j] != "'":
                if text[j] == "\\" and j + 1 < len(text):
                    buf.append(text[j + 1] if text[j + 1] == "'" else text[j : j + 2])
                    j += 2
                    continue
                buf.append('\\"' if text[j] == '"' else text[j])
                j += 1
            out.append('"' + "".join(buf) + '"')
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def loads_lenient(text: str) -> Any:
    """``json.loads`` with the usual model slips repaired: trailing commas, single quotes,
    Python literals. Raises ``ValueError`` when nothing works."""
    candidates = [text]
    fixed = _TRAILING_COMMA.sub(r"\1", text)
    candidates.append(fixed)
    candidates.append(_TRAILING_COMMA.sub(r"\1", _requote(text)))
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    try:  # {'a': True, 'b': None} – a Python dict literal
        return ast.literal_eval(fixed)
    except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
        pass
    raise ValueError(f"not JSON: {text[:200]!r}")


def extract_json_object(text: str) -> Any:
    """The first JSON object in a reply (fences and surrounding prose ignored)."""
    body = strip_fences(text)
    span = first_balanced(body) or first_balanced(text)
    if span is None:
        raise ValueError(f"no JSON object in reply: {text[:200]!r}")
    return loads_lenient(span)


def parse_string_list(text: str) -> list[str] | None:
    """The first JSON list of strings in a reply (fences, prose and the usual slips such as
    single quotes tolerated), items stripped, empty ones dropped; ``None`` when there is none."""
    body = strip_fences(text)
    span = first_balanced(body, "[") or first_balanced(text, "[")
    if span is None:
        return None
    try:
        value = loads_lenient(span)
    except ValueError:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    items = [v.strip() for v in value if v.strip()]
    return items or None


def parse_structured(text: str, schema: type[M]) -> M:
    """Reply → validated model. Raises ``ValueError`` (``ValidationError`` is one) on failure."""
    return schema.model_validate(extract_json_object(text))


def describe_error(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        return "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or '<root>'}: {err['msg']}"
            for err in exc.errors()
        )
    return str(exc)


def schema_instruction(schema: type[BaseModel]) -> str:
    """Static per schema, so it stays part of the cacheable prompt prefix."""
    return (
        "Reply with a single JSON object that conforms to this JSON schema. "
        "Output only the JSON object: no prose, no code fences.\n"
        f"JSON schema: {canonical_json(schema.model_json_schema())}"
    )


def retry_instruction(error: Exception) -> str:
    return (
        f"Your previous reply was not valid: {describe_error(error)}. "
        "Reply again with only the corrected JSON object."
    )


# --- tool calls ---------------------------------------------------------------------------


def resolve_tool_name(name: str, tools: Sequence[ToolSpec]) -> str | None:
    """Map a model's spelling of a tool name to an offered tool (``functions.search``,
    ``Search``, ``search-docs`` …); ``None`` when it names nothing offered."""
    offered = {t.name for t in tools}
    if name in offered:
        return name
    cleaned = name.strip().strip("`\"'")
    for prefix in ("functions.", "function.", "tools.", "tool."):
        if cleaned.startswith(prefix):
            cleaned = cleaned[len(prefix) :]

    def norm(s: str) -> str:
        return s.lower().replace("-", "_").replace(" ", "_")

    for tool_name in offered:
        if norm(tool_name) == norm(cleaned):
            return tool_name
    return None


def coerce_arguments(raw: Any) -> dict[str, Any] | None:
    """Arguments as a dict, repairing JSON text; ``None`` when they cannot be read."""
    if raw is None or raw == "":
        return {}
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = loads_lenient(raw.strip())
        except ValueError:
            span = first_balanced(raw)
            if span is None:
                return None
            try:
                value = loads_lenient(span)
            except ValueError:
                return None
        if isinstance(value, str):  # doubly encoded: "{\"q\": 1}"
            return coerce_arguments(value) if value.strip().startswith("{") else None
        return value if isinstance(value, dict) else None
    return None


def make_tool_call(
    name: Any, raw_arguments: Any, tools: Sequence[ToolSpec], call_id: str | None = None
) -> ToolCall | None:
    """A validated call to an offered tool, or ``None`` (unknown tool, unreadable args)."""
    if not isinstance(name, str):
        return None
    resolved = resolve_tool_name(name, tools)
    if resolved is None:
        return None
    arguments = coerce_arguments(raw_arguments)
    if arguments is None:
        return None
    return ToolCall(id=call_id or new_call_id(), name=resolved, arguments=arguments)


def _calls_from_value(value: Any, tools: Sequence[ToolSpec]) -> list[ToolCall]:
    items: Iterable[Any] = value if isinstance(value, list) else [value]
    calls: list[ToolCall] = []
    for item in items:
        if not isinstance(item, dict):
            continue
        if isinstance(item.get("function"), dict):  # OpenAI shape {"type":"function",...}
            item = item["function"]
        name = item.get("name", item.get("tool", item.get("tool_name")))
        args = item.get("arguments", item.get("parameters", item.get("args")))
        call = make_tool_call(name, args, tools)
        if call is not None:
            calls.append(call)
    return calls


def parse_text_tool_calls(text: str, tools: Sequence[ToolSpec]) -> list[ToolCall]:
    """Tool calls written as text, in the dialects models use:
    ``{"name": ..., "arguments": {...}}``, ``{"tool": ..., "arguments": ...}``,
    ``<function=name>{...}</function>`` and ``[{"name": ..., "parameters": {...}}]``.
    Only calls to offered tools with readable arguments are returned."""
    if not tools or not text:
        return []
    tags = _FUNCTION_TAG.findall(text)
    if tags:
        calls = [c for name, args in tags if (c := make_tool_call(name, args, tools))]
        if calls:
            return calls
    body = strip_fences(text)
    for opener in ("[", "{") if body.lstrip().startswith("[") else ("{", "["):
        span = first_balanced(body, opener)
        if span is None:
            continue
        try:
            value = loads_lenient(span)
        except ValueError:
            continue
        calls = _calls_from_value(value, tools)
        if calls:
            return calls
    return []


def looks_like_tool_call(text: str) -> bool:
    """Whether content is (probably) a tool call printed as text rather than an answer."""
    head = strip_fences(text).lstrip()[:20]
    return head.startswith(("{", "[", "<function", "<tool_call"))


def tool_prompt(tools: Sequence[ToolSpec]) -> str:
    """Tool descriptions for models without native tool calling. Tools are sorted and
    serialized canonically so the prompt is byte-stable across requests."""
    lines = [
        "You can call these tools:",
        *(
            f"- {t.name}: {t.description} Arguments (JSON schema): {canonical_json(t.parameters)}"
            for t in sorted(tools, key=lambda t: t.name)
        ),
        'To call a tool, reply with only {"tool": "<name>", "arguments": {...}}. '
        "Otherwise answer normally.",
    ]
    return "\n".join(lines)
