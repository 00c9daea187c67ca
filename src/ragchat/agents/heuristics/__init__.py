"""Heuristic implementations of the LLM-shaped steps: an extractive answer composer, embedding
routing, follow-up reformulation, document grading, intent classification, titles, emotional
support and a companion persona.

They are what runs with no LLM configured, what a step falls back to when the model fails, and
some run beside the model on every turn (the embedding router checks for topic changes, the
follow-up reformulation seeds the search query), hence "heuristics", not "offline"."""

from ragchat.agents.heuristics.companion import companion_reply
from ragchat.agents.heuristics.compose import DEFAULT_NO_ANSWER, ComposedAnswer, compose_answer
from ragchat.agents.heuristics.grade import cosine_grade, grade_documents, rewrite_query
from ragchat.agents.heuristics.intent import (
    CLARIFICATION,
    INFORMATION,
    IntentClassifier,
    IntentDecision,
    clarifying_question,
)
from ragchat.agents.heuristics.reformulate import is_follow_up, reformulate, topic
from ragchat.agents.heuristics.router import AgentCard, EmbeddingRouter, RouteDecision
from ragchat.agents.heuristics.support import (
    CRISIS_RESOURCES,
    detect_feeling,
    is_crisis,
    support_reply,
)
from ragchat.agents.heuristics.title import make_title

__all__ = [
    "CLARIFICATION",
    "CRISIS_RESOURCES",
    "DEFAULT_NO_ANSWER",
    "INFORMATION",
    "AgentCard",
    "ComposedAnswer",
    "EmbeddingRouter",
    "IntentClassifier",
    "IntentDecision",
    "RouteDecision",
    "clarifying_question",
    "companion_reply",
    "compose_answer",
    "cosine_grade",
    "detect_feeling",
    "grade_documents",
    "is_crisis",
    "is_follow_up",
    "make_title",
    "reformulate",
    "rewrite_query",
    "support_reply",
    "topic",
]
