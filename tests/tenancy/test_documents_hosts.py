"""An upload recorded by a server with another data directory (another machine writing the
same shared store) keeps its owner: it must not read as a shared document."""

from __future__ import annotations

from pathlib import Path

from ragchat.tenancy.documents import foreign_upload


def test_the_owner_of_another_machines_upload_is_read_from_its_path() -> None:
    path = Path("/srv/host-a/data/uploads/medical/u-123/labs.md")
    assert foreign_upload(path, "medical") == Path("u-123/labs.md")
    assert foreign_upload(path, "parenting") is None
    assert foreign_upload(Path("/docs/medical/labs.md"), "medical") is None
    assert foreign_upload(Path("/srv/uploads/medical/labs.md"), "medical") == Path("labs.md")
