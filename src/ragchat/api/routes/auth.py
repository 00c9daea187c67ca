"""Accounts on the page: sign up, sign in, sign out, change the password, and what the page
needs to know first (``GET /auth``). The rules (hashing, sessions, attempts) are
``services/accounts.py``'s; the same person's API keys are at ``/users/me/api-keys``."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from ragchat.api.deps import (
    State,
    api_key_of,
    client_ip,
    cookie_user,
    known_user,
    owner,
    same_origin,
    session_user,
)
from ragchat.api.errors import ApiError
from ragchat.api.schemas import (
    ERRORS,
    AuthStatus,
    ClaimedOut,
    PasswordChange,
    SignedInOut,
    SignIn,
    SignUp,
)
from ragchat.api.services._sync import run_sync
from ragchat.api.services.accounts import SESSION_COOKIE
from ragchat.api.state import AppState
from ragchat.store.rows import User

from .users import user_out

router = APIRouter(prefix="/auth", tags=["accounts"], responses={**ERRORS, 403: ERRORS[404]})


async def _present(request: Request, state: AppState) -> User | None:
    """The identity a sign-up or sign-in may take over: an API key's user, else the page's
    anonymous cookie (a session belongs to an account already: nothing to take over)."""
    if api_key_of(request) is not None:
        known = await known_user(request, state)
        return None if known is None else await run_sync(state.store.get_user, known.user_id)
    anonymous = await cookie_user(request, state)
    return None if anonymous is None else await run_sync(state.store.get_user, anonymous)


def _from_the_page(request: Request, state: AppState) -> None:
    """Signing in or up only from this server's page (or an allowed origin) when the request
    says where it comes from: another site cannot sign a visitor into an account of its own
    choosing (login CSRF). Clients that send no ``Origin`` (curl, SDKs) are not browsers."""
    if not same_origin(request, state):
        raise ApiError(403, "cross_origin", "Sign in from this server's own page.")


def _signed_in(response: Response, state: AppState, token: str, forget_cookie: bool) -> None:
    response.headers.append("Set-Cookie", state.accounts.cookie_header(token))
    if forget_cookie:  # the anonymous cookie's identity is the account's now
        response.headers.append("Set-Cookie", state.signer.clear_cookie_header())
    response.headers["Cache-Control"] = "no-store"


@router.get("", response_model=AuthStatus, summary="Who is signed in, and what this server allows")
async def auth_status(request: Request, state: State) -> AuthStatus:
    """Creates no identity: the page asks this first, to show the sign-in form or the chat."""
    known = await known_user(request, state)
    user = None if known is None else await run_sync(user_out, state, known.user_id)
    return AuthStatus(
        signed_in=user is not None and user.kind == "account",
        user=user,
        sign_up=state.settings.auth.sign_up,
        anonymous=state.settings.auth.anonymous,
    )


@router.post(
    "/sign-up",
    response_model=SignedInOut,
    status_code=201,
    summary="Create an account and sign in",
)
async def sign_up(body: SignUp, request: Request, response: Response, state: State) -> SignedInOut:
    """Where the operator allows sign-ups (``auth.sign_up``). With ``claim`` (the default),
    the caller's present identity — the page's cookie, or an API key made with ``POST /users``
    — becomes the account, keeping its conversations, knowledge bases and keys."""
    _from_the_page(request, state)
    current = await _present(request, state)
    done = await run_sync(
        lambda: state.accounts.sign_up(
            body.username,
            body.password,
            display_name=body.display_name,
            current=current,
            claim=body.claim,
            address=client_ip(request),
        )
    )
    adopted = current is not None and done.user.id == current.id
    _signed_in(response, state, done.token, forget_cookie=adopted)
    user = await run_sync(user_out, state, done.user.id)
    return SignedInOut(user=user, claimed=ClaimedOut.model_validate(done.claimed))


@router.post("/sign-in", response_model=SignedInOut, summary="Sign in (a new page session)")
async def sign_in(body: SignIn, request: Request, response: Response, state: State) -> SignedInOut:
    """401 ``wrong_credentials`` for an unknown name and a wrong password alike; 429 past
    ``auth.sign_in_attempts_per_minute`` per name (4x per address). A new session every time
    (the previous one of this browser ends). With ``claim``, what the browser did before
    signing in (its anonymous cookie's conversations, knowledge bases, uploads) becomes the
    account's."""
    _from_the_page(request, state)
    current = await _present(request, state)
    old = request.cookies.get(SESSION_COOKIE)
    done = await run_sync(
        lambda: state.accounts.sign_in(
            body.username,
            body.password,
            current=current,
            claim=body.claim,
            address=client_ip(request),
        )
    )
    if old:
        await run_sync(state.accounts.sign_out, old)
    claimed = current is not None and body.claim and current.kind != "account"
    _signed_in(response, state, done.token, forget_cookie=claimed)
    user = await run_sync(user_out, state, done.user.id)
    return SignedInOut(user=user, claimed=ClaimedOut.model_validate(done.claimed))


@router.post("/sign-out", status_code=204, summary="Sign out (ends this page session)")
async def sign_out(request: Request, state: State) -> Response:
    token = request.cookies.get(SESSION_COOKIE)
    if token:
        await session_user(request, state)  # another site's request may not sign anyone out
        await run_sync(state.accounts.sign_out, token)
    response = Response(status_code=204)
    response.headers.append("Set-Cookie", state.accounts.clear_cookie_header())
    return response


@router.post(
    "/password",
    status_code=204,
    summary="Change your password (ends your other sessions)",
)
async def change_password(body: PasswordChange, request: Request, state: State) -> Response:
    me = await owner(request, state)
    user = await run_sync(state.store.get_user, me.user_id)
    if user.kind != "account":
        raise ApiError(400, "no_account", "Only an account has a password: sign up first.")
    await run_sync(
        state.accounts.change_password, me.user_id, body.current_password, body.new_password
    )
    response = Response(status_code=status.HTTP_204_NO_CONTENT)
    if me.via == "session":  # this browser stays signed in, with a new session
        token = await run_sync(state.accounts.start_session, me.user_id)
        response.headers.append("Set-Cookie", state.accounts.cookie_header(token))
    return response
