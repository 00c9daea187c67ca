from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import pytest

from ragchat.errors import LLMOutputError, LLMUnavailable
from ragchat.llm.base import ChatResult, GenerationOptions, Message, ToolSpec
from ragchat.llm.fake import ScriptedChatModel, ScriptExhausted
from ragchat.retrieve import KBRetriever, PRFExpander, QueryExpander, build_retriever
from ragchat.retrieve.expansion import run_expander
from ragchat.retrieve.llm_expansion import LLMExpander, clean_variants
from ragchat.settings import Settings
from ragchat.types import RetrievalResult
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .conftest import KBFactory
from .test_expansion import FELINES, hit, ids, settings


@pytest.fixture(scope="module")
def felines_kb(make_kb: KBFactory) -> KnowledgeBase:
    return make_kb(FELINES)


def llm_retriever(kb: KnowledgeBase, model: Any, **config: Any) -> KBRetriever:
    """Built the way the app builds it, with expansion forced (the trigger is tested apart)."""
    retrieval = settings(**{"mode": "bm25", "query_expansion": True, **config})
    retriever = build_retriever(Settings(_env_file=None), kb, retrieval, chat_model=model)  # type: ignore[call-arg]
    retriever.always_expand = True
    return retriever


def prf_queries(kb: KnowledgeBase, query: str) -> list[str]:
    config = settings(mode="bm25", query_expansion=True)
    return KBRetriever(kb, config, always_expand=True).retrieve(query).expanded_queries


FIRST_PASS = RetrievalResult(query="felines", hits=[hit("a", "Cats purr and knead blankets.")])


# -- the expander on its own ------------------------------------------------------------------
def test_clean_variants_dedupes_drops_query_and_caps() -> None:
    raw = ["Felines?", "  cat   purring ", "", "Cat purring!", "kitten", "x" * 50, "tabby"]
    assert clean_variants("felines", raw, limit=3) == ["cat purring", "kitten", "x" * 50]
    assert clean_variants("q", ["a b c d e f"], limit=5, max_chars=7) == ["a b c d"]
    assert clean_variants("q", ["abcdefghij"], limit=5, max_chars=4) == ["abcd"]
    assert clean_variants("q", ["Q.", " ", "q"], limit=5) == []


def test_asks_for_a_json_list_and_returns_the_variants() -> None:
    reply = '```json\n["cat purring", "Felines", "kitten behaviour", "domestic cat", "x"]\n```'
    model = ScriptedChatModel([reply])
    expander = LLMExpander(model, n_variants=3)
    assert isinstance(expander, QueryExpander)
    found = run_expander(expander, "felines", FIRST_PASS)
    assert found.variants == ["cat purring", "kitten behaviour", "domestic cat"]
    assert found.method == "llm"
    ((messages, options, tools),) = model.requests
    assert messages[0].role == "system" and "3 different" in messages[0].content
    assert "JSON list" in messages[0].content
    assert messages[-1] == Message("user", "felines") and tools == []
    assert options == GenerationOptions(temperature=0.3, max_tokens=160)


def test_the_number_of_variants_is_configurable() -> None:
    model = ScriptedChatModel(['["a one", "b two", "c three"]'])
    config = settings(mode="bm25", query_expansion=True, expansion_variants=2)
    retriever = build_retriever(Settings(_env_file=None), _NoKB(), config, chat_model=model)  # type: ignore[arg-type, call-arg]
    assert isinstance(retriever.expander, LLMExpander)
    assert retriever.expander.expand("q", FIRST_PASS) == ["a one", "b two"]
    assert "2 different" in model.requests[0][0][0].content


class _NoKB:
    """Enough of a knowledge base for building a retriever that is never searched."""

    name = "none"
    embedder = None


@pytest.mark.parametrize(
    "reply",
    [
        "Sure, here are some ideas: cats, kittens.",  # no JSON list
        '["felines", "  ", "FELINES!"]',  # only the query itself and blanks
        "[1, 2, 3]",  # not strings
        '{"query": "cats"}',  # an object, no list
    ],
)
def test_garbage_reply_falls_back_to_prf(reply: str) -> None:
    expander = LLMExpander(ScriptedChatModel([reply]))
    found = run_expander(expander, "felines", FIRST_PASS)
    assert found.variants == PRFExpander().expand("felines", FIRST_PASS) != []
    assert found.method == "prf (llm reply unusable)"


@pytest.mark.parametrize("error", [LLMUnavailable("down"), LLMOutputError("bad")])
def test_model_errors_fall_back_to_prf(error: Exception, caplog: pytest.LogCaptureFixture) -> None:
    expander = LLMExpander(ScriptedChatModel([error]))
    with caplog.at_level(logging.WARNING, logger="ragchat.retrieve.llm_expansion"):
        found = run_expander(expander, "felines", FIRST_PASS)
    assert found.variants == PRFExpander().expand("felines", FIRST_PASS)
    assert found.method == f"prf (llm failed: {type(error).__name__})"
    assert any("using PRF" in r.getMessage() for r in caplog.records)


class SlowModel:
    """Answers after ``delay`` seconds; records whether it was cancelled."""

    name = "slow"

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.cancelled = threading.Event()

    async def generate(
        self,
        messages: Sequence[Message],
        *,
        options: GenerationOptions | None = None,
        tools: Sequence[ToolSpec] = (),
    ) -> ChatResult:
        try:
            await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return ChatResult('["too late"]')


def test_a_slow_model_times_out_into_prf_and_is_cancelled() -> None:
    model = SlowModel(delay=30.0)
    expander = LLMExpander(model, timeout_s=0.2)  # type: ignore[arg-type]
    start = time.perf_counter()
    found = run_expander(expander, "felines", FIRST_PASS)
    assert time.perf_counter() - start < 5.0
    assert found.method == "prf (llm failed: TimeoutError)"
    assert model.cancelled.wait(5.0)


def test_a_bug_is_not_swallowed_as_a_model_failure() -> None:
    # ScriptExhausted is deliberately not an LLMError: a test asking for too many replies
    # must fail, not quietly fall back.
    with pytest.raises(ScriptExhausted):
        LLMExpander(ScriptedChatModel()).expand("felines", FIRST_PASS)


# -- in the retriever -------------------------------------------------------------------------
def test_retriever_searches_the_models_variants(felines_kb: KnowledgeBase) -> None:
    # "prune roses" reaches c3, which neither the query nor PRF's terms can reach.
    model = ScriptedChatModel(['["prune roses", "felines"]'])
    result = llm_retriever(felines_kb, model).retrieve("felines")
    assert result.expanded_queries == ["prune roses"]
    assert set(ids(result)) == {"c0", "c3"}
    assert "expansion (llm): 1 variation(s)" in result.notes
    assert "expand" in result.timings
    assert "roses" not in " ".join(prf_queries(felines_kb, "felines"))
    offline = build_retriever(Settings(_env_file=None), felines_kb, settings(query_expansion=True))  # type: ignore[call-arg]
    assert isinstance(offline.expander, PRFExpander)


def test_retriever_falls_back_to_prf_when_the_model_fails(felines_kb: KnowledgeBase) -> None:
    expected = prf_queries(felines_kb, "felines")
    for reply in (LLMUnavailable("down"), "no idea"):
        result = llm_retriever(felines_kb, ScriptedChatModel([reply])).retrieve("felines")
        assert result.expanded_queries == expected
        assert ids(result) == ["c0", "c1"]  # c1 found through the feedback terms
        assert any(n.startswith("expansion (prf (llm ") for n in result.notes)


def test_the_model_is_asked_only_when_expansion_triggers(felines_kb: KnowledgeBase) -> None:
    model = ScriptedChatModel()  # no reply scripted: a call would raise ScriptExhausted
    confident = llm_retriever(felines_kb, model)
    confident.always_expand, confident.expand_below = False, 0.0
    assert confident.retrieve("felines").expanded_queries == []
    off = llm_retriever(felines_kb, model, query_expansion=False)
    assert off.retrieve("felines").expanded_queries == [] and model.requests == []


def test_works_inside_a_running_event_loop(felines_kb: KnowledgeBase) -> None:
    """The agents call the (synchronous) retriever from async graph nodes."""
    model = ScriptedChatModel(['["prune roses"]', '["Jupiter storms"]'])
    retriever = llm_retriever(felines_kb, model)

    async def node() -> list[RetrievalResult]:
        asyncio.get_running_loop()  # there is one
        return [retriever.retrieve("felines"), retriever.retrieve("felines")]

    first, second = asyncio.run(node())
    assert first.expanded_queries == ["prune roses"] and "c3" in ids(first)
    assert second.expanded_queries == ["Jupiter storms"] and "c2" in ids(second)
