"""Table rows keyed by bands: the row whose band holds the value a question gives."""

from __future__ import annotations

from tests.agents.heuristics.conftest import make_hit

from ragchat.agents.heuristics.compose import compose_answer
from ragchat.embed.base import Embedder
from ragchat.reader.ranges import holds, values

SICK_PAY = (
    "Length of service: Less than 1 year; Full pay: 4 weeks; Half pay: 4 weeks.\n"
    "Length of service: 1 to 5 years; Full pay: 12 weeks; Half pay: 12 weeks.\n"
    "Length of service: More than 5 years; Full pay: 26 weeks; Half pay: 26 weeks."
)


def test_a_value_falls_in_its_band_with_the_same_unit() -> None:
    two_years = values("How much sick pay will I get? I've worked here 2 years.")
    assert two_years == [(2.0, "year")]
    rows = SICK_PAY.splitlines()
    assert [holds(r, two_years) for r in rows] == [False, True, False]
    assert [holds(r, values("I've been here six years")) for r in rows] == [False, False, True]
    assert not holds(rows[1], values("I have 2 children"))  # another unit
    child = values("How much amoxicillin for a child weighing 30 kg?")
    assert holds("Patient: Children weighing less than 40 kg; Dose: 40 mg per kg", child)
    assert not holds("Patient: Adults and children weighing 40 kg or more; Dose: 250 mg", child)


def test_the_row_of_the_users_band_leads(real_embedder: Embedder) -> None:
    hits = [make_hit("s", SICK_PAY, title="Handbook", heading_path=["Handbook", "Sick pay"])]
    out = compose_answer(
        "How many weeks of full sick pay do I get if I've been here 3 years?", hits, real_embedder
    )
    assert out.sentences[0][0].startswith("Length of service: 1 to 5 years; Full pay: 12 weeks")
