"""``ragchat users``: accounts made by an operator (add, list, set a new password), for a
server where sign-up is off (``RAGCHAT_AUTH__SIGN_UP=false``) or to give someone an account.
Safe while the server runs: it only writes the account's rows."""

from __future__ import annotations

import getpass
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from ragchat.cli_common import DataDir, console, err, exit_on_error, load_settings
from ragchat.settings import Settings

if TYPE_CHECKING:  # the API's modules load FastAPI: not for every command
    from ragchat.api.services.accounts import AccountService
    from ragchat.store.sql import SqlStore

users_app = typer.Typer(add_completion=False, no_args_is_help=True, help="Accounts of the page.")

PasswordStdin = Annotated[
    bool,
    typer.Option(
        "--password-stdin", help="Read the password from the first line of stdin (scripts)."
    ),
]


def _password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password: ")
    if getpass.getpass("Again: ") != first:
        err.print("[red]The two passwords differ.[/]")
        raise typer.Exit(2)
    return first


def _service(settings: Settings) -> tuple[SqlStore, AccountService]:
    from ragchat.api.limits import RateLimits
    from ragchat.api.services.accounts import AccountService
    from ragchat.store import build_store

    store = build_store(settings, recover=False)  # a running server's replies are its own
    return store, AccountService(settings.auth, store, RateLimits(0, 0))


def _refused(exc: Exception) -> None:
    from ragchat.api.errors import ApiError

    if isinstance(exc, ApiError):
        err.print(f"[red]error:[/] {exc.message}")
        raise typer.Exit(2) from None
    raise exc


@users_app.command("add")
def add(
    username: Annotated[str, typer.Argument(help="The sign-in name (letters, digits, . _ @ -).")],
    display_name: Annotated[
        str | None, typer.Option("--display-name", help="How the page greets them.")
    ] = None,
    password_stdin: PasswordStdin = False,
    data_dir: DataDir = None,
) -> None:
    """Create an account; the person signs in on the page with this name and password."""
    settings = load_settings(data_dir)
    password = _password(password_stdin)
    with exit_on_error():
        store, accounts = _service(settings)
        try:
            user = accounts.add(username, password, display_name)
        except Exception as exc:
            _refused(exc)
            return
        finally:
            store.close()
    console.print(f"Created the account [bold]{user.login}[/]: sign in on the page with it.")


@users_app.command("list")
def list_accounts(data_dir: DataDir = None) -> None:
    """The accounts, with when each was made and last seen."""
    settings = load_settings(data_dir)
    with exit_on_error():
        store, _ = _service(settings)
        try:
            accounts = store.list_accounts()
        finally:
            store.close()
    table = Table("sign-in name", "display name", "created", "last seen")
    for user in accounts:
        table.add_row(
            user.login or "",
            user.display_name or "",
            f"{user.created_at:%Y-%m-%d %H:%M}",
            f"{user.last_seen_at:%Y-%m-%d %H:%M}",
        )
    console.print(table if accounts else "No accounts yet: ragchat users add NAME")


@users_app.command("passwd")
def passwd(
    username: Annotated[str, typer.Argument(help="The account's sign-in name.")],
    password_stdin: PasswordStdin = False,
    data_dir: DataDir = None,
) -> None:
    """Set a new password (every page session of the account ends)."""
    from ragchat.api.services.accounts import normalize_login

    settings = load_settings(data_dir)
    password = _password(password_stdin)
    with exit_on_error():
        store, accounts = _service(settings)
        try:
            login = normalize_login(username)
            found = store.account_for_login(login)
            if found is None:
                err.print(f"[red]error:[/] no account {login!r} (ragchat users list)")
                raise typer.Exit(3)
            accounts.passwords.check_new(password)
            store.set_password_hash(found[0].id, accounts.passwords.hash(password))
            store.end_web_sessions(found[0].id)
        except typer.Exit:
            raise
        except Exception as exc:
            _refused(exc)
        finally:
            store.close()
    console.print(f"New password set for [bold]{login}[/]; their sessions have ended.")
