"""The one place ragchat's exception tree becomes HTTP status codes.

Every error body has the same shape, ``{"error": {"type", "message", "request_id"}}``, which is
also what OpenAI clients expect (they read ``error.message``). Outages (model, database) give
503 with a short message; the details go to the log, never a stack trace to the client."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from ragchat.agents.types import InvalidMessage, UnknownAgent
from ragchat.api.context import current_request_id
from ragchat.errors import (
    ConfigError,
    Conflict,
    DocumentNotFound,
    IndexStateError,
    IngestError,
    InvalidKnowledgeBaseName,
    KnowledgeBaseNotFound,
    LLMError,
    LLMUnavailable,
    ModelLoadError,
    NotFound,
    RagchatError,
    RetrievalError,
    StoreUnavailable,
    UnsafeInput,
    UnsupportedFileError,
)

log = logging.getLogger(__name__)

# First match wins: subclasses before their parents.
ERROR_MAP: list[tuple[type[RagchatError], int, str]] = [
    (UnknownAgent, 400, "unknown_agent"),
    (InvalidMessage, 400, "invalid_message"),
    (InvalidKnowledgeBaseName, 400, "invalid_kb_name"),
    (RetrievalError, 400, "invalid_query"),
    (UnsafeInput, 400, "unsafe_input"),
    (UnsupportedFileError, 415, "unsupported_file_type"),
    (IngestError, 400, "ingest_error"),
    (NotFound, 404, "not_found"),
    (KnowledgeBaseNotFound, 404, "knowledge_base_not_found"),
    (DocumentNotFound, 404, "document_not_found"),
    (Conflict, 409, "conflict"),
    (LLMUnavailable, 503, "llm_unavailable"),
    (StoreUnavailable, 503, "store_unavailable"),
    (ModelLoadError, 503, "model_unavailable"),
    (LLMError, 502, "llm_error"),
    (IndexStateError, 500, "index_error"),
    (ConfigError, 500, "config_error"),
    (RagchatError, 500, "internal_error"),
]
# Outages: the client gets this sentence, the log gets the driver's message.
OUTAGE_MESSAGES: dict[str, str] = {
    "llm_unavailable": "The language model backend is unavailable; try again shortly.",
    "store_unavailable": "The database is unavailable; try again shortly.",
    "model_unavailable": "A model could not be loaded; see the server log.",
}
RETRY_AFTER_S = 5
_HTTP_TYPES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
    503: "unavailable",
}


class ApiError(Exception):
    """An HTTP error raised by routes and services (validation the models cannot express)."""

    def __init__(
        self, status: int, type_: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status = status
        self.type = type_
        self.message = message
        self.headers = headers or {}


def error_body(type_: str, message: str, **extra: Any) -> dict[str, Any]:
    error = {"type": type_, "message": message, **extra, "request_id": current_request_id()}
    return {"error": error}


def classify(exc: RagchatError) -> tuple[int, str, str]:
    """(status, type, client message) for a ragchat error."""
    status, type_ = next((s, t) for cls, s, t in ERROR_MAP if isinstance(exc, cls))
    return status, type_, OUTAGE_MESSAGES.get(type_) or str(exc) or type_


def as_api_error(exc: BaseException) -> ApiError:
    """Any exception as an ``ApiError``; unknown ones are a generic 500 (logged by the caller)."""
    if isinstance(exc, ApiError):
        return exc
    if isinstance(exc, RagchatError):
        status, type_, message = classify(exc)
        headers = {"Retry-After": str(RETRY_AFTER_S)} if status == 503 else None
        return ApiError(status, type_, message, headers)
    return ApiError(500, "internal_error", "Internal server error.")


def _json(err: ApiError) -> JSONResponse:
    return JSONResponse(error_body(err.type, err.message), err.status, headers=err.headers)


async def _api_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, ApiError)
    return _json(exc)


async def _ragchat_error(request: Request, exc: Exception) -> JSONResponse:
    err = as_api_error(exc)
    if err.status >= 500:
        log.warning("%s on %s %s: %s", err.type, request.method, request.url.path, exc)
    return _json(err)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = []
    for e in exc.errors():
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body")
        problems.append(f"{where}: {e.get('msg')}" if where else str(e.get("msg")))
    message = "Invalid request: " + "; ".join(problems[:5])
    return JSONResponse(error_body("validation_error", message), 422)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    type_ = _HTTP_TYPES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else type_
    return JSONResponse(error_body(type_, message), exc.status_code, headers=exc.headers)


def install_error_handlers(app: FastAPI) -> None:
    """Unknown exceptions are handled by ``RequestContextMiddleware`` (500 + logged traceback)."""
    app.add_exception_handler(ApiError, _api_error)
    app.add_exception_handler(RagchatError, _ragchat_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
