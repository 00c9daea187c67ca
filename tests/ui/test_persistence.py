"""Identity and conversations survive a reload and a server restart (the signed cookie's
secret and the database live in the data directory)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import UI, Server

pytestmark = pytest.mark.integration


def test_conversations_survive_a_server_restart(
    ui_factory: Callable[..., UI], make_server: Callable[[], Server]
) -> None:
    server = make_server()
    ui = ui_factory(server)
    ui.open()
    ui.ask("How much sleep does a toddler need?")
    page = ui.page
    page.wait_for_function(
        "() => document.querySelector('#conv-title').textContent !== 'New chat'", timeout=20_000
    )
    title = page.locator("#conv-title").inner_text()
    url = page.url
    user = ui.api("GET", "/users/me")["id"]

    server.stop()
    make_server()  # same data directory, same port
    page.goto(url)
    page.wait_for_selector("body[data-ready='true']")
    assert ui.api("GET", "/users/me")["id"] == user
    assert page.locator("#conv-title").inner_text() == title
    assert page.locator(".conv-item.active .conv-title-text").inner_text() == title
    assert "toddler" in page.locator("article.msg-user").inner_text()
    assert page.locator("article.msg-assistant .chip").count() >= 1
    ui.shot("after-restart")

    # A new browser profile is someone else: it sees none of this.
    stranger = ui_factory(server)
    stranger.open()
    assert stranger.page.locator(".conv-item").count() == 0
