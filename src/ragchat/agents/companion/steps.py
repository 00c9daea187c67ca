"""The companion's steps. Gather: with a model, a tool-calling loop (at most
``max_tool_rounds``) over the three tools; the heuristic looks memories and self facts up
front. Reply: the model's JSON list of chat bubbles, or ``companion_reply``'s."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from ragchat.agents.companion import prompts
from ragchat.agents.companion.state import Gathered, ToolUse
from ragchat.agents.companion.tools import CompanionTools
from ragchat.agents.config import AgentConfig
from ragchat.agents.heuristics import companion_reply
from ragchat.agents.shared.prompting import history_messages, prompt
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.types import Turn
from ragchat.agents.wiring import AgentWiring
from ragchat.llm.base import ChatModel, Message
from ragchat.llm.parsing import parse_string_list


def split_bubbles(text: str) -> list[str]:
    """A JSON list of strings when the model wrote one, else its paragraphs."""
    parsed = parse_string_list(text)
    if parsed:
        return parsed
    return [p.strip() for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]


@dataclass(frozen=True)
class ReplyRequest:
    turn: Turn
    gathered: Gathered


Gatherer = Step[Turn, Gathered]
Replier = Step[ReplyRequest, list[str]]  # the bubbles; the node streams them


class _ModelStep:
    def __init__(self, model: ChatModel, tools: CompanionTools, wiring: AgentWiring) -> None:
        self.model = model
        self.tools = tools
        self.wiring = wiring

    def opening(self, turn: Turn) -> list[Message]:
        persona = self.tools.persona
        system = prompt(
            self.tools.agent, "SYSTEM", prompts.SYSTEM, name=persona.name, persona=persona.text
        )
        return [
            Message("system", system),
            *history_messages(turn.history, self.wiring.tuning.model_history_messages),
            Message("user", turn.message),
        ]


class ModelGatherer(_ModelStep):
    async def run(self, request: Turn) -> Gathered:
        transcript = self.opening(request)
        found: dict[str, list[str]] = {"get_long_term_memory": [], "get_self_info": []}
        tool_log: list[ToolUse] = []
        draft: str | None = None
        for _ in range(self.wiring.tuning.companion.max_tool_rounds):
            result = await self.model.generate(
                transcript, options=self.wiring.options("answer"), tools=prompts.TOOLS
            )
            if not result.tool_calls:
                draft = result.content
                break
            calls = tuple(result.tool_calls)
            transcript.append(Message("assistant", result.content, tool_calls=calls))
            for call in calls:
                output = await self.tools.run_tool(call, request)
                tool_log.append(ToolUse(call.name, call.arguments))
                if call.name in found and isinstance(output, list):
                    found[call.name].extend(output)
                content = json.dumps(output, ensure_ascii=False)
                transcript.append(Message("tool", content, tool_call_id=call.id, name=call.name))
        return Gathered(
            memories=tuple(found["get_long_term_memory"]),
            self_facts=tuple(found["get_self_info"]),
            transcript=tuple(transcript),
            tool_log=tuple(tool_log),
            draft=draft,
        )


class LookUpFirst:
    """The heuristic: the user's memories and the persona's facts, searched with the message."""

    def __init__(self, tools: CompanionTools) -> None:
        self.tools = tools

    async def run(self, request: Turn) -> Gathered:
        memories = await self.tools.look_up_memories(request.user_id, request.message)
        facts = await self.tools.look_up_self(request.message, request.user_id)
        return Gathered(memories=tuple(memories), self_facts=tuple(facts))


class ModelReplier(_ModelStep):
    async def run(self, request: ReplyRequest) -> list[str]:
        gathered = request.gathered
        draft = gathered.draft
        if draft is None:  # still calling tools when the rounds ran out: ask for the reply
            transcript = list(gathered.transcript) or self._looked_up(request)
            messages = [*transcript, Message("user", prompts.FINAL)]
            result = await self.model.generate(messages, options=self.wiring.options("answer"))
            draft = result.content
        return split_bubbles(draft)

    def _looked_up(self, request: ReplyRequest) -> list[Message]:
        """The conversation and what the heuristic looked up (the model's own look-up
        failed, so there is no tool transcript)."""
        g = request.gathered
        notes = [f"You remember the user said: {m}" for m in g.memories]
        notes += [f"About yourself: {f}" for f in g.self_facts]
        opening = self.opening(request.turn)
        return [*opening[:-1], *(Message("system", n) for n in notes), opening[-1]]


class HeuristicReplier:
    def __init__(self, tools: CompanionTools) -> None:
        self.tools = tools

    async def run(self, request: ReplyRequest) -> list[str]:
        persona = self.tools.persona
        return companion_reply(
            request.turn.message,
            persona_name=persona.name,
            persona_text=persona.text,
            memories=list(request.gathered.memories),
            self_facts=list(request.gathered.self_facts),
            history=request.turn.history,
        )


@dataclass(frozen=True)
class CompanionSteps:
    gather: Gatherer
    reply: Replier

    @classmethod
    def build(
        cls, wiring: AgentWiring, agent: AgentConfig, tools: CompanionTools
    ) -> CompanionSteps:
        model = wiring.chat_model
        return cls(
            gather=choose(
                wiring.label(agent, "gather"),
                model,
                lambda m: ModelGatherer(m, tools, wiring),
                LookUpFirst(tools),
            ),
            reply=choose(
                wiring.label(agent, "reply"),
                model,
                lambda m: ModelReplier(m, tools, wiring),
                HeuristicReplier(tools),
            ),
        )
