"""Turn ranked child hits into the context the answerer reads: parent text, neighbours, dedupe.

Rules (kept simple on purpose):

* parents on: each hit's context is its parent's text, and a parent is shown once: of hits that
  share a parent only the best-ranked one is kept.
* neighbours on: the children just before and after a hit in its document are added (in
  document order) when their own cosine with the query reaches the floor. With parents on, a
  neighbour inside the same parent is already in the context and is skipped; one from another
  parent is added before/after the parent text.
* Neighbours never become hits of their own.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from ragchat.embed.base import Vector
from ragchat.types import Chunk, Hit, TimedSpan, chunk_cues
from ragchat.vectorstores.base import SearchableKB

_MIN_OVERLAP = 20
_MAX_OVERLAP = 400


def _merge(a: str, b: str) -> str:
    """Joins two consecutive texts, removing the overlap the chunker put between children."""
    for n in range(min(len(a), len(b), _MAX_OVERLAP), _MIN_OVERLAP - 1, -1):
        if a.endswith(b[:n]):
            return a + b[n:]
    return f"{a}\n{b}"


def join_texts(parts: Sequence[str]) -> str:
    out = ""
    for part in parts:
        out = _merge(out, part) if out else part
    return out


def resolve_parents(kb: SearchableKB, hits: Sequence[Hit], k: int) -> list[Hit]:
    """The best ``k`` hits with distinct parents, each with its parent's text as context.

    ``hits`` must be best first. A hit without a parent (or whose parent is missing from the
    store) keeps its own text and counts as its own parent.
    """
    kept: list[Hit] = []
    seen: set[str] = set()
    for hit in hits:
        key = hit.chunk.parent_id or hit.chunk.chunk_id
        if key in seen:
            continue
        seen.add(key)
        kept.append(hit)
        if len(kept) >= k:
            break
    wanted = [h.chunk.parent_id for h in kept if h.chunk.parent_id]
    parents = {c.chunk_id: c for c in kb.get_chunks(wanted)} if wanted else {}
    out: list[Hit] = []
    for hit in kept:
        parent = parents.get(hit.chunk.parent_id or "")
        source = parent if parent is not None else hit.chunk
        out.append(
            replace(
                hit,
                context=source.text,
                context_ids=(source.chunk_id,),
                cues=chunk_cues(source),
            )
        )
    return out


def expand_neighbours(
    kb: SearchableKB,
    query_vec: Vector,
    hits: Sequence[Hit],
    floor: float,
    *,
    parents: bool,
) -> list[Hit]:
    """Adds on-topic neighbouring children to each hit's context (see module docstring)."""
    around: list[tuple[Chunk | None, Chunk | None]] = [
        (kb.neighbour(h.chunk, -1), kb.neighbour(h.chunk, 1)) for h in hits
    ]
    ids = list(dict.fromkeys(c.chunk_id for pair in around for c in pair if c is not None))
    sims = dict(zip(ids, kb.dense_scores(query_vec, ids), strict=True)) if ids else {}
    out: list[Hit] = []
    for hit, (prev, nxt) in zip(hits, around, strict=True):
        # The parent whose text is the context (None when no parent text was resolved).
        resolved = parents and hit.chunk.parent_id is not None
        own_parent = (
            hit.chunk.parent_id if resolved and hit.context_ids == (hit.chunk.parent_id,) else None
        )
        base_text = hit.context if parents and hit.context is not None else hit.chunk.text
        base_ids = hit.context_ids if parents and hit.context_ids else (hit.chunk.chunk_id,)

        def useful(nb: Chunk | None, own_parent: str | None = own_parent) -> Chunk | None:
            if nb is None or sims.get(nb.chunk_id, 0.0) < floor:
                return None
            if own_parent is not None and nb.parent_id == own_parent:
                return None  # already inside the parent text
            return nb

        before, after = useful(prev), useful(nxt)
        texts = [c.text for c in (before,) if c] + [base_text] + [c.text for c in (after,) if c]
        ctx_ids = (
            tuple(c.chunk_id for c in (before,) if c)
            + tuple(base_ids)
            + tuple(c.chunk_id for c in (after,) if c)
        )
        context = join_texts(texts)
        cues = hit.cues if parents and hit.context is not None else chunk_cues(hit.chunk)
        if before is not None:  # the base text moved: shift its cues along
            shift = context.find(base_text)
            cues = (
                tuple(
                    TimedSpan(c.start_char + shift, c.end_char + shift, c.start, c.end, c.speaker)
                    for c in cues
                )
                if shift >= 0
                else ()
            )
        out.append(replace(hit, context=context, context_ids=ctx_ids, cues=cues))
    return out
