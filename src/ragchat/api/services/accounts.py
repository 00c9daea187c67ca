"""Accounts: a sign-in name and a password, signed in on the page by a session cookie; the same
person as their API keys everywhere (page, ``/kb``, ``/v1``).

What follows OWASP's authentication and session guidance (docs/security.md, "Accounts"):

- Passwords are hashed with argon2id (argon2-cffi's ``PasswordHasher``, its RFC 9106 defaults)
  and re-hashed on sign-in when those parameters change. Length is the only rule (NIST
  SP 800-63B): ``auth.min_password_chars`` to ``auth.max_password_chars``.
- A session is a random 256-bit token in an ``HttpOnly``, ``SameSite=Lax`` cookie (``Secure``
  with ``api.cookie_secure``); the database keeps only its sha256, so a copy of it signs nobody
  in. Every sign-in issues a new token (no fixation); sign-out deletes it on the server; it
  ends when idle (``auth.session_idle_minutes``) and after ``auth.session_max_days``; a
  password change ends every other session of the account.
- Sign-in attempts are rate limited per sign-in name and per client address; an unknown name
  and a wrong password get the same 401 after the same work (a dummy hash is verified), so the
  answer tells nobody which names exist."""

from __future__ import annotations

import contextlib
import hashlib
import re
import secrets
import threading
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

from ragchat.api.errors import ApiError
from ragchat.api.limits import RateLimits
from ragchat.errors import Conflict
from ragchat.settings import AuthSettings
from ragchat.store.base import Store
from ragchat.store.rows import Claimed, User

SESSION_COOKIE = "ragchat_session"
WRONG_CREDENTIALS = "Wrong sign-in name or password."
_LOGIN = re.compile(r"[a-z0-9][a-z0-9._@-]{1,63}")


def normalize_login(name: str) -> str:
    """The sign-in name as it is compared: NFKC, casefolded, trimmed ("Ada" and "ada" are one
    account). 2-64 of letters, digits, ``. _ @ -``, starting with a letter or digit."""
    login = unicodedata.normalize("NFKC", name).strip().casefold()
    if not _LOGIN.fullmatch(login):
        raise ApiError(
            422,
            "invalid_username",
            "A sign-in name is 2 to 64 letters, digits, '.', '_', '@' or '-', starting with a "
            "letter or digit.",
        )
    return login


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Passwords:
    """argon2id hashes; ``check_new`` says what is wrong with a password before it is kept."""

    def __init__(self, min_chars: int, max_chars: int, hasher: PasswordHasher | None = None):
        self.min_chars = min_chars
        self.max_chars = max_chars
        self.hasher = hasher or PasswordHasher()
        self._dummy: str | None = None
        self._lock = threading.Lock()

    def check_new(self, password: str) -> None:
        if len(password) < self.min_chars:
            raise ApiError(
                422,
                "weak_password",
                f"The password must be at least {self.min_chars} characters.",
            )
        self.check_length(password)

    def check_length(self, password: str) -> None:
        if len(password) > self.max_chars:
            raise ApiError(
                422, "invalid_password", f"A password is at most {self.max_chars} characters."
            )

    def hash(self, password: str) -> str:
        return self.hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        """Whether ``password`` matches ``stored``; without a stored hash (unknown name) a
        dummy one is checked, so both cases take the same time."""
        if stored is None:
            with self._lock:
                if self._dummy is None:
                    self._dummy = self.hasher.hash(secrets.token_urlsafe(16))
                stored = self._dummy
            with contextlib.suppress(VerificationError, InvalidHashError):
                self.hasher.verify(stored, password)
            return False
        try:
            return bool(self.hasher.verify(stored, password))
        except (VerifyMismatchError, VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        try:
            return bool(self.hasher.check_needs_rehash(stored))
        except InvalidHashError:
            return True


@dataclass(frozen=True)
class SignedIn:
    user: User
    token: str  # the new session cookie's value
    claimed: Claimed


class AccountService:
    def __init__(
        self,
        auth: AuthSettings,
        store: Store,
        limits: RateLimits,
        *,
        secure_cookie: bool = False,
        passwords: Passwords | None = None,
    ) -> None:
        self.auth = auth
        self.store = store
        self.limits = limits
        self.secure_cookie = secure_cookie
        self.passwords = passwords or Passwords(auth.min_password_chars, auth.max_password_chars)
        self.idle = timedelta(minutes=auth.session_idle_minutes)
        self.max_age = timedelta(days=auth.session_max_days)

    # -- accounts ------------------------------------------------------------------------------
    def add(self, username: str, password: str, display_name: str | None = None) -> User:
        """An account made by an operator (``ragchat users add``) or by sign-up."""
        login = normalize_login(username)
        self.passwords.check_new(password)
        try:
            return self.store.create_account(
                login, self.passwords.hash(password), display_name=display_name or username
            )
        except Conflict:
            raise ApiError(409, "username_taken", "That sign-in name is taken.") from None

    def sign_up(
        self,
        username: str,
        password: str,
        *,
        display_name: str | None,
        current: User | None,
        claim: bool,
        address: str,
    ) -> SignedIn:
        """A new account, signed in. With ``claim``, the caller's identity (an anonymous
        cookie, or a key made with ``POST /users``) becomes the account, keeping everything it
        made."""
        if not self.auth.sign_up:
            raise ApiError(
                403,
                "sign_up_closed",
                "This server does not take sign-ups: ask its operator for an account "
                "(ragchat users add NAME).",
            )
        self.limits.check_new_user(address)
        login = normalize_login(username)
        self.passwords.check_new(password)
        adopt = current if claim and current is not None and current.kind != "account" else None
        kept = adopt.display_name if adopt is not None else None  # a key's user keeps its name
        try:
            user = self.store.create_account(
                login,
                self.passwords.hash(password),
                display_name=display_name or kept or username.strip(),
                user_id=adopt.id if adopt is not None else None,
            )
        except Conflict:
            raise ApiError(409, "username_taken", "That sign-in name is taken.") from None
        return SignedIn(user, self.start_session(user.id), Claimed())

    def sign_in(
        self, username: str, password: str, *, current: User | None, claim: bool, address: str
    ) -> SignedIn:
        """The account, signed in with a new session; 401 ``WRONG_CREDENTIALS`` for an
        unknown name or a wrong password alike. With ``claim``, what the caller's identity
        made (when it is not an account) becomes the account's."""
        self.passwords.check_length(password)
        try:
            login = normalize_login(username)
        except ApiError:
            login = unicodedata.normalize("NFKC", username).strip().casefold()[:64]
        self.limits.check_sign_in(login, address, self.auth.sign_in_attempts_per_minute)
        found = self.store.account_for_login(login)
        stored = found[1] if found is not None else None
        if not self.passwords.verify(stored, password) or found is None:
            raise ApiError(401, "wrong_credentials", WRONG_CREDENTIALS)
        user = found[0]
        self.store.touch_user(user.id)
        if self.passwords.needs_rehash(found[1]):
            self.store.set_password_hash(user.id, self.passwords.hash(password))
        claimed = Claimed()
        if claim and current is not None and current.kind != "account" and current.id != user.id:
            claimed = self.store.claim(current.id, user.id)
        return SignedIn(user, self.start_session(user.id), claimed)

    def change_password(self, user_id: str, current: str, new: str) -> None:
        """Checks the current password, keeps the new one's hash and ends every session of
        the account (``start_session`` signs this browser in again)."""
        self.passwords.check_length(current)
        user = self.store.get_user(user_id)
        found = self.store.account_for_login(user.login or "") if user.login else None
        if found is None or not self.passwords.verify(found[1], current):
            raise ApiError(401, "wrong_credentials", "The current password is wrong.")
        self.passwords.check_new(new)
        self.store.set_password_hash(user_id, self.passwords.hash(new))
        self.store.end_web_sessions(user_id)

    # -- sessions ------------------------------------------------------------------------------
    def start_session(self, user_id: str) -> str:
        token = secrets.token_urlsafe(32)
        expires = datetime.now(UTC) + self.max_age
        self.store.start_web_session(user_id, token_hash(token), expires)
        return token

    def session_user(self, token: str | None) -> str | None:
        if not token or len(token) > 128:
            return None
        return self.store.web_session_user(token_hash(token), self.idle)

    def sign_out(self, token: str | None) -> None:
        if token:
            self.store.end_web_session(token_hash(token))

    def expire(self) -> int:
        return self.store.expire_web_sessions(self.idle)

    def cookie_header(self, token: str) -> str:
        return self._cookie(token, int(self.max_age.total_seconds()))

    def clear_cookie_header(self) -> str:
        return self._cookie("", 0)

    def _cookie(self, value: str, max_age: int) -> str:
        """HttpOnly (no script reads it), SameSite=Lax (not sent on cross-site POSTs)."""
        parts = [f"{SESSION_COOKIE}={value}", "Path=/", f"Max-Age={max_age}", "HttpOnly"]
        parts.append("SameSite=Lax")
        if self.secure_cookie:
            parts.append("Secure")
        return "; ".join(parts)
