"""The hand-written refusal checks as named components in one ordered registry (the shape of
``safety/rules``). The rules answerer (``RAGCHAT_AGENTS__READER=rules``) runs ``BEFORE`` on
what was retrieved and ``AFTER`` on what it would quote; the first check that fires is the
refusal's name (``check:<name>`` in the turn's decision). The trained reader does not refuse
by them: it reads the same signals as features (``signals.py``), because as hard refusals on
top of it every one but ``renumbered`` refused more answerable questions than unanswerable
ones on the validation split (docs/benchmarks/answers.md). What each check means is in
``coverage.py``'s docstring."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Generic, TypeVar

from ragchat.embed.base import Embedder
from ragchat.reader import coverage as cov
from ragchat.reader.text import content_stems, stem, words
from ragchat.types import Hit

C = TypeVar("C")


class Before:
    """The question over the retrieved passages; the far words are found once for every check
    that reads them (word vectors are the costly part)."""

    def __init__(self, query: str, hits: Sequence[Hit], embedder: Embedder | None) -> None:
        self.query, self.hits, self.embedder = query, hits, embedder

    @cached_property
    def key_count(self) -> int:
        return self._missing[1]

    @cached_property
    def _missing(self) -> tuple[list[str], int]:
        missing, n_key = cov.missing_terms(self.query, self.hits)
        return cov._counted(self.query, missing), n_key

    @cached_property
    def far(self) -> list[str]:
        counted, n_key = self._missing
        # Not even with every missing word far would a check fire (each is monotone in the far
        # words): no word vectors needed.
        if not n_key or not counted or not _any_fires(counted, n_key):
            return []
        plain = [w for w in counted if not cov.named(w)]
        texts = [cov.hit_text(h) for h in self.hits[: cov.VOCAB_HITS]]
        embedder = self.embedder
        close = cov.near(plain, texts, embedder) if plain and embedder is not None else set()
        return [w for w in counted if w not in close]


@dataclass(frozen=True)
class After:
    """The question over the sentences the reply would quote and the headings above them."""

    query: str
    texts: Sequence[str]
    labels: Sequence[str]
    embedder: Embedder | None


@dataclass(frozen=True)
class Check(Generic[C]):
    name: str
    fires: Callable[[C], bool]


def _far_share(far: Sequence[str], n_key: int) -> bool:
    return len(far) / n_key >= cov.MISSING_SHARE


def _far_names(far: Sequence[str], n_key: int) -> bool:
    return sum(cov.named(w) for w in far) / n_key >= cov.NAMED_MISSING_SHARE


def _far_specific(far: Sequence[str], n_key: int) -> bool:
    # A verb form ("handling", "founded") seldom names what the question is about.
    specific = [
        w for w in far
        if not cov.named(w) and cov._zipf(w) < cov.SPECIFIC_ZIPF and not cov._VERB_FORM.search(w)
    ]  # fmt: skip
    return bool(specific) and len(far) / n_key > cov.FOCUS_SHARE


_FAR = (_far_share, _far_names, _far_specific)


def _any_fires(far: Sequence[str], n_key: int) -> bool:
    return any(rule(far, n_key) for rule in _FAR)


def _on_far(rule: Callable[[Sequence[str], int], bool]) -> Callable[[Before], bool]:
    return lambda b: bool(b.far) and rule(b.far, b.key_count)


def _measure_unmet(a: After) -> bool:
    return bool(a.texts) and any(
        ask.search(a.query) and not any(value.search(t) for t in a.texts)
        for ask, value in cov._MEASURES
    )


def _other_column(a: After) -> bool:
    label = a.labels[0] if a.labels else ""
    return bool(a.texts) and cov._other_column(a.query, a.texts[0], label, a.embedder)


def _uncounted(a: After) -> bool:
    return bool(a.texts) and cov._uncounted(a.query, a.texts, a.embedder)


def _too_little(a: After) -> bool:
    key, said = cov.key_terms(a.query)
    key -= cov._generic_stems(a.query)
    if len(key) < 2:
        return False
    for text in [*a.texts, *a.labels]:
        said |= content_stems(text)
    if not cov._too_little(a.query, key, said):
        return False
    if a.embedder is None:
        return True
    by_stem = {stem(w): w for w in words(a.query)}
    asked = [by_stem.get(s, s) for s in sorted(key - said)]
    # A reply word that is itself a key term cannot stand in for another ("Alcohol is not
    # reimbursed" does not answer "drink alcohol with amoxicillin" twice over).
    rest = " ".join(w for t in [*a.texts, *a.labels] for w in words(t) if stem(w) not in key)
    said |= {stem(w) for w in cov.near(asked, [rest], a.embedder)}
    return cov._too_little(a.query, key, said)


BEFORE: tuple[Check[Before], ...] = (
    Check("renumbered", lambda b: cov._renumbered(b.query, b.hits)),
    Check("far_terms", _on_far(_far_share)),
    Check("far_names", _on_far(_far_names)),
    Check("far_specific", _on_far(_far_specific)),
)
AFTER: tuple[Check[After], ...] = (
    Check("measure_unmet", _measure_unmet),
    Check("other_column", _other_column),
    Check("uncounted", _uncounted),
    Check("too_little", _too_little),
)


def first(checks: Sequence[Check[C]], ctx: C) -> str | None:
    """The name of the first check in ``checks`` that fires on ``ctx``, or None."""
    return next((c.name for c in checks if c.fires(ctx)), None)


def refused_before(query: str, hits: Sequence[Hit], embedder: Embedder | None) -> str | None:
    return first(BEFORE, Before(query, hits, embedder))


def refused_after(
    query: str, texts: Sequence[str], labels: Sequence[str], embedder: Embedder | None
) -> str | None:
    return first(AFTER, After(query, texts, labels, embedder))
