"""Persistence for the chat server: users, API keys, conversations, messages, ingestion jobs
and long-term memories, over SQLAlchemy (SQLite by default, Postgres via ``database_url``)."""

from ragchat.store.base import Store
from ragchat.store.factory import build_store, database_url
from ragchat.store.rows import (
    ApiKeyRow,
    ConversationRow,
    JobRow,
    MemoryRow,
    MessageRow,
    User,
)
from ragchat.store.sql import SqlStore

__all__ = [
    "ApiKeyRow",
    "ConversationRow",
    "JobRow",
    "MemoryRow",
    "MessageRow",
    "SqlStore",
    "Store",
    "User",
    "build_store",
    "database_url",
]
