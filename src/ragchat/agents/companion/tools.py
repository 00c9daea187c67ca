"""What the companion can look up: the user's long-term memories, facts of its own life (its
persona's knowledge base) and the user's profile. The model calls these as tools; the
heuristic looks up the first two up front. Blocking work (embedding, search, the memory
store's database) runs in a worker thread, off the engine's event loop."""

from __future__ import annotations

import asyncio
import re
import threading
from typing import Any

from ragchat.agents.companion.persona import Persona, load_persona
from ragchat.agents.config import AgentConfig
from ragchat.agents.types import Turn, UserProfile
from ragchat.agents.wiring import AgentWiring
from ragchat.llm.base import ToolCall

_HEADING = re.compile(r"^\s*#+\s.*$", re.MULTILINE)  # Markdown headings are not facts
_GREETING = r"(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening))(?: there)?"
_NAME = re.compile(
    r"\b(?:my name is|call me|i'm called|i am called)\s+([A-Z][a-zA-Z'-]{1,30})", re.IGNORECASE
)


def profile_updates(message: str) -> UserProfile | None:
    """Profile facts a message states outright (just the name, for now)."""
    match = _NAME.search(message)
    return UserProfile(name=match.group(1).capitalize()) if match else None


def worth_remembering(message: str, min_words: int) -> bool:
    """Statements about the user ("I started a pottery class"), not greetings or questions."""
    return len(message.split()) >= min_words and not message.rstrip().endswith("?")


class CompanionTools:
    def __init__(self, wiring: AgentWiring, agent: AgentConfig) -> None:
        self.wiring = wiring
        self.agent = agent
        self.tuning = wiring.tuning.companion
        self._persona: Persona | None = None
        self._lock = threading.Lock()

    @property
    def persona(self) -> Persona:
        """Read on first use, so a bad persona file fails the companion's turns only."""
        with self._lock:
            if self._persona is None:
                self._persona = load_persona(self.wiring.app_config, self.agent)
            return self._persona

    def self_info(self, query: str, user_id: str) -> list[str]:
        """Facts from the persona's own knowledge base (none configured → none). A leading
        "Hi Robin," is dropped first: it dilutes the query below the relevance gate."""
        kb = self.agent.persona_knowledge_base
        name = re.escape(self.persona.name)
        query = re.sub(rf"^\W*(?:{_GREETING}\b)?\W*(?:{name}\b)?\W*", "", query, flags=re.I)
        if not kb or not query.strip():
            return []
        knowledge = self.wiring.knowledge
        filters = knowledge.visibility(self.agent, kb, user_id) or None
        result = knowledge.retriever(self.agent, kb).retrieve(
            query, top_k=self.tuning.self_facts, filters=filters
        )
        if result.no_answer:
            return []
        return [" ".join(_HEADING.sub("", h.chunk.text).split()) for h in result.hits]

    def memories(self, user_id: str, query: str) -> list[str]:
        return self.wiring.memory.search(user_id, query, self.tuning.memories)

    def remember(self, turn: Turn) -> None:
        if turn.user_id and worth_remembering(turn.message, self.tuning.min_memory_words):
            self.wiring.memory.add(turn.user_id, turn.conversation_id, turn.message)

    # -- off the event loop -----------------------------------------------------------------
    async def look_up_self(self, query: str, user_id: str) -> list[str]:
        return await asyncio.to_thread(self.self_info, query, user_id)

    async def look_up_memories(self, user_id: str, query: str) -> list[str]:
        return await asyncio.to_thread(self.memories, user_id, query)

    async def keep(self, turn: Turn) -> None:
        await asyncio.to_thread(self.remember, turn)

    async def run_tool(self, call: ToolCall, turn: Turn) -> dict[str, Any] | list[str]:
        """A tool call's result, as the JSON the model reads."""
        query = str(call.arguments.get("query") or turn.message)
        if call.name == "get_user_persona":
            updates = profile_updates(turn.message)
            profile = turn.user_profile.merged(updates) if updates else turn.user_profile
            return profile.to_json()
        if call.name == "get_long_term_memory":
            return await self.look_up_memories(turn.user_id, query)
        if call.name == "get_self_info":
            return await self.look_up_self(query, turn.user_id)
        return {"error": f"unknown tool {call.name!r}"}
