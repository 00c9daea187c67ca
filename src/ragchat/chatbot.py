"""``ragchat.Chatbot``: the conversational engine from plain Python (a script, a notebook),
no server. Each ``thread_id`` is one conversation whose history and assigned agent are kept
in this object, as the conversational childcare pipeline's ``ask(question, thread_id=…)`` did::

    from ragchat import Chatbot

    bot = Chatbot()
    first = bot.ask("What are the side effects of ibuprofen?", thread_id="demo")
    follow = bot.ask("and what is the maximum dose?", thread_id="demo")
    print(follow.reformulated_query, follow.answer, follow.sources[0].title)

The engine is ``agents.factory.build_engine`` exactly as the server and ``ragchat chat``
build it. It runs on its own event loop in a daemon thread, so ``ask`` also works where a loop
is already running (Jupyter); ``aask`` awaits it from async code."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.settings import Settings
from ragchat.types import Citation, HistoryMessage

if TYPE_CHECKING:  # LangGraph is imported when the engine is built, not on import
    from ragchat.agents.engine import ChatEngine
    from ragchat.llm.base import ChatModel

T = TypeVar("T")


@dataclass(frozen=True)
class Answer:
    """One reply: ``answer`` (the text), ``sources`` (numbered citations), the standalone
    ``reformulated_query`` the agent searched with (None when it did not search)."""

    answer: str
    sources: list[Citation]
    reformulated_query: str | None
    agent: str
    thread_id: str
    no_answer: bool = False
    bubbles: list[str] | None = None
    result: TurnResult | None = field(default=None, repr=False)  # everything the engine said


class Chatbot:
    """``Chatbot(kb="sample")``: the bundled agents over the sample knowledge bases (ingested
    into ``settings.data_dir`` on first use); ``kb`` may also be an agents config file, or an
    ingested knowledge base's name (answered by the configured knowledge-base agent, as the
    server answers a conversation bound to it). ``engine`` uses one that is already built."""

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        kb: str = "sample",
        engine: ChatEngine | None = None,
        chat_model: ChatModel | None = None,
        user_id: str = "python",
        agent: str | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.engine = engine or _build(self.settings, kb, chat_model)
        if agent is not None and agent not in self.engine.agents:
            known = ", ".join(sorted(self.engine.agents))
            raise ValueError(f"unknown agent {agent!r}; configured: {known}")
        self.user_id = user_id
        self.agent = agent
        self._threads: dict[str, ConversationState] = {}
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._runner = threading.Thread(
            target=self._loop.run_forever, name="ragchat-chatbot", daemon=True
        )
        self._runner.start()

    def ask(self, question: str, thread_id: str = "default", *, agent: str | None = None) -> Answer:
        """The reply to ``question`` in conversation ``thread_id`` (created on first use)."""
        return self._call(self.aask(question, thread_id, agent=agent))

    async def aask(
        self, question: str, thread_id: str = "default", *, agent: str | None = None
    ) -> Answer:
        with self._lock:
            state = self._threads.setdefault(thread_id, ConversationState(thread_id))
        turn = self.engine.run_turn(
            TurnRequest(
                question,
                user_id=self.user_id,
                conversation=state,
                options=TurnOptions(agent=agent or self.agent),
            )
        )
        result = await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(turn, self._loop))
        self._remember(state, question, result)
        return Answer(
            answer=result.reply,
            sources=list(result.citations),
            reformulated_query=result.metadata.search_query,
            agent=result.agent,
            thread_id=thread_id,
            no_answer=result.no_answer,
            bubbles=result.bubbles,
            result=result,
        )

    def history(self, thread_id: str = "default") -> list[HistoryMessage]:
        state = self._threads.get(thread_id)
        return list(state.history) if state else []

    def reset(self, thread_id: str = "default") -> None:
        """Forgets the conversation: the next ``ask`` on this id starts afresh."""
        with self._lock:
            self._threads.pop(thread_id, None)

    def close(self) -> None:
        """Closes the chat model's connections and stops the engine's loop."""
        if self._loop.is_closed():
            return
        asyncio.run_coroutine_threadsafe(self.engine.aclose(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._runner.join(timeout=5)
        self._loop.close()

    def __enter__(self) -> Chatbot:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        """Runs ``coro`` to completion from sync code, whether or not a loop is running here."""
        done: dict[str, Any] = {}

        def target() -> None:
            try:
                done["value"] = asyncio.run(coro)
            except BaseException as exc:  # handed to the caller below
                done["error"] = exc

        # Its own short-lived loop in a helper thread: the caller's thread may run one already.
        helper = threading.Thread(target=target, name="ragchat-chatbot-call")
        helper.start()
        helper.join()
        if "error" in done:
            raise done["error"]
        value: T = done["value"]
        return value

    def _remember(self, state: ConversationState, question: str, result: TurnResult) -> None:
        keep = 2 * self.settings.history_turns
        with self._lock:
            state.history.extend(
                [
                    HistoryMessage("user", question),
                    HistoryMessage("assistant", result.reply, agent=result.agent),
                ]
            )
            del state.history[: max(0, len(state.history) - keep)]
            state.assigned_agent = result.metadata.assigned_agent
            state.user_profile = result.metadata.user_profile or state.user_profile


def _build(settings: Settings, kb: str, chat_model: ChatModel | None) -> ChatEngine:
    from ragchat import resources
    from ragchat.agents.bootstrap import ensure_knowledge_bases, resolve_config
    from ragchat.agents.factory import build_engine
    from ragchat.llm.factory import build_chat_model
    from ragchat.runtime import prepare_runtime

    prepare_runtime(settings)
    app_config = resolve_config(kb, settings, must_exist=True)
    embedder = resources.embedder(settings)
    ensure_knowledge_bases(settings, app_config, resources.ingest_embedder(settings, embedder))
    model = chat_model if chat_model is not None else build_chat_model(settings)
    return build_engine(settings, app_config, chat_model=model, embedder=embedder)
