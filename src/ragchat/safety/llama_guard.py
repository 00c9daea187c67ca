"""Llama Guard 3 moderation through any ``ChatModel``, and the combinator that runs several
classifiers and keeps the first unsafe verdict.

The conversation is rendered in the Llama Guard 3 prompt format and sent as ONE user message
(``prompt="formatted"``). Servers that apply Llama Guard's own chat template to plain
conversations (e.g. Ollama's ``llama-guard3``, vLLM with the model's template) would wrap that
prompt a second time: use ``prompt="raw"`` there, which sends the conversation as user/assistant
messages. The reply (``safe`` or ``unsafe\\nS1,S11``) is parsed leniently. Llama Guard has no
prompt-injection category: combine it with the offline classifier for that."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Iterable, Sequence
from typing import Literal

from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.safety.base import (
    CODE_CATEGORIES,
    DEFAULT_BLOCKED,
    SafetyClassifier,
    SafetyVerdict,
    most_severe,
    validate_categories,
)
from ragchat.safety.combine import gather_verdicts

log = logging.getLogger(__name__)

# Llama Guard 3 hazard taxonomy (MLCommons), as in the model card's prompt.
LLAMA_GUARD_CATEGORIES: tuple[tuple[str, str], ...] = (
    ("S1", "Violent Crimes."),
    ("S2", "Non-Violent Crimes."),
    ("S3", "Sex Crimes."),
    ("S4", "Child Exploitation."),
    ("S5", "Defamation."),
    ("S6", "Specialized Advice."),
    ("S7", "Privacy."),
    ("S8", "Intellectual Property."),
    ("S9", "Indiscriminate Weapons."),
    ("S10", "Hate."),
    ("S11", "Self-Harm."),
    ("S12", "Sexual Content."),
    ("S13", "Elections."),
    ("S14", "Code Interpreter Abuse."),
)

# Older turns add little to judging the last message and cost tokens.
_MAX_HISTORY_TURNS = 6
_MAX_CHARS = 4000
_VERDICT = re.compile(r"\b(unsafe|safe)\b", re.IGNORECASE)
_CODE = re.compile(r"\bS(\d{1,2})\b", re.IGNORECASE)
_ROLES = {"user": "User", "assistant": "Agent"}


def _clip(text: str) -> str:
    text = text.strip()
    return (
        text
        if len(text) <= _MAX_CHARS
        else text[: _MAX_CHARS // 2] + " … " + text[-_MAX_CHARS // 2 :]
    )


def _turns(text: str, history: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    turns = [(r, c) for r, c in history if r in _ROLES and c.strip()][-_MAX_HISTORY_TURNS:]
    return [*turns, ("user", text)]


def format_prompt(text: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """The Llama Guard 3 prompt judging the last user message of the conversation."""
    categories = "\n".join(f"{code}: {name}" for code, name in LLAMA_GUARD_CATEGORIES)
    conversation = "\n\n".join(f"{_ROLES[r]}: {_clip(c)}" for r, c in _turns(text, history))
    return (
        "Task: Check if there is unsafe content in 'User' messages in conversations according "
        "our safety policy with the below categories.\n\n"
        "<BEGIN UNSAFE CONTENT CATEGORIES>\n"
        f"{categories}\n"
        "<END UNSAFE CONTENT CATEGORIES>\n\n"
        "<BEGIN CONVERSATION>\n\n"
        f"{conversation}\n\n"
        "<END CONVERSATION>\n\n"
        "Provide your safety assessment for ONLY THE LAST User message in the above "
        "conversation:\n"
        " - First line must read 'safe' or 'unsafe'.\n"
        " - If unsafe, a second line must include a comma-separated list of violated "
        "categories."
    )


def parse_reply(reply: str) -> tuple[bool, list[str]] | None:
    """``(is_safe, codes)`` from a Llama Guard reply, or ``None`` when it says neither.
    Codes are normalised (``"s11"`` → ``"S11"``) and kept in order, without duplicates."""
    match = _VERDICT.search(reply)
    if match is None:
        return None
    if match.group(1).lower() == "safe":
        return True, []
    codes: list[str] = []
    for number in _CODE.findall(reply[match.end() :]):
        code = f"S{int(number)}"
        if code not in codes:
            codes.append(code)
    return False, codes


class LlamaGuardClassifier:
    """Never raises on model trouble: errors, time-outs and unreadable replies go to
    ``fallback`` (the offline classifier), and the verdict's reason says so. Without a fallback
    such a message is let through (logged), since the chat model is then most likely down too."""

    def __init__(
        self,
        chat_model: ChatModel,
        *,
        blocked: Iterable[str] = DEFAULT_BLOCKED,
        fallback: SafetyClassifier | None = None,
        timeout: float | None = 30.0,
        prompt: Literal["formatted", "raw"] = "formatted",
    ) -> None:
        self.chat_model = chat_model
        self.blocked = validate_categories(blocked)
        self.fallback = fallback
        self.timeout = timeout
        self.prompt = prompt
        self._options = GenerationOptions(temperature=0.0, max_tokens=20)

    def messages(self, text: str, history: Sequence[tuple[str, str]] = ()) -> list[Message]:
        if self.prompt == "raw":
            return [
                Message("user" if r == "user" else "assistant", _clip(c))
                for r, c in _turns(text, history)
            ]
        return [Message("user", format_prompt(text, history))]

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        try:
            call = self.chat_model.generate(self.messages(text, history), options=self._options)
            result = await asyncio.wait_for(call, self.timeout)
        except AssertionError:
            raise  # a failing test double, not a model error
        except Exception as exc:  # any backend failure: never block the chat on moderation
            # Only the type: provider error messages may quote the request.
            why = f"moderation model failed ({type(exc).__name__})"
            return await self._fall_back(text, history, why)
        parsed = parse_reply(result.content)
        if parsed is None:
            # The reply is not quoted: a confused model may echo the user's message.
            why = f"unreadable moderation reply ({len(result.content)} characters)"
            return await self._fall_back(text, history, why)
        return self._verdict(*parsed)

    def _verdict(self, is_safe: bool, codes: list[str]) -> SafetyVerdict:
        if is_safe:
            return SafetyVerdict.allow("llama-guard: safe", score=0.0)
        categories = [CODE_CATEGORIES[c] for c in codes if c in CODE_CATEGORIES]
        listed = ",".join(codes) or "none"
        if not categories:
            # "unsafe" without a known code: the model did flag the message, so block it.
            return SafetyVerdict.block(None, reason=f"llama-guard: unsafe (codes {listed})")
        blocked = [c for c in categories if c in self.blocked]
        if blocked:
            return SafetyVerdict.block(
                most_severe(blocked), reason=f"llama-guard: unsafe (codes {listed})"
            )
        return SafetyVerdict.allow(
            f"llama-guard: flagged {listed}, not blocked by policy",
            score=1.0,
            category=most_severe(categories),
        )

    async def _fall_back(
        self, text: str, history: Sequence[tuple[str, str]], why: str
    ) -> SafetyVerdict:
        if self.fallback is None:
            log.error("safety: %s; no fallback classifier, message allowed", why)
            return SafetyVerdict.allow(f"llama-guard unavailable: {why}; no fallback")
        log.warning("safety: %s; using the fallback classifier", why)
        verdict = await self.fallback.classify(text, history)
        return SafetyVerdict(
            verdict.safe,
            verdict.category,
            verdict.code,
            verdict.score,
            f"fallback after llama-guard failure ({why}): {verdict.reason}",
        )


class CombinedClassifier:
    """Runs every classifier concurrently and returns the first unsafe verdict in list order.
    When all are safe, returns a safe verdict merging their reasons (and the first detected,
    unblocked category). A classifier that raises is logged and skipped; if all raise, the
    first error propagates."""

    def __init__(self, classifiers: Sequence[SafetyClassifier]) -> None:
        if not classifiers:
            raise ValueError("CombinedClassifier needs at least one classifier")
        self.classifiers = tuple(classifiers)

    async def classify(self, text: str, history: Sequence[tuple[str, str]] = ()) -> SafetyVerdict:
        verdicts = await gather_verdicts(self.classifiers, text, history)
        for verdict in verdicts:
            if not verdict.safe:
                return verdict
        flagged = next((v for v in verdicts if v.category), None)
        return SafetyVerdict(
            True,
            flagged.category if flagged else None,
            flagged.code if flagged else None,
            max(v.score for v in verdicts),
            "; ".join(v.reason for v in verdicts if v.reason),
        )
