"""Every input the OpenAPI document describes has a bound, and every operation, compatibility
routes included, holds it at the edges: empty, at the cap, one past it, int64's edges and
huge lists. Hypothesis picks which fields of a request sit on which edge (the values are the
edges themselves, not random draws); no answer may be a 5xx, and a value past a documented
bound is refused (4xx) before the engine is asked anything."""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ragchat.api import create_app
from ragchat.embed.fake import HashingEmbedder
from ragchat.settings import ApiSettings, Settings

from .fakes import FakeEngine

INT64 = [2**63 - 1, 2**63, -(2**63) - 1, 2**64]
HUGE_TEXT = 200_000  # characters: well past every text bound, under the 1 MB body limit
HUGE_URL_TEXT = 60_000  # in a path or a query: under the client's 64 KB URL limit
HUGE_LIST = 5_000
ENGINE = FakeEngine()
# Inputs that are bounded by something other than their schema: the multipart upload (by
# ``api.upload_max_bytes`` and the file checks) and a /v1 content part's fields (its text is
# counted against the message bound; the body limit bounds the rest).
UNBOUNDED_OK = {"files", "content[]"}

_APP = create_app(
    Settings(
        data_dir=Path(tempfile.mkdtemp(prefix="ragchat-bounds-")),
        api=ApiSettings(rate_limit_per_minute=0, upload_max_bytes=64 * 1024),
    ),
    engine=ENGINE,
    embedder=HashingEmbedder(),
    bootstrap=False,
)
_STATE: dict[str, Any] = {}


@pytest.fixture(scope="module", autouse=True)
def client() -> Iterator[TestClient]:
    with TestClient(_APP) as c:
        made = c.post("/users", json={"display_name": "edges", "create_api_key": True})
        assert made.status_code == 201, made.text
        c.headers["Authorization"] = f"Bearer {made.json()['api_key']['secret']}"
        _STATE["client"] = c
        yield c


SPEC = TestClient(_APP).get("/openapi.json").json()


def _resolve(schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        node: Any = SPEC
        for part in schema["$ref"].lstrip("#/").split("/"):
            node = node[part]
        schema = node
    return schema


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    """The non-null alternatives of a (possibly nullable) schema."""
    schema = _resolve(schema)
    alts = schema.get("anyOf") or schema.get("oneOf")
    if alts:
        return [v for a in alts for v in _variants(a) if v.get("type") != "null"]
    return [schema]


def _valid(schema: dict[str, Any]) -> Any:
    """A small value the schema accepts."""
    s = _variants(schema)[0]
    if "default" in s and s["default"] is not None:
        return s["default"]
    kind = s.get("type")
    if "enum" in s:
        return s["enum"][0]
    if kind == "string":
        return "hello there"[: s.get("maxLength", 11)].ljust(s.get("minLength", 0), "x")
    if kind == "integer":
        return max(s.get("minimum", 1), 1) if s.get("maximum", 1) >= 1 else s["maximum"]
    if kind == "boolean":
        return False
    if kind == "array":
        return [_valid(s.get("items", {}))] * max(1, s.get("minItems", 1))
    if kind == "object":
        props = s.get("properties", {})
        return {name: _valid(props[name]) for name in s.get("required", [])}
    return "x"


def edges(name: str, schema: dict[str, Any], huge: int = HUGE_TEXT) -> list[tuple[Any, bool]]:
    """(value, past a bound) pairs at the edges of every alternative of ``schema``; asserts
    that the field has a bound at all."""
    out: list[tuple[Any, bool]] = []
    for s in _variants(schema):
        kind = s.get("type")
        if kind == "string" and "enum" not in s:
            assert "maxLength" in s, f"{name}: text without a documented bound"
            cap, low = s["maxLength"], s.get("minLength", 0)
            out += [("", low > 0), ("x" * cap, False), ("x" * (cap + 1), True)]
            out.append(("x" * huge, True))
        elif kind == "integer":
            assert "maximum" in s and "minimum" in s, f"{name}: a number without bounds"
            low, high = s["minimum"], s["maximum"]
            out += [(low - 1, True), (low, False), (high, False), (high + 1, True)]
            out += [(v, not low <= v <= high) for v in INT64]
        elif kind == "array":
            assert "maxItems" in s or name in UNBOUNDED_OK, f"{name}: a list without a bound"
            item = _valid(s.get("items", {}))
            cap = s.get("maxItems", HUGE_LIST)
            out += [([], s.get("minItems", 0) > 0), ([item] * (cap + 1), "maxItems" in s)]
            out.append(([item] * HUGE_LIST, "maxItems" in s))
    return out


def _operations() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, item in SPEC["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]


def _fields(op: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any], bool]]:
    """name → (where, schema, required) for the parameters and top-level JSON body fields."""
    fields = {
        p["name"]: (p["in"], p.get("schema", {}), p.get("required", False))
        for p in op.get("parameters", [])
        if p["in"] in ("path", "query")
    }
    content = op.get("requestBody", {}).get("content", {})
    if "application/json" in content:
        body = _resolve(content["application/json"]["schema"])
        required = set(body.get("required", []))
        for name, schema in body.get("properties", {}).items():
            fields[name] = ("body", schema, name in required)
    return fields


OPERATIONS = _operations()


def test_the_document_covers_the_compatibility_routes() -> None:
    paths = {path for _, path, _ in OPERATIONS}
    assert {"/api/query", "/stream", "/conversations/{conversation_id}/query"} <= paths
    assert {"/v1/chat/completions", "/chat", "/query"} <= paths


@pytest.mark.parametrize(
    ("method", "path", "op"), OPERATIONS, ids=[f"{m} {p}" for m, p, _ in OPERATIONS]
)
def test_every_operation_holds_its_bounds_at_the_edges(
    method: str, path: str, op: dict[str, Any]
) -> None:
    fields = _fields(op)
    choices = {
        name: edges(f"{path} {name}", schema, HUGE_TEXT if where == "body" else HUGE_URL_TEXT)
        for name, (where, schema, _) in fields.items()
    }
    if op.get("requestBody", {}).get("content", {}).get("multipart/form-data"):
        content = op["requestBody"]["content"]["multipart/form-data"]["schema"]
        for name, schema in _resolve(content).get("properties", {}).items():
            edges(name, schema)  # documented (or known) bounds only: files are sent below
    edged = sorted(n for n, values in choices.items() if values)
    if not edged:
        pytest.skip("no inputs")

    @settings(
        max_examples=12,
        deadline=None,
        derandomize=True,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(st.data())
    def probe(data: st.DataObject) -> None:
        picked = data.draw(st.lists(st.sampled_from(edged), min_size=1, max_size=3, unique=True))
        values = {n: _valid(schema) for n, (_, schema, req) in fields.items() if req}
        past = False
        for name in picked:
            value, over = data.draw(st.sampled_from(choices[name]), label=name)
            values[name] = value
            past = past or over
        _check(method, path, op, fields, values, past)

    probe()


def _check(
    method: str,
    path: str,
    op: dict[str, Any],
    fields: dict[str, tuple[str, dict[str, Any], bool]],
    values: dict[str, Any],
    past: bool,
) -> None:
    client: TestClient = _STATE["client"]
    url = path
    query: dict[str, Any] = {}
    body: dict[str, Any] = {}
    for name, value in values.items():
        where = fields[name][0]
        if where == "path":
            url = url.replace("{" + name + "}", str(value) or "%20")
        elif where == "query":
            query[name] = value
        else:
            body[name] = value
    kwargs: dict[str, Any] = {"params": query}
    if "requestBody" in op:
        if "multipart/form-data" in op["requestBody"].get("content", {}):
            kwargs["files"] = {"files": ("edge.md", b"# Edge\n\nA small note.\n")}
        else:
            kwargs["json"] = body
    calls = len(ENGINE.calls)
    response = client.request(method, url, **kwargs)
    shown = {
        k: (v if len(repr(v)) < 80 else f"<{type(v).__name__} of {len(v)}>")
        for k, v in values.items()
    }
    assert response.status_code < 500, (method, url, shown, response.text[:300])
    if past:
        assert response.status_code in (400, 404, 405, 413, 422), (method, url, shown)
        assert len(ENGINE.calls) == calls, f"{method} {path} did work past a bound: {shown}"
