"""Offline defaults for every LLM-shaped step, so ragchat gives useful, grounded answers with
no LLM configured: an extractive answer composer, embedding routing, follow-up reformulation,
document grading, intent classification, titles, emotional support and a companion persona."""

from ragchat.agents.offline.companion import companion_reply
from ragchat.agents.offline.compose import DEFAULT_NO_ANSWER, ComposedAnswer, compose_answer
from ragchat.agents.offline.grade import cosine_grade, grade_documents, rewrite_query
from ragchat.agents.offline.intent import (
    CLARIFICATION,
    INFORMATION,
    IntentClassifier,
    IntentDecision,
    clarifying_question,
)
from ragchat.agents.offline.reformulate import is_follow_up, reformulate, topic
from ragchat.agents.offline.router import AgentCard, EmbeddingRouter, RouteDecision
from ragchat.agents.offline.support import (
    CRISIS_RESOURCES,
    detect_feeling,
    is_crisis,
    support_reply,
)
from ragchat.agents.offline.title import make_title

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
