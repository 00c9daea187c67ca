"""004, the textbook server: ``POST /api/query {question, context, use_context_only, top_k,
chapter_id}`` → ``{answer, sources[{chunk_id, chapter_id, section_id, section_title,
preview_text, relevance_score}], query_time_ms, mode}``, 400 for a question under 3 characters
or context-only mode without context. Its client keeps no cookie."""

from __future__ import annotations

import httpx

SOURCE_FIELDS = {
    "chunk_id",
    "chapter_id",
    "section_id",
    "section_title",
    "preview_text",
    "relevance_score",
}


def ask(client: httpx.Client, **body: object) -> httpx.Response:
    return client.post("/api/query", json=body)


def test_book_wide(cookieless: httpx.Client) -> None:
    r = ask(cookieless, question="Why are alveoli well suited to gas exchange?")
    assert r.status_code == 200, r.text
    body = r.json()
    assert set(body) == {"answer", "sources", "query_time_ms", "mode"}
    assert body["mode"] == "book-wide" and body["answer"]
    assert isinstance(body["query_time_ms"], int) and body["query_time_ms"] >= 0
    source = body["sources"][0]
    assert set(source) == SOURCE_FIELDS
    assert source["chapter_id"] == 3 and source["chunk_id"] and source["section_title"]
    assert len(source["preview_text"]) <= 200 and source["relevance_score"] >= 0


def test_chapter_aware_takes_a_chapter_number(cookieless: httpx.Client) -> None:
    r = ask(cookieless, question="What does the sinoatrial node do?", chapter_id=2, top_k=3)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mode"] == "chapter-aware"
    assert body["sources"] and {s["chapter_id"] for s in body["sources"]} == {2}
    assert len(body["sources"]) <= 3


def test_selected_text_only_cites_the_selection(cookieless: httpx.Client) -> None:
    passage = (
        "The zebrafish heart has two chambers. Its single atrium collects blood and its "
        "single ventricle pumps it to the gills."
    )
    r = ask(
        cookieless,
        question="How many chambers does the zebrafish heart have?",
        context=passage,
        use_context_only=True,
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mode"] == "selected-text-only" and "two" in body["answer"].lower()
    assert body["sources"] == [
        {
            "chunk_id": "selected-text",
            "chapter_id": None,
            "section_id": "selected",
            "section_title": "Selected Text",
            "preview_text": passage[:200],
            "relevance_score": 1.0,
        }
    ]


def test_400s_say_what_is_wrong(cookieless: httpx.Client) -> None:
    short = ask(cookieless, question="hi")
    assert short.status_code == 400 and "3 characters" in short.json()["detail"]
    no_context = ask(cookieless, question="What is this about?", use_context_only=True)
    assert no_context.status_code == 400 and "context" in no_context.json()["detail"]
    assert ask(cookieless, question="What is a cell?", top_k=0).status_code == 422


def test_a_question_the_book_does_not_cover_is_refused_in_its_words(
    cookieless: httpx.Client, deployed: httpx.Client
) -> None:
    r = ask(cookieless, question="Who won the 1998 football world cup final?")
    assert r.status_code == 200, r.text
    assert r.json()["answer"].startswith("This is not covered in the book")
    assert r.json()["sources"] == []
    # A deployment sets its own (``RAGCHAT_COMPAT__NO_ANSWER_MESSAGES``).
    own = ask(deployed, question="Who won the 1998 football world cup final?")
    assert own.json()["answer"].startswith("Not in this book, sorry.")
    # The textbook server answers from the book only, even where another knowledge base of
    # ragchat's would (``POST /query`` looks for it).
    other = ask(cookieless, question="What is a migraine aura?")
    assert other.json()["answer"].startswith("This is not covered in the book")


def test_root_describes_the_service_to_api_clients(cookieless: httpx.Client) -> None:
    r = cookieless.get("/")
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"name", "version", "status", "docs", "health"}
    assert body["status"] == "running" and body["docs"] == "/docs"
    assert (
        body["health"] == "/health"
        and body["version"] == cookieless.get("/health").json()["version"]
    )
    assert r.headers["vary"] == "Accept"
    # A browser still gets the chat page.
    page = cookieless.get("/", headers={"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"})
    assert page.headers["content-type"].startswith("text/html")
