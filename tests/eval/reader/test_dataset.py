"""Off-topic questions for a group come from other groups of its split, of kinds the group
does not hold, the same ones on every run."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragchat.eval.corpus import load_corpus
from ragchat.eval.reader.dataset import off_topic_questions

CORPUS = Path(__file__).resolve().parents[3] / "corpus"


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    return load_corpus(CORPUS)


def test_off_topic_questions_are_about_other_kinds_of_document(corpus) -> None:  # type: ignore[no-untyped-def]
    group = corpus.groups("train")[0]
    kinds = {d.kind for d in corpus.documents if d.group == group}
    chosen = off_topic_questions(corpus, group, 40)
    assert len(chosen) == 40
    for q in chosen:
        tags = dict(q.tags)
        assert tags["group"] != group and tags["kind"] not in kinds
        assert tags["split"] == "train"
    assert [q.qid for q in chosen] == [q.qid for q in off_topic_questions(corpus, group, 40)]
