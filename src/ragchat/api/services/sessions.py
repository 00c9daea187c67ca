"""Session lifecycle: a conversation closes when the user ends it or after
``session_ttl_minutes`` idle; closing indexes what the user said into their long-term memory
(the companion's ``get_long_term_memory`` tool searches it).

Sessions by id (``session_owner``): the replaced systems' clients pick a ``session_id`` and
carry no identity (no API key, no cookie). A chat turn naming an unknown id starts that
conversation: an identified caller's own, private to them like any other; a caller without
identity's an *anonymous session*, owned by a user derived from the id, which anybody
continues by its id alone. Every other conversation answers 404 to everybody but its owner,
exactly as an id that never existed.
"""

from __future__ import annotations

import logging
import uuid

import anyio

from ragchat.errors import Conflict, InvalidInput, NotFound
from ragchat.settings import MemorySettings
from ragchat.store.base import Store
from ragchat.store.memory import MemoryStore
from ragchat.store.rows import ConversationRow

from ._sync import run_sync

log = logging.getLogger(__name__)
MAX_SESSION_ID_CHARS = 36  # the store's id column
ANONYMOUS_SESSIONS = uuid.UUID("6f1d3c52-41a9-4c1e-9a57-2f0c7e1b8d40")  # namespace of their owners


def anonymous_owner(session_id: str) -> str:
    """The user that owns the anonymous session ``session_id`` (a stable uuid per id)."""
    return str(uuid.uuid5(ANONYMOUS_SESSIONS, session_id))


def session_owner(store: Store, caller_id: str, session_id: str, *, anonymous: bool) -> str:
    """Whose conversation ``session_id`` is, starting it on first use (``anonymous``: the
    caller has no identity). Blocking: call from a worker thread."""
    owner = store.conversation_owners([session_id]).get(session_id)
    if owner is None:
        if len(session_id) > MAX_SESSION_ID_CHARS or not session_id.strip():
            raise InvalidInput(f"A new session_id must be 1 to {MAX_SESSION_ID_CHARS} characters.")
        owner = caller_id
        if anonymous:
            owner = store.ensure_user(anonymous_owner(session_id)).id
        try:
            store.create_conversation(owner, conversation_id=session_id)
        except Conflict:  # started by a concurrent request: decide again on its owner
            return session_owner(store, caller_id, session_id, anonymous=anonymous)
        return owner
    if owner in (caller_id, anonymous_owner(session_id)):
        return owner
    raise NotFound("conversation not found")


class SessionService:
    def __init__(self, store: Store, memory: MemoryStore, settings: MemorySettings) -> None:
        self.store = store
        self.memory = memory
        self.min_chars = settings.min_message_chars
        self.max_messages = settings.max_messages

    def end(self, user_id: str, conversation_id: str) -> ConversationRow:
        """Closes the caller's conversation or an anonymous session (else ``NotFound``)."""
        owner = self.store.conversation_owners([conversation_id]).get(conversation_id)
        if owner not in (user_id, anonymous_owner(conversation_id)):
            raise NotFound("conversation not found")
        return self.store.close_conversation(owner, conversation_id)

    def index_conversation(self, user_id: str, conversation_id: str) -> int:
        """Adds the user's messages to their memory; returns how many were offered (the memory
        store skips ones it already has). Runs after the response, so it logs, never raises."""
        try:
            messages = self.store.list_messages(user_id, conversation_id, limit=self.max_messages)
            texts = [
                m.content
                for m in messages
                if m.role == "user" and len(m.content.strip()) >= self.min_chars
            ]
            for text in texts:
                self.memory.add(user_id, conversation_id, text)
        except Exception:
            log.exception("could not index conversation %s into memory", conversation_id)
            return 0
        log.info(
            "indexed conversation into memory",
            extra={"conversation_id": conversation_id, "snippets": len(texts)},
        )
        return len(texts)

    def sweep(self) -> list[str]:
        """Closes idle sessions and indexes each; returns the closed conversation ids."""
        closed = self.store.cleanup()
        if not closed:
            return []
        for conversation_id, user_id in self.store.conversation_owners(closed).items():
            self.index_conversation(user_id, conversation_id)
        log.info("closed %d idle session(s)", len(closed))
        return closed

    async def run_periodically(self, interval_s: float) -> None:
        """The lifespan's background task; a failing sweep is logged and retried next time."""
        while True:
            await anyio.sleep(interval_s)
            try:
                await run_sync(self.sweep)
            except Exception:
                log.exception("session cleanup failed")
