"""A new person's first minutes with their own documents (issue 36), in Chromium against a real
server: the page leads to creating a knowledge base; they create an account, a knowledge base,
upload a Word file, a transcript and a spreadsheet, ask about one cell and one sentence and
see each answer cited to its row and its cue; then the same account on another browser, and
over /v1 with an API key made in the page. Screenshots of every step (``RAGCHAT_UI_SCREENSHOTS``
keeps them)."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

import pytest

from .conftest import NARROW, UI, Server

pytestmark = pytest.mark.integration

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CLUB = ["members-guide.docx", "committee-meeting.vtt", "fees-and-tides.xlsx"]
PASSWORD = "the tide turns at noon"
ROW = "Fees 2026, row 6"
CUE = "00:00:19.500–00:00:31.000 (Tom Reid)"


def answer_from(ui: UI) -> str:
    return str(ui.page.eval_on_selector("#answer-from", "s => s.value"))


def sign_up(ui: UI, name: str) -> None:
    page = ui.page
    page.click("#account")
    page.locator("#panel[data-kind='account']").wait_for()
    page.click("#auth-toggle")
    page.fill("#auth-username", name)
    page.fill("#auth-password", PASSWORD)
    with page.expect_navigation():
        page.click("#auth-submit")
    page.wait_for_selector("body[data-ready='true']")


def sign_in(ui: UI, name: str) -> None:
    page = ui.page
    page.click("#account")
    page.fill("#auth-username", name)
    page.fill("#auth-password", PASSWORD)
    with page.expect_navigation():
        page.click("#auth-submit")
    page.wait_for_selector("body[data-ready='true']")


def chips(reply: Any) -> list[str]:
    return [str(t) for t in reply.locator(".chip").all_inner_texts()]


def test_a_new_person_signs_in_and_asks_their_own_documents(
    ui_factory: Any, server: Server
) -> None:
    name = f"ada-{uuid.uuid4().hex[:6]}"
    ui = ui_factory(server)
    ui.open()
    page = ui.page

    # First visit: creating a knowledge base is the obvious first step; the samples are
    # named as what they are.
    assert page.locator(".welcome[data-step='create'] #welcome-create").is_visible()
    assert answer_from(ui) == "agent:"
    label = page.eval_on_selector("#answer-from", "s => s.selectedOptions[0].textContent")
    assert label.startswith("Samples:")
    assert page.locator("label[for='answer-from']").inner_text() == "Answer from"
    assert page.locator("#agent-select, #kb-choice").count() == 0  # one control
    ui.shot("1-first-visit")

    sign_up(ui, name)
    assert page.locator("body[data-signed-in='true']").count() == 1
    assert name in page.locator("#account").inner_text()
    ui.shot("2-signed-in")

    page.click("#welcome-create")
    page.locator("#panel[data-kind='kb'] #kb-new:not([hidden])").wait_for()
    assert page.locator("#kb-new-title").inner_text() == "Create your first knowledge base"
    page.fill("#kb-new-name", "harbour")
    page.fill("#kb-new-description", "Harbour Sailing Club papers")
    page.click("#kb-new-create")
    page.wait_for_function("() => document.querySelector('#answer-from').value === 'kb:harbour'")
    page.set_input_files("#kb-files", [str(EXAMPLES / f) for f in CLUB])
    page.wait_for_function(
        "() => ['done', 'failed', 'partial'].includes("
        "document.querySelector('.job')?.dataset.state)",
        timeout=120_000,
    )
    job = page.locator(".job").first
    assert job.get_attribute("data-state") == "done", job.inner_text()
    assert "Added 3 documents" in job.inner_text()
    for f in CLUB:
        page.locator(".doc", has_text=f).wait_for()
    ui.shot("3-uploaded")
    page.click("#panel-close")
    assert page.locator(".welcome[data-step='ask']").is_visible()

    cell = ui.ask("How much is a mooring?")
    assert "410 EUR" in cell.locator(".msg-body").inner_text()
    assert any(ROW in c for c in chips(cell)), chips(cell)
    glued = cell.locator(".cite-glue").first.inner_text()
    assert glued.endswith("."), glued  # the full stop stays with its marker
    ui.shot("4-cell-cited-to-its-row")

    sentence = ui.ask("Who is the race officer?")
    assert "Helen Park" in sentence.locator(".msg-body").inner_text()
    assert any("0:19–0:31" in c for c in chips(sentence)), chips(sentence)
    sentence.locator(".chip").first.click()
    page.locator("#panel[data-kind='source']").wait_for()
    assert "Helen Park" in page.locator("#panel").inner_text()
    ui.shot("5-sentence-cited-to-its-cue")
    page.click("#panel-close")

    # An API key made in the page is the same person over /v1.
    page.click("#account")
    page.fill("#key-name", "laptop")
    page.click("#key-create")
    secret = page.locator("#key-secret-value").inner_text()
    assert secret.startswith("rc_")
    ui.shot("6-api-key")
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=secret, max_retries=0)
    assert "kb/harbour" in [m.id for m in client.models.list()]
    for question, where in (("How much is a mooring?", ROW), ("Who is the race officer?", CUE)):
        done = client.chat.completions.create(
            model="kb/harbour", messages=[{"role": "user", "content": question}]
        )
        cited = [c["location"] for c in (done.model_extra or {})["citations"]]
        assert cited == [where], (question, cited)

    # Another browser, narrow: the same conversations, and "Answer from" where they left it.
    other = ui_factory(server, viewport=NARROW)
    other.open()
    sign_in(other, name.upper())
    assert answer_from(other) == "kb:harbour"
    box = other.page.locator("#answer-from").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"]
    other.shot("7-second-browser-narrow")
    other.page.click("#toggle-sidebar")
    assert other.page.locator(".conv-item").count() == 1  # the conversation of the questions
    other.page.locator(".conv-item .conv-open").first.click()
    other.page.locator("article.msg-assistant").nth(1).wait_for()
    other.page.wait_for_function("() => !document.body.classList.contains('sidebar-open')")
    other.page.wait_for_timeout(300)  # the sidebar's slide
    assert any(ROW in c for c in chips(other.page.locator("article.msg-assistant").first))
    other.shot("8-the-same-conversation")


def test_uploads_go_to_your_own_and_a_file_without_text_says_why(ui: UI, tmp_path: Path) -> None:
    page = ui.page
    page.click("#open-kb")
    page.locator("#panel[data-kind='kb']").wait_for()
    # Nothing of one's own yet: the panel opens on creating one, and a sample is read-only.
    page.locator("#kb-new:not([hidden])").wait_for()
    page.select_option("#kb-select", "medical")
    assert page.locator(".kb-readonly").is_visible()
    assert page.locator(".dropzone").is_hidden()
    ui.shot("sample-read-only")
    page.click("#kb-readonly-create")
    page.fill("#kb-new-name", f"notes-{uuid.uuid4().hex[:6]}")
    page.click("#kb-new-create")
    page.locator(".dropzone").wait_for()
    empty = tmp_path / "empty.md"
    empty.write_text("")
    rules = tmp_path / "Règlement du club – été 2026.md"
    rules.write_text("# Règlement\n\nLe club ouvre à neuf heures le samedi.\n")
    page.set_input_files("#kb-files", [str(empty), str(rules)])
    page.wait_for_function(
        "() => ['done', 'failed', 'partial'].includes("
        "document.querySelector('.job')?.dataset.state)",
        timeout=120_000,
    )
    job = page.locator(".job").first
    assert job.get_attribute("data-state") == "partial"
    assert "empty.md: the file is empty" in job.locator(".job-errors").inner_text()
    page.locator(".doc", has_text="Règlement du club – été 2026.md").wait_for()
    assert page.locator(".doc", has_text="empty.md").count() == 0
    ui.shot("failed-file-and-its-name")


def test_markers_wait_quietly_for_their_sources_while_streaming(ui: UI) -> None:
    out = ui.page.evaluate(
        """async () => {
          const md = await import('/static/js/markdown.js');
          const box = document.createElement('div');
          const text = 'A mooring is 410 EUR [1].';
          box.append(md.renderMarkdown(text, {citations: [], streaming: true}));
          return {text: box.textContent, pending: box.querySelectorAll('.cite-pending').length,
                  glue: box.querySelector('.cite-glue')?.textContent};
        }"""
    )
    assert "[1]" not in out["text"] and out["pending"] == 1
    assert out["glue"] == "EUR1."


def test_a_server_for_account_holders_only_asks_to_sign_in_first(
    ui_factory: Any, make_server: Any
) -> None:
    """With anonymous use off, the page is the sign-in form; the session cookie the browser
    gets is HttpOnly and SameSite=Lax, and signing out ends it."""
    server = make_server(
        RAGCHAT_AUTH__ANONYMOUS="false", RAGCHAT_API__BOOTSTRAP_KNOWLEDGE_BASES="false"
    )
    ui = ui_factory(server)
    ui.open()
    page = ui.page
    assert page.locator("body[data-gate='sign-in'] #auth-form").is_visible()
    assert page.locator("#composer").is_hidden()
    assert not [c for c in page.context.cookies() if c["name"].startswith("ragchat")]
    ui.shot("gate")
    page.fill("#auth-username", "nobody")
    page.fill("#auth-password", "wrong password")
    page.click("#auth-submit")
    page.locator("#auth-error:not([hidden])").wait_for()
    assert "Wrong sign-in name or password." in page.locator("#auth-error").inner_text()
    page.click("#auth-toggle")
    page.fill("#auth-username", "grace")
    page.fill("#auth-password", PASSWORD)
    with page.expect_navigation():
        page.click("#auth-submit")
    page.wait_for_selector("body[data-ready='true']")
    assert page.locator("#composer").is_visible()
    [session] = [c for c in page.context.cookies() if c["name"] == "ragchat_session"]
    assert session["httpOnly"] and session["sameSite"] == "Lax"
    assert page.evaluate("() => document.cookie") == ""  # no script can read it
    page.click("#account")
    with page.expect_navigation():
        page.click("#sign-out")
    page.wait_for_selector("body[data-ready='true']")
    assert page.locator("body[data-gate='sign-in']").count() == 1
    stale = page.request.get(
        f"{server.url}/users/me", headers={"Cookie": f"ragchat_session={session['value']}"}
    )
    assert stale.status == 401
