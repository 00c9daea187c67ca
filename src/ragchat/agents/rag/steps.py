"""The rag agent's model step: the model chooses the search queries through the
``search_knowledge_base`` tool. Its heuristic counterpart chooses none, and the agent searches
the message's standalone form, as it also does when the model answers without the tool."""

from __future__ import annotations

from dataclasses import dataclass

from ragchat.agents.config import AgentConfig
from ragchat.agents.rag import prompts
from ragchat.agents.shared.prompting import history_messages, prompt
from ragchat.agents.shared.steps import Step, choose
from ragchat.agents.wiring import AgentWiring
from ragchat.llm.base import ChatModel, Message
from ragchat.types import HistoryMessage


@dataclass(frozen=True)
class PlanRequest:
    message: str
    history: tuple[HistoryMessage, ...] = ()


SearchPlanner = Step[PlanRequest, tuple[str, ...]]


class ToolSearchPlanner:
    def __init__(self, model: ChatModel, agent: AgentConfig, wiring: AgentWiring) -> None:
        self.model = model
        self.system = prompt(agent, "TOOLS", prompts.TOOLS, description=agent.description)
        self.options = wiring.options("router")
        self.history = wiring.tuning.model_history_messages
        self.max_queries = wiring.tuning.rag.max_tool_queries

    async def run(self, request: PlanRequest) -> tuple[str, ...]:
        messages = [
            Message("system", self.system),
            *history_messages(request.history, self.history),
            Message("user", request.message),
        ]
        result = await self.model.generate(
            messages, options=self.options, tools=[prompts.SEARCH_TOOL]
        )
        calls = [c for c in result.tool_calls if c.name == prompts.SEARCH_TOOL.name]
        queries = [str(c.arguments.get("query") or "").strip() for c in calls]
        return tuple(q for q in queries if q)[: self.max_queries]


class NoToolSearch:
    async def run(self, request: PlanRequest) -> tuple[str, ...]:
        return ()


def search_planner(wiring: AgentWiring, agent: AgentConfig) -> SearchPlanner:
    return choose(
        wiring.label(agent, "search tool call"),
        wiring.chat_model,
        lambda model: ToolSearchPlanner(model, agent, wiring),
        NoToolSearch(),
    )
