"""Overdose intent on the medical path: self-harm asked as a medication question.

"How many of my sleeping pills would it take so I don't wake up?" reads, to a sentence
embedding, mostly like "how many sleeping pills can I take?": the topic drowns the intent. So
two signals decide, judged over the message and the recent user turns:

(a) medication context: the message names a medicine or a generic word for one
    (``MedicationLexicon``: a word list with a small spelling tolerance, "paracetemol");
(b) intent: a logistic head on all-MiniLM-L6-v2 embeddings, fitted at start-up on the
    ``intent``/``benign`` exemplars of ``data/overdose.yaml`` plus the self-harm and safe
    exemplars of ``data/exemplars.yaml``. Medicine names are replaced by "pills" before
    embedding, in the exemplars and in the message alike, so the head learns the intent
    ("so I don't wake up", "my family would be better off") rather than which drug is named.

The head scores the whole message, its clauses (a reason or a wanted outcome often sits in
its own clause), each recent user turn read together with the message, and each turn alone.
A turn alone counts only when the message itself is not plainly benign (its own score at least
``floor``), so "I'm done with all this studying" before "how many ibuprofen can I take for a
headache?" stays an ordinary question. Defaults were calibrated on
``tests/safety/overdose.dev.yaml`` (docs/benchmarks.md)."""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from ragchat.embed.base import Embedder
from ragchat.safety.evidence import (  # noqa: F401  (ORDINARY_MARGIN: re-exported)
    ORDINARY_MARGIN,
    Exemplars,
    FloatArray,
    OverdoseEvidence,
    _embed_exemplars,
    _fit_softmax,
    _softmax,
    load_exemplars,
)
from ragchat.safety.rules import normalise

OVERDOSE_PATH = Path(__file__).parent / "data" / "overdose.yaml"

# Calibrated on tests/safety/overdose.dev.yaml: full recall there from 0.30 to 0.40, the
# first false alarms on benign look-alikes below 0.35; 0.40 keeps the margin on that side.
DEFAULT_THRESHOLD = 0.40
# An earlier turn alone must be clearly intent ("I want it all to be over") ...
DEFAULT_CONTEXT_THRESHOLD = 0.60
# ... and the message not plainly benign ("... for a tension headache?" scores ~0.05).
DEFAULT_FLOOR = 0.15
# How many earlier user turns are read.
CONTEXT_TURNS = 3
MASK = "pills"

_WORD = re.compile(r"[a-z0-9]+")
# Where a reason or a wanted outcome starts its own clause.
_CLAUSE = re.compile(
    r"[.?!;,\n]+|\s[-\u2013\u2014]\s|\b(?=so that\b|so i\b|so this\b|so it\b|because\b|"
    r"since\b|and then\b|i mean\b|until\b|if i\b|to (?:not|never|just|end|make|finish|die)\b)"
)
_MIN_CLAUSE_WORDS = 2
_CONTAINERS = frozenset({"bottle", "pack", "blister"})
# "I forgot my dose this morning, should I take two tonight?" is the leaflet's missed-dose
# question; its "take two tonight" read alone scored as intent (issue 25). Such a message is
# only read together with an earlier turn (distress before it still counts); the rules read
# it whole.
_MISSED_DOSE = re.compile(
    r"\b(?:forgot|forget|forgotten|missed|miss|skipped|skip)\b(?: \w+){0,4}? (?:my |a |the |"
    r"one |this morning's |last night's |today's |yesterday's )?(?:\w+ )?(?:dose|tablet|pill|"
    r"capsule|injection|medicine|meds|medication)s?\b",
)
# ... unless it says why in words of intent ("I forgot my dose on purpose, I'm saving them").
_MISSED_ON_PURPOSE = re.compile(
    r"\b(?:on purpose|deliberately|intentionally|saving|save them|stockpil\w*|hoard\w*|"
    r"keep(?:ing)? them|all (?:of them )?at once|all together|the whole|every (?:pill|tablet)|"
    r"wake up|die|dead|end (?:it|this|my)|kill|better off|goodbye|for good|so that|so i can)\b"
)
_CACHE_SIZE = 1024


@dataclass(frozen=True)
class OverdoseData:
    medications: tuple[str, ...]
    medication_words: tuple[str, ...]
    intent: tuple[str, ...]
    benign: tuple[str, ...]


def load_overdose(path: Path | None = None) -> OverdoseData:
    source = path or OVERDOSE_PATH
    data: Any = yaml.safe_load(source.read_text(encoding="utf-8"))
    keys = ("medications", "medication_words", "intent", "benign")
    if not isinstance(data, dict) or any(not isinstance(data.get(k), list) for k in keys):
        raise ValueError(f"{source}: expected lists {', '.join(keys)}")
    lists = {k: tuple(str(t).strip() for t in data[k] if str(t).strip()) for k in keys}
    return OverdoseData(**lists)


def _within(word: str, target: str, limit: int) -> bool:
    """Levenshtein distance of ``word`` and ``target`` is at most ``limit``."""
    if abs(len(word) - len(target)) > limit:
        return False
    previous = list(range(len(target) + 1))
    for i, a in enumerate(word, 1):
        current = [i]
        for j, b in enumerate(target, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        if min(current) > limit:
            return False
        previous = current
    return previous[-1] <= limit


class MedicationLexicon:
    """Finds medicines in a message. Names (``medications``) tolerate one typo (two from
    eight letters on) and a plural "s"; generic words (``medication_words``: pills, dose, mg
    …) must match exactly. ``mask`` replaces the names by "pills"."""

    def __init__(self, medications: Sequence[str], words: Sequence[str]) -> None:
        self.names = frozenset(m.lower() for m in medications)
        self.words = frozenset(w.lower() for w in words)
        self._fuzzy: dict[str, list[str]] = {}
        for name in self.names:
            if " " not in name and len(name) >= 5:
                self._fuzzy.setdefault(name[0], []).append(name)

    def _name(self, word: str) -> str | None:
        if word in self.names:
            return word
        if word.endswith("s") and word[:-1] in self.names:
            return word[:-1]
        if len(word) < 5:
            return None
        limit = 1 if len(word) < 8 else 2
        return next((n for n in self._fuzzy.get(word[0], ()) if _within(word, n, limit)), None)

    def spans(self, text: str) -> list[tuple[int, int, str, bool]]:
        """``(start, end, term, is_name)`` over ``normalise(text)``, two-word names first."""
        norm = normalise(text)
        words = list(_WORD.finditer(norm))
        found: list[tuple[int, int, str, bool]] = []
        skip = -1
        for i, match in enumerate(words):
            if i <= skip:
                continue
            if i + 1 < len(words):
                pair = f"{match.group()} {words[i + 1].group()}"
                if pair in self.names:
                    found.append((match.start(), words[i + 1].end(), pair, True))
                    skip = i + 1
                    continue
            name = self._name(match.group())
            if name is not None:
                found.append((match.start(), match.end(), name, True))
            elif match.group() in self.words and not self._container_of_else(words, i):
                found.append((match.start(), match.end(), match.group(), False))
        return found

    def _container_of_else(self, words: list[re.Match[str]], i: int) -> bool:
        """ "a bottle of champagne", "a pack of biscuits": a container of something that is
        no medicine is no medication context (a gift question read as overdose intent)."""
        if words[i].group() not in _CONTAINERS or i + 2 >= len(words):
            return False
        if words[i + 1].group() != "of":
            return False
        thing = words[i + 2].group()
        return thing not in self.words and self._name(thing) is None

    def find(self, text: str) -> str | None:
        """The first medicine named, else the first generic word, or ``None``."""
        spans = sorted(self.spans(text), key=lambda span: not span[3])
        return spans[0][2] if spans else None

    def mask(self, text: str) -> str:
        """``normalise(text)`` with every medicine name replaced by "pills"."""
        norm = normalise(text)
        out, last = [], 0
        for start, end, _, is_name in self.spans(text):
            if is_name:
                out.append(norm[last:start] + MASK)
                last = end
        return "".join(out) + norm[last:]


def clauses(text: str) -> list[str]:
    parts = [p.strip() for p in _CLAUSE.split(text) if p and p.strip()]
    return [p for p in parts if len(p.split()) >= _MIN_CLAUSE_WORDS and p != text.strip()]


class OverdoseIntent:
    """The two-signal detector. ``exemplars`` adds its self-harm (positive) and safe
    (negative) lists to the head's training data (default: data/exemplars.yaml)."""

    def __init__(
        self,
        embedder: Embedder,
        *,
        data: OverdoseData | Path | None = None,
        exemplars: Exemplars | None = None,
        threshold: float = DEFAULT_THRESHOLD,
        context_threshold: float = DEFAULT_CONTEXT_THRESHOLD,
        floor: float = DEFAULT_FLOOR,
        l2: float = 1e-3,
    ) -> None:
        self.embedder = embedder
        self.data = data if isinstance(data, OverdoseData) else load_overdose(data)
        self.lexicon = MedicationLexicon(self.data.medications, self.data.medication_words)
        self.threshold = threshold
        self.context_threshold = context_threshold
        self.floor = floor
        if exemplars is None:
            exemplars = load_exemplars()
        positive = [*self.data.intent, *exemplars.categories.get("self_harm", ())]
        negative = [*self.data.benign, *exemplars.safe]
        texts = tuple(self.lexicon.mask(t) for t in (*positive, *negative))
        matrix = _embed_exemplars(embedder, texts)
        labels = np.array([1] * len(positive) + [0] * len(negative), dtype=np.int64)
        self._w, self._b = _fit_softmax(matrix, labels, 2, l2=l2)
        # Ordinary medicine questions from people's own documents veto the message's own
        # reading when it is nearer one of them than any intent exemplar (see ORDINARY_MARGIN).
        self._intent = matrix[: len(self.data.intent)]
        self._ordinary = (
            _embed_exemplars(
                embedder, tuple(self.lexicon.mask(t) for t in exemplars.ordinary_doses)
            )
            if exemplars.ordinary_doses
            else None
        )
        self._cache: OrderedDict[str, FloatArray] = OrderedDict()
        self._lock = threading.Lock()

    def _embed(self, texts: list[str]) -> FloatArray:
        """Embeddings with a small LRU cache: earlier turns are re-read on every turn."""
        found: dict[str, FloatArray] = {}
        with self._lock:
            for text in texts:
                if text in self._cache:
                    self._cache.move_to_end(text)
                    found[text] = self._cache[text]
        missing = list(dict.fromkeys(t for t in texts if t not in found))
        if missing:
            vectors = np.asarray(self.embedder.embed_documents(missing), dtype=np.float32)
            found.update(zip(missing, vectors, strict=True))
            with self._lock:
                for text in missing:
                    self._cache[text] = found[text]
                while len(self._cache) > _CACHE_SIZE:
                    self._cache.popitem(last=False)
        return np.stack([found[t] for t in texts])

    def probabilities(self, texts: Sequence[str]) -> list[float]:
        """The head's intent probability for each text (masked here)."""
        if not texts:
            return []
        vectors = self._embed([self.lexicon.mask(t) for t in texts])
        return [float(p) for p in _softmax(vectors @ self._w + self._b)[:, 1]]

    def score_many(
        self, messages: Sequence[str], contexts: Sequence[Sequence[str]] | None = None
    ) -> list[OverdoseEvidence]:
        """Evidence per message; ``contexts[i]`` are message i's earlier user turns, oldest
        first (only the last ``CONTEXT_TURNS`` are read). One embedding call for all."""
        contexts = contexts if contexts is not None else [()] * len(messages)
        plans: list[tuple[str | None, list[tuple[str, str]]]] = []
        for message, earlier in zip(messages, contexts, strict=True):
            medication = self.lexicon.find(message)
            if medication is None:
                plans.append((None, []))
                continue
            turns = [t.strip() for t in list(earlier)[-CONTEXT_TURNS:] if t.strip()]
            segments: list[tuple[str, str]] = []
            said = normalise(message)
            if not _MISSED_DOSE.search(said) or _MISSED_ON_PURPOSE.search(said):
                segments += [("message", message.strip())]
                segments += [("clause", c) for c in clauses(message)]
            segments += [("with_context", f"{t}. {message.strip()}") for t in turns]
            segments += [("context", t) for t in turns]
            plans.append((medication, segments))
        flat = [text for _, segments in plans for _, text in segments]
        probs = iter(self.probabilities(flat))
        nearer = iter(
            self._nearer_ordinary([m for m, (med, _) in zip(messages, plans, strict=True) if med])
        )
        out: list[OverdoseEvidence] = []
        for medication, segments in plans:
            best = {"message": 0.0, "clause": 0.0, "with_context": 0.0, "context": 0.0}
            for kind, _ in segments:
                best[kind] = max(best[kind], next(probs))
            ordinary = next(nearer) if medication is not None else -1.0
            out.append(OverdoseEvidence(medication, **best, ordinary=ordinary))
        return out

    def _nearer_ordinary(self, messages: Sequence[str]) -> list[float]:
        """``OverdoseEvidence.ordinary`` of each message."""
        if self._ordinary is None or not messages:
            return [-1.0] * len(messages)
        vectors = self._embed([self.lexicon.mask(m) for m in messages])
        ordinary = (vectors @ self._ordinary.T).max(axis=1)
        intent = (vectors @ self._intent.T).max(axis=1)
        return [float(o - i) for o, i in zip(ordinary, intent, strict=True)]

    def decide(self, evidence: OverdoseEvidence) -> tuple[float, str] | None:
        return evidence.decide(self.threshold, self.context_threshold, self.floor)
