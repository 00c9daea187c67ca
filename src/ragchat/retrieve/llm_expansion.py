"""Query expansion from the chat model, with pseudo-relevance feedback as the fallback.

A model knows synonyms, lay and technical terms and spelled-out abbreviations that appear in
no retrieved passage, which PRF (words of the first hits) cannot supply. But the model is
optional and fallible, and retrieval must never fail because of expansion: any model error,
a timeout or a reply without usable variations falls back to ``PRFExpander``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable

from ragchat.errors import LLMError
from ragchat.llm.base import ChatModel, GenerationOptions, Message
from ragchat.llm.parsing import parse_string_list
from ragchat.llm.sync import run_blocking
from ragchat.retrieve.expansion import Expansion, PRFExpander, QueryExpander
from ragchat.types import RetrievalResult

log = logging.getLogger(__name__)

EXPANSION_PROMPT = (
    "You help a search engine find passages in a document collection. Write {n} different "
    "search queries for the user's question: rephrasings, synonyms, the technical and the "
    "everyday term, abbreviations spelled out. Keep each one short and in the language of the "
    "question, and do not answer it. Reply with only a JSON list of strings."
)
DEFAULT_OPTIONS = GenerationOptions(temperature=0.3, max_tokens=160)
MAX_CHARS = 200
_NON_WORD = re.compile(r"\W+", re.UNICODE)


def _key(text: str) -> str:
    """Case, punctuation and spacing folded: "What is X?" repeats "what is x"."""
    return _NON_WORD.sub(" ", text.casefold()).strip()


def clean_variants(
    query: str, candidates: Iterable[str], limit: int, max_chars: int = MAX_CHARS
) -> list[str]:
    """At most ``limit`` variations, whitespace collapsed, cut to ``max_chars`` at a word
    boundary, without empties, repeats or the query itself."""
    seen = {_key(query)}
    out: list[str] = []
    for candidate in candidates:
        text = " ".join(candidate.split())
        if len(text) > max_chars:  # one character more: is the cut on a word boundary?
            head = text[: max_chars + 1]
            text = head.rsplit(" ", 1)[0] if " " in head else text[:max_chars]
        key = _key(text)
        if not key or key in seen:
            continue
        seen.add(key)
        out.append(text)
        if len(out) == limit:
            break
    return out


class LLMExpander:
    """Asks ``model`` for ``n_variants`` variations of the query as a JSON list of strings.

    The retriever is synchronous and ``ChatModel`` is async, so the request runs through
    ``ragchat.llm.sync.run_blocking`` (safe inside a running event loop, where the agents call
    the retriever). ``timeout_s`` bounds the wait: a slow model must not hold a turn for
    all of its retries. ``fallback`` (default ``PRFExpander()``) is used whenever the model
    does not deliver.
    """

    name = "llm"

    def __init__(
        self,
        model: ChatModel,
        *,
        n_variants: int = 3,
        max_chars: int = MAX_CHARS,
        timeout_s: float | None = 30.0,
        options: GenerationOptions | None = None,
        fallback: QueryExpander | None = None,
        prompt: str = EXPANSION_PROMPT,
    ) -> None:
        if n_variants < 1 or max_chars < 1:
            raise ValueError("n_variants and max_chars must be >= 1")
        self.model = model
        self.n_variants = n_variants
        self.max_chars = max_chars
        self.timeout_s = timeout_s
        self.options = options or DEFAULT_OPTIONS
        self.fallback: QueryExpander = fallback if fallback is not None else PRFExpander()
        self.prompt = prompt

    def messages(self, query: str) -> list[Message]:
        system = self.prompt.replace("{n}", str(self.n_variants))
        return [Message("system", system), Message("user", query)]

    async def _ask(self, query: str) -> str:
        reply = await self.model.generate(self.messages(query), options=self.options)
        return reply.content

    def expansion(self, query: str, result_so_far: RetrievalResult) -> Expansion:
        try:
            reply = run_blocking(self._ask(query), timeout=self.timeout_s)
        except (LLMError, TimeoutError) as exc:
            log.warning("query expansion: the chat model failed (%s); using PRF instead", exc)
            return self._fall_back(query, result_so_far, f"llm failed: {type(exc).__name__}")
        parsed = parse_string_list(reply) or []
        variants = clean_variants(query, parsed, self.n_variants, self.max_chars)
        if not variants:
            log.debug("query expansion: no usable variation in %r; using PRF instead", reply[:200])
            return self._fall_back(query, result_so_far, "llm reply unusable")
        return Expansion(variants, self.name)

    def expand(self, query: str, result_so_far: RetrievalResult) -> list[str]:
        return self.expansion(query, result_so_far).variants

    def _fall_back(self, query: str, result_so_far: RetrievalResult, why: str) -> Expansion:
        name = getattr(self.fallback, "name", type(self.fallback).__name__)
        return Expansion(self.fallback.expand(query, result_so_far), f"{name} ({why})")
