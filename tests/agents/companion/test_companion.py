"""The companion agent (Robin): persona, self facts from its own knowledge base, long-term
memory across conversations, profile facts, and the scripted tool-calling loop."""

from __future__ import annotations

import json

from ragchat.agents.companion.nodes import MAX_ROUNDS, split_bubbles, worth_remembering
from ragchat.agents.types import ConversationState
from ragchat.index.base import Embedder
from ragchat.llm.base import ChatResult, ToolCall
from ragchat.llm.fake import ScriptedChatModel
from ragchat.store.memory import InMemoryMemoryStore

from ..helpers import Chat, EngineFactory, run


def test_offline_reply_uses_self_facts_and_comes_in_bubbles(make_engine: EngineFactory) -> None:
    result = run(Chat(make_engine()).say("Do you have any pets?"))
    assert result.agent == "companion" and result.citations == []
    assert result.bubbles and result.reply == "\n\n".join(result.bubbles)
    assert result.metadata["persona"] == "Robin"
    assert any("Biscuit" in fact for fact in result.metadata["self_facts"])
    assert "biscuit" in result.reply.lower()
    # a greeting with the persona's name does not hide the question from the self search
    greeted = run(Chat(make_engine()).say("Hi Robin! Do you have any pets?", agent="companion"))
    assert greeted.metadata["self_facts"] == result.metadata["self_facts"]


def test_remembers_across_conversations(make_engine: EngineFactory, embedder: Embedder) -> None:
    memory = InMemoryMemoryStore(embedder)
    engine = make_engine(memory=memory)
    first = Chat(engine, user_id="ann")
    result = run(first.say("Hi Robin! My name is Ann and I love hiking in the mountains."))
    assert result.agent == "companion"
    assert result.metadata["user_profile"] == {"name": "Ann"}
    later = Chat(engine, ConversationState("c2", assigned_agent="companion"), user_id="ann")
    result = run(later.say("I went for a long hike in the hills today"))
    assert any("hiking" in m for m in result.metadata["memories"])
    stranger = Chat(engine, ConversationState("c3", assigned_agent="companion"), user_id="bob")
    assert run(stranger.say("I went for a long hike in the hills today")).metadata["memories"] == []


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
    chat.conversation.user_profile = {"name": "Ann"}
    result = run(chat.say("Hey Robin, how's your cat?", agent="companion"))
    assert result.bubbles == ["Biscuit says hi, Ann!", "How is the marathon training going?"]
    assert result.reply == "Biscuit says hi, Ann!\n\nHow is the marathon training going?"
    assert [t["tool"] for t in result.metadata["tool_calls"]] == [
        "get_user_persona",
        "get_self_info",
        "get_long_term_memory",
    ]
    assert result.metadata["memories"] == ["I'm training for a half marathon in May"]
    assert any("Biscuit" in f for f in result.metadata["self_facts"])
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
    call = ChatResult(content="", tool_calls=[ToolCall("c", "get_self_info", {"query": "x"})])
    model = ScriptedChatModel([call] * MAX_ROUNDS + ["Oh nice!\n\nTell me more?"])
    result = run(Chat(make_engine(chat_model=model)).say("guess what", agent="companion"))
    assert result.bubbles == ["Oh nice!", "Tell me more?"]
    assert len(model.requests) == MAX_ROUNDS + 1 and model.requests[-1][2] == []


def test_split_bubbles() -> None:
    assert split_bubbles('["a", "b"]') == ["a", "b"]
    assert split_bubbles("one\n\n two \n\n\nthree") == ["one", "two", "three"]


def test_only_statements_become_memories() -> None:
    assert worth_remembering("I started a pottery class this week")
    assert not worth_remembering("hello there")
    assert not worth_remembering("How was your weekend, Robin?")
