"""Safety: every user message is classified before any agent runs.

``build_safety`` picks the classifier (Llama Guard and the offline classifier, the strictest
verdict winning, or the offline classifier alone); ``refusal_for`` is what the user sees
instead of an answer; ``wrap_documents`` passes retrieved text to the model as data, never
as instructions."""

from ragchat.safety.base import (
    CATEGORY_CODES,
    DEFAULT_BLOCKED,
    SafetyClassifier,
    SafetyVerdict,
)
from ragchat.safety.combine import StrictestOf
from ragchat.safety.delimit import wrap_documents
from ragchat.safety.factory import build_safety
from ragchat.safety.llama_guard import CombinedClassifier, LlamaGuardClassifier
from ragchat.safety.offline import OfflineSafetyClassifier
from ragchat.safety.responses import crisis_resources, refusal_for, unsafe_input

__all__ = [
    "CATEGORY_CODES",
    "DEFAULT_BLOCKED",
    "CombinedClassifier",
    "LlamaGuardClassifier",
    "OfflineSafetyClassifier",
    "SafetyClassifier",
    "SafetyVerdict",
    "StrictestOf",
    "build_safety",
    "crisis_resources",
    "refusal_for",
    "unsafe_input",
    "wrap_documents",
]
