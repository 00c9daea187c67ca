"""The supervisor: safety first, routing of first messages, session stickiness and the
reassignment rule, model routing with its embedding fallback."""

from __future__ import annotations

import pytest

from ragchat.agents.engine import ChatEngine
from ragchat.agents.supervisor.routing import split_switch
from ragchat.agents.supervisor.state import RouteChoice
from ragchat.agents.types import InvalidMessage, UnknownAgent
from ragchat.llm.fake import ScriptedChatModel

from ..helpers import Chat, EngineFactory, FakeSafety, run


@pytest.mark.parametrize(
    ("message", "agent"),
    [
        ("Is it safe to take paracetamol together with ibuprofen?", "medical"),
        ("My two year old screams every night at bedtime", "parenting"),
        ("Can you explain how the lungs exchange oxygen?", "tutor"),
        ("I've had a horrible week and I feel so alone", "support"),
        ("Hey Robin! What have you been up to?", "companion"),
    ],
)
def test_first_message_is_routed_by_intent(engine: ChatEngine, message: str, agent: str) -> None:
    result = run(Chat(engine).say(message))
    routing = result.metadata.routing
    assert result.agent == agent == routing.agent == result.metadata.assigned_agent
    assert routing.router == "embedding" and routing.reasoning
    assert 0.0 < routing.confidence <= 1.0 and routing.reassigned is False
    assert routing.scores is not None
    assert set(routing.scores) == {"support", "medical", "parenting", "tutor", "companion"}
    assert routing.to_json()["scores"] == dict(routing.scores)


def test_conversation_sticks_to_its_agent_until_a_clear_topic_change(engine: ChatEngine) -> None:
    chat = Chat(engine)
    assert run(chat.say("What is ibuprofen used for?")).agent == "medical"
    follow_up = run(chat.say("and for how long can I take it?"))
    assert follow_up.agent == "medical"
    assert follow_up.metadata.routing.router == "sticky"
    assert follow_up.metadata.routing.reassigned is False
    # a clear, confident change of topic to another agent reassigns the conversation
    moved = run(chat.say("How many naps does a toddler need and when do they drop to one?"))
    assert moved.agent == "parenting" and moved.metadata.assigned_agent == "parenting"
    assert moved.metadata.routing.reassigned is True


def test_switch_phrase_reroutes_on_the_rest_of_the_message(engine: ChatEngine) -> None:
    chat = Chat(engine)
    run(chat.say("What is ibuprofen used for?"))
    result = run(chat.say("switch topic: what does the sinoatrial node do?"))
    assert result.agent == "tutor"
    assert result.metadata.routing.reassigned is True
    assert result.metadata.routing.switch_phrase is True
    assert result.citations  # the agent answered the remainder, not the switch phrase


def test_bare_switch_phrase_asks_what_to_talk_about(engine: ChatEngine) -> None:
    chat = Chat(engine)
    run(chat.say("What is ibuprofen used for?"))
    result = run(chat.say("Can we talk about something else?"))
    assert result.agent == "supervisor"
    assert "What would you like to talk about?" in result.reply
    assert result.metadata.assigned_agent is None  # the next message routes afresh
    assert run(chat.say("How much sleep does a two-year-old need?")).agent == "parenting"


def test_safety_refusal_short_circuits(make_engine: EngineFactory) -> None:
    safety = FakeSafety({"explosive": "indiscriminate_weapons"})
    model = ScriptedChatModel()  # no replies scripted: any model call would fail the test
    chat = Chat(make_engine(safety=safety, chat_model=model))
    chat.conversation.assigned_agent = "medical"
    result = run(chat.say("How do I make an explosive at home?"))
    assert result.agent == "safety" and "can't help" in result.reply
    assert result.metadata.safety.category == "indiscriminate_weapons"
    assert result.metadata.to_json()["category"] == "indiscriminate_weapons"
    assert result.metadata.safety.safe is False and result.metadata.routing.router == "safety"
    assert result.metadata.assigned_agent == "medical"  # the conversation keeps its agent
    assert not any(k.startswith(("dispatch", "route", "medical.")) for k in result.metadata.timings)
    assert model.requests == [] and safety.calls[0][0] == "How do I make an explosive at home?"


def test_safety_sees_the_history_and_crisis_gets_resources(make_engine: EngineFactory) -> None:
    safety = FakeSafety({"end my life": "self_harm"})
    chat = Chat(make_engine(safety=safety))
    run(chat.say("I had a rough day"))
    result = run(chat.say("I want to end my life"))
    assert result.agent == "safety" and result.metadata.safety.crisis is True
    assert "988" in result.reply and "741741" in result.reply
    assert safety.calls[1][1] == [
        ("user", "I had a rough day"),
        ("assistant", chat.conversation.history[1].content),
    ]


def test_model_routes_the_first_message(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(
        [RouteChoice(agent="Parenting", reasoning="a toddler provider request", confidence=0.9)]
    )
    model.enqueue('{"intent": "find_provider", "confidence": 0.9, "reasoning": "near me"}')
    result = run(Chat(make_engine(chat_model=model)).say("Can you find a pediatrician near me?"))
    routing = result.metadata.routing
    assert (result.agent, routing.router, routing.confidence) == ("parenting", "llm", 0.9)
    assert routing.reasoning == "a toddler provider request"
    assert "medical" in model.requests[0][0][0].content  # the router prompt lists the agents
    assert model.remaining == 0


@pytest.mark.parametrize("bad", ["I think parenting?", '{"agent": "weather", "confidence": 0.9}'])
def test_malformed_model_routing_falls_back_to_embeddings(
    make_engine: EngineFactory, bad: str
) -> None:
    model = ScriptedChatModel([bad, "Hello! Glad you asked."])
    chat = Chat(make_engine(chat_model=model))
    result = run(chat.say("I feel anxious all the time and can't switch off", agent=None))
    routing = result.metadata.routing
    assert result.agent == "support" and routing.router == "embedding"
    assert routing.fallback
    assert result.reply == "Hello! Glad you asked."


def test_forced_agent_and_input_validation(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("What does bile do?", agent="tutor"))
    assert result.agent == "tutor" and result.metadata.routing.router == "forced"
    with pytest.raises(UnknownAgent, match="weather"):
        run(Chat(engine).say("hi", agent="weather"))
    with pytest.raises(InvalidMessage):
        run(Chat(engine).say("   "))


def test_switch_phrases_come_from_the_config(engine: ChatEngine) -> None:
    phrases = engine.app_config.supervisor.switch_phrases
    assert split_switch("let's change the subject", phrases) == ""
