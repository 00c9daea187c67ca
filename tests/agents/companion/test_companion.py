"""The companion agent (Robin): persona, self facts from its own knowledge base, long-term
memory across conversations, profile facts, and the scripted tool-calling loop."""

from __future__ import annotations

import asyncio
import json
import threading

from ragchat.agents.companion.state import CompanionTrace
from ragchat.agents.companion.steps import split_bubbles
from ragchat.agents.companion.tools import worth_remembering
from ragchat.agents.types import ConversationState, TurnResult, UserProfile
from ragchat.embed.base import Embedder
from ragchat.llm.base import ChatResult, ToolCall
from ragchat.llm.fake import ScriptedChatModel
from ragchat.settings import CompanionTuning
from ragchat.store.memory import InMemoryMemoryStore
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from ..helpers import BlockingKB, Chat, EngineFactory, run


def test_offline_reply_uses_self_facts_and_comes_in_bubbles(make_engine: EngineFactory) -> None:
    result = run(Chat(make_engine()).say("Do you have any pets?"))
    assert result.agent == "companion" and result.citations == []
    assert result.bubbles and result.reply == "\n\n".join(result.bubbles)
    trace = result.metadata.traced(CompanionTrace)
    assert trace.persona == "Robin"
    assert any("Biscuit" in fact for fact in trace.self_facts)
    assert "biscuit" in result.reply.lower()
    # a greeting with the persona's name does not hide the question from the self search
    greeted = run(Chat(make_engine()).say("Hi Robin! Do you have any pets?", agent="companion"))
    assert greeted.metadata.traced(CompanionTrace).self_facts == trace.self_facts


def test_remembers_across_conversations(make_engine: EngineFactory, embedder: Embedder) -> None:
    memory = InMemoryMemoryStore(embedder)
    engine = make_engine(memory=memory)
    first = Chat(engine, user_id="ann")
    result = run(first.say("Hi Robin! My name is Ann and I love hiking in the mountains."))
    assert result.agent == "companion"
    assert result.metadata.user_profile == UserProfile(name="Ann")
    assert result.metadata.to_json()["user_profile"] == {"name": "Ann"}
    later = Chat(engine, ConversationState("c2", assigned_agent="companion"), user_id="ann")
    result = run(later.say("I went for a long hike in the hills today"))
    assert any("hiking" in m for m in result.metadata.traced(CompanionTrace).memories)
    stranger = Chat(engine, ConversationState("c3", assigned_agent="companion"), user_id="bob")
    strangers = run(stranger.say("I went for a long hike in the hills today"))
    assert strangers.metadata.traced(CompanionTrace).memories == ()


def test_scripted_tool_loop_then_json_bubbles(
    make_engine: EngineFactory, embedder: Embedder
) -> None:
    memory = InMemoryMemoryStore(embedder)
    memory.add("ann", "old", "I'm training for a half marathon in May")
    calls = [
        ToolCall("c1", "get_user_persona", {}),
        ToolCall("c2", "get_self_info", {"query": "pets cat"}),
    ]
    model = ScriptedChatModel(
        [
            ChatResult(content="", tool_calls=calls),
            ChatResult(
                content="",
                tool_calls=[ToolCall("c3", "get_long_term_memory", {"query": "running"})],
            ),
            '```json\n["Biscuit says hi, Ann!", "How is the marathon training going?"]\n```',
        ]
    )
    chat = Chat(make_engine(chat_model=model, memory=memory), user_id="ann")
    chat.conversation.user_profile = UserProfile(name="Ann")
    result = run(chat.say("Hey Robin, how's your cat?", agent="companion"))
    assert result.bubbles == ["Biscuit says hi, Ann!", "How is the marathon training going?"]
    assert result.reply == "Biscuit says hi, Ann!\n\nHow is the marathon training going?"
    trace = result.metadata.traced(CompanionTrace)
    assert [t.tool for t in trace.tool_calls] == [
        "get_user_persona",
        "get_self_info",
        "get_long_term_memory",
    ]
    assert trace.memories == ("I'm training for a half marathon in May",)
    assert any("Biscuit" in f for f in trace.self_facts)
    assert result.metadata.to_json()["tool_calls"][2] == {
        "tool": "get_long_term_memory",
        "arguments": {"query": "running"},
    }
    # the model saw the tool results, and the persona in the system prompt
    last_messages = model.requests[-1][0]
    assert "Robin" in last_messages[0].content and "Biscuit" in last_messages[0].content
    tool_messages = [m for m in last_messages if m.role == "tool"]
    assert json.loads(tool_messages[0].content) == {"name": "Ann"}
    assert [m.tool_call_id for m in tool_messages] == ["c1", "c2", "c3"]
    assert [t.name for t in model.requests[0][2]] == [
        "get_user_persona",
        "get_long_term_memory",
        "get_self_info",
    ]


def test_tool_rounds_are_capped_and_plain_text_is_split(make_engine: EngineFactory) -> None:
    rounds = CompanionTuning().max_tool_rounds
    call = ChatResult(content="", tool_calls=[ToolCall("c", "get_self_info", {"query": "x"})])
    model = ScriptedChatModel([call] * rounds + ["Oh nice!\n\nTell me more?"])
    result = run(Chat(make_engine(chat_model=model)).say("guess what", agent="companion"))
    assert result.bubbles == ["Oh nice!", "Tell me more?"]
    assert len(model.requests) == rounds + 1 and model.requests[-1][2] == []


def test_split_bubbles() -> None:
    assert split_bubbles('["a", "b"]') == ["a", "b"]
    assert split_bubbles("one\n\n two \n\n\nthree") == ["one", "two", "three"]


def test_only_statements_become_memories() -> None:
    words = CompanionTuning().min_memory_words
    assert worth_remembering("I started a pottery class this week", words)
    assert not worth_remembering("hello there", words)
    assert not worth_remembering("How was your weekend, Robin?", words)


class _BlockingMemory(InMemoryMemoryStore):
    """A memory store whose look-ups block their thread until ``release`` is set (or fail
    after a while, so a look-up that holds the event loop fails instead of hanging)."""

    def __init__(self, embedder: Embedder, release: threading.Event) -> None:
        super().__init__(embedder)
        self.release = release

    def search(self, user_id: str, query: str, k: int = 3) -> list[str]:
        if not self.release.wait(10):
            raise TimeoutError("the memory look-up blocked the loop that would release it")
        return super().search(user_id, query, k)


def test_look_ups_run_off_the_event_loop(
    make_engine: EngineFactory, embedder: Embedder, kbs: dict[str, KnowledgeBase]
) -> None:
    """The companion's memory and self-fact look-ups are blocking I/O and CPU work: another
    turn's work (here, the one that releases them) keeps running meanwhile."""
    release = threading.Event()
    memory = _BlockingMemory(embedder, release)
    engine = make_engine(memory=memory, kb_opener=lambda name: BlockingKB(kbs[name], release))

    async def other_work() -> None:
        await asyncio.sleep(0.2)  # runs only if the loop is free while the companion looks up
        release.set()

    async def both() -> TurnResult:
        turn = Chat(engine).say("Do you have any pets?", agent="companion")
        result, _ = await asyncio.gather(turn, other_work())
        return result

    result = run(both())
    assert any("Biscuit" in f for f in result.metadata.traced(CompanionTrace).self_facts)
