"""Hostile text through the whole page: in a question, and in an uploaded document whose text
comes back in the answer and the cited passage. Nothing runs, nothing loads, it is shown."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import UI
from .test_documents import own_kb, upload

pytestmark = pytest.mark.integration

PAYLOAD_QUESTION = (
    'What about <img src=x onerror="window.pwned=1"> and <script>window.pwned=2</script> '
    "ibuprofen side effects?"
)
QUOKKA = """# Quokka care

Quokkas stay cool by resting in shade <img src=x onerror="window.pwned=3"> during the hottest
hours <script>window.pwned=4</script> of the day <svg onload="window.pwned=5"></svg>.

See [the care guide](javascript:window.pwned=6) for quokka feeding times.
"""


def assert_inert(ui: UI) -> None:
    page = ui.page
    page.wait_for_timeout(300)  # give any injected handler its chance
    assert page.evaluate("window.pwned") is None
    assert ui.problems.dialogs == []
    bad = page.evaluate(
        """() => ({
          img: document.querySelectorAll('#thread img, #panel img').length,
          script: document.querySelectorAll('#thread script, #panel script').length,
          svgs: [...document.querySelectorAll('#thread svg, #panel svg')]
                  .filter((s) => !s.classList.contains('icon')).length,
          handlers: [...document.querySelectorAll('#thread *, #panel *')].flatMap((e) =>
                  [...e.attributes].map((a) => a.name).filter((n) => n.startsWith('on'))),
          links: [...document.querySelectorAll('#thread a[href], #panel a[href]')]
                  .map((a) => a.getAttribute('href'))
                  .filter((h) => !/^(https?:|mailto:|#)/.test(h)),
        })"""
    )
    assert bad == {"img": 0, "script": 0, "svgs": 0, "handlers": [], "links": []}, bad


def test_markup_in_a_question_is_shown_as_text(ui: UI) -> None:
    ui.ask(PAYLOAD_QUESTION)
    assert ui.page.locator("article.msg-user").inner_text() == PAYLOAD_QUESTION
    assert_inert(ui)
    ui.page.reload()
    ui.page.wait_for_selector("body[data-ready='true']")
    ui.page.locator("article.msg-user").wait_for()
    assert ui.page.locator("article.msg-user").inner_text() == PAYLOAD_QUESTION
    assert_inert(ui)


def test_markup_in_a_document_is_shown_as_text(ui: UI, tmp_path: Path) -> None:
    page = ui.page
    doc = tmp_path / "quokka.md"
    doc.write_text(QUOKKA)
    kb = own_kb(ui, "zoo")
    upload(ui, doc)
    page.click("#panel-close")
    check_answer_and_passage(ui, kb)


def check_answer_and_passage(ui: UI, kb: str) -> None:
    page = ui.page
    reply = ui.ask("How do quokkas stay cool?", kb=kb)
    body = reply.locator(".msg-body").inner_text()
    assert "<img src=x onerror=" in body or "<script>" in body, body
    assert_inert(ui)
    reply.locator(".chip", has_text="Quokka").first.click()
    passage = page.locator(".passage").inner_text()
    assert '<img src=x onerror="window.pwned=3">' in passage
    assert "<script>window.pwned=4</script>" in passage
    ui.shot("quokka-passage")
    assert_inert(ui)

    # Reloaded from the store: still text.
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    page.locator("article.msg-assistant").wait_for()
    assert_inert(ui)


TITLE = 'Notes <img src=x onerror="window.pwned=7"><script>window.pwned=8</script>'


def test_markup_in_a_conversation_title_is_shown_as_text(ui: UI) -> None:
    """A title is user input too (a rename, or one generated from a hostile question)."""
    ui.ask("What are the side effects of ibuprofen?")
    conversation = ui.api("GET", "/conversations")[0]
    ui.api("PATCH", f"/conversations/{conversation['id']}", {"title": TITLE})
    ui.page.reload()
    ui.page.wait_for_selector("body[data-ready='true']")
    item = ui.page.locator(".conv-title-text").first
    item.wait_for()
    assert item.inner_text() == TITLE
    assert ui.page.evaluate("window.pwned") is None
    sidebar = ui.page.evaluate(
        "() => document.querySelectorAll('.conv-item img, .conv-item script').length"
    )
    assert sidebar == 0
    assert_inert(ui)
