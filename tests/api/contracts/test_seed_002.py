"""002, the conversational childcare pipeline: a Python ``ask(question, thread_id=…)`` that
returns the answer, its sources and the reformulated (standalone) query, per thread, no
server. ``ragchat.Chatbot`` over the same engine; the README's example runs as written."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI

import ragchat
from ragchat.settings import Settings

README = Path(__file__).resolve().parents[3] / "README.md"


@pytest.fixture(scope="module")
def bot(real_app: FastAPI, settings: Settings) -> Iterator[ragchat.Chatbot]:
    # real_app has ingested the sample knowledge bases into settings.data_dir already.
    with ragchat.Chatbot(settings) as chatbot:
        yield chatbot


def test_ask_answers_with_sources_and_the_reformulated_query(bot: ragchat.Chatbot) -> None:
    first = bot.ask("What are the side effects of ibuprofen?", thread_id="t1")
    assert first.answer and first.sources and first.sources[0].chunk_id
    assert first.agent == "medical" and first.thread_id == "t1"
    follow = bot.ask("and what is the maximum dose?", thread_id="t1")
    assert follow.reformulated_query is not None
    assert "ibuprofen" in follow.reformulated_query.lower()  # the thread's topic carried over
    assert follow.agent == "medical"
    assert [m.role for m in bot.history("t1")] == ["user", "assistant"] * 2


def test_threads_are_separate(bot: ragchat.Chatbot) -> None:
    bot.ask("What are the side effects of ibuprofen?", thread_id="a")
    other = bot.ask("and what is the maximum dose?", thread_id="b")
    assert "ibuprofen" not in (other.reformulated_query or "").lower()
    bot.reset("a")
    assert bot.history("a") == []


def test_ask_works_inside_a_running_event_loop(bot: ragchat.Chatbot) -> None:
    """As in a notebook, where a loop is already running in the caller's thread."""

    async def notebook_cell() -> tuple[ragchat.Answer, ragchat.Answer]:
        answer = bot.ask("Why are alveoli well suited to gas exchange?", thread_id="nb")
        again = await bot.aask("Why are alveoli well suited to gas exchange?", thread_id="nb2")
        return answer, again

    answer, again = asyncio.run(notebook_cell())
    assert answer.sources and again.answer == answer.answer


def test_the_readme_example_runs(
    real_app: FastAPI, settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"```python\n(from ragchat import Chatbot\n.*?)```", text, re.S)
    assert match, "the README's Chatbot example"
    monkeypatch.setenv("RAGCHAT_DATA_DIR", str(settings.data_dir))
    exec(compile(match.group(1), "README.md", "exec"), {})
