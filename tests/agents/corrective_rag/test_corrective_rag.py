"""The corrective-RAG agent (medical): grading, rewrite-and-retry, the confidence formula,
the insufficient-information reply, and the same loop with a scripted model."""

from __future__ import annotations

from statistics import fmean

import pytest

from ragchat.agents.config import AgentConfig, AppConfig
from ragchat.agents.corrective_rag.nodes import confidence
from ragchat.agents.corrective_rag.state import CorrectiveTrace, Decision, Grades
from ragchat.agents.engine import ChatEngine
from ragchat.llm.fake import ScriptedChatModel

from ..helpers import Chat, EngineFactory, gate_of, run, texts

IBUPROFEN = "What are the side effects of ibuprofen?"


def test_confidence_formula() -> None:
    assert confidence([]) == 0.0
    assert confidence([0.9, 0.8]) == pytest.approx(0.7 * 0.85 + 0.3 * 2 / 3, abs=1e-4)
    assert confidence([0.7, 0.7, 0.7, 0.7]) == pytest.approx(0.79)


def test_grades_and_answers_with_citations_and_disclaimer(engine: ChatEngine) -> None:
    result = run(Chat(engine).say(IBUPROFEN))
    md = result.metadata.traced(CorrectiveTrace)
    assert result.agent == "medical" and not result.no_answer
    assert md.retrieval_attempts == 1 and md.rewritten_queries is None
    assert "rewritten_queries" not in result.metadata.to_json()
    assert md.grades is not None
    assert tuple(g.chunk_id for g in md.grades) == gate_of(result).chunk_ids
    kept = [g.score for g in md.grades if g.kept]
    assert all(g.score >= 0.5 for g in md.grades if g.kept)
    assert md.confidence is not None
    assert fmean(kept) >= 0.6 and md.confidence == confidence(kept) >= 0.6
    assert result.reply.endswith(engine.agents["medical"].disclaimer)
    assert result.citations and {c.chunk_id for c in result.citations} <= set(
        gate_of(result).chunk_ids
    )
    assert result.citations[0].title == "Ibuprofen" and "stomach" in texts(result)


def test_follow_up_is_resolved_against_the_history(engine: ChatEngine) -> None:
    chat = Chat(engine)
    run(chat.say("What is ibuprofen used for?"))
    result = run(chat.say("what are its side effects?"))
    assert result.agent == "medical"
    assert "ibuprofen" in (result.metadata.search_query or "").lower()
    assert any(c.location == "Ibuprofen > Side effects" for c in result.citations)


def test_a_follow_up_after_an_interaction_question_keeps_the_topic(engine: ChatEngine) -> None:
    """After "Can I take it with warfarin?", "How much should an adult take?" is still about
    ibuprofen, and the turn's metadata shows the query that was searched."""
    chat = Chat(engine)
    run(chat.say("Tell me about ibuprofen"))
    second = run(chat.say("Can I take it with warfarin?"))
    assert second.metadata.search_query == "Can I take ibuprofen with warfarin?"
    result = run(chat.say("How much should an adult take?"))
    query = result.metadata.to_json()["search_query"]
    assert query == "How much ibuprofen should an adult take?"
    assert result.citations and result.citations[0].title == "Ibuprofen"


def test_small_talk_is_answered_without_retrieval(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("Hello there!", agent="medical"))
    trace = result.metadata.traced(CorrectiveTrace)
    assert trace.decision.action == "respond"
    assert trace.retrieval_attempts == 0 and "medical.retrieve" not in result.metadata.timings
    assert trace.grades is None and result.metadata.gate is None
    assert result.citations == [] and not result.no_answer and "medicines" in result.reply


def test_retries_once_then_declines_and_suggests_a_professional(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("Who won the 2014 football World Cup?", agent="medical"))
    md = result.metadata.traced(CorrectiveTrace)
    assert result.no_answer and result.citations == []
    assert md.retrieval_attempts == 2 and len(md.rewritten_queries or ()) == 1
    assert md.confidence is not None and md.confidence < 0.6
    assert md.grades is not None and not any(g.kept for g in md.grades)
    assert "doctor or pharmacist" in result.reply
    timings = result.metadata.timings
    assert timings["medical.retrieve"] > 0 and "medical.rewrite" in timings


@pytest.mark.xfail(
    strict=True,
    reason="known miss of the trained reader: 'the best things to see in Lisbon in three days' "
    "over the medical sample is answered from 'an attack lasts … up to about three days' "
    "(docs/benchmarks.md, issue 34)",
)
def test_a_rewrite_that_drifts_to_the_documents_does_not_get_an_answer(
    engine: ChatEngine,
) -> None:
    """The offline rewrite borrows words from the passages it failed on ("aura", "migraine");
    its second search finds them, but they are graded against the question, so the out-of-scope
    question is still declined (it was answered with migraine facts when graded against the
    rewrite)."""
    for question in (
        "What are the best things to see in Lisbon in three days?",
        "Who holds the world record for the men's 100 metres?",
    ):
        result = run(Chat(engine).say(question, agent="medical"))
        md = result.metadata.traced(CorrectiveTrace)
        assert md.retrieval_attempts == 2, question  # the rewrite did run
        assert result.no_answer and result.citations == [], question


def test_scripted_model_grades_rewrites_and_answers(make_engine: EngineFactory) -> None:
    engine = make_engine(chat_model=ScriptedChatModel())
    model = engine.chat_model
    assert isinstance(model, ScriptedChatModel)
    retriever = engine.wiring.knowledge.retriever(engine.agents["medical"])
    first = len(retriever.retrieve("ibuprofen problems").hits)
    second = len(retriever.retrieve("ibuprofen side effects stomach").hits)
    model.enqueue(
        Decision(action="retrieve", query="ibuprofen problems", reasoning="a drug question"),
        Grades(scores=[0.2] * first),
        "ibuprofen side effects stomach",
        Grades(scores=[0.9, 0.8] + [0.1] * (second - 2)),
        "Ibuprofen can upset the stomach [1] and rarely cause bleeding [2].",
    )
    result = run(Chat(engine).say("Is ibuprofen bad for me?", agent="medical"))
    md = result.metadata.traced(CorrectiveTrace)
    assert result.metadata.to_json()["decision"] == {
        "action": "retrieve",
        "reasoning": "a drug question",
    }
    assert md.retrieval_attempts == 2
    assert md.rewritten_queries == ("ibuprofen side effects stomach",)
    assert md.confidence == pytest.approx(0.7 * 0.85 + 0.3 * 2 / 3, abs=1e-4)
    assert md.grades is not None
    kept = [g.chunk_id for g in md.grades if g.kept]
    assert [c.chunk_id for c in result.citations] == kept[:2]
    assert result.reply.startswith("Ibuprofen can upset the stomach [1]")
    assert model.remaining == 0


def test_malformed_model_grades_fall_back_to_offline_grading(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(
        [
            '{"action": "retrieve", "query": "ibuprofen side effects"}',
            '{"scores": [1.0]}',  # one grade for five passages: rejected
            "Stomach upset is common [1].",
        ]
    )
    result = run(Chat(make_engine(chat_model=model)).say(IBUPROFEN, agent="medical"))
    md = result.metadata.traced(CorrectiveTrace)
    assert md.grades is not None and len(md.grades) == len(gate_of(result).chunk_ids) > 1
    assert md.retrieval_attempts == 1 and result.citations
    assert result.reply.startswith("Stomach upset is common [1].")


def test_transcript_citations_carry_time_ranges_and_speakers(
    make_engine: EngineFactory, app_config: AppConfig
) -> None:
    agent = AgentConfig(
        kind="corrective_rag", description="toddler sleep", knowledge_base="parenting"
    )
    config = app_config.model_copy(update={"agents": {"sleep": agent}})
    config.agents["sleep"].name = "sleep"
    result = run(Chat(make_engine(config)).say("When do toddlers go from two naps to one?"))
    spoken = [c for c in result.citations if c.start_ts]
    assert spoken, result.citations
    for c in spoken:
        assert c.location.startswith(f"{c.start_ts}–{c.end_ts}")
        assert "Dr. Samuel Okafor" in c.location and "Dr. Samuel Okafor" in c.speakers
