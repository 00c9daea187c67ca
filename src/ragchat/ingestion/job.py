"""One ingestion job, built once and handed on unchanged: from the API service (or the CLI) to
``worker.py`` to its child and to ``ingest.py``. It carries each file with its key and the hash
of its bytes (computed here, once: "already ingested" and "unchanged" both compare it), the
upload caps, the parse limits, the chunker and the files not worth embedding ahead."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ragchat.ingest.chunking import Chunker
from ragchat.ingest.registry import iter_files
from ragchat.ingest.sandbox import ParseLimits
from ragchat.ingest.text_utils import sha256_hex, too_much_text
from ragchat.settings import ChunkingSettings

if TYPE_CHECKING:
    from ragchat.vectorstores.base import WritableKB

HeldSha = Callable[[str], "str | None"]  # file key -> hash the knowledge base holds for it


def file_key(path: Path) -> str:
    return str(path.resolve())


def hash_file(path: Path) -> str:
    """The hash of a file's bytes as the knowledge base records it (``OSError`` if unreadable)."""
    return sha256_hex(path.read_bytes())


@dataclass(frozen=True)
class JobFile:
    path: Path
    key: str
    sha: str | None  # None: the file could not be read, ``error`` says why
    error: str = ""


def hash_files(paths: Sequence[Path]) -> tuple[JobFile, ...]:
    """The files under ``paths`` (folders expanded, ``iter_files``), each hashed once."""
    out = []
    for path in iter_files([Path(p) for p in paths]):
        key = file_key(path)
        try:
            out.append(JobFile(path, key, hash_file(path)))
        except OSError as exc:
            out.append(JobFile(path, key, None, str(exc.strerror or exc)))
    return tuple(out)


@dataclass(frozen=True)
class UploadCaps:
    """Per-file and per-call caps on extracted characters and searchable chunks (0 = none),
    from ``IngestLimits``; a file over one fails alone with a reason naming the cap."""

    file_chars: int = 0
    file_chunks: int = 0
    total_chars: int = 0
    total_chunks: int = 0
    user_chunks: int = 0  # the uploader's quota, of which ``user_used`` are already stored
    user_used: int = 0

    def meter(self) -> CapsMeter:
        return CapsMeter(self)


@dataclass
class CapsMeter:
    """The one place the upload caps are checked: the files of one call, in order (the ingest
    and the child's warm-up both ask it)."""

    caps: UploadCaps
    chars: int = 0  # admitted so far
    chunks: int = 0

    def admit(self, chars: int, chunks: int) -> str | None:
        """Why a file of ``chars`` characters and ``chunks`` chunks does not fit after those
        admitted before it (None: it fits, and is counted). A file over a per-upload cap is
        not counted: later, smaller files may still fit."""
        reason = self._refusal(chars, chunks)
        if reason is None:
            self.chars += chars
            self.chunks += chunks
        return reason

    def _refusal(self, chars: int, chunks: int) -> str | None:
        caps = self.caps
        if caps.file_chars and chars > caps.file_chars:
            return too_much_text(caps.file_chars)
        if caps.file_chunks and chunks > caps.file_chunks:
            return f"too many chunks: {chunks:,} (at most {caps.file_chunks:,} per file)"
        if caps.total_chars and self.chars + chars > caps.total_chars:
            return (
                f"the upload's text limit is reached ({caps.total_chars:,} characters per upload)"
            )
        if caps.total_chunks and self.chunks + chunks > caps.total_chunks:
            return f"the upload's chunk limit is reached ({caps.total_chunks:,} per upload)"
        if caps.user_chunks and caps.user_used + self.chunks + chunks > caps.user_chunks:
            return f"your upload quota is reached ({caps.user_chunks:,} chunks per user)"
        return None


def chunker_for(kb: WritableKB | None, default: ChunkingSettings) -> Chunker:
    """The chunker of knowledge base ``kb``: the chunking its manifest records, so a knowledge
    base made with other settings stays consistent; ``default`` (the settings' chunking, what
    a new knowledge base records) for a new one (None) and for what a manifest leaves out."""
    recorded: Mapping[str, object] = kb.manifest.chunking if kb is not None else {}
    return Chunker(ChunkingSettings.model_validate({**default.model_dump(), **recorded}))


@dataclass(frozen=True)
class IngestJob:
    files: tuple[JobFile, ...]
    chunker: Chunker
    caps: UploadCaps = UploadCaps()
    parse_limits: ParseLimits | None = None  # None: parse in the caller, unbounded
    skip: frozenset[str] = field(default=frozenset())  # keys held unchanged: not embedded ahead

    @classmethod
    def build(
        cls,
        paths: Sequence[Path],
        chunker: Chunker,
        *,
        caps: UploadCaps | None = None,
        parse_limits: ParseLimits | None = None,
        held: HeldSha | None = None,
    ) -> IngestJob:
        """Hashes the files (the only time a job does); ``held`` says what the knowledge base
        already holds, so an unchanged file is not embedded ahead."""
        files = hash_files(paths)
        skip = frozenset(
            f.key for f in files if held is not None and f.sha is not None and held(f.key) == f.sha
        )
        return cls(files, chunker, caps or UploadCaps(), parse_limits, skip)

    def sha_of(self, path: Path) -> str | None:
        """The hash this job computed for ``path`` (None: unreadable, or not in the job)."""
        key = file_key(path)
        return next((f.sha for f in self.files if f.key == key), None)
