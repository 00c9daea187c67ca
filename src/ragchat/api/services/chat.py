"""A chat turn against the store: load the conversation, store the user message with an empty
"streaming" reply (one commit, before any model call), run or stream the engine, store the
reply and what the turn decided about the conversation (one commit: the sticky agent, the
profile, the crisis flag).

Streaming stores the reply when the ``final`` event arrives; if the client goes away first,
the engine stream is closed (cancelling the model request) and the partial text is stored
with status ``interrupted``; a failure stores status ``failed`` and yields an ``error``. A
process killed mid-turn leaves the reply "streaming", which the next start marks
"interrupted"; the ``crashpoint`` calls are where the crash tests kill it."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio

from ragchat.agents.events import CitationsEvent, FinalEvent, MetadataEvent, TokenEvent
from ragchat.agents.request import TurnRequest
from ragchat.agents.types import (
    ConversationState,
    InvalidMessage,
    TurnResult,
    UnknownAgent,
    UserProfile,
)
from ragchat.api import context
from ragchat.api.errors import ApiError, as_api_error
from ragchat.crashpoints import crashpoint
from ragchat.settings import Settings
from ragchat.store.base import Store
from ragchat.store.rows import ConversationChanges, ConversationRow, MessageRow
from ragchat.types import Citation

from ._sync import run_sync
from .agent_names import AgentNames
from .engine_loop import Engine
from .knowledge_bases import NOT_VISIBLE, KnowledgeBaseCatalogue, KnowledgeBaseView
from .sessions import open_session

log = logging.getLogger(__name__)

StreamEvent = tuple[str, dict[str, Any]]  # (SSE event name, JSON data)


def public_citation(citation: Citation) -> dict[str, Any]:
    """A citation as clients see it: the file name, not the server's path to it."""
    data = citation.to_dict()
    if data.get("source"):
        data["source"] = Path(str(data["source"])).name
    return data


@dataclass
class PreparedTurn:
    request: TurnRequest  # validated, with the conversation loaded: what the engine runs
    conversation: ConversationRow
    user_message: MessageRow
    reply_message: MessageRow  # "streaming" until the turn settles
    first_exchange: bool
    session_id: str  # what the client named it: the conversation's id, or a session's id

    @property
    def user_id(self) -> str:
        """Who the turn runs as (a session's owner, who may not be the caller)."""
        return self.request.user_id

    @property
    def message(self) -> str:
        return self.request.message


@dataclass
class TurnOutcome:
    result: TurnResult
    message: MessageRow
    citations: list[dict[str, Any]]


class ChatService:
    def __init__(
        self,
        settings: Settings,
        store: Store,
        engine: Engine,
        kbs: KnowledgeBaseCatalogue | None = None,
    ) -> None:
        """``kbs``: the knowledge bases a conversation may be bound to (without it, none)."""
        self.settings = settings
        self.store = store
        self.engine = engine
        self.kbs = kbs
        self.names = AgentNames.of(settings.compat, engine.agents)
        # Replies this process is answering: their leases are renewed (``leases.py``) so that
        # other servers on the database know a "streaming" row here is alive.
        self._in_flight: set[str] = set()
        self._in_flight_lock = threading.Lock()

    def in_flight(self) -> list[str]:
        with self._in_flight_lock:
            return list(self._in_flight)

    def _settled(self, turn: PreparedTurn) -> None:
        with self._in_flight_lock:
            self._in_flight.discard(turn.reply_message.id)

    # -- preparing a turn ----------------------------------------------------------------------
    def validate(self, request: TurnRequest) -> TurnRequest:
        """The engine's validation of the message and the agent (the clients' name for it, or
        none: the default agent or the supervisor's routing), before anything is stored; its
        errors in the words the API has always used (the clients' agent names)."""
        given = request.options.agent
        forced = self.names.resolve(given)
        try:
            return self.engine.validate(
                replace(request, options=replace(request.options, agent=forced))
            )
        except InvalidMessage:
            raise ApiError(400, "invalid_message", "The message is empty.") from None
        except UnknownAgent:
            known = ", ".join(sorted(self.names.public(a) for a in self.engine.agents))
            raise ApiError(
                400, "unknown_agent", f"Unknown agent {given!r}; configured: {known}."
            ) from None

    def bound(self, user_id: str, names: list[str] | None) -> list[KnowledgeBaseView] | None:
        """The knowledge bases ``names`` (``kb`` of a request) as the caller may see them, in
        order; 404 ``knowledge_base_not_visible`` for any other. None: not given."""
        if names is None:
            return None
        if names and self.kbs is None:
            raise ApiError(400, "invalid_input", "This server binds no knowledge bases.")
        return self.kbs.resolve_all(user_id, names) if self.kbs is not None else []

    def _binding(
        self, user_id: str, conv: ConversationRow, given: list[KnowledgeBaseView] | None
    ) -> tuple[ConversationRow, list[KnowledgeBaseView]]:
        """What this turn searches: ``given`` (stored on the conversation when it changed),
        else what the conversation was bound to, as far as the caller may still see it."""
        if given is not None:
            storages = [v.storage for v in given]
            if storages != conv.knowledge_bases:
                conv = self.store.set_knowledge_bases(user_id, conv.id, storages)
            return conv, given
        if not conv.knowledge_bases or self.kbs is None:
            return conv, []
        views = [self.kbs.find(user_id, s) for s in conv.knowledge_bases]
        kept = [v for v in views if v is not None]
        if not kept:
            raise ApiError(
                404,
                NOT_VISIBLE,
                "The knowledge base this conversation was bound to is gone or no longer "
                "visible to you; send kb to bind it to another.",
            )
        return conv, kept

    def _prepare(
        self,
        request: TurnRequest,
        by_session_id: bool,
        anonymous: bool,
        kb: list[str] | None = None,
    ) -> PreparedTurn:
        request = self.validate(request)  # before anything is read or stored
        user_id, text = request.user_id, request.message
        conversation_id = request.conversation.conversation_id or None
        given = self.bound(user_id, kb)  # before anything is stored
        history = []
        session_id: str | None = None
        if conversation_id is None:  # one commit; a new conversation has no history to read
            conv, user_message, reply_message = self.store.start_conversation(user_id, text)
            conv, views = self._binding(user_id, conv, given)
        else:
            if by_session_id:  # the turn runs as the session's owner, in its conversation
                ref = open_session(self.store, user_id, conversation_id, anonymous=anonymous)
                user_id, session_id, conversation_id = (
                    ref.owner,
                    conversation_id,
                    ref.conversation_id,
                )
            conv = self.store.get_conversation(user_id, conversation_id)
            conv, views = self._binding(user_id, conv, given)  # may refuse: nothing stored yet
            history = self.store.recent_history(conv.id, self.settings.history_turns)
            user_message, reply_message = self.store.begin_turn(conv.id, text)
        with self._in_flight_lock:
            self._in_flight.add(reply_message.id)
        crashpoint("chat.user_message_stored")
        state = ConversationState(
            conversation_id=conv.id,
            assigned_agent=conv.assigned_agent,
            history=history,
            user_profile=UserProfile.of(conv.user_profile),
            crisis=conv.crisis,
        )
        options = replace(
            request.options,
            kbs=tuple(v.storage for v in views),
            kb_agent=next((v.default_agent for v in views if v.default_agent), None),
        )
        return PreparedTurn(
            request=replace(request, user_id=user_id, conversation=state, options=options),
            conversation=conv,
            user_message=user_message,
            reply_message=reply_message,
            first_exchange=not history and conv.title is None,
            session_id=session_id or conv.id,
        )

    async def prepare(
        self,
        request: TurnRequest,
        *,
        by_session_id: bool = False,
        anonymous: bool = False,
        kb: list[str] | None = None,
    ) -> PreparedTurn:
        """``request``: the turn as the client asked it (the conversation by id only, an empty
        id to start one; the clients' agent name). ``by_session_id``: the rules of
        ``sessions.open_session`` (an unknown id starts that conversation, ``anonymous`` for a
        caller without identity; an anonymous session opens by its id); otherwise the caller's
        own conversation or 404. ``kb``: bind the conversation to these knowledge bases (None
        keeps its binding)."""
        return await run_sync(self._prepare, request, by_session_id, anonymous, kb)

    # -- finishing a turn ----------------------------------------------------------------------
    def _store_reply(
        self, turn: PreparedTurn, result: TurnResult, timings: Mapping[str, Any] | None = None
    ) -> TurnOutcome:
        """Stores the reply with what the turn changed on the conversation (its agent, the user
        profile, the crisis flag) in one commit. ``timings`` replaces the engine's (streaming
        adds the server's)."""
        citations = [public_citation(c) for c in result.citations]
        metadata = result.metadata.to_json()
        if timings is not None:
            metadata["timings"] = dict(timings)
        metadata.update(no_answer=result.no_answer, bubbles=result.bubbles)
        conversation = turn.conversation
        profile = result.metadata.user_profile
        changes = ConversationChanges(
            assigned_agent=result.metadata.assigned_agent,
            user_profile=(
                profile.to_json()
                if profile is not None and profile.to_json() != conversation.user_profile
                else None
            ),
            crisis=result.metadata.conversation_crisis and not conversation.crisis,
        )
        crashpoint("chat.before_reply_stored")
        try:
            row = self.store.finish_assistant_message(
                turn.reply_message.id,
                result.reply,
                citations,
                metadata,
                agent=result.agent,
                changes=changes,
            )
        finally:
            self._settled(turn)
        crashpoint("chat.reply_stored")
        return TurnOutcome(result, row, citations)

    def _store_failure(self, turn: PreparedTurn, error: str) -> None:
        try:
            self.store.finish_assistant_message(
                turn.reply_message.id, "", metadata={"error": error}, status="failed"
            )
        except Exception:
            log.exception("could not record the failed turn")
        finally:
            self._settled(turn)

    def _store_interrupted(self, turn: PreparedTurn, text: str, agent: str | None) -> None:
        try:
            self.store.mark_interrupted(turn.reply_message.id, text, agent)
        except Exception:
            log.exception("could not record the interrupted turn")
        finally:
            self._settled(turn)

    # -- running -------------------------------------------------------------------------------
    async def run(self, turn: PreparedTurn) -> TurnOutcome:
        try:
            result = await self.engine.run_turn(turn.request)
        except Exception as exc:
            await run_sync(self._store_failure, turn, as_api_error(exc).type)
            raise
        context.note(agent=result.agent)
        return await run_sync(self._store_reply, turn, result)

    async def stream(self, turn: PreparedTurn) -> AsyncGenerator[StreamEvent, None]:
        """SSE events: metadata → token… → citations → final (or error)."""
        start = time.perf_counter()
        parts: list[str] = []
        agent: str | None = None
        ttft: float | None = None
        settled = False
        events = self.engine.stream_turn(turn.request)
        try:
            async for event in events:
                if isinstance(event, MetadataEvent):
                    context.note(agent=event.agent)
                    agent = event.agent
                    yield (
                        "metadata",
                        {
                            "agent": self.names.public(event.agent),
                            "routing": event.routing.to_json(),
                            "session_id": turn.session_id,
                            "user_message_id": turn.user_message.id,
                        },
                    )
                    crashpoint("chat.acknowledged")  # the client has the metadata event
                elif isinstance(event, TokenEvent):
                    if ttft is None:
                        ttft = _first_token(start)
                    parts.append(event.text)
                    yield "token", {"text": event.text}
                    crashpoint("chat.token")
                elif isinstance(event, CitationsEvent):
                    cites = [public_citation(c) for c in event.citations]
                    yield "citations", {"citations": cites}
                elif isinstance(event, FinalEvent):
                    result = event.result
                    timings = {
                        **result.metadata.timings,
                        "ttft_ms": ttft,
                        "server_total_ms": round((time.perf_counter() - start) * 1e3, 1),
                    }
                    outcome = await run_sync(self._store_reply, turn, result, timings)
                    settled = True
                    log.info("turn streamed", extra={"agent": result.agent, **timings})
                    yield "final", final_payload(turn, outcome, timings, self.names)
        except Exception as exc:
            err = as_api_error(exc)
            if err.type == "internal_error":
                log.exception("streamed turn failed")
            else:
                log.warning("streamed turn failed: %s: %s", err.type, exc)
            await run_sync(self._store_failure, turn, err.type)
            settled = True
            yield "error", {"type": err.type, "message": err.message}
        finally:
            # Shielded: on a disconnect this runs inside a cancelled scope.
            with anyio.CancelScope(shield=True):
                await events.aclose()  # cancels the graph and any model request in flight
                if not settled:  # the client went away: keep what was said so far
                    await run_sync(self._store_interrupted, turn, "".join(parts), agent)
                    log.info("client disconnected mid-stream; stored the partial reply")

    # -- titles --------------------------------------------------------------------------------
    async def auto_title(self, turn: PreparedTurn, reply: str) -> None:
        """After the first exchange (BackgroundTasks): a title unless the user set one."""
        if not turn.first_exchange:
            return
        try:
            title = await self.engine.title(turn.message, reply)
            crashpoint("chat.title")
            conv = await run_sync(self.store.get_conversation, turn.user_id, turn.conversation.id)
            if conv.title is None and title:
                await run_sync(self.store.rename, turn.user_id, conv.id, title)
        except Exception:
            log.warning("auto-title failed", exc_info=True)

    async def regenerate_title(self, user_id: str, conversation_id: str) -> ConversationRow:
        messages = await run_sync(self.store.list_messages, user_id, conversation_id, 1000)
        first_user = next((m.content for m in messages if m.role == "user" and m.content), None)
        if first_user is None:
            raise ApiError(409, "conflict", "The conversation has no messages to title yet.")
        first_reply = next((m.content for m in messages if m.role == "assistant" and m.content), "")
        title = await self.engine.title(first_user, first_reply)
        return await run_sync(self.store.rename, user_id, conversation_id, title)


def final_payload(
    turn: PreparedTurn,
    outcome: TurnOutcome,
    timings: Mapping[str, Any] | None = None,
    names: AgentNames | None = None,
) -> dict[str, Any]:
    result = outcome.result
    return {
        "session_id": turn.session_id,
        "message_id": outcome.message.id,
        "agent": names.public(result.agent) if names else result.agent,
        "reply": result.reply,
        "citations": outcome.citations,
        "no_answer": result.no_answer,
        "bubbles": result.bubbles,
        "metadata": outcome.message.metadata,
        "timings": dict(timings or result.metadata.timings),
    }


def _first_token(start: float) -> float:
    ttft = round((time.perf_counter() - start) * 1000.0, 1)
    ctx = context.current()
    if ctx is not None:
        ctx.ttft_ms = ttft
    log.info("first token", extra={"ttft_ms": ttft})
    return ttft
