"""Query expansion: rewrite a query into variations that the retriever searches and fuses.

The retriever calls an expander only when the first pass looks weak, searches every variation
and fuses all passes with RRF. ``PRFExpander`` works offline; ``LLMExpander``
(``ragchat.retrieve.llm_expansion``) asks the chat model and falls back to it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ragchat.types import RetrievalResult

_WORD = re.compile(r"\w+", re.UNICODE)

# A small English list; bm25s's own list (33 words) is merged in when importable.
_STOPWORD_TEXT = """
    a about above after again against all also am an and any are as at be because been before
    being below between both but by can could did do does doing down during each either else
    etc even ever every few for from further get gets got had has have having he her here hers
    him his how however i if in into is it its itself just less like made make many may me
    might more most much must my neither no nor not now of off often on once one only or other
    our ours out over own per rather same she should since so some such than that the their
    them then there these they this those through thus to too under until up upon us use used
    uses using very via was we were what when where whether which while who whom whose why
    will with within without would yet you your yours
"""
_STOPWORDS = frozenset(_STOPWORD_TEXT.split())
try:  # pragma: no cover - depends on the installed bm25s
    from bm25s.stopwords import STOPWORDS_EN as _BM25S_STOPWORDS

    STOPWORDS: frozenset[str] = _STOPWORDS | frozenset(_BM25S_STOPWORDS)
except ImportError:  # pragma: no cover
    STOPWORDS = _STOPWORDS


@runtime_checkable
class QueryExpander(Protocol):
    def expand(self, query: str, result_so_far: RetrievalResult) -> list[str]:
        """Variations of ``query`` to search in addition to it (may be empty)."""
        ...


@dataclass(frozen=True)
class Expansion:
    """Variations and the method that produced them (the retriever notes it in the result)."""

    variants: list[str]
    method: str


@runtime_checkable
class ExplainedExpander(Protocol):
    """An expander that may fall back to another method and says which one ran."""

    def expansion(self, query: str, result_so_far: RetrievalResult) -> Expansion: ...


def run_expander(expander: QueryExpander, query: str, result_so_far: RetrievalResult) -> Expansion:
    """The expander's variations and the method that produced them: its ``expansion()``
    when it has one, else ``expand()`` and its ``name`` (or class name)."""
    if isinstance(expander, ExplainedExpander):
        return expander.expansion(query, result_so_far)
    name = getattr(expander, "name", type(expander).__name__)
    return Expansion(expander.expand(query, result_so_far), str(name))


def terms(text: str) -> list[str]:
    """Lower-cased words of 3+ characters that are not numbers or stopwords."""
    return [
        w
        for w in (m.lower() for m in _WORD.findall(text))
        if len(w) >= 3 and not w.isdigit() and w not in STOPWORDS
    ]


def _stem(word: str) -> str:
    """Crude plural folding so "cats" does not count as new next to "cat"."""
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


class PRFExpander:
    """Pseudo-relevance feedback: assume the top ``feedback_docs`` hits are relevant and add
    their most characteristic words to the query.

    A term's weight is ``sum over feedback hits of w_hit * (1 + ln tf)``, where
    ``w_hit = (score / best score) / rank``: frequent in the best hits, shared by several, and
    a weak third hit (dense and hybrid modes always return *something*) barely counts. Terms
    below ``min_share`` of the best term's weight are dropped rather than padding the query.
    Stopwords and words already in the query (plural-folded) are skipped. No corpus statistics
    are needed, so it works on any ``SearchableKB``.
    """

    name = "prf"

    def __init__(self, feedback_docs: int = 3, n_terms: int = 6, min_share: float = 0.1) -> None:
        if feedback_docs < 1 or n_terms < 1:
            raise ValueError("feedback_docs and n_terms must be >= 1")
        self.feedback_docs = feedback_docs
        self.n_terms = n_terms
        self.min_share = min_share

    def expansion_terms(self, query: str, result_so_far: RetrievalResult) -> list[str]:
        in_query = {_stem(w.lower()) for w in _WORD.findall(query)}
        feedback = result_so_far.hits[: self.feedback_docs]
        best = feedback[0].score if feedback else 0.0
        weight: dict[str, float] = {}
        for rank, hit in enumerate(feedback, start=1):
            share = max(hit.score, 0.0) / best if best > 0 else 1.0
            counts: dict[str, int] = {}
            for word in terms(hit.chunk.text):
                if _stem(word) not in in_query:
                    counts[word] = counts.get(word, 0) + 1
            for word, tf in counts.items():
                weight[word] = weight.get(word, 0.0) + share * (1.0 + math.log(tf)) / rank
        ranked = sorted(weight.items(), key=lambda item: (-item[1], item[0]))
        cutoff = ranked[0][1] * self.min_share if ranked else 0.0
        chosen: list[str] = []
        seen: set[str] = set()
        for word, w in ranked:
            if w < cutoff or w <= 0:
                break
            if _stem(word) in seen:
                continue
            seen.add(_stem(word))
            chosen.append(word)
            if len(chosen) == self.n_terms:
                break
        return chosen

    def expand(self, query: str, result_so_far: RetrievalResult) -> list[str]:
        extra = self.expansion_terms(query, result_so_far)
        return [f"{query} {' '.join(extra)}"] if extra else []
