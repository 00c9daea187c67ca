"""``ragchat chat``: talk to the agents in a terminal. Thin: the engine does the work; this
reads lines, keeps the session's history and prints replies with numbered citations.

Reads piped stdin until EOF as well, so a conversation can be scripted::

    printf 'What are the side effects of ibuprofen?\\n' | ragchat chat
"""

from __future__ import annotations

import asyncio
import logging
import sys
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markdown import Markdown
from rich.markup import escape

from ragchat.agents.request import TurnRequest
from ragchat.agents.types import ConversationState, TurnOptions, TurnResult
from ragchat.cli_common import exit_on_error
from ragchat.errors import RagchatError
from ragchat.settings import Settings
from ragchat.types import HistoryMessage

if TYPE_CHECKING:  # the engine pulls in LangGraph: seconds of import for every CLI command
    from ragchat.agents.engine import ChatEngine

chat_app = typer.Typer(add_completion=False, help="Chat with the agents in the terminal.")
USER_ID = "cli"
HELP = "Commands: /new (new conversation), /agent (current agent), /quit"


def _new_conversation() -> ConversationState:
    return ConversationState(conversation_id=f"cli-{uuid.uuid4().hex[:8]}")


def _print_result(console: Console, result: TurnResult) -> None:
    note = " (switched)" if result.metadata.routing.reassigned else ""
    console.print(f"[bold magenta]{escape(result.agent)}[/]{note} ›")
    if result.bubbles:
        for bubble in result.bubbles:
            console.print(f"  💬 {escape(bubble)}")
    else:
        console.print(Markdown(result.reply))
    for c in result.citations:
        name = c.title or Path(c.source).name or c.source
        where = f" — {c.location}" if c.location else ""
        console.print(f"  [dim][{c.index}] {escape(name)}{escape(where)}[/]")
    console.print()


async def _session(
    engine: ChatEngine, console: Console, agent: str | None, interactive: bool
) -> None:
    keep = 2 * engine.wiring.settings.history_turns  # messages of history sent with a turn
    conversation = _new_conversation()
    options = TurnOptions(agent=agent)
    if interactive:
        console.print(f"[dim]{HELP}[/]")
    while True:
        try:
            line = console.input("[bold cyan]you ›[/] ") if interactive else input()
        except (EOFError, KeyboardInterrupt):
            break
        line = line.strip()
        if not line:
            continue
        if not interactive:
            console.print(f"[bold cyan]you ›[/] {escape(line)}")
        if line in ("/quit", "/exit"):
            break
        if line == "/new":
            conversation = _new_conversation()
            console.print("[dim]New conversation.[/]\n")
            continue
        if line == "/agent":
            current = agent or conversation.assigned_agent or "none yet (the next message routes)"
            console.print(f"[dim]agent: {escape(current)}[/]\n")
            continue
        if line.startswith("/"):
            console.print(f"[dim]{HELP}[/]\n")
            continue
        try:
            result = await engine.run_turn(
                TurnRequest(line, user_id=USER_ID, conversation=conversation, options=options)
            )
        except RagchatError as exc:
            console.print(f"[bold red]error:[/] {escape(str(exc))}\n")
            continue
        _print_result(console, result)
        conversation.history.extend(
            [
                HistoryMessage("user", line),
                HistoryMessage("assistant", result.reply, agent=result.agent),
            ]
        )
        del conversation.history[: max(0, len(conversation.history) - keep)]
        conversation.assigned_agent = result.metadata.assigned_agent
        conversation.crisis = result.metadata.conversation_crisis
        conversation.user_profile = result.metadata.user_profile or conversation.user_profile


def _build(settings: Settings, kb_or_config: str, console: Console) -> ChatEngine:
    from ragchat import resources
    from ragchat.agents.bootstrap import ensure_knowledge_bases, resolve_config
    from ragchat.agents.factory import build_engine
    from ragchat.llm.factory import build_chat_model
    from ragchat.runtime import prepare_runtime

    prepare_runtime(settings)
    app_config = resolve_config(kb_or_config, settings, must_exist=True)
    embedder = resources.embedder(settings)
    writer = resources.ingest_embedder(settings, embedder)
    for kb in ensure_knowledge_bases(settings, app_config, writer):
        if kb.changed:
            r = kb.report
            console.print(
                f"[dim]ingested {kb.name}: {r.added_files + r.replaced_files} files, "
                f"{r.children} chunks, {len(r.errors)} errors[/]"
            )
    chat_model = build_chat_model(settings)
    return build_engine(settings, app_config, chat_model=chat_model, embedder=embedder)


@chat_app.callback(invoke_without_command=True)
def chat(
    kb_or_config: Annotated[
        str,
        typer.Option(
            "--kb",
            "--config",
            help="'sample' (the bundled agents over the sample knowledge bases), an agents "
            "config file (.toml/.yaml), or the name of an ingested knowledge base.",
        ),
    ] = "sample",
    agent: Annotated[
        str | None, typer.Option("--agent", help="Talk to this agent only (no routing).")
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option("--data-dir", help="Data directory (default: $RAGCHAT_DATA_DIR)."),
    ] = None,
) -> None:
    """Chat in the terminal (offline unless an LLM backend is configured)."""
    settings = Settings()
    if data_dir is not None:
        settings = settings.model_copy(update={"data_dir": data_dir})
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    console = Console()
    with exit_on_error():  # one line and its exit code (a missing knowledge base: 3)
        engine = _build(settings, kb_or_config, console)
    if agent is not None and agent not in engine.agents:
        raise typer.BadParameter(
            f"unknown agent {agent!r}; configured: {', '.join(sorted(engine.agents))}",
            param_hint="--agent",
        )
    asyncio.run(_session(engine, console, agent, sys.stdin.isatty()))
