"""Knowledge bases created over the API: who owns them, what they are called, who may see
them. (Their documents and indexes live in the vector store, not here.) Names are compared
without regard to case (``name_key``, schema v6): "Sailing" finds "sailing", and a second
knowledge base cannot be called either."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, or_, select

from ragchat.errors import Conflict, NotFound
from ragchat.store._core import SqlCore
from ragchat.store.models import KnowledgeBaseRecord
from ragchat.store.rows import KnowledgeBaseRow


class KnowledgeBasesMixin(SqlCore):
    def create_kb(
        self,
        name: str,
        owner_id: str | None,
        *,
        description: str = "",
        default_agent: str | None = None,
        shared: bool = False,
        storage: str | None = None,
    ) -> KnowledgeBaseRow:
        """``Conflict`` when the name (or the storage) is taken, by a name or a storage."""
        storage = storage or name
        keys = (name.lower(), storage.lower())
        with self._tx() as s:
            taken = s.scalars(
                select(KnowledgeBaseRecord).where(
                    or_(
                        KnowledgeBaseRecord.name_key.in_(keys),
                        func.lower(KnowledgeBaseRecord.storage).in_(keys),
                    )
                )
            ).first()
            if taken is not None:
                raise Conflict(f"a knowledge base named {name!r} already exists")
            now = self._now()
            record = KnowledgeBaseRecord(
                storage=storage,
                name=name,
                name_key=name.lower(),
                owner_id=owner_id,
                description=description,
                default_agent=default_agent,
                shared=shared,
                created_at=now,
                updated_at=now,
            )
            s.add(record)
            return KnowledgeBaseRow.model_validate(record)

    def list_kbs(self) -> list[KnowledgeBaseRow]:
        """Every created knowledge base, by name (callers filter by who may see them)."""
        with self._tx(write=False) as s:
            rows = s.scalars(select(KnowledgeBaseRecord).order_by(KnowledgeBaseRecord.name))
            return [KnowledgeBaseRow.model_validate(r) for r in rows]

    def find_kb(self, name: str) -> KnowledgeBaseRow | None:
        """The row called ``name`` now, or else the one stored as ``name`` (either in any
        case)."""
        with self._tx(write=False) as s:
            record = (
                s.scalars(
                    select(KnowledgeBaseRecord).where(KnowledgeBaseRecord.name_key == name.lower())
                ).first()
                or s.get(KnowledgeBaseRecord, name)
                or s.scalars(
                    select(KnowledgeBaseRecord).where(
                        func.lower(KnowledgeBaseRecord.storage) == name.lower()
                    )
                ).first()
            )
            return None if record is None else KnowledgeBaseRow.model_validate(record)

    def kbs_by_storage(self, storages: Sequence[str]) -> dict[str, KnowledgeBaseRow]:
        if not storages:
            return {}
        with self._tx(write=False) as s:
            rows = s.scalars(
                select(KnowledgeBaseRecord).where(KnowledgeBaseRecord.storage.in_(storages))
            )
            return {r.storage: KnowledgeBaseRow.model_validate(r) for r in rows}

    def update_kb(
        self,
        storage: str,
        *,
        name: str | None = None,
        description: str | None = None,
        default_agent: str | None = None,
        clear_default_agent: bool = False,
        shared: bool | None = None,
    ) -> KnowledgeBaseRow:
        """Changes what is given; ``Conflict`` when the new name is another's."""
        with self._tx() as s:
            record = s.get(KnowledgeBaseRecord, storage)
            if record is None:
                raise NotFound("knowledge base not found")
            if name is not None and name != record.name:
                clash = s.scalars(
                    select(KnowledgeBaseRecord).where(
                        KnowledgeBaseRecord.storage != storage,
                        or_(
                            KnowledgeBaseRecord.name_key == name.lower(),
                            func.lower(KnowledgeBaseRecord.storage) == name.lower(),
                        ),
                    )
                ).first()
                if clash is not None:
                    raise Conflict(f"a knowledge base named {name!r} already exists")
                record.name, record.name_key = name, name.lower()
            if description is not None:
                record.description = description
            if default_agent is not None or clear_default_agent:
                record.default_agent = default_agent
            if shared is not None:
                record.shared = shared
            record.updated_at = self._now()
            return KnowledgeBaseRow.model_validate(record)

    def delete_kb_row(self, storage: str) -> None:
        with self._tx() as s:
            record = s.get(KnowledgeBaseRecord, storage)
            if record is not None:
                s.delete(record)
