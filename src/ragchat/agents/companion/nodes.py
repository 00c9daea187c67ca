"""Companion nodes. With a model: a tool-calling loop (at most ``MAX_ROUNDS``) over the three
tools, then a reply as a JSON list of chat bubbles. Offline: memories and self facts are
searched up front and ``companion_reply`` composes the bubbles."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from ragchat.agents.companion import prompts
from ragchat.agents.companion.state import CompanionState
from ragchat.agents.config import AgentConfig
from ragchat.agents.deps import AgentDeps
from ragchat.agents.heuristics import companion_reply
from ragchat.agents.shared.llm import emit, history_messages, prompt
from ragchat.agents.shared.state import Update
from ragchat.agents.shared.timing import timed
from ragchat.llm.base import Message, ToolCall
from ragchat.llm.parsing import parse_string_list

log = logging.getLogger(__name__)

MAX_ROUNDS = 3
MEMORIES = 3
SELF_FACTS = 3
MIN_MEMORY_WORDS = 4
_HEADING = re.compile(r"^\s*#+\s.*$", re.MULTILINE)  # Markdown headings are not facts
_GREETING = r"(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening))(?: there)?"
_NAME = re.compile(
    r"\b(?:my name is|call me|i'm called|i am called)\s+([A-Z][a-zA-Z'-]{1,30})", re.IGNORECASE
)


def split_bubbles(text: str) -> list[str]:
    """A JSON list of strings when the model wrote one, else its paragraphs."""
    parsed = parse_string_list(text)
    if parsed:
        return parsed
    return [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


def worth_remembering(message: str) -> bool:
    """Statements about the user ("I started a pottery class"), not greetings or questions."""
    return len(message.split()) >= MIN_MEMORY_WORDS and not message.rstrip().endswith("?")


def profile_updates(message: str) -> dict[str, Any]:
    """Profile facts a message states outright (just the name, for now)."""
    match = _NAME.search(message)
    return {"name": match.group(1).capitalize()} if match else {}


class CompanionNodes:
    def __init__(self, deps: AgentDeps, agent: AgentConfig) -> None:
        self.deps = deps
        self.agent = agent

    def self_info(self, query: str, user_id: str) -> list[str]:
        """Facts from the persona's own knowledge base (none configured → none). A leading
        "Hi Robin," is dropped first: it dilutes the query below the relevance gate."""
        kb = self.agent.persona_knowledge_base
        name = re.escape(self.deps.persona(self.agent).name)
        query = re.sub(rf"^\W*(?:{_GREETING}\b)?\W*(?:{name}\b)?\W*", "", query, flags=re.I)
        if not kb or not query.strip():
            return []
        filters = self.deps.visibility(self.agent, kb, user_id) or None
        retriever = self.deps.retriever(self.agent, kb)
        result = retriever.retrieve(query, top_k=SELF_FACTS, filters=filters)
        if result.no_answer:
            return []
        return [" ".join(_HEADING.sub("", h.chunk.text).split()) for h in result.hits]

    def memories(self, user_id: str, query: str) -> list[str]:
        return self.deps.memory_store.search(user_id, query, MEMORIES)

    def _run_tool(self, call: ToolCall, state: CompanionState) -> Any:
        query = str(call.arguments.get("query") or state.message)
        if call.name == "get_user_persona":
            return {**state.user_profile, **profile_updates(state.message)}
        if call.name == "get_long_term_memory":
            return self.memories(state.user_id, query)
        if call.name == "get_self_info":
            return self.self_info(query, state.user_id)
        return {"error": f"unknown tool {call.name!r}"}

    def _system(self) -> str:
        persona = self.deps.persona(self.agent)
        return prompt(self.agent, "SYSTEM", prompts.SYSTEM, name=persona.name, persona=persona.text)

    @timed("gather")
    async def gather(self, state: CompanionState) -> Update:
        if self.deps.chat_model is None:
            return {
                "memories": self.memories(state.user_id, state.message),
                "self_facts": self.self_info(state.message, state.user_id),
            }
        transcript = [
            Message("system", self._system()),
            *history_messages(state.history),
            Message("user", state.message),
        ]
        out: Update = {"transcript": transcript, "draft": None, "tool_log": []}
        found: dict[str, list[str]] = {"get_long_term_memory": [], "get_self_info": []}
        for _ in range(MAX_ROUNDS):
            result = await self.deps.chat_model.generate(
                transcript, options=self.deps.options("answer"), tools=prompts.TOOLS
            )
            if not result.tool_calls:
                out["draft"] = result.content
                break
            calls = tuple(result.tool_calls)
            transcript.append(Message("assistant", result.content, tool_calls=calls))
            for call in calls:
                output = self._run_tool(call, state)
                out["tool_log"].append({"tool": call.name, "arguments": call.arguments})
                if call.name in found and isinstance(output, list):
                    found[call.name].extend(output)
                content = json.dumps(output, ensure_ascii=False)
                transcript.append(Message("tool", content, tool_call_id=call.id, name=call.name))
        out["memories"] = found["get_long_term_memory"]
        out["self_facts"] = found["get_self_info"]
        return out

    @timed("reply")
    async def reply(self, state: CompanionState) -> Update:
        persona = self.deps.persona(self.agent)
        if self.deps.chat_model is None:
            bubbles = companion_reply(
                state.message,
                persona_name=persona.name,
                persona_text=persona.text,
                memories=state.memories,
                self_facts=state.self_facts,
                history=state.history,
            )
        else:
            draft = state.draft
            if draft is None:  # still calling tools after MAX_ROUNDS: ask for the reply
                messages = [*state.transcript, Message("user", prompts.FINAL)]
                result = await self.deps.chat_model.generate(
                    messages, options=self.deps.options("answer")
                )
                draft = result.content
            bubbles = split_bubbles(draft)
        bubbles = [b for b in bubbles if b.strip()] or ["Sorry, I lost my train of thought!"]
        reply = "\n\n".join(bubbles)
        emit(reply)
        metadata = {
            "persona": persona.name,
            "memories": state.memories,
            "self_facts": state.self_facts,
            "tool_calls": state.tool_log,
        }
        return {"reply": reply, "bubbles": bubbles, "metadata": metadata}

    @timed("remember")
    async def remember(self, state: CompanionState) -> Update:
        """Keeps the user's message as a long-term memory and returns stated profile facts
        (``metadata["user_profile"]``) for the caller to persist."""
        if state.user_id and worth_remembering(state.message):
            self.deps.memory_store.add(state.user_id, state.conversation_id, state.message)
        updates = profile_updates(state.message)
        return {"metadata": {"user_profile": {**state.user_profile, **updates}}} if updates else {}
