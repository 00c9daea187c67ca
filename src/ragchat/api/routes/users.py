"""Users and API keys. The browser gets an anonymous user from its cookie until its person
signs in (``routes/auth.py``); programs create a named user once and use its API key, or
create keys for their account. ``PATCH /users/me`` keeps what the page remembers for the
person (the last "Answer from" choice) on any browser."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from ragchat.api.bounds import IdPath
from ragchat.api.deps import CurrentUser, Owner, State, api_key_of, client_ip, current_user
from ragchat.api.errors import ApiError
from ragchat.api.schemas import (
    ERRORS,
    AnswerFrom,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    UserCreate,
    UserCreated,
    UserOut,
    UserUpdate,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.accounts import SESSION_COOKIE
from ragchat.api.services.identity import COOKIE_NAME
from ragchat.api.state import AppState

router = APIRouter(tags=["users"], responses=ERRORS)


def user_out(state: AppState, user_id: str) -> UserOut:
    """The user with their remembered choice as they know it now (a renamed knowledge base by
    its new name; one they may no longer see left out)."""
    user = state.store.get_user(user_id)
    out = UserOut.model_validate(user)
    chosen = user.preferences.get("answer_from")
    if isinstance(chosen, dict):
        storage = chosen.get("kb")
        if isinstance(storage, str):
            names = state.kbs.names_by_storage(user_id, [storage])
            out.answer_from = AnswerFrom(kb=names[0]) if names else None
        else:
            agent = chosen.get("agent")
            known = agent is None or agent in state.engine.agents
            out.answer_from = AnswerFrom(agent=agent) if known else None
    return out


@router.post("/users", response_model=UserCreated, summary="Create or return the caller's user")
async def create_user(
    body: UserCreate, request: Request, response: Response, state: State
) -> UserCreated:
    """Idempotent for an identified caller (API key or cookie): returns that user, 200.
    Otherwise creates one — named when ``display_name`` is given, with an API key if
    ``create_api_key`` — sets the identity cookie and answers 201 (rate limited per client
    address, like every new identity)."""
    identified = api_key_of(request) is not None or state.signer.user_id(
        request.cookies.get(COOKIE_NAME)
    )
    identified = identified or request.cookies.get(SESSION_COOKIE)
    if identified:
        me = await current_user(request, state)
        return UserCreated.model_validate(await run_sync(state.store.get_user, me.user_id))
    if not state.settings.auth.anonymous:
        raise ApiError(
            403,
            "accounts_only",
            "This server serves only people with an account: sign up (POST /auth/sign-up) "
            "or ask its operator for one, then create keys at /users/me/api-keys.",
        )
    if body.create_api_key and not body.display_name:
        raise ApiError(400, "invalid_request", "create_api_key needs a display_name.")
    await run_sync(state.limits.check_new_user, client_ip(request))
    kind = "named" if body.display_name else "anonymous"
    user = await run_sync(state.store.ensure_user, None, kind=kind, display_name=body.display_name)
    response.headers.append("Set-Cookie", state.signer.set_cookie_header(user.id))
    response.status_code = status.HTTP_201_CREATED
    out = UserCreated.model_validate(user)
    if body.create_api_key:
        row, secret = await run_sync(state.store.create_api_key, user.id, "default")
        out.api_key = ApiKeyCreated(**ApiKeyOut.model_validate(row).model_dump(), secret=secret)
    return out


@router.get("/users/me", response_model=UserOut, summary="The caller")
async def me(me: CurrentUser, state: State) -> UserOut:
    return await run_sync(user_out, state, me.user_id)


@router.patch("/users/me", response_model=UserOut, summary="Change your name or the page's choice")
async def update_me(body: UserUpdate, me: Owner, state: State) -> UserOut:
    """``answer_from``: what the page answers from next time, on any browser — one knowledge
    base you may see (``{"kb": name}``), or the sample agents (``{"agent": name}``, or
    ``{"agent": null}`` for the one that fits each question)."""

    def update() -> UserOut:
        changes: dict[str, object] = {}
        if body.answer_from is not None:
            chosen = body.answer_from
            if chosen.kb is not None:
                view = state.kbs.resolve(me.user_id, chosen.kb)
                changes["answer_from"] = {"kb": view.storage}
            else:
                if chosen.agent is not None and chosen.agent not in state.engine.agents:
                    raise ApiError(400, "unknown_agent", f"Unknown agent {chosen.agent!r}.")
                changes["answer_from"] = {"agent": chosen.agent}
        if changes:
            state.store.set_preferences(me.user_id, changes)
        if body.display_name is not None:
            state.store.set_display_name(me.user_id, body.display_name)
        return user_out(state, me.user_id)

    return await run_sync(update)


@router.post(
    "/users/me/api-keys",
    response_model=ApiKeyCreated,
    status_code=201,
    summary="Create an API key (the secret is returned once)",
)
async def create_api_key(body: ApiKeyCreate, me: Owner, state: State) -> ApiKeyCreated:
    row, secret = await run_sync(state.store.create_api_key, me.user_id, body.name)
    return ApiKeyCreated(**ApiKeyOut.model_validate(row).model_dump(), secret=secret)


@router.get("/users/me/api-keys", response_model=list[ApiKeyOut], summary="The caller's keys")
async def list_api_keys(me: CurrentUser, state: State) -> list[ApiKeyOut]:
    return [
        ApiKeyOut.model_validate(k) for k in await run_sync(state.store.list_api_keys, me.user_id)
    ]


@router.delete("/users/me/api-keys/{key_id}", status_code=204, summary="Revoke an API key")
async def revoke_api_key(key_id: IdPath, me: CurrentUser, state: State) -> Response:
    await run_sync(state.store.revoke_api_key, me.user_id, key_id)
    return Response(status_code=204)
