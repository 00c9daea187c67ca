"""Old Office files (``.doc``, ``.xls``, ``.ppt``): converted by LibreOffice, then read as
the new formats are.

LibreOffice (Debian's ``libreoffice-*-nogui``, installed by ``scripts/office-deps``) converts
the file headless into ``.docx`` / ``.xlsx`` / ``.pptx`` in a scratch folder, with a profile of
its own (concurrent conversions do not share one) and under a time limit, its whole process
group killed when the time is up; the converted file goes through ``WordLoader``,
``ExcelLoader`` or ``SlidesLoader``, so headings, tables and slides are cited as there.
Chosen over antiword, catdoc, xls2csv and catppt (1.3 MB against ~370 MB): those give plain
text without headings, tables as drawn grids of ``|`` whose wrapped cells split rows, and
catppt read nothing of a PowerPoint 97 deck (docs/benchmarks.md, issue 35).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from dataclasses import replace
from functools import cache
from pathlib import Path

from ragchat.errors import IngestError
from ragchat.ingest.base import Loader
from ragchat.ingest.text_utils import read_bytes, sha256_hex
from ragchat.types import LoadedDocument

CONVERT_TIMEOUT_S = 60.0
MISSING = "old Office files are converted by LibreOffice (scripts/office-deps installs it)"
# Old suffix → (new suffix, what people call it, LibreOffice's filter for the new format).
TARGETS = {
    ".doc": (".docx", "Word 97-2003 document", "docx:MS Word 2007 XML"),
    ".xls": (".xlsx", "Excel 97-2003 workbook", "xlsx:Calc MS Excel 2007 XML"),
    ".ppt": (".pptx", "PowerPoint 97-2003 presentation", "pptx:Impress MS PowerPoint 2007 XML"),
}
# The files' own signature: OLE2 compound documents (a renamed text file is refused at once).
_OLE2 = bytes.fromhex("d0cf11e0a1b11ae1")


@cache
def soffice() -> str | None:
    """LibreOffice's command, or None when it is not installed."""
    return shutil.which("soffice") or shutil.which("libreoffice")


def convert(path: Path, workdir: Path, command: str, timeout_s: float = CONVERT_TIMEOUT_S) -> Path:
    """``path`` converted to its new format inside ``workdir``."""
    source = str(path)
    new_suffix, _, target = TARGETS[path.suffix.lower()]
    profile = workdir / "profile"
    args = [
        command,
        "--headless",
        "--norestore",
        "--nolockcheck",
        f"-env:UserInstallation={profile.as_uri()}",
        "--convert-to",
        target,
        "--outdir",
        str(workdir / "out"),
        str(path),
    ]
    env = {**os.environ, "HOME": str(workdir), "SAL_USE_VCLPLUGIN": "svp"}
    try:
        proc = subprocess.Popen(
            args,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # its own group: a timeout kills every process it started
        )
    except OSError as exc:
        raise IngestError(source, f"cannot run LibreOffice ({exc})") from exc
    try:
        _out, err = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise IngestError(
            source, f"converting it took longer than {timeout_s:g} s (the limit per file)"
        ) from exc
    finally:
        if proc.poll() is None:  # cancelled from outside: leave nothing running
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    converted = workdir / "out" / (path.stem + new_suffix)
    if proc.returncode != 0 or not converted.is_file():
        lines = err.decode("utf-8", "replace").strip().splitlines()
        reason = next((ln for ln in reversed(lines) if "javaldx" not in ln), "")
        raise IngestError(
            source, "LibreOffice could not convert it" + (f" ({reason})" if reason else "")
        )
    return converted


class LegacyOfficeLoader:
    suffixes: tuple[str, ...] = tuple(TARGETS)

    def __init__(self, max_chars: int | None = None) -> None:
        self.max_chars = max_chars

    def load(self, path: Path) -> list[LoadedDocument]:
        from ragchat.ingest.sheets import ExcelLoader
        from ragchat.ingest.slides import SlidesLoader
        from ragchat.ingest.word import WordLoader

        source = str(path)
        data = read_bytes(path)
        suffix = path.suffix.lower()
        name = TARGETS[suffix][1]
        if not data.startswith(_OLE2):
            raise IngestError(source, f"not a {name} (no OLE2 signature)")
        command = soffice()
        if command is None:
            raise IngestError(source, MISSING)
        with tempfile.TemporaryDirectory(prefix="ragchat-office-") as tmp:
            work = Path(tmp)
            # A plain name: LibreOffice names its output after the input.
            copy = work / f"document{suffix}"
            copy.write_bytes(data)
            converted = convert(copy, work, command)
            readers: dict[str, type[WordLoader] | type[ExcelLoader] | type[SlidesLoader]] = {
                ".doc": WordLoader,
                ".xls": ExcelLoader,
                ".ppt": SlidesLoader,
            }
            loader: Loader = readers[suffix](self.max_chars)
            try:
                docs = loader.load(converted)
            except IngestError as exc:
                raise IngestError(source, exc.reason) from exc
        title = path.stem
        return [
            replace(
                doc,
                doc_id=sha256_hex(data),
                source=source,
                title=title if doc.title in ("", "document") else doc.title,
                metadata={
                    **doc.metadata,
                    "title": title if doc.title in ("", "document") else doc.title,
                    "format": suffix.lstrip("."),  # the kind is the new format's, as read
                },
            )
            for doc in docs
        ]
