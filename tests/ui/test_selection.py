"""Selected-text mode: select words inside an opened passage, "Ask about this", and the answer
comes from the selection only (POST /query with use_context_only)."""

from __future__ import annotations

import json

import pytest

from .conftest import UI

pytestmark = pytest.mark.integration

NEEDLE = "indigestion, heartburn, nausea or stomach pain"
SELECT = """(needle) => {
  const passage = document.querySelector('.passage');
  const node = passage.firstChild;
  const start = node.textContent.toLowerCase().indexOf(needle);
  if (start < 0) return null;
  const range = document.createRange();
  range.setStart(node, start);
  range.setEnd(node, start + needle.length);
  const sel = window.getSelection();
  sel.removeAllRanges();
  sel.addRange(range);
  return sel.toString();
}"""


def test_ask_about_selected_text(ui: UI) -> None:
    page = ui.page
    reply = ui.ask("What are the side effects of ibuprofen?")
    reply.locator(".chip").first.click()
    page.locator(".passage").wait_for()
    # Select only once the whole passage has replaced the citation's preview.
    for _ in range(100):  # polled from Python: the page's CSP forbids evaluating strings
        if len(page.locator(".passage").inner_text()) > 245:
            break
        page.wait_for_timeout(100)
    ask = page.get_by_role("button", name="Ask about this")
    assert ask.is_hidden()  # offered once something is selected

    selected = page.evaluate(SELECT, NEEDLE)
    assert selected
    ask.wait_for()
    ui.shot("selected")
    ask.click()
    question = page.locator("#ask-question")
    question.wait_for()
    assert selected in page.locator(".ask-context").inner_text()
    question.fill("What are the possible side effects?")
    with page.expect_request(lambda r: r.url.endswith("/query") and r.method == "POST") as req:
        question.press("Enter")
    body = json.loads(req.value.post_data or "{}")
    assert body == {
        "question": "What are the possible side effects?",
        "context": selected,
        "use_context_only": True,
    }
    answer = page.locator(".ask-answer")
    answer.wait_for(timeout=60_000)
    assert "Selected text only" in answer.inner_text()
    assert "no-answer" not in (answer.get_attribute("class") or "")
    assert "indigestion" in answer.locator(".bubble-assistant").inner_text().lower()
    ui.shot("selection-answer")


def test_ask_about_the_whole_passage_by_keyboard(ui: UI) -> None:
    page = ui.page
    reply = ui.ask("What are the side effects of ibuprofen?")
    reply.locator(".chip").first.focus()
    page.keyboard.press("Enter")
    page.locator(".passage").wait_for()
    whole = page.get_by_role("button", name="Ask about the whole passage")
    whole.focus()
    page.keyboard.press("Enter")
    question = page.locator("#ask-question")
    assert question.evaluate("e => e === document.activeElement")
    page.keyboard.type("What are the serious effects?")
    page.keyboard.press("Enter")
    page.locator(".ask-answer").wait_for(timeout=60_000)
