"""Request dependencies: the app state, the caller's identity, the answer rate limit.

Identity, in order: an API key (``Authorization: Bearer rc_…`` or ``X-API-Key``; a wrong key
is 401, never a silent fallback), else the signed cookie, else a new anonymous user whose
cookie is set on the response. Every store read is scoped to this user id."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Request

from ragchat.api import context
from ragchat.api.errors import ApiError
from ragchat.api.services._sync import run_sync
from ragchat.api.services.identity import COOKIE_NAME
from ragchat.api.state import AppState, get_state

OPENAI_ANONYMOUS_USER = "openai-anonymous"


@dataclass(frozen=True)
class Identity:
    user_id: str
    via: Literal["api_key", "cookie", "new", "anonymous"]


State = Annotated[AppState, Depends(get_state)]


def api_key_of(request: Request) -> str | None:
    auth = request.headers.get("authorization", "")
    scheme, _, token = auth.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    key = request.headers.get("x-api-key", "").strip()
    return key or None


async def _from_key(state: AppState, key: str) -> str | None:
    return await run_sync(state.store.user_for_api_key, key)


async def current_user(request: Request, state: State) -> Identity:
    key = api_key_of(request)
    if key is not None:
        user_id = await _from_key(state, key)
        if user_id is None:
            raise ApiError(
                401, "unauthorized", "Invalid or revoked API key.", {"WWW-Authenticate": "Bearer"}
            )
        context.note(user_id=user_id)
        return Identity(user_id, "api_key")
    cookie_user = state.signer.user_id(request.cookies.get(COOKIE_NAME))
    if cookie_user is not None:
        # Recreated if the database was reset, so an old cookie keeps working.
        user = await run_sync(state.store.ensure_user, cookie_user)
        context.note(user_id=user.id)
        return Identity(user.id, "cookie")
    user = await run_sync(state.store.ensure_user, None)
    ctx = context.current()
    if ctx is not None:
        ctx.set_cookie = state.signer.set_cookie_header(user.id)
    context.note(user_id=user.id)
    return Identity(user.id, "new")


async def openai_user(request: Request, state: State) -> Identity:
    """The /v1 endpoints: a valid key's user; without one, a shared anonymous user unless
    ``api.require_api_key_for_openai`` (clients such as Open WebUI always send some key, so an
    unknown key is treated like none when keys are optional)."""
    key = api_key_of(request)
    user_id = await _from_key(state, key) if key else None
    if user_id is not None:
        context.note(user_id=user_id)
        return Identity(user_id, "api_key")
    if state.settings.api.require_api_key_for_openai:
        raise ApiError(
            401,
            "invalid_api_key",
            "A valid ragchat API key is required (Authorization: Bearer rc_…).",
            {"WWW-Authenticate": "Bearer"},
        )
    user = await run_sync(state.store.ensure_user, OPENAI_ANONYMOUS_USER)
    context.note(user_id=user.id)
    return Identity(user.id, "anonymous")


CurrentUser = Annotated[Identity, Depends(current_user)]
OpenAIUser = Annotated[Identity, Depends(openai_user)]


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


async def answer_limited(request: Request, state: State, me: CurrentUser) -> Identity:
    """The caller, after the per-user and per-IP answer rate limits (429 + Retry-After)."""
    await run_sync(state.limits.check, me.user_id, client_ip(request))
    return me


async def openai_limited(request: Request, state: State, me: OpenAIUser) -> Identity:
    await run_sync(state.limits.check, me.user_id, client_ip(request))
    return me


LimitedUser = Annotated[Identity, Depends(answer_limited)]
LimitedOpenAIUser = Annotated[Identity, Depends(openai_limited)]
