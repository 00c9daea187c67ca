"""Session lifecycle: a conversation closes when the user ends it or after
``session_ttl_minutes`` idle; closing indexes what the user said into their long-term memory
(the companion's ``get_long_term_memory`` tool searches it)."""

from __future__ import annotations

import logging

import anyio

from ragchat.settings import MemorySettings
from ragchat.store.base import Store
from ragchat.store.memory import MemoryStore
from ragchat.store.rows import ConversationRow

from ._sync import run_sync

log = logging.getLogger(__name__)


class SessionService:
    def __init__(self, store: Store, memory: MemoryStore, settings: MemorySettings) -> None:
        self.store = store
        self.memory = memory
        self.min_chars = settings.min_message_chars
        self.max_messages = settings.max_messages

    def end(self, user_id: str, conversation_id: str) -> ConversationRow:
        """Closes the conversation (``NotFound`` if it is not the caller's)."""
        return self.store.close_conversation(user_id, conversation_id)

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
