"""The refusal checks' registry: named, ordered, and the first that fires names the refusal."""

from __future__ import annotations

from tests.agents.heuristics.conftest import make_hit

from ragchat.reader.checks import AFTER, BEFORE, After, Before, Check, first, refused_before


def test_every_check_has_its_own_name_in_a_fixed_order() -> None:
    names = [c.name for c in (*BEFORE, *AFTER)]
    assert len(names) == len(set(names))
    assert [c.name for c in BEFORE] == ["renumbered", "far_terms", "far_names", "far_specific"]
    assert [c.name for c in AFTER] == ["measure_unmet", "other_column", "uncounted", "too_little"]


def test_the_first_check_that_fires_names_the_refusal() -> None:
    ctx = After("q", ["t"], [], None)
    checks = (
        Check[After]("never", lambda a: False),
        Check[After]("second", lambda a: True),
        Check[After]("third", lambda a: True),
    )
    assert first(checks, ctx) == "second"
    assert first(checks[:1], ctx) is None


def test_a_label_numbered_otherwise_is_named_renumbered_before_any_word_check() -> None:
    hits = [make_hit("p1", "Paper 1 lasts two hours and covers algebra.", title="Exams")]
    assert refused_before("When is paper 2?", hits, None) == "renumbered"


def test_no_word_vectors_are_needed_when_no_check_could_fire() -> None:
    class NoVectors:
        def __getattr__(self, name: str) -> object:
            raise AssertionError(f"the embedder was asked for {name}")

    hits = [make_hit("p", "The library opens at 9 am on weekdays.", title="Library")]
    ctx = Before("When does the library open on weekdays?", hits, NoVectors())  # type: ignore[arg-type]
    assert first(BEFORE, ctx) is None
    assert ctx.far == []
