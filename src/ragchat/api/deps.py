"""Request dependencies: the app state, the caller's identity, the answer rate limit.

Identity, in order: an API key (``Authorization: Bearer rc_…`` or ``X-API-Key``; a wrong key,
or an ``Authorization`` header that is not ``Bearer <key>``, is 401, never a silent fallback),
else a signed-in page session (``services/accounts.py``), else the signed anonymous cookie
(unless it was made an account or claimed by one), else — where ``auth.anonymous`` allows
it — a new anonymous user whose cookie is set on the response (at most
``api.new_users_per_ip_per_minute`` per client address). Every store read is scoped to this
user id. Routes that store data for later (uploads, new conversations, API keys) take an
``Owner``: a key, a session or a cookie the caller already holds, else 401 saying how to get
one, so nothing is written for an identity its caller cannot use again.

A request that a session cookie identifies and that changes something (not GET/HEAD/OPTIONS)
must come from the page's own origin when it names one (``Origin``): another site's form or
script cannot act as the signed-in person (OWASP: verifying origin with standard headers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from fastapi import Depends, Request

from ragchat.api import context
from ragchat.api.errors import ApiError
from ragchat.api.services._sync import run_sync
from ragchat.api.services.accounts import SESSION_COOKIE
from ragchat.api.services.identity import COOKIE_NAME
from ragchat.api.state import AppState, get_state
from ragchat.store.sql import API_KEY_PREFIX

OPENAI_ANONYMOUS_USER = "openai-anonymous"


@dataclass(frozen=True)
class Identity:
    user_id: str
    via: Literal["api_key", "session", "cookie", "new", "anonymous"]
    address: str = ""  # the client address (behind a trusted proxy: the real one)


State = Annotated[AppState, Depends(get_state)]


NEEDS_IDENTITY = (
    "This request stores data, so it needs an identity you can use again: an API key "
    "(Authorization: Bearer rc_…; POST /users with display_name and create_api_key: true "
    "returns one) or the identity cookie (set by POST /users or by the web page)."
)
NEEDS_ACCOUNT = (
    "Sign in first: this server serves only people with an account (POST /auth/sign-in, or "
    "an API key: Authorization: Bearer rc_…)."
)
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


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


def same_origin(request: Request, state: AppState) -> bool:
    """Whether a request's ``Origin`` (when it sends one) is the page's own or an allowed one."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    own = f"{request.url.scheme}://{request.headers.get('host', '')}"
    return origin in (own, *state.settings.api.cors_origins)


async def session_user(request: Request, state: State) -> str | None:
    """The signed-in person of the page session cookie, None without a live one."""
    token = request.cookies.get(SESSION_COOKIE)
    if not token:
        return None
    user_id = await run_sync(state.accounts.session_user, token)
    unsafe = request.method not in SAFE_METHODS
    if user_id is not None and unsafe and not same_origin(request, state):
        raise ApiError(
            403, "cross_origin", "A signed-in session acts only from this server's page."
        )
    return user_id


async def cookie_user(request: Request, state: State) -> str | None:
    """The anonymous cookie's identity, None when there is none, anonymous use is off, or it
    became an account or was claimed by one (its cookie then signs nobody in)."""
    if not state.settings.auth.anonymous:
        return None
    user_id = state.signer.user_id(request.cookies.get(COOKIE_NAME))
    if user_id is None:
        return None
    # Recreated if the database was reset, so an old cookie keeps working.
    user = await run_sync(state.store.ensure_user, user_id)
    if user.kind == "account" or user.merged_into is not None:
        return None
    return user.id


async def known_user(request: Request, state: State) -> Identity | None:
    """The caller's key, session or cookie identity; None when the caller sent none."""
    address = client_ip(request)
    key = api_key_of(request)
    if key is not None:
        user_id = await _from_key(state, key)
        if user_id is None:
            raise _unauthorized("Invalid or revoked API key.")
        context.note(user_id=user_id)
        return Identity(user_id, "api_key", address)
    signed_in = await session_user(request, state)
    if signed_in is not None:
        context.note(user_id=signed_in)
        return Identity(signed_in, "session", address)
    anonymous = await cookie_user(request, state)
    if anonymous is not None:
        context.note(user_id=anonymous)
        return Identity(anonymous, "cookie", address)
    return None


async def current_user(request: Request, state: State) -> Identity:
    known = await known_user(request, state)
    if known is not None:
        return known
    if not state.settings.auth.anonymous:
        raise _unauthorized(NEEDS_ACCOUNT)
    address = client_ip(request)
    await run_sync(state.limits.check_new_user, address)
    user = await run_sync(state.store.ensure_user, None)
    ctx = context.current()
    if ctx is not None:
        ctx.set_cookie = state.signer.set_cookie_header(user.id)
    context.note(user_id=user.id)
    return Identity(user.id, "new", address)


async def owner(request: Request, state: State) -> Identity:
    """A caller who can come back to what it stores: a key, a session or a cookie, else 401."""
    known = await known_user(request, state)
    if known is None:
        raise _unauthorized(NEEDS_IDENTITY if state.settings.auth.anonymous else NEEDS_ACCOUNT)
    return known


async def openai_user(request: Request, state: State) -> Identity:
    """The /v1 endpoints: a valid key's user (a wrong or revoked key is 401, as everywhere:
    the client learns its key is not used), else the signed-in page session's; without
    either, a shared anonymous user unless ``api.require_api_key_for_openai`` or anonymous
    use is off. Where keys are optional, ``Authorization: Bearer`` with nothing after it, or
    with a token that is not a ragchat key (no ``rc_``: the placeholder that OpenAI clients
    configured without a key must send), counts as no key."""
    key = api_key_of(request, empty_bearer_is_none=True)
    if key and not key.startswith(API_KEY_PREFIX) and not _keys_required(state):
        key = None  # a placeholder ("sk-no-key", "anything") a client must send: no key
    if key:
        user_id = await _from_key(state, key)
        if user_id is None:
            raise ApiError(
                401,
                "invalid_api_key",
                "Invalid or revoked API key (Authorization: Bearer rc_…).",
                {"WWW-Authenticate": "Bearer"},
            )
        context.note(user_id=user_id)
        return Identity(user_id, "api_key", client_ip(request))
    signed_in = await session_user(request, state)
    if signed_in is not None:
        context.note(user_id=signed_in)
        return Identity(signed_in, "session", client_ip(request))
    if _keys_required(state):
        raise ApiError(
            401,
            "invalid_api_key",
            "A valid ragchat API key is required (Authorization: Bearer rc_…).",
            {"WWW-Authenticate": "Bearer"},
        )
    user = await run_sync(state.store.ensure_user, OPENAI_ANONYMOUS_USER)
    context.note(user_id=user.id)
    return Identity(user.id, "anonymous", client_ip(request))


def _keys_required(state: AppState) -> bool:
    return state.settings.api.require_api_key_for_openai or not state.settings.auth.anonymous


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
