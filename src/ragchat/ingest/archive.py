"""Checks on the zip container of DOCX, PPTX, XLSX and EPUB files before any library opens them.

Two attacks hide in these containers. A zip bomb: a small archive whose entries inflate to
gigabytes, which python-docx, python-pptx and ebooklib would read into memory whole. And XML
that declares entities: nested ones expand a few hundred bytes into gigabytes ("billion
laughs"); external ones read a server file (``<!ENTITY x SYSTEM "file:///etc/passwd">``).
Office and EPUB files never need an entity declaration, so any is refused, found by reading
only each XML part's prolog with expat (stopping at its root element).
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from xml.parsers import expat

from ragchat.errors import IngestError

MAX_UNCOMPRESSED = 512 * 1024 * 1024  # all entries together, as the archive declares them
MAX_ENTRIES = 20_000
_XML_SUFFIXES = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx", ".svg", ".vml")
_PROLOG_READ = 64 * 1024
_PROLOG_MAX = 1024 * 1024  # no real part has a megabyte before its root element


class _RootReached(Exception):
    pass


class _EntityDeclared(Exception):
    pass


def check_zip(path: Path, what: str) -> None:
    """Raises ``IngestError`` when ``path`` is not a zip, would inflate past
    ``MAX_UNCOMPRESSED``, or has an XML part declaring entities. ``what`` names the format in
    messages ("Word document")."""
    source = str(path)
    max_uncompressed = MAX_UNCOMPRESSED
    try:
        with zipfile.ZipFile(path) as zf:
            infos = zf.infolist()
            if len(infos) > MAX_ENTRIES:
                raise IngestError(
                    source,
                    f"too many parts in the {what} ({len(infos):,}; at most {MAX_ENTRIES:,})",
                )
            total = sum(info.file_size for info in infos)
            if total > max_uncompressed:
                raise IngestError(
                    source,
                    f"the {what} would inflate to {total / 2**20:,.0f} MiB "
                    f"(a zip bomb?; at most {max_uncompressed / 2**20:,.0f} MiB)",
                )
            for info in infos:
                if info.filename.lower().endswith(_XML_SUFFIXES) and not info.is_dir():
                    _check_prolog(zf, info, source)
    except zipfile.BadZipFile as exc:
        raise IngestError(source, f"not a valid {what} (damaged zip container: {exc})") from exc
    except (OSError, EOFError, RuntimeError, NotImplementedError) as exc:
        # RuntimeError: an encrypted entry; NotImplementedError: an unknown compression.
        raise IngestError(source, f"cannot read the {what}'s zip container ({exc})") from exc


def _check_prolog(zf: zipfile.ZipFile, info: zipfile.ZipInfo, source: str) -> None:
    parser = expat.ParserCreate()

    def on_entity(*_args: object) -> None:
        raise _EntityDeclared

    def on_start(*_args: object) -> None:
        raise _RootReached

    parser.EntityDeclHandler = on_entity
    parser.StartElementHandler = on_start
    read = 0
    try:
        with zf.open(info) as part:
            while read < _PROLOG_MAX:
                data = part.read(_PROLOG_READ)
                read += len(data)
                parser.Parse(data, not data)
                if not data:
                    return
    except _RootReached:
        return
    except _EntityDeclared:
        raise IngestError(
            source,
            f"{info.filename} declares XML entities (entity expansion or external entities "
            "are refused)",
        ) from None
    except expat.ExpatError:
        return  # not well-formed: the format's own parser reports it, with its context
    raise IngestError(source, f"{info.filename}: over 1 MiB before its first element")
