"""The rag agent (the textbook tutor): cited answers, the gate, textbook modes and the
search_knowledge_base tool with a scripted model."""

from __future__ import annotations

from ragchat.agents.engine import ChatEngine
from ragchat.llm.base import ChatResult, ToolCall
from ragchat.llm.fake import ScriptedChatModel
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from ..helpers import Chat, EngineFactory, gate_of, retrieval_of, run, texts

SA_NODE = "What does the sinoatrial node do?"


def _chapters(kb: KnowledgeBase, chunk_ids: list[str]) -> set[str]:
    return {str(c.metadata.get("chapter")) for c in kb.get_chunks(chunk_ids)}


def test_answers_book_wide_with_citations_of_retrieved_chunks(
    engine: ChatEngine, kbs: dict[str, KnowledgeBase]
) -> None:
    result = run(Chat(engine).say(SA_NODE))
    assert result.agent == "tutor" and not result.no_answer
    gate = gate_of(result)
    assert gate.no_answer is False and gate.threshold == 0.3 and gate.relevance >= 0.3
    assert retrieval_of(result).mode == "book"
    assert result.citations and "pacemaker" in texts(result)
    assert {c.chunk_id for c in result.citations} <= set(gate.chunk_ids)
    assert all(f"[{c.index}]" in result.reply for c in result.citations)
    assert "2" in _chapters(kbs["textbook"], [c.chunk_id for c in result.citations])
    assert {"tutor.retrieve", "tutor.answer", "route", "total"} <= set(result.metadata.timings)


def test_chapter_mode_searches_only_that_chapter(
    engine: ChatEngine, kbs: dict[str, KnowledgeBase]
) -> None:
    result = run(Chat(engine).say("How is oxygen exchanged?", agent="tutor", chapter="3"))
    assert retrieval_of(result).to_json() == {
        "mode": "chapter",
        "query": "How is oxygen exchanged?",
        "tool_queries": [],
        "chapter": "3",
    }
    assert retrieval_of(result).chapter == "3"
    assert _chapters(kbs["textbook"], list(gate_of(result).chunk_ids)) == {"3"}
    assert result.citations and all(c.chapter == "3" for c in result.citations)


def test_selected_text_is_the_only_context(engine: ChatEngine) -> None:
    passage = (
        "Bile is made by the liver and stored in the gallbladder. It contains no digestive "
        "enzymes; instead its salts emulsify fats into small droplets so lipase can work."
    )
    result = run(
        Chat(engine).say("What does bile do to fats?", agent="tutor", selected_text=passage)
    )
    assert retrieval_of(result).mode == "selected_text"
    assert gate_of(result).chunk_ids == ("selection",)
    assert [c.chunk_id for c in result.citations] == ["selection"]
    assert "emulsif" in result.reply.lower()


def test_gate_refuses_out_of_scope_questions(engine: ChatEngine) -> None:
    result = run(Chat(engine).say("Who won the 2014 football World Cup?", agent="tutor"))
    assert result.no_answer and result.citations == []
    assert result.reply == engine.agents["tutor"].no_answer_message
    assert gate_of(result).no_answer is True


def test_model_calls_the_search_tool(make_engine: EngineFactory) -> None:
    call = ToolCall("call_1", "search_knowledge_base", {"query": "sinoatrial node pacemaker"})
    model = ScriptedChatModel(
        [ChatResult(content="", tool_calls=[call]), "The SA node is the pacemaker [1]."]
    )
    result = run(Chat(make_engine(chat_model=model)).say(SA_NODE, agent="tutor"))
    assert result.reply == "The SA node is the pacemaker [1]."
    assert retrieval_of(result).tool_queries == ("sinoatrial node pacemaker",)
    assert [c.chunk_id for c in result.citations] == list(gate_of(result).chunk_ids[:1])
    _, _, tools = model.requests[0]
    assert [t.name for t in tools] == ["search_knowledge_base"]
    answer_prompt = model.requests[1][0][-1].content
    assert answer_prompt.startswith("Sources:") and "[1]" in answer_prompt
    assert SA_NODE in answer_prompt


def test_model_answering_without_the_tool_still_gets_retrieval(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(["It sets the heart rate.", "It sets the heart rate [2]."])
    result = run(Chat(make_engine(chat_model=model)).say(SA_NODE, agent="tutor"))
    assert retrieval_of(result).tool_queries == ()
    assert retrieval_of(result).query == SA_NODE
    assert result.reply == "It sets the heart rate [2]."
    assert [c.index for c in result.citations] == [2]
    # [2] is the second passage the model read: the reader orders them, best first.
    cited_chunk = result.citations[0].chunk_id
    assert cited_chunk in gate_of(result).chunk_ids
    prompt = model.requests[1][0][-1].content
    second = prompt.split("\n\n[2] ")[1].split("\n\n[3] ")[0]
    assert result.citations[0].section_path[-1] in second.splitlines()[0], second


def test_model_no_answer_becomes_the_no_answer_message(make_engine: EngineFactory) -> None:
    model = ScriptedChatModel(["", "NO_ANSWER"])
    engine = make_engine(chat_model=model)
    result = run(Chat(engine).say("How does the heart pump blood?", agent="tutor"))
    assert result.no_answer and result.citations == []
    assert result.reply == engine.agents["tutor"].no_answer_message


def test_the_reader_keeps_the_model_from_answering_what_the_passages_do_not_cover(
    make_engine: EngineFactory,
) -> None:
    """The passages retrieved for a question about the course's exam dates say nothing about
    them: the reader refuses before the model writes an answer (it is asked only whether to
    search), and an answerable question still reaches it."""
    model = ScriptedChatModel(["", "The exam is on 3 June [1]."])
    engine = make_engine(chat_model=model)
    result = run(Chat(engine).say("On what date is the end-of-year exam held?", agent="tutor"))
    assert result.no_answer and result.citations == [], result.reply
    assert len(model.requests) == 1  # the tool-choice round only
    model = ScriptedChatModel(["", "It sets the heart rate [1]."])
    result = run(Chat(make_engine(chat_model=model)).say(SA_NODE, agent="tutor"))
    assert result.reply == "It sets the heart rate [1]." and len(model.requests) == 2
