"""Emotional support without an LLM: name the feeling, validate it, offer one gentle coping
idea and ask an open question. Never clinical: no diagnoses, no medicines, no treatment advice.

Crisis language always gets crisis resources first (a separate safety layer also checks; this
is defence in depth). Crisis means the user's own intent, plan or method: the safety stage's
self-harm phrase rules plus a broader local pattern. Sadness, loneliness and grief, including
grief for someone lost to suicide, get the empathetic reply, not a crisis script.

Templates are picked deterministically from a hash of the message and the conversation length,
and a reply never opens the way the previous one did.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ragchat.reader.text import seed
from ragchat.safety.responses import crisis_resources
from ragchat.safety.rules import match_rules
from ragchat.types import HistoryMessage

# The same resources every agent's crisis reply gives (988, Crisis Text Line,
# findahelpline.com, the local emergency number).
CRISIS_RESOURCES = crisis_resources()
_CRISIS = re.compile(
    r"\b(?:suicid\w*|kill(?:ing)?\s+my\s*self|end(?:ing)?\s+(?:my|it)\s+(?:life|all)|"
    r"end\s+it\s+all|take\s+my\s+(?:own\s+)?life|(?:want|wanna|wish|going)\s+(?:to\s+)?die|"
    r"(?:don'?t|do\s+not)\s+want\s+to\s+(?:live|be\s+alive|be\s+here|wake\s+up|exist)|"
    r"no\s+(?:reason|point)\s+(?:to|in)\s+(?:live|living|going\s+on)|better\s+off\s+dead|"
    r"better\s+off\s+without\s+me|self[-\s]?harm\w*|hurt(?:ing)?\s+my\s*self|"
    r"cut(?:ting)?\s+my\s*self|overdos\w*\s+on\s+purpose)",
    re.IGNORECASE,
)
# Phrases that mention suicide or dying without being the user's own crisis: a loss being
# grieved ("my brother died by suicide", "lost my friend to suicide") and everyday hyperbole
# ("going to die of boredom"). They are blanked out before ``_CRISIS`` is applied.
_NOT_OWN_CRISIS = re.compile(
    r"\b(?:died|death|dying|loss|lost(?:\s+\w+){1,3}?)\s+(?:by|to|from|through)\s+suicide\b|"
    r"\b(?:his|her|their|(?!(?:it|that|what|there|here)'s)\w+'s)\s+suicide\b|\bsuicide\s+of\s+(?:my|our|his|her|their)\b|"
    r"\bdie\s+(?:of|from)\s+(?:boredom|embarrassment|laughter|laughing|cringe|curiosity)\b",
    re.IGNORECASE,
)

# feeling → keyword patterns; earlier feelings win ties.
_FEELINGS: dict[str, re.Pattern[str]] = {
    "grief": re.compile(
        r"\b(?:grie\w*|passed\s+away|died|death|funeral|bereave\w*|lost\s+my\s+(?:mom|mum|dad|"
        r"mother|father|wife|husband|partner|son|daughter|brother|sister|friend|baby|dog|cat|"
        r"grand\w+)|miss\s+(?:him|her|them)\s+so)\b",
        re.IGNORECASE,
    ),
    "guilt": re.compile(
        r"\b(?:guilt\w*|my\s+fault|ashamed|shame\w*|blame\s+myself|regret\w*|let\s+\w+\s+down)\b",
        re.IGNORECASE,
    ),
    "anxious": re.compile(
        r"\b(?:anxi\w+|worr\w+|nervous|panic\w*|scared|afraid|fear\w*|on\s+edge|dread\w*|"
        r"can'?t\s+stop\s+thinking)\b",
        re.IGNORECASE,
    ),
    "stressed": re.compile(
        r"\b(?:stress\w*|overwhelm\w*|too\s+much|pressure|swamped|can'?t\s+cope|cannot\s+cope|"
        r"so\s+much\s+to\s+do|falling\s+apart)\b",
        re.IGNORECASE,
    ),
    "sad": re.compile(
        r"\b(?:sad\w*|(?:feel\w*|so|really|very|pretty)\s+down|depress\w*|unhappy|cry\w*|cried|tears|hopeless|empty|lonel\w*|alone|"
        r"isolated|heartbroken|miserable|nobody|no\s+one|left\s+out)\b",
        re.IGNORECASE,
    ),
    "angry": re.compile(
        r"\b(?:angr\w*|anger|furious|mad|frustrat\w*|annoy\w*|irritat\w*|fed\s+up|resent\w*|"
        r"pissed)\b",
        re.IGNORECASE,
    ),
    "tired": re.compile(
        r"\b(?:tired|exhaust\w*|drained|worn\s+out|burn(?:ed|t)\s+out|burnout|no\s+energy|"
        r"can'?t\s+sleep|fatigue\w*|sleepless)\b",
        re.IGNORECASE,
    ),
}

_REFLECT: dict[str, tuple[str, ...]] = {
    "stressed": (
        "It sounds like you're carrying a lot right now, and it's all piling up at once.",
        "That sounds really overwhelming — like there's more on your plate than anyone could "
        "handle at once.",
        "I can hear how stretched you are at the moment.",
    ),
    "sad": (
        "I'm sorry you're feeling so low. That sounds really heavy.",
        "It sounds like you're hurting, and maybe feeling quite alone with it.",
        "That sounds painful, and I'm glad you said it out loud.",
    ),
    "anxious": (
        "It sounds like worry has really got hold of you right now.",
        "That sounds unsettling — anxiety can make everything feel urgent and uncertain.",
        "I can hear how anxious you're feeling.",
    ),
    "angry": (
        "It sounds like you're really frustrated, and understandably so.",
        "That sounds maddening. Anger often shows up when something feels unfair or out of our "
        "control.",
        "I can hear how fed up you are.",
    ),
    "tired": (
        "It sounds like you're running on empty.",
        "That sounds exhausting — being worn out makes everything else harder too.",
        "I can hear how drained you are.",
    ),
    "grief": (
        "I'm so sorry for your loss. Grief can be incredibly heavy.",
        "I'm really sorry. Losing someone you care about can turn everything upside down.",
        "I'm sorry you're going through this. There's no right way to grieve.",
    ),
    "guilt": (
        "It sounds like you're being really hard on yourself.",
        "That sounds like a lot of guilt to carry.",
        "I can hear how much this is weighing on you.",
    ),
    "neutral": (
        "Thank you for sharing that with me.",
        "I'm glad you reached out.",
        "I'm here, and I'm listening.",
    ),
}
_VALIDATE = (
    "What you're feeling makes sense, and you don't have to have it all figured out.",
    "It's okay to feel this way — it's a very human response to what you're dealing with.",
    "Your feelings are valid, and you don't need to justify them.",
)
_COPING: dict[str, tuple[str, ...]] = {
    "stressed": (
        "One thing that can help is writing everything down and picking just one small, doable "
        "step for today.",
        "Sometimes it helps to pause for a minute and take a few slow breaths before deciding "
        "what comes next.",
    ),
    "sad": (
        "It can help to reach out to someone you trust, even with a short message.",
        "A small act of kindness towards yourself — a walk outside, a warm drink, some music "
        "you like — can make a difference.",
    ),
    "anxious": (
        "If it feels right, try slowing your breathing: in for four counts, out for six, a few "
        "times.",
        "A grounding exercise can help: notice five things you can see, four you can touch and "
        "three you can hear.",
    ),
    "angry": (
        "It can help to step away for a few minutes, or move your body, before responding to "
        "anything.",
        "Writing down exactly what made you angry, without sending it anywhere, can take some of "
        "the heat out of it.",
    ),
    "tired": (
        "If you can, give yourself permission to rest, even briefly, without having to earn it.",
        "It might help to let one thing go today so there's a little more room to recharge.",
    ),
    "grief": (
        "Be gentle with yourself; it can help to talk about the person with someone who knew "
        "them too.",
        "Some people find it helps to write down a memory or a few words to the person they've "
        "lost.",
    ),
    "guilt": (
        "It might help to ask what you would say to a good friend in your place — we're often "
        "kinder to others than to ourselves.",
        "Mistakes don't define you; noticing how much you care is already a step towards making "
        "things right.",
    ),
    "neutral": (
        "Sometimes just putting things into words helps a little.",
        "Taking a moment to notice how you're feeling is a good first step.",
    ),
}
_ASK = (
    "What's been weighing on you the most?",
    "Would you like to tell me more about what's been happening?",
    "What do you think would help you feel even a little better right now?",
    "How have you been coping so far?",
)


def is_crisis(message: str) -> bool:
    """The message expresses the user's own self-harm intent, plan or method."""
    if match_rules(message, {"self_harm"}):
        return True
    return bool(_CRISIS.search(_NOT_OWN_CRISIS.sub(" ", message)))


def detect_feeling(message: str) -> str:
    """The feeling a message expresses most (by keyword hits), or ``"neutral"``."""
    counts = {name: len(p.findall(message)) for name, p in _FEELINGS.items()}
    best = max(counts.items(), key=lambda kv: kv[1])  # first wins ties: dict order
    return best[0] if best[1] > 0 else "neutral"


def _pick(options: Sequence[str], key: int, avoid: str = "") -> str:
    choice = options[key % len(options)]
    if avoid and choice and avoid.startswith(choice[:40]) and len(options) > 1:
        choice = options[(key + 1) % len(options)]
    return choice


def support_reply(message: str, history: Sequence[HistoryMessage] = ()) -> str:
    """An empathetic, non-clinical reply; crisis resources when the message signals danger."""
    last_reply = next((m.content for m in reversed(history) if m.role == "assistant"), "")
    key = seed(message.strip().lower(), str(len(history)))
    if is_crisis(message):
        opening = _pick(
            (
                "I'm really sorry you're feeling this much pain. Thank you for telling me — "
                "you don't have to go through this alone.",
                "I'm so sorry things feel this hard right now. I'm glad you told me, and you "
                "deserve support right now.",
            ),
            key,
            last_reply,
        )
        return (
            f"{opening}\n\nPlease reach out to someone who can help right now:\n"
            f"{CRISIS_RESOURCES}\n\n"
            "If you can, let someone you trust know how you're feeling. Are you safe right now?"
        )
    feeling = detect_feeling(message)
    reflect = _pick(_REFLECT[feeling], key, last_reply)
    ask = _pick(_ASK, (key >> 9) + len(history))
    if feeling == "neutral":
        return f"{reflect} {_pick(_COPING[feeling], key >> 6)} {ask}"
    validate = _pick(_VALIDATE, key >> 3)
    coping = _pick(_COPING[feeling], key >> 6)
    return f"{reflect} {validate} {coping} {ask}"
