"""Request dependencies: the app state, the caller's identity, the answer rate limit.

Identity, in order: an API key (``Authorization: Bearer rc_…`` or ``X-API-Key``; a wrong key,
or an ``Authorization`` header that is not ``Bearer <key>``, is 401, never a silent fallback),
else the signed cookie, else a new anonymous user whose cookie is set on the response (at most
``api.new_users_per_ip_per_minute`` per client address). Every store read is scoped to this
user id. Routes that store data for later (uploads, new conversations, API keys) take an
``Owner``: a key or a cookie the caller already holds, else 401 saying how to get one, so
nothing is written for an identity its caller cannot use again."""

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
    address: str = ""  # the client address (behind a trusted proxy: the real one)


State = Annotated[AppState, Depends(get_state)]


NEEDS_IDENTITY = (
    "This request stores data, so it needs an identity you can use again: an API key "
    "(Authorization: Bearer rc_…; POST /users with display_name and create_api_key: true "
    "returns one) or the identity cookie (set by POST /users or by the web page)."
)


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, "unauthorized", message, {"WWW-Authenticate": "Bearer"})


def api_key_of(request: Request, *, empty_bearer_is_none: bool = False) -> str | None:
    """The key the caller sent, None if no key header at all. A header that is present but
    is not a key (``Authorization: rc_…`` without ``Bearer``, ``Basic …``, an empty
    ``X-API-Key``) is 401: a client with a typo must learn that its key is not used.
    ``empty_bearer_is_none``: ``Authorization: Bearer`` with nothing after it counts as no key
    (OpenAI clients configured without a key send that)."""
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, token = auth.strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token and " " not in token:
            return token
        if scheme.lower() == "bearer" and not token and empty_bearer_is_none:
            return None
        raise _unauthorized(
            "Malformed Authorization header: send 'Authorization: Bearer <API key>' "
            "(or the key alone in X-API-Key)."
        )
    key = request.headers.get("x-api-key")
    if key is not None:
        if not key.strip() or " " in key.strip():
            raise _unauthorized("Malformed X-API-Key header: send the API key alone.")
        return key.strip()
    return None


async def _from_key(state: AppState, key: str) -> str | None:
    return await run_sync(state.store.user_for_api_key, key)


async def known_user(request: Request, state: State) -> Identity | None:
    """The caller's key or cookie identity; None when the caller sent neither."""
    address = client_ip(request)
    key = api_key_of(request)
    if key is not None:
        user_id = await _from_key(state, key)
        if user_id is None:
            raise _unauthorized("Invalid or revoked API key.")
        context.note(user_id=user_id)
        return Identity(user_id, "api_key", address)
    cookie_user = state.signer.user_id(request.cookies.get(COOKIE_NAME))
    if cookie_user is not None:
        # Recreated if the database was reset, so an old cookie keeps working.
        user = await run_sync(state.store.ensure_user, cookie_user)
        context.note(user_id=user.id)
        return Identity(user.id, "cookie", address)
    return None


async def current_user(request: Request, state: State) -> Identity:
    known = await known_user(request, state)
    if known is not None:
        return known
    address = client_ip(request)
    await run_sync(state.limits.check_new_user, address)
    user = await run_sync(state.store.ensure_user, None)
    ctx = context.current()
    if ctx is not None:
        ctx.set_cookie = state.signer.set_cookie_header(user.id)
    context.note(user_id=user.id)
    return Identity(user.id, "new", address)


async def owner(request: Request, state: State) -> Identity:
    """A caller who can come back to what it stores: a key or a cookie, else 401."""
    known = await known_user(request, state)
    if known is None:
        raise _unauthorized(NEEDS_IDENTITY)
    return known


async def openai_user(request: Request, state: State) -> Identity:
    """The /v1 endpoints: a valid key's user; without one, a shared anonymous user unless
    ``api.require_api_key_for_openai`` (clients such as Open WebUI always send some key, so an
    unknown key is treated like none when keys are optional)."""
    key = api_key_of(request, empty_bearer_is_none=True)
    user_id = await _from_key(state, key) if key else None
    if user_id is not None:
        context.note(user_id=user_id)
        return Identity(user_id, "api_key", client_ip(request))
    if state.settings.api.require_api_key_for_openai:
        raise ApiError(
            401,
            "invalid_api_key",
            "A valid ragchat API key is required (Authorization: Bearer rc_…).",
            {"WWW-Authenticate": "Bearer"},
        )
    user = await run_sync(state.store.ensure_user, OPENAI_ANONYMOUS_USER)
    context.note(user_id=user.id)
    return Identity(user.id, "anonymous", client_ip(request))


CurrentUser = Annotated[Identity, Depends(current_user)]
Owner = Annotated[Identity, Depends(owner)]
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


async def upload_limited(state: State, me: Owner) -> Identity:
    """An owner, after the per-user and per-address upload rate limits."""
    await run_sync(state.limits.check_upload, me.user_id, me.address)
    return me


LimitedUser = Annotated[Identity, Depends(answer_limited)]
Uploader = Annotated[Identity, Depends(upload_limited)]
LimitedOpenAIUser = Annotated[Identity, Depends(openai_limited)]
