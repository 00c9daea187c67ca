"""What a person sees when the server refuses: the rate limit's message on the reply, and the
question given back to the message box to send again."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import UI, Server

pytestmark = pytest.mark.integration


def test_rate_limited_question_is_explained_and_kept(
    ui_factory: Callable[..., UI], make_server: Callable[..., Server]
) -> None:
    server = make_server(RAGCHAT_API__RATE_LIMIT_PER_MINUTE="1")
    ui = ui_factory(server)
    ui.open()
    ui.ask("What are the side effects of ibuprofen?")
    refused = ui.ask("What is the maximum daily dose of acetaminophen?")
    assert refused.get_attribute("data-status") == "failed"
    assert "Too many requests" in refused.inner_text()
    assert ui.page.locator("#composer-input").input_value() == (
        "What is the maximum daily dose of acetaminophen?"
    )
    ui.shot("rate-limited")
