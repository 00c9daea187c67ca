"""The conversational-RAG agent (parenting): reformulated follow-ups, intents (information,
clarification, template) and the scripted-model path."""

from __future__ import annotations

from ragchat.agents.conversational_rag.state import ConversationalTrace, IntentChoice
from ragchat.agents.engine import ChatEngine
from ragchat.llm.fake import ScriptedChatModel

from ..helpers import Chat, EngineFactory, gate_of, run, texts

PROVIDER = (
    "I can't search for providers, but your pediatrician's office, your health insurer's "
    "directory or a local parenting helpline can point you to someone nearby."
)


def test_answers_with_citations_and_reports_the_standalone_query(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("How much sleep does a two-year-old need?"))
    md = result.metadata.traced(ConversationalTrace)
    assert result.agent == "parenting" and not result.no_answer
    assert md.reformulated_query == "How much sleep does a two-year-old need?"
    assert result.metadata.search_query == md.reformulated_query
    assert md.intent is not None
    assert md.intent.intent == "information" and md.intent.classifier == "embedding"
    assert result.citations and {c.chunk_id for c in result.citations} <= set(
        gate_of(result).chunk_ids
    )
    assert "hours" in texts(result)


def test_follow_up_is_reformulated_before_retrieval(engine: ChatEngine) -> None:
    chat = Chat(engine)
    run(chat.say("What is the difference between nightmares and night terrors?"))
    result = run(chat.say("how common are they?"))
    assert result.agent == "parenting"
    query = result.metadata.traced(ConversationalTrace).reformulated_query
    assert query != "how common are they?" and "terror" in query.lower()


def test_template_intent_answers_from_the_template(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("Can you recommend a pediatrician near me?", agent="parenting"))
    assert result.reply == PROVIDER and result.citations == []
    md = result.metadata.traced(ConversationalTrace)
    assert md.intent is not None and md.intent.intent == "find_provider"
    assert md.template == "find_provider"
    assert "parenting.retrieve" not in result.metadata.timings


def test_scripted_model_reformulates_classifies_and_answers(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(
        [
            "When do toddlers drop from two naps to one?",
            IntentChoice(intent="information", confidence=0.8, reasoning="a sleep question"),
            "Most drop to one nap between 15 and 18 months [1].",
        ]
    )
    chat = Chat(make_engine(chat_model=model))
    chat.conversation.assigned_agent = "parenting"
    chat.conversation.history = [
        *chat.conversation.history,
        *Chat.pair("How many naps does a toddler take?", "Usually two."),
    ]
    result = run(chat.say("and when do they drop one?"))
    md = result.metadata.traced(ConversationalTrace)
    assert md.reformulated_query == "When do toddlers drop from two naps to one?"
    assert result.metadata.to_json()["intent"] == {
        "intent": "information",
        "confidence": 0.8,
        "reasoning": "a sleep question",
        "classifier": "llm",
    }
    assert result.reply == "Most drop to one nap between 15 and 18 months [1]."
    assert result.citations[0].chunk_id == gate_of(result).chunk_ids[0]
    assert "How many naps" in model.requests[0][0][-1].content  # the history was used


def test_scripted_reformulation_is_told_the_conversation_topic(make_engine: EngineFactory) -> None:
    """The model sees the topic the conversation kept (ibuprofen), not the last drug named, and
    is told how follow-ups resolve; its question is what is searched."""
    model = ScriptedChatModel(
        [
            "How much ibuprofen should a two-year-old take?",
            IntentChoice(intent="information", confidence=0.8, reasoning="a dosing question"),
            "Follow the dosing chart for the child's weight [1].",
        ]
    )
    chat = Chat(make_engine(chat_model=model))
    chat.conversation.assigned_agent = "parenting"
    chat.conversation.history = [
        *Chat.pair("Tell me about ibuprofen for toddlers", "It eases fever and pain [1]."),
        *Chat.pair("Can I give it with acetaminophen?", "Ask your pediatrician first [1]."),
    ]
    result = run(chat.say("How much should a two-year-old take?"))
    system, user = model.requests[0][0][0].content, model.requests[0][0][-1].content
    assert "Topic so far: ibuprofen" in user
    assert "not to the last thing named" in system
    md = result.metadata.traced(ConversationalTrace)
    assert md.reformulated_query == "How much ibuprofen should a two-year-old take?"
    assert result.metadata.search_query == md.reformulated_query


def test_scripted_clarification_and_unknown_intent_fallback(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(
        [
            IntentChoice(intent="clarification", confidence=0.7),
            "Do you mean naps or night-time sleep?",
            IntentChoice(intent="weather", confidence=0.9),  # not an intent: offline fallback
        ]
    )
    chat = Chat(make_engine(chat_model=model))
    result = run(chat.say("sleep?", agent="parenting"))
    assert result.reply == "Do you mean naps or night-time sleep?"
    assert result.metadata.traced(ConversationalTrace).clarifying_question is True
    assert result.citations == []
    chat2 = Chat(make_engine(chat_model=model))
    result = run(chat2.say("Find me a child sleep consultant in my area", agent="parenting"))
    intent = result.metadata.traced(ConversationalTrace).intent
    assert intent is not None and intent.classifier == "embedding"
    assert result.reply == PROVIDER


def test_the_turn_says_which_component_decided_to_answer(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("How much sleep does a two-year-old need?"))
    decision = result.metadata.answer_decision
    assert decision is not None and decision.answered and decision.by == "reader"
    assert decision.p_answerable is not None and decision.threshold is not None
    assert decision.p_answerable >= decision.threshold
    assert result.metadata.to_json()["answer_decision"]["by"] == "reader"


def test_a_refusal_names_the_component_that_refused(engine: ChatEngine) -> None:
    result = run(
        Chat(engine).say("What is the exchange rate for the yen today?", agent="parenting")
    )
    decision = result.metadata.answer_decision
    assert result.no_answer and decision is not None and not decision.answered
    assert decision.by == "gate", decision


def test_a_model_answer_is_decided_by_the_model_after_the_reader(
    make_engine: EngineFactory,
) -> None:
    model = ScriptedChatModel(
        [
            "How much sleep does a two-year-old need?",
            IntentChoice(intent="information", confidence=0.8, reasoning="a sleep question"),
            "About 11 to 14 hours a day, naps included [1].",
        ]
    )
    result = run(
        Chat(make_engine(chat_model=model)).say("How much sleep does a two-year-old need?")
    )
    decision = result.metadata.answer_decision
    assert decision is not None and decision.answered and decision.by == "model"
    assert decision.p_answerable is not None  # the reader decided the model was asked
