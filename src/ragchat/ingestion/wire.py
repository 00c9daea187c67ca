"""What ``worker.py`` and its child (``child.py``) send each other, in one module both import:
the job, what the child needs to start, the report on its way back, and the error a failed
child turns into. Neither side imports the other."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from ragchat import errors
from ragchat.embed.base import Embedder
from ragchat.errors import IngestError, RagchatError
from ragchat.ingest.chunking import Chunker
from ragchat.ingest.sandbox import ParseLimits
from ragchat.ingestion.ingest import IngestReport, UploadCaps
from ragchat.settings import Settings


class IngestWorkerError(RagchatError):
    """The ingestion child process failed or died; the job fails with this message."""


@dataclasses.dataclass(frozen=True)
class ChildSpec:
    """What the child needs: the settings (to load the embedder and set up the runtime) or a
    picklable embedder (a test fake), and its priority."""

    settings: Settings
    embedder: Embedder | None
    idle_priority: bool


@dataclasses.dataclass(frozen=True)
class ChildJob:
    files: list[Path]
    chunker: Chunker
    skip: set[str]  # keys of files the knowledge base holds unchanged: not embedded ahead
    caps: UploadCaps | None
    parse_limits: ParseLimits | None  # None: parse here, unbounded (tests, the CLI's files)


def report_to_wire(report: IngestReport) -> dict[str, Any]:
    """An ``IngestReport`` that pickles (``IngestError``'s two-argument ``__init__`` does not
    unpickle): its errors as (class name, source, reason)."""
    wire = dataclasses.asdict(dataclasses.replace(report, errors=[]))
    wire["errors"] = [(type(e).__name__, e.source, e.reason) for e in report.errors]
    return wire


def report_from_wire(wire: dict[str, Any]) -> IngestReport:
    errs = []
    for name, source, reason in wire.pop("errors"):
        cls = getattr(errors, name, IngestError)
        if not (isinstance(cls, type) and issubclass(cls, IngestError)):
            cls = IngestError
        errs.append(cls(source, reason))
    return IngestReport(**wire, errors=errs)
