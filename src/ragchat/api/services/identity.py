"""Who is calling: API keys for programs, a signed cookie for the browser.

The cookie holds only the user id, signed with itsdangerous (HMAC); the secret comes from
``api.cookie_secret`` or is generated once into ``<data_dir>/secret.key`` so identities
survive restarts."""

from __future__ import annotations

import logging
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from itsdangerous import BadSignature, URLSafeTimedSerializer

from ragchat.settings import Settings

log = logging.getLogger(__name__)

COOKIE_NAME = "ragchat_uid"
COOKIE_MAX_AGE_S = 365 * 24 * 3600
SECRET_FILE = "secret.key"
_SALT = "ragchat-user-cookie"


def cookie_secret(settings: Settings) -> str:
    """The configured secret, else the persisted one (created with mode 0600 on first start)."""
    if settings.api.cookie_secret is not None:
        return settings.api.cookie_secret.get_secret_value()
    path = Path(settings.data_dir) / SECRET_FILE
    if path.exists():
        text = path.read_text(encoding="utf-8").strip()
        if text:
            return text
    path.parent.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(secret)
    log.info("generated the cookie signing secret in %s", path)
    return secret


@dataclass(frozen=True)
class CookieSigner:
    secret: str
    secure: bool = False

    def _serializer(self) -> URLSafeTimedSerializer:
        return URLSafeTimedSerializer(self.secret, salt=_SALT)

    def sign(self, user_id: str) -> str:
        return str(self._serializer().dumps(user_id))

    def user_id(self, cookie: str | None) -> str | None:
        """The user id of a valid, unexpired cookie, else None (tampered or foreign)."""
        if not cookie:
            return None
        try:
            value = self._serializer().loads(cookie, max_age=COOKIE_MAX_AGE_S)
        except BadSignature:
            return None
        return value if isinstance(value, str) and value else None

    def clear_cookie_header(self) -> str:
        """Forgets the identity cookie (after it was signed up or claimed by an account)."""
        return f"{COOKIE_NAME}=; Path=/; Max-Age=0; HttpOnly; SameSite=Lax" + (
            "; Secure" if self.secure else ""
        )

    def set_cookie_header(self, user_id: str) -> str:
        """HttpOnly (no script can read it), SameSite=Lax (not sent on cross-site POSTs)."""
        parts = [
            f"{COOKIE_NAME}={self.sign(user_id)}",
            "Path=/",
            f"Max-Age={COOKIE_MAX_AGE_S}",
            "HttpOnly",
            "SameSite=Lax",
        ]
        if self.secure:
            parts.append("Secure")
        return "; ".join(parts)
