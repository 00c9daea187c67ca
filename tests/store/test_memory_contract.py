"""The ``MemoryStore`` contract, run over every implementation: the in-process store and the
SQL store on each database backend (see conftest.py). The real MiniLM embedder, because the
contract is about meaning ("outdoor walks in the hills" finds a hiking memory)."""

from __future__ import annotations

import pytest

from ragchat import resources
from ragchat.embed.base import Embedder
from ragchat.settings import Settings
from ragchat.store import SqlStore
from ragchat.store.memory import InMemoryMemoryStore, MemoryStore, SqlMemoryStore

USERS = ("ann", "bob", "carol")
HIKE = "I went hiking in the mountains with my brother last weekend"
ALPS = "We hiked up a mountain trail in the Alps"
SCHOOL = "My daughter starts school in September"


@pytest.fixture(scope="module")
def embedder(tmp_path_factory: pytest.TempPathFactory) -> Embedder:
    return resources.embedder(Settings(data_dir=tmp_path_factory.mktemp("memory-embedder")))


class MemoryStoreContract:
    """Subclasses provide ``memory``: an empty store in which the users of ``USERS`` exist."""

    @pytest.fixture
    def memory(self) -> MemoryStore:
        raise NotImplementedError

    def test_is_a_memory_store(self, memory: MemoryStore) -> None:
        assert isinstance(memory, MemoryStore)

    def test_finds_a_users_own_memories_by_meaning(self, memory: MemoryStore) -> None:
        memory.add("ann", "c1", HIKE)
        memory.add("ann", "c1", SCHOOL)
        memory.add("bob", "c3", "I adopted a puppy called Pepper")
        found = memory.search("ann", "outdoor walks in the hills", k=3)
        assert found[0] == HIKE
        assert all("Pepper" not in f for f in found)  # another user's memory never leaks
        assert memory.search("carol", "anything at all") == []
        assert memory.search("bob", "my new dog") == ["I adopted a puppy called Pepper"]

    def test_a_snippet_is_kept_once_with_its_whitespace_collapsed(
        self, memory: MemoryStore
    ) -> None:
        memory.add("ann", "c1", SCHOOL)
        memory.add("ann", "c2", SCHOOL)  # the same words in another conversation
        memory.add("ann", "c2", "  My daughter   starts school\nin September ")
        assert memory.search("ann", "school for my kid", k=5) == [SCHOOL]

    def test_drops_unrelated_memories(self, memory: MemoryStore) -> None:
        memory.add("ann", "c1", HIKE)
        assert memory.search("ann", "What is the capital of Australia?") == []

    def test_k_bounds_the_results_best_first(self, memory: MemoryStore) -> None:
        for text in (HIKE, ALPS, SCHOOL):
            memory.add("ann", "c1", text)
        two = memory.search("ann", "mountain hiking", k=2)
        assert len(two) == 2 and set(two) == {HIKE, ALPS}
        assert memory.search("ann", "mountain hiking", k=1) == two[:1]
        assert memory.search("ann", "mountain hiking", k=0) == []

    def test_empty_text_and_empty_queries(self, memory: MemoryStore) -> None:
        memory.add("ann", "c1", "   ")
        assert memory.search("ann", "anything") == []
        memory.add("ann", "c1", HIKE)
        assert memory.search("ann", "   ") == []

    def test_a_conversation_that_is_not_stored_is_fine(self, memory: MemoryStore) -> None:
        memory.add("ann", "openai-stateless-turn", HIKE)  # no such conversation anywhere
        assert memory.search("ann", "hiking trip") == [HIKE]


class TestInMemoryMemoryStore(MemoryStoreContract):
    @pytest.fixture
    def memory(self, embedder: Embedder) -> MemoryStore:
        return InMemoryMemoryStore(embedder)

    def test_keeps_at_most_max_per_user(self, embedder: Embedder) -> None:
        memory = InMemoryMemoryStore(embedder, max_per_user=1, min_score=-1.0)
        memory.add("ann", "c1", HIKE)
        memory.add("ann", "c1", SCHOOL)
        assert memory.search("ann", "anything", k=5) == [SCHOOL]  # the oldest went


class TestSqlMemoryStore(MemoryStoreContract):
    @pytest.fixture
    def memory(self, store: SqlStore, embedder: Embedder) -> MemoryStore:
        for user in USERS:
            store.ensure_user(user)
        return SqlMemoryStore(store, embedder)

    def test_memories_persist_and_link_to_their_conversation(
        self, store: SqlStore, embedder: Embedder
    ) -> None:
        store.ensure_user("ann")
        conversation = store.create_conversation("ann")
        SqlMemoryStore(store, embedder).add("ann", conversation.id, HIKE)
        again = SqlMemoryStore(store, embedder)  # another process, the same database
        assert again.search("ann", "hiking trip") == [HIKE]
        assert [m.conversation_id for m in store.list_memories("ann")] == [conversation.id]
        store.delete_conversation("ann", conversation.id)  # its memories go with it
        assert again.search("ann", "hiking trip") == []
