"""Users and API keys. The browser gets an anonymous user from its cookie; programs create a
named user once and use its API key."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from ragchat.api.bounds import IdPath
from ragchat.api.deps import CurrentUser, Owner, State, api_key_of, client_ip, current_user
from ragchat.api.errors import ApiError
from ragchat.api.schemas import (
    ERRORS,
    ApiKeyCreate,
    ApiKeyCreated,
    ApiKeyOut,
    UserCreate,
    UserCreated,
    UserOut,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.identity import COOKIE_NAME

router = APIRouter(tags=["users"], responses=ERRORS)


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
    if identified:
        me = await current_user(request, state)
        return UserCreated.model_validate(await run_sync(state.store.get_user, me.user_id))
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
    return UserOut.model_validate(await run_sync(state.store.get_user, me.user_id))


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
