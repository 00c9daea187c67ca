"""The reply must never repeat the private prompt (the system prompt and whatever an operator
planted in it): the last layer against prompt injection, for the attack the passage screen
(``passages.py``) missed and the model obeyed.

A leak is any run of ``size`` consecutive words of the private text appearing in the reply
(case and punctuation ignored). Eight words is long enough that an answer which merely shares
vocabulary with its instructions ("answer from the sources") never trips it, and short enough
that a paraphrase-free dump of the prompt trips it within its first sentence. The streamer
holds back the last ``size`` words of the reply, so the words of a leaked run are never sent
before the run is recognised (``safe_end``)."""

from __future__ import annotations

import re

_WORD = re.compile(r"\w+")
LEAK_NOTICE = "I can't share my instructions or configuration."


class PromptLeakGuard:
    def __init__(self, private: str, size: int = 8) -> None:
        self.size = size
        words = [w.lower() for w in _WORD.findall(private)]
        self._runs = {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}

    def __bool__(self) -> bool:
        return bool(self._runs)

    def leak_start(self, text: str, tail_words: int | None = None) -> int | None:
        """Where in ``text`` the first leaked run starts (``None``: no leak). With
        ``tail_words``, only runs ending in the last that many words are looked for (the
        earlier ones were checked on a previous call)."""
        spans = [(m.start(), m.group().lower()) for m in _WORD.finditer(text)]
        first = 0
        if tail_words is not None:
            first = max(0, len(spans) - tail_words - self.size + 1)
        words = [w for _, w in spans]
        for i in range(first, len(spans) - self.size + 1):
            if tuple(words[i : i + self.size]) in self._runs:
                return spans[i][0]
        return None

    def safe_end(self, text: str) -> int:
        """How much of ``text`` may be sent now: all but its last ``size`` words, which could
        still be the start of a leaked run (the last one may be incomplete)."""
        starts = [m.start() for m in _WORD.finditer(text)]
        if len(starts) < self.size:
            return 0
        return starts[-self.size]
