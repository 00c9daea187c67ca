"""The support agent: empathetic replies without retrieval; crisis language always gets
crisis resources, with or without a model."""

from __future__ import annotations

from ragchat.agents.engine import ChatEngine
from ragchat.llm.fake import ScriptedChatModel

from ..helpers import Chat, EngineFactory, run


def test_offline_support_reply_without_retrieval(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("I'm so stressed about work that I can't sleep"))
    assert result.agent == "support" and result.reply.strip()
    assert result.citations == [] and not result.no_answer
    assert result.metadata["crisis"] is False
    assert not any("retrieve" in step for step in result.metadata["timings"])


def test_crisis_language_gets_crisis_resources_even_without_safety(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("I don't want to live anymore", agent="support"))
    assert result.metadata["crisis"] is True
    assert "988" in result.reply and "Crisis Text Line" in result.reply


def test_scripted_model_reply_follows_the_support_rules(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(["That sounds exhausting. What has been hardest this week?"])
    chat = Chat(make_engine(chat_model=model))
    result = run(chat.say("Everything feels like too much lately", agent="support"))
    assert result.reply == "That sounds exhausting. What has been hardest this week?"
    system = model.requests[0][0][0]
    assert system.role == "system" and "never diagnose" in system.content
    crisis_model = ScriptedChatModel()  # crisis replies never depend on the model
    result = run(
        Chat(make_engine(chat_model=crisis_model)).say("I want to kill myself", agent="support")
    )
    assert "988" in result.reply and crisis_model.requests == []
