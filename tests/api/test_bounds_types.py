"""The knowledge-base name types the ``kb`` fields use: the folder-name rule of
``index.kb.validate_name`` as a validation error (422), one name or a list of at most 8."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from ragchat.api.bounds import MAX_KB_NAMES, KbName, KbNames


class Body(BaseModel):
    kb: KbName | KbNames | None = None


@pytest.mark.parametrize("kb", ["medical", "a", "x" * 64, "notes.v2_b-c", ["medical", "notes"]])
def test_good_names_and_lists_pass(kb: object) -> None:
    assert Body(kb=kb).kb == kb


@pytest.mark.parametrize(
    "kb",
    ["", "x" * 65, "-bad", "../etc", "a b", [], ["ok", "../etc"], ["k"] * (MAX_KB_NAMES + 1)],
)
def test_bad_names_and_lists_are_validation_errors(kb: object) -> None:
    with pytest.raises(ValidationError):
        Body(kb=kb)
