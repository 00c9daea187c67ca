"""The knowledge-base panel against a real server: upload a Markdown file (progress from the
ingestion job), see it listed with its chunk count, ask about it and get it cited, delete it."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from .conftest import UI

pytestmark = pytest.mark.integration

ZORBLAX = """# Zorblax fever

Zorblax fever is an invented illness caught from eating purple moon cheese.

## Treatment

The main treatment for zorblax fever is drinking warm quince tea for three days.
"""


def open_kb(ui: UI, kb: str) -> None:
    page = ui.page
    page.click("#open-kb")
    page.locator("#panel[data-kind='kb']").wait_for()
    page.wait_for_selector("#kb-select option", state="attached")
    page.select_option("#kb-select", kb)
    page.wait_for_function(
        "kb => document.querySelector('#kb-docs-title')?.textContent"
        ".includes('Documents in ' + kb)",
        arg=kb,
    )


def own_kb(ui: UI, prefix: str = "notes") -> str:
    """A new knowledge base of this person's, made in the panel (left open on it)."""
    page = ui.page
    name = f"{prefix}-{uuid.uuid4().hex[:6]}"
    if page.locator("#panel[data-kind='kb']").count() == 0:
        page.click("#open-kb")
        page.locator("#panel[data-kind='kb']").wait_for()
    page.wait_for_selector("#kb-select option", state="attached")
    if page.locator("#kb-new:not([hidden])").count() == 0:
        page.click("#kb-new-open")
    page.fill("#kb-new-name", name)
    page.click("#kb-new-create")
    page.wait_for_function("n => document.querySelector('#kb-select').value === n", arg=name)
    page.locator(".dropzone").wait_for()
    return name


def upload(ui: UI, path: Path) -> None:
    page = ui.page
    page.set_input_files("#kb-files", str(path))
    job = page.locator(".job").first
    job.wait_for()
    page.wait_for_function(
        "() => ['done', 'failed'].includes(document.querySelector('.job')?.dataset.state)",
        timeout=90_000,
    )
    assert job.get_attribute("data-state") == "done", job.inner_text()
    assert page.locator(".job progress").first.evaluate("p => p.value") == 1


def test_upload_ask_cite_delete(ui: UI, tmp_path: Path) -> None:
    page = ui.page
    doc = tmp_path / "zorblax.md"
    doc.write_text(ZORBLAX)

    open_kb(ui, "medical")
    shared = page.locator(".doc:has(.tag)")
    assert shared.count() >= 5  # the samples, marked shared, without a delete button
    assert shared.first.locator("button").count() == 0
    assert page.locator(".dropzone").is_hidden()  # read-only: uploads go to your own
    kb = own_kb(ui, "clinic")
    upload(ui, doc)
    item = page.locator(".doc", has_text="zorblax.md")
    item.wait_for()
    assert "Zorblax fever" in item.inner_text()
    assert "chunk" in item.inner_text()
    ui.shot("uploaded")
    page.click("#panel-close")

    reply = ui.ask("What is the treatment for zorblax fever?", kb=kb)
    assert "quince tea" in reply.locator(".msg-body").inner_text()
    chip = reply.locator(".chip", has_text="Zorblax")
    assert chip.count() >= 1
    chip.first.click()
    assert "zorblax.md" in page.locator("#panel").inner_text()
    assert "quince tea" in page.locator(".passage").inner_text()
    ui.shot("cited")

    # Another person does not see this upload.
    other = page.context.browser.new_context()
    try:
        r = other.request.get(f"{ui.server.url}/kb/{kb}/documents")
        assert r.status == 404 and "zorblax.md" not in r.text()
    finally:
        other.close()

    open_kb(ui, kb)
    page.locator(".doc", has_text="zorblax.md").locator("button").click()
    page.click("#confirm-ok")
    page.locator(".doc", has_text="zorblax.md").wait_for(state="detached")
    page.click("#panel-close")
    after = ui.ask("What is the treatment for zorblax fever?", kb=kb)
    assert after.locator(".chip", has_text="Zorblax").count() == 0


def test_unsupported_file_is_refused_with_a_message(ui: UI, tmp_path: Path) -> None:
    bad = tmp_path / "notes.exe"
    bad.write_bytes(b"MZ\x00\x00")
    own_kb(ui)
    ui.page.set_input_files("#kb-files", str(bad))
    job = ui.page.locator(".job").first
    ui.page.wait_for_function("() => document.querySelector('.job')?.dataset.state === 'failed'")
    assert "Unsupported file type" in job.inner_text()


def test_office_files_upload_through_the_picker_and_are_cited_by_slide_and_row(
    ui: UI, tmp_path: Path
) -> None:
    from tests.ingest import samples

    accept = ui.page.locator("#kb-files")
    kb = own_kb(ui, "office")
    assert {".docx", ".pptx", ".xlsx", ".epub", ".png"} <= set(
        (accept.get_attribute("accept") or "").split(",")
    )
    for name in ("formulary.xlsx", "review.pptx"):
        sample = next(s for s in samples.SAMPLES if s.name == name)
        sample.write(tmp_path / name)
        upload(ui, tmp_path / name)
        ui.page.locator(".doc", has_text=name).wait_for()
    ui.page.click("#panel-close")

    # "in the formulary": the sample ibuprofen page answers the bare question (1,200 mg) too.
    reply = ui.ask("What is the maximum daily dose of ibuprofen in the formulary?", kb=kb)
    assert "1200 mg" in reply.locator(".msg-body").inner_text()
    chip = reply.locator(".chip", has_text="formulary")
    assert "Formulary, row" in chip.first.inner_text()  # the row quoted, in the chip itself
    chip.first.click()
    assert "Formulary, row" in ui.page.locator("#panel").inner_text()
    ui.shot("cited-row")
