"""Session lifecycle: a conversation closes when the user ends it or after
``session_ttl_minutes`` idle; closing indexes what the user said into their long-term memory
(the companion's ``get_long_term_memory`` tool searches it).

Sessions by id (``open_session``): the replaced systems' clients pick a ``session_id`` and
carry no identity (no API key, no cookie). A chat turn naming an unknown id starts that
conversation: an identified caller's own, private to them like any other; a caller without
identity's an *anonymous session*, owned by a user derived from the id, which anybody
continues by its id alone; once ended or idled out, it goes on in a new conversation under the
same id (seed 000: "load or create session"), the old one kept. Every other conversation
answers 404 to everybody but its owner, exactly as an id that never existed.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import anyio

from ragchat.errors import Conflict, InvalidInput, NotFound
from ragchat.settings import MemorySettings
from ragchat.store.base import Store
from ragchat.store.memory import MemoryStore
from ragchat.store.rows import ConversationRow

from ._sync import run_sync

log = logging.getLogger(__name__)
MAX_SESSION_ID_CHARS = 128  # what a client may choose (seed 000: "user_<uuid>" and longer)
_STORED_ID_CHARS = 36  # the store's conversation id column
_PROBE = 16  # generations looked up per query
ANONYMOUS_SESSIONS = uuid.UUID("6f1d3c52-41a9-4c1e-9a57-2f0c7e1b8d40")  # namespace of their owners


def anonymous_owner(session_id: str) -> str:
    """The user that owns the anonymous session ``session_id`` (a stable uuid per id)."""
    return str(uuid.uuid5(ANONYMOUS_SESSIONS, session_id))


def session_conversation_id(session_id: str, generation: int) -> str:
    """The conversation id of a session's ``generation``-th conversation (a new one starts
    when an anonymous session was closed): the session id itself for the first when it fits
    the store's id column, else a stable uuid of both, so no table maps them and two
    concurrent first turns still meet on one row."""
    if generation == 0 and len(session_id) <= _STORED_ID_CHARS:
        return session_id
    return str(uuid.uuid5(ANONYMOUS_SESSIONS, f"{session_id}\x00{generation}"))


@dataclass(frozen=True)
class SessionRef:
    owner: str
    conversation_id: str


def _latest(store: Store, session_id: str) -> tuple[int, str | None]:
    """(generation, owner) of the session's newest conversation; (-1, None) when it has none."""
    found: tuple[int, str | None] = (-1, None)
    start = 0
    while True:
        ids = [session_conversation_id(session_id, g) for g in range(start, start + _PROBE)]
        owners = store.conversation_owners(ids)
        for generation, conversation_id in enumerate(ids, start):
            if conversation_id in owners:
                found = (generation, owners[conversation_id])
        if ids[-1] not in owners:
            return found
        start += _PROBE


def check_session_id(session_id: str) -> None:
    if len(session_id) > MAX_SESSION_ID_CHARS or not session_id.strip():
        raise InvalidInput(f"A session_id must be 1 to {MAX_SESSION_ID_CHARS} characters.")


def open_session(store: Store, caller_id: str, session_id: str, *, anonymous: bool) -> SessionRef:
    """The conversation a chat turn naming ``session_id`` goes to, and its owner (the turn
    runs as the owner): an unknown id starts that session (``anonymous``: the caller has no
    identity, so anybody continues it by its id); an anonymous session that was ended or
    idled out goes on in a new conversation under the same id, the old one kept. Anybody
    else's session is ``NotFound``. Blocking: call from a worker thread."""
    check_session_id(session_id)
    generation, owner = _latest(store, session_id)
    if owner is None:
        first = store.ensure_user(anonymous_owner(session_id)).id if anonymous else caller_id
        return _start(store, first, session_id, 0, caller_id, anonymous)
    shared = anonymous_owner(session_id)
    if owner not in (caller_id, shared):
        raise NotFound("conversation not found")
    conversation_id = session_conversation_id(session_id, generation)
    if owner == shared and store.get_conversation(owner, conversation_id).status == "closed":
        return _start(store, owner, session_id, generation + 1, caller_id, anonymous)
    return SessionRef(owner, conversation_id)


def _start(
    store: Store, owner: str, session_id: str, generation: int, caller_id: str, anonymous: bool
) -> SessionRef:
    conversation_id = session_conversation_id(session_id, generation)
    try:
        store.create_conversation(owner, conversation_id=conversation_id)
    except Conflict:  # started by a concurrent request: decide again on what it made
        return open_session(store, caller_id, session_id, anonymous=anonymous)
    return SessionRef(owner, conversation_id)


class SessionService:
    def __init__(self, store: Store, memory: MemoryStore, settings: MemorySettings) -> None:
        self.store = store
        self.memory = memory
        self.min_chars = settings.min_message_chars
        self.max_messages = settings.max_messages

    def end(self, user_id: str, session_id: str) -> ConversationRow:
        """Closes the newest conversation of the caller's session or of an anonymous session
        (else ``NotFound``)."""
        check_session_id(session_id)
        generation, owner = _latest(self.store, session_id)
        if owner is None or owner not in (user_id, anonymous_owner(session_id)):
            raise NotFound("conversation not found")
        conversation_id = session_conversation_id(session_id, generation)
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

    async def run_periodically(
        self, interval_s: float, also: Callable[[], object] | None = None
    ) -> None:
        """The lifespan's background task; a failing sweep is logged and retried next time.
        ``also``: more housekeeping on the same beat (ended page sessions are deleted)."""
        while True:
            await anyio.sleep(interval_s)
            try:
                await run_sync(self.sweep)
                if also is not None:
                    await run_sync(also)
            except Exception:
                log.exception("session cleanup failed")
