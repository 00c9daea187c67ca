"""A user's own knowledge base in the page, against a real server: create it, upload into it
with progress, pick it for a conversation, ask, follow up, and get cited answers from the
upload only; then delete it."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import UI
from .test_documents import upload

pytestmark = pytest.mark.integration

QUILTING = """# Quilting club

The quilting club meets every Thursday evening in the village hall.

## Membership

Membership costs twelve pounds a year and includes fabric offcuts.

## Beginners

Beginners start with a nine-patch block. The first class lends a rotary cutter and a
cutting mat, so newcomers need bring only thread.
"""


def test_create_upload_and_chat_with_a_knowledge_base(ui: UI, tmp_path: Path) -> None:
    page = ui.page
    doc = tmp_path / "quilting.md"
    doc.write_text(QUILTING)

    page.click("#open-kb")
    page.locator("#panel[data-kind='kb']").wait_for()
    page.click("#kb-new-open")
    page.fill("#kb-new-name", "hobbies")
    page.fill("#kb-new-description", "My hobby clubs")
    page.click("#kb-new-create")
    page.wait_for_function("() => document.querySelector('#kb-select')?.value === 'hobbies'")
    assert "only you see it" in page.locator(".kb-about").inner_text()
    upload(ui, doc)
    page.locator(".doc", has_text="quilting.md").wait_for()
    ui.shot("kb-created")

    page.click("#kb-chat")  # a new conversation that answers from this knowledge base
    page.wait_for_function("() => document.querySelector('#answer-from').value === 'kb:hobbies'")
    first = ui.ask("How much does membership of the quilting club cost?")
    body = first.locator(".msg-body").inner_text()
    assert "twelve pounds" in body
    assert first.locator(".chip", has_text="Quilting").count() >= 1

    follow = ui.ask("And what do beginners start with?")
    assert "nine-patch" in follow.locator(".msg-body").inner_text()
    assert follow.locator(".chip", has_text="Quilting").count() >= 1
    ui.shot("kb-chat")

    # The conversation remembers its knowledge base; another person cannot see it.
    conv_id = page.evaluate("() => decodeURIComponent(location.hash.split('/').pop())")
    assert ui.api("GET", f"/conversations/{conv_id}")["kb"] == ["hobbies"]
    other = page.context.browser.new_context()
    try:
        assert other.request.get(f"{ui.server.url}/kb/hobbies/documents").status == 404
    finally:
        other.close()

    # Not covered by the documents: said plainly, nothing cited.
    miss = ui.ask("What is the capital of Peru?")
    assert miss.locator(".chip").count() == 0

    page.click("#open-kb")
    page.select_option("#kb-select", "hobbies")
    page.click("#kb-delete")
    page.click("#confirm-ok")
    page.wait_for_function(
        "() => ![...document.querySelectorAll('#kb-select option')]"
        ".some(o => o.value === 'hobbies')"
    )
