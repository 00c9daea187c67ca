"""What ``worker.py`` and its child (``child.py``) send each other, in one module both import:
a closed set of frozen messages — the start, the child's reads and writes of the knowledge
base (each answered by ``Reply`` or ``Refused``), its progress and its end — and the error a
failed child turns into. Neither side imports the other."""

from __future__ import annotations

import dataclasses
from typing import Any

from ragchat import errors
from ragchat.embed.base import Embedder, Matrix
from ragchat.errors import IngestError, RagchatError
from ragchat.ingestion.ingest import IngestReport
from ragchat.ingestion.job import IngestJob
from ragchat.settings import Settings
from ragchat.types import Chunk
from ragchat.vectorstores.base import DocumentRow


class IngestWorkerError(RagchatError):
    """The ingestion child process failed or died; the job fails with this message."""


class UnknownMessage(IngestWorkerError):
    """A message outside this module's set: a bug on one side, refused by name."""


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """What the child needs: the settings (to load the embedder and set up the runtime) or a
    picklable embedder (a test fake), and its priority."""

    settings: Settings
    embedder: Embedder | None
    idle_priority: bool


# -- parent → child ----------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Start:
    spec: ChildSpec
    job: IngestJob


@dataclasses.dataclass(frozen=True)
class Go:
    """The parent holds the writer lock: ingest into knowledge base ``name``."""

    name: str


@dataclasses.dataclass(frozen=True)
class Reply:
    value: Any


@dataclasses.dataclass(frozen=True)
class Refused:
    message: str


# -- child → parent: reads and writes of the knowledge base, each answered -------------------
@dataclasses.dataclass(frozen=True)
class FileSha:
    path: str


@dataclasses.dataclass(frozen=True)
class KnownDocuments:
    doc_ids: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class DocsOfFile:
    path: str


@dataclasses.dataclass(frozen=True)
class PathsWithSha:
    sha: str


@dataclasses.dataclass(frozen=True)
class SetDocumentFile:
    doc_id: str
    path: str


@dataclasses.dataclass(frozen=True)
class RecordFile:
    path: str
    sha: str
    when: str


@dataclasses.dataclass(frozen=True)
class AddChunks:
    chunks: tuple[Chunk, ...]
    vectors: Matrix | None
    save: bool


@dataclasses.dataclass(frozen=True)
class AddDocumentRow:
    row: DocumentRow


@dataclasses.dataclass(frozen=True)
class DeleteDocument:
    doc_id: str
    save: bool


@dataclasses.dataclass(frozen=True)
class Save:
    pass


Call = (
    FileSha
    | KnownDocuments
    | DocsOfFile
    | PathsWithSha
    | SetDocumentFile
    | RecordFile
    | AddChunks
    | AddDocumentRow
    | DeleteDocument
    | Save
)


# -- child → parent: what it is doing, and how it ended ----------------------------------------
@dataclasses.dataclass(frozen=True)
class Progress:
    stage: str
    done: int
    total: int


@dataclasses.dataclass(frozen=True)
class Warm:
    """Parsed, chunked and embedded ahead: the parent may take the lock and send ``Go``."""


@dataclasses.dataclass(frozen=True)
class Done:
    report: dict[str, Any]  # ``report_to_wire``


@dataclasses.dataclass(frozen=True)
class Failed:
    message: str


def report_to_wire(report: IngestReport) -> dict[str, Any]:
    """An ``IngestReport`` that pickles (``IngestError``'s two-argument ``__init__`` does not
    unpickle): its errors as (class name, source, reason)."""
    wire = dataclasses.asdict(dataclasses.replace(report, errors=[]))
    wire["errors"] = [(type(e).__name__, e.source, e.reason) for e in report.errors]
    return wire


def report_from_wire(wire: dict[str, Any]) -> IngestReport:
    wire = dict(wire)
    errs = []
    for name, source, reason in wire.pop("errors"):
        cls = getattr(errors, name, IngestError)
        if not (isinstance(cls, type) and issubclass(cls, IngestError)):
            cls = IngestError
        errs.append(cls(source, reason))
    return IngestReport(**wire, errors=errs)
