from __future__ import annotations

from ragchat.agents.memory import InMemoryMemoryStore, MemoryStore
from ragchat.index.base import Embedder


def test_searches_a_users_own_memories_by_meaning(embedder: Embedder) -> None:
    store = InMemoryMemoryStore(embedder)
    assert isinstance(store, MemoryStore)
    store.add("ann", "c1", "I went hiking in the mountains with my brother last weekend")
    store.add("ann", "c1", "My daughter starts school in September")
    store.add("ann", "c2", "My daughter starts school in September")  # duplicate: kept once
    store.add("bob", "c3", "I adopted a puppy called Pepper")
    found = store.search("ann", "outdoor walks in the hills", k=3)
    assert found[0].startswith("I went hiking")
    assert all("Pepper" not in f for f in found)  # another user's memory never leaks
    assert len(store.search("ann", "school for my kid", k=5)) <= 2
    assert store.search("carol", "anything") == []


def test_drops_unrelated_memories(embedder: Embedder) -> None:
    store = InMemoryMemoryStore(embedder, min_score=0.3)
    store.add("ann", "c1", "I went hiking in the mountains with my brother last weekend")
    assert store.search("ann", "What is the capital of Australia?") == []
