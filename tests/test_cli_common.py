"""What every command shares: errors print as written, with their exit code."""

from __future__ import annotations

import pytest
import typer

from ragchat.cli_common import exit_on_error
from ragchat.errors import ConfigError, PortInUse


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (
            ConfigError(
                "the qdrant vector store needs qdrant-client: pip install 'ragchat[qdrant]'"
            ),
            2,
        ),
        (PortInUse("port 8000 on 127.0.0.1 is in use: [bold]--port 8001[/bold]"), 9),
    ],
)
def test_error_messages_print_literally(
    error: Exception, code: int, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(typer.Exit) as exited, exit_on_error():
        raise error
    assert exited.value.exit_code == code
    printed = " ".join(capsys.readouterr().err.split())
    assert printed == f"error: {error}"
