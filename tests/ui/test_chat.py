"""A person using the chat page against a real ``ragchat serve``: a new chat, a streamed and
cited answer, a citation opened, rename, reload, regenerate the title, delete; the stop
button; a no-answer reply; companion bubbles; the details toggle."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from .conftest import NARROW, UI, Server

pytestmark = pytest.mark.integration

WATCH_STREAM = """() => {
  window.streamFrames = [];
  const thread = document.getElementById('thread');
  new MutationObserver(() => {
    const r = thread.querySelector('article.msg-assistant.streaming .msg-body');
    if (r) window.streamFrames.push(r.textContent.length);
  }).observe(thread, {subtree: true, childList: true, characterData: true});
}"""


def sidebar_titles(ui: UI) -> list[str]:
    return ui.page.locator(".conv-item .conv-title-text").all_inner_texts()


def test_new_chat_streams_a_cited_answer_and_the_conversation_is_managed(ui: UI) -> None:
    page = ui.page
    ui.shot("01-welcome")
    assert page.locator("#conv-title").inner_text() == "New chat"

    page.evaluate(WATCH_STREAM)
    reply = ui.ask("What are the side effects of ibuprofen?")
    ui.shot("02-answer")

    # Streamed: the reply grew over several renders before it was complete.
    frames = [n for n in page.evaluate("window.streamFrames") if n > 0]
    final_len = len(reply.locator(".msg-body").inner_text())
    assert len(set(frames)) >= 2, frames
    assert min(frames) < final_len

    assert reply.locator(".agent-badge").inner_text().lower().endswith("medical")
    assert "ibuprofen" in reply.locator(".msg-body").inner_text().lower()
    assert reply.get_attribute("data-status") == "complete"
    chips = reply.locator(".chip")
    assert chips.count() >= 1
    assert "Ibuprofen" in chips.first.inner_text()
    assert reply.locator(".msg-body .cite-ref").count() >= 1  # inline [1] markers

    # The conversation is in the sidebar, active, and gets a generated title.
    item = page.locator(".conv-item.active")
    item.wait_for()
    page.wait_for_function(
        "() => document.querySelector('#conv-title').textContent !== 'New chat'", timeout=20_000
    )
    title = page.locator("#conv-title").inner_text()
    assert title in sidebar_titles(ui)
    conv_id = re.search(r"#/c/(.+)$", page.url).group(1)  # type: ignore[union-attr]

    # Details: the search query and timings.
    details = reply.locator("details.msg-details")
    details.locator("summary").click()
    assert "Search query" in details.inner_text() or "Reformulated" in details.inner_text()
    assert details.locator("table.timings tbody tr").count() >= 1

    # Open a citation: the passage and where it is.
    chips.first.click()
    panel = page.locator("#panel")
    panel.wait_for()
    assert "Source 1" in page.locator("#panel-title").inner_text()
    assert "Ibuprofen" in panel.inner_text()
    assert "Side effects" in panel.inner_text()
    assert "ibuprofen.md" in panel.inner_text()
    assert "side effects" in panel.locator(".passage").inner_text().lower()
    # The preview is replaced by the whole passage, which is longer than a preview ever is.
    for _ in range(100):  # polled from Python: the page's CSP forbids evaluating strings
        if len(panel.locator(".passage").inner_text()) > 245:
            break
        page.wait_for_timeout(100)
    assert not panel.locator(".passage").inner_text().endswith("…")
    ui.shot("03-source")
    page.keyboard.press("Escape")
    panel.wait_for(state="hidden")
    # An inline [1] opens it too.
    reply.locator(".msg-body .cite-ref").first.click()
    panel.wait_for()
    page.click("#panel-close")
    panel.wait_for(state="hidden")

    # Rename in place.
    page.locator(".conv-item.active [data-role='rename']").click()
    rename = page.locator(".conv-item.active input.conv-rename")
    rename.fill("My ibuprofen questions")
    rename.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('#conv-title').textContent === 'My ibuprofen questions'"
    )
    assert "My ibuprofen questions" in sidebar_titles(ui)

    # Reload: the same user (cookie), the same conversation, its messages and citations.
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    assert page.locator("#conv-title").inner_text() == "My ibuprofen questions"
    assert page.locator(".conv-item.active .conv-title-text").inner_text() == (
        "My ibuprofen questions"
    )
    stored = page.locator("article.msg-assistant").first
    stored.wait_for()
    assert stored.locator(".chip").count() >= 1
    assert stored.locator(".agent-badge").inner_text().lower().endswith("medical")
    assert page.locator("article.msg-user").first.inner_text() == (
        "What are the side effects of ibuprofen?"
    )
    ui.shot("04-reloaded")

    # Regenerate the title from the first exchange.
    page.locator(".conv-item.active [data-role='regen']").click()
    page.wait_for_function(
        "() => document.querySelector('#conv-title').textContent !== 'My ibuprofen questions'"
    )

    # Delete, after confirming.
    page.locator(".conv-item.active [data-role='delete']").click()
    dialog = page.locator("#confirm-dialog")
    dialog.wait_for()
    page.click("#confirm-cancel")
    dialog.wait_for(state="hidden")
    assert page.locator(f".conv-item[data-id='{conv_id}']").count() == 1
    page.locator(".conv-item.active [data-role='delete']").click()
    page.click("#confirm-ok")
    page.wait_for_selector(f".conv-item[data-id='{conv_id}']", state="detached")
    assert page.locator("#conv-title").inner_text() == "New chat"
    page.reload()
    page.wait_for_selector("body[data-ready='true']")
    assert page.locator(f".conv-item[data-id='{conv_id}']").count() == 0
    assert ui.problems.dialogs == []


def test_newest_conversation_first_and_switching(ui: UI) -> None:
    page = ui.page
    ui.ask("How much sleep does a toddler need?")
    first = page.url
    page.click("#new-chat")
    page.wait_for_selector(".welcome")
    ui.ask("What are common migraine triggers?")
    page.wait_for_function("() => document.querySelectorAll('.conv-item').length === 2")
    ids = page.locator(".conv-item").evaluate_all("els => els.map(e => e.dataset.id)")
    assert page.url.endswith(ids[0])  # newest first, and it is the active one
    assert page.locator(".conv-item").first.get_attribute("class").endswith("active")  # type: ignore[union-attr]
    page.locator(".conv-item").nth(1).locator(".conv-open").click()
    page.wait_for_function(f"() => location.href === {first!r}")
    page.wait_for_function(
        "() => document.querySelector('article.msg-user')?.textContent.includes('toddler')"
    )
    assert page.locator(".conv-item.active").get_attribute("data-id") == ids[1]


def test_stop_cancels_the_stream(ui: UI) -> None:
    page = ui.page
    page.fill("#composer-input", "What is the maximum daily dose of acetaminophen?")
    page.press("#composer-input", "Enter")
    stop = page.locator("#stop")
    stop.wait_for()
    assert page.locator("#composer-input").is_disabled()
    stop.click()
    reply = page.locator("article.msg-assistant").last
    page.wait_for_function(
        "() => document.querySelector('article.msg-assistant')?.dataset.status === 'interrupted'"
    )
    assert "Stopped" in reply.locator(".msg-head").inner_text()
    assert page.locator("#stop").is_hidden() and page.locator("#send").is_visible()
    assert page.locator("#composer-input").is_enabled()
    ui.shot("stopped")
    # The page is usable again straight away.
    again = ui.ask("What is the maximum daily dose of acetaminophen?")
    assert again.get_attribute("data-status") == "complete"


def test_escape_stops_too_and_enter_shift_enter(ui: UI) -> None:
    page = ui.page
    box = page.locator("#composer-input")
    box.click()
    page.keyboard.type("first line")
    page.keyboard.press("Shift+Enter")
    page.keyboard.type("second line")
    assert box.input_value() == "first line\nsecond line"
    assert page.locator("article.msg-user").count() == 0
    page.keyboard.press("Enter")
    page.locator("#stop").wait_for()
    page.keyboard.press("Escape")
    page.wait_for_function(
        "() => ['interrupted', 'complete'].includes("
        "document.querySelector('article.msg-assistant')?.dataset.status)"
    )
    assert page.locator("article.msg-user").inner_text() == "first line\nsecond line"


def test_no_answer_is_distinct(ui: UI) -> None:
    reply = ui.ask("What is the airspeed of an unladen swallow?", agent="medical")
    assert "no-answer" in (reply.get_attribute("class") or "")
    assert reply.locator(".tag-noanswer").is_visible()
    assert reply.locator(".bubble-noanswer").count() == 1
    ui.shot("no-answer")
    normal = ui.ask("What are the side effects of ibuprofen?", agent="medical")
    assert "no-answer" not in (normal.get_attribute("class") or "")


def test_companion_reply_as_bubbles(ui: UI) -> None:
    reply = ui.ask("Hi Robin, how was your day?", agent="companion")
    assert reply.locator(".agent-badge").inner_text().lower().endswith("companion")
    assert reply.locator(".bubble-assistant").count() >= 2
    ui.shot("companion")


def test_narrow_window(ui_factory: Callable[..., UI], server: Server) -> None:
    ui = ui_factory(server, viewport=NARROW)
    ui.open()
    page = ui.page
    sidebar = page.locator("#sidebar")
    assert not sidebar.is_visible()  # collapsed under 700px
    ui.ask("What are the side effects of ibuprofen?")
    ui.shot("narrow-answer")
    # Nothing is wider than the window.
    assert page.evaluate("document.documentElement.scrollWidth") <= 420
    page.click("#toggle-sidebar")
    page.wait_for_selector("#sidebar .conv-item")
    assert sidebar.is_visible()
    assert page.locator("#toggle-sidebar").get_attribute("aria-expanded") == "true"
    ui.shot("narrow-sidebar")
    page.keyboard.press("Escape")
    page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
    page.locator("article.msg-assistant .chip").first.click()
    page.locator("#panel").wait_for()
    ui.shot("narrow-source")
    box = page.locator("#panel").bounding_box()
    assert box is not None and box["width"] <= 420


def test_keyboard_and_labels(ui: UI) -> None:
    page = ui.page
    ui.ask("What are the side effects of ibuprofen?")
    # Every button has a name a screen reader can say.
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('button')].filter((b) =>
             !(b.getAttribute('aria-label') || b.textContent.trim())).map((b) => b.outerHTML)"""
    )
    assert unnamed == []
    assert page.locator("article.msg-assistant .msg-body").get_attribute("aria-live") == "polite"
    # Tab reaches the sidebar's actions, the chips and the message box, with a visible focus.
    seen: set[str] = set()
    for _ in range(40):
        page.keyboard.press("Tab")
        info = page.evaluate(
            """() => { const e = document.activeElement;
                 const ring = e.tagName === 'TEXTAREA' ? e.closest('.composer-box') : e;
                 return {id: e.id, cls: e.className, role: e.dataset.role || '',
                         outline: getComputedStyle(ring).outlineStyle}; }"""
        )
        seen.add(info["id"] or info["role"] or str(info["cls"]).split(" ")[0])
        if info["id"] or info["role"] or info["cls"]:
            assert info["outline"] != "none", info
    assert {"new-chat", "rename", "delete", "chip", "composer-input"} <= seen, seen
