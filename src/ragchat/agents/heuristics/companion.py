"""An offline companion persona: short, warm chat bubbles without an LLM.

Rules, in order: crisis language → kindness and the 988 Lifeline; "who are you / tell me about
yourself" → the persona's own facts in the first person; a message that matches one of the
persona's facts ("do you have pets?") → that fact and a question back; a greeting → hello,
plus a remembered detail ("Last time you mentioned …"); a feeling → empathy and an invitation
to say more; anything else → a warm reaction, a related memory or fact, and a question.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragchat.agents.heuristics.support import detect_feeling, is_crisis
from ragchat.reader.text import WEAK_STEMS, content_stems, seed, split_sentences
from ragchat.types import HistoryMessage

_GREETING = re.compile(
    r"^\s*(?:hi|hello|hey|hiya|yo|howdy|good\s+(?:morning|afternoon|evening)|morning|"
    r"how\s+are\s+you|how's\s+it\s+going|what's\s+up|sup)\b",
    re.IGNORECASE,
)
_HOW_ARE_YOU = re.compile(r"\bhow\s+(?:are|r)\s+(?:you|u)\b|\bhow's\s+it\s+going\b", re.I)
_ABOUT_YOU = re.compile(
    r"\b(?:who\s+are\s+you|what\s+are\s+you|about\s+yourself|your\s+name|are\s+you\s+"
    r"(?:real|a\s+bot|human|an?\s+ai)|introduce\s+yourself|what\s+do\s+you\s+do)\b",
    re.IGNORECASE,
)
_POSITIVE = re.compile(
    r"\b(?:great|good|happy|fun|amazing|awesome|excited|lovely|nice|fantastic|yay|won|"
    r"passed|love|loved|enjoyed)\b",
    re.IGNORECASE,
)
_NEGATIVE = re.compile(
    r"\b(?:terrible|awful|horrible|bad|worst|sucks|rough|rubbish|crap|hate|hated|sick|ill)\b",
    re.IGNORECASE,
)
_SKIP_FACT = re.compile(r"\b(?:sample content|ragchat|demo)\b", re.IGNORECASE)


def _bubble(text: str) -> str:
    return " ".join(text.split())


def first_person(fact: str, name: str) -> str:
    """ "Robin loves mystery novels." → "I love mystery novels." (name-led sentences only)."""
    if not name:
        return fact
    n = re.escape(name)
    out = re.sub(rf"\b{n}['’]s\b", "my", fact)
    out = re.sub(rf"^{n}\s+is\b", "I'm", out)
    out = re.sub(rf"\b{n}\s+is\b", "I am", out)
    out = re.sub(rf"\b{n}\s+has\b", "I have", out)
    out = re.sub(rf"\b{n}\s+(\w+(?:ch|sh|ss|x|o))es\b", r"I \1", out)
    out = re.sub(rf"\b{n}\s+(can|will|would|could|should|used|never|always|often)\b", r"I \1", out)
    out = re.sub(rf"\b{n}\s+(\w+[^s\W])s\b", r"I \1", out)
    out = re.sub(rf"\b{n}\b", "me", out)
    if out.startswith(("I ", "I'm ")):  # "I love X and is reading Y" → "and am reading Y"
        out = re.sub(r"\b(and|but)\s+is\b", r"\1 am", out)
        out = re.sub(r"\b(and|but)\s+has\b", r"\1 have", out)
        out = re.sub(r"\b(and|but)\s+says\b", r"\1 say", out)
    return out[:1].upper() + out[1:]


def second_person(memory: str) -> str:
    """A stored memory as said to the user: "User has a dog" → "you have a dog"."""
    m = memory.strip().rstrip(".")
    rules = (
        (r"^(?:the\s+)?user['’]s\b", "your"),
        (r"^(?:the\s+)?user\s+is\b", "you're"),
        (r"^(?:the\s+)?user\s+has\b", "you have"),
        (r"^(?:the\s+)?user\s+(\w+?)(?:es|s)\b", r"you \1"),
        (r"^(?:the\s+)?user\b", "you"),
        (r"^i\s+am\b|^i['’]m\b", "you're"),
        (r"^i\b", "you"),
        (r"\bmy\b", "your"),
        (r"\bme\b", "you"),
        (r"\bmyself\b", "yourself"),
    )
    for pattern, repl in rules:
        m = re.sub(pattern, repl, m, flags=re.IGNORECASE)
    return m[:1].lower() + m[1:] if not m[:2].isupper() else m


_AUX = r"can|could|should|shall|is|are|was|were|will|would|may|might|must|am|do"
_YES_NO = re.compile(rf"^({_AUX})\s+(you|it|they|he|she|we|this|that|these|those)\s+(.+)$", re.I)
_WH = re.compile(r"^(what|how|when|where|why|which|who|whom|whose|is|are|do|does|did)\b", re.I)


def recall(memory: str, tail: str = "", question_tail: str = "Did you find out?") -> str:
    """A remembered detail as natural sentences. A statement is mentioned ("Last time you
    mentioned you have a dog." + ``tail``); a remembered question is asked about ("Last time
    you asked whether you can take it with warfarin." + ``question_tail``) rather than pasted
    in with its question mark."""
    said = second_person(memory).rstrip(" .!?")
    said = re.sub(r"\bI['’]m\b", "you're", said)
    said = re.sub(r"\bam I\b", "are you", said)
    said = re.sub(r"\bI\b", "you", said)
    if not said:
        return ""
    question = memory.strip().endswith("?") or bool(_WH.match(memory.strip()))
    if not question:
        return f"Last time you mentioned {said}. {tail}".strip()
    m = _YES_NO.match(said)
    if m:
        aux, subject, rest = m.groups()
        verb = "" if aux.lower() == "do" else f"{aux.lower()} "
        text = f"Last time you asked whether {subject.lower()} {verb}{rest}."
    else:
        text = f"Last time you asked: “{said[:1].upper() + said[1:]}?”"
    return f"{text} {question_tail}".strip()


# Small-talk topics and the words a fact about them uses.
_RELATED = {
    "pet": "cat dog kitten puppy rabbit hamster fish bird",
    "anim": "cat dog kitten puppy rabbit bird",
    "book": "read novel stori chapter",
    "read": "book novel stori chapter",
    "music": "song play ukulel guitar piano sing",
    "instrument": "ukulel guitar piano play",
    "garden": "grow plant balconi tomato herb",
    "food": "cook eat bake bread dinner favourit",
    "eat": "food cook bake bread dinner",
    "weekend": "sunday saturday walk",
    "hobbi": "grow read play walk learn",
    "live": "flat town home hous",
    "home": "flat town live hous",
}


def _best_match(message: str, texts: Sequence[str], name: str = "") -> str:
    """The text sharing most (topic-expanded) words with the message; ties go to texts that
    name the persona, then to the earlier one. ``""`` when nothing is shared."""
    query = {s for s in content_stems(message) if s not in WEAK_STEMS and s not in {"you", "your"}}
    for s in list(query):
        query.update(_RELATED.get(s, "").split())
    best, best_score = "", 0.0
    for t in texts:
        shared = float(len(query & content_stems(t)))
        if shared and name and name.lower() in t.lower():
            shared += 0.5
        if shared > best_score:
            best, best_score = t, shared
    return best


def _pick(options: Sequence[str], key: int) -> str:
    return options[key % len(options)]


def companion_reply(
    message: str,
    *,
    persona_name: str,
    persona_text: str,
    memories: Sequence[str] = (),
    self_facts: Sequence[str] = (),
    history: Sequence[HistoryMessage] = (),
) -> list[str]:
    """One to three chat bubbles in the persona's voice (see module docstring)."""
    name = persona_name.strip() or "your companion"
    key = seed(message.strip().lower(), str(len(history)))
    facts = [f for f in self_facts if f.strip() and not _SKIP_FACT.search(f)]
    if not facts and persona_text:
        facts = _facts_from_persona(persona_text, name)
    mine = [first_person(f.strip(), persona_name.strip()) for f in facts]

    if is_crisis(message):
        return [
            "I'm really glad you told me, and I'm so sorry you're hurting this much.",
            "I'm just a chat companion, but you deserve real support right now: please call or "
            "text 988 (Suicide & Crisis Lifeline, US) or text HOME to 741741. If you're in "
            "danger, call your local emergency number.",
            "Is there someone you trust you could reach out to right now?",
        ]

    if _ABOUT_YOU.search(message):
        intro = f"I'm {name}! " + (mine[0] if mine else "I'm a friendly chat companion.")
        bubbles = [_bubble(intro)]
        if len(mine) > 1:
            bubbles.append(_bubble(mine[1 + key % (len(mine) - 1)]))
        bubbles.append(_pick(("What about you?", "Tell me something about you!"), key))
        return bubbles

    fact = _best_match(message, facts, persona_name.strip())
    memory = _best_match(message, memories)
    if _GREETING.match(message):
        hello = _pick(("Hi! 😊", "Hey, good to see you!", "Hello there!"), key)
        if _HOW_ARE_YOU.search(message):
            hello += " I'm doing well, thanks for asking."
        bubbles = [hello]
        remembered = memory or (memories[-1] if memories else "")
        if remembered:
            bubbles.append(recall(remembered, "How's that going?"))
        else:
            bubbles.append(_pick(("How's your day going?", "What have you been up to?"), key))
        return bubbles

    if fact:
        return [
            _bubble(first_person(fact, persona_name.strip())),
            _pick(("What about you?", "Do you have anything like that?", "How about you?"), key),
        ]

    feeling = detect_feeling(message)
    if feeling != "neutral" or _NEGATIVE.search(message):
        bubbles = [
            _pick(
                (
                    "Oh no, that sounds hard. I'm sorry.",
                    "That sounds like a lot. I'm here.",
                    "Aw, I'm sorry you're dealing with that.",
                ),
                key,
            ),
            "Do you want to tell me what happened?",
        ]
        if memory:
            bubbles.insert(1, recall(memory, "Is it related?", "Is it related?"))
        return bubbles

    if _POSITIVE.search(message):
        reaction = _pick(("That's wonderful!", "Oh, I love that!", "Yay, that's great!"), key)
    elif message.rstrip().endswith("?"):
        reaction = _pick(("Hmm, good question! I'm not sure.", "Ooh, I don't know!"), key)
    else:
        reaction = _pick(("Ooh, tell me more!", "That's interesting!", "Oh really?"), key)
    bubbles = [reaction]
    if memory:
        bubbles.append(recall(memory, "", ""))
    follow = ("What made you think of that?", "What about you?", "How's your day been?")
    if not message.rstrip().endswith("?"):
        follow = ("How did that make you feel?", "What happened next?", "How's your day been?")
    bubbles.append(_pick(follow, key))
    return bubbles


def _facts_from_persona(persona_text: str, name: str) -> list[str]:
    """Sentences about the persona from its Markdown description (bullets included)."""
    body = re.sub(r"^---.*?---\s*", "", persona_text, flags=re.DOTALL)
    sentences = split_sentences(body)
    named = [s for s in sentences if s.startswith(name) and len(s.split()) >= 4]
    return [s for s in named if not _SKIP_FACT.search(s)][:8]
