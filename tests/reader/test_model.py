"""The shipped model: it loads without a network, matches the features this version computes,
and a model trained on other features is refused with a clear error."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from ragchat.errors import ModelLoadError
from ragchat.reader.features import FEATURES
from ragchat.reader.model import DATA, ReaderModel
from ragchat.reader.refusal import REFUSAL_FEATURES


def test_the_shipped_model_scores_candidates_and_questions(model: ReaderModel) -> None:
    probs = model.candidates(np.zeros((3, len(FEATURES)), dtype=np.float32))
    assert probs.shape == (3,) and ((probs >= 0) & (probs <= 1)).all()
    p = model.answerable(np.zeros((1, len(REFUSAL_FEATURES)), dtype=np.float32))
    assert 0 <= float(p[0]) <= 1
    choices = model.card.choices
    assert 0 < choices.threshold < 1 and choices.max_sentences >= 1
    assert model.card.figures["val"]["wrong_refusals"] <= 0.06


def test_a_model_of_other_features_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "model"
    shutil.copytree(DATA, folder)
    card = json.loads((folder / "card.json").read_text())
    card["features"] = card["features"][:-1]
    (folder / "card.json").write_text(json.dumps(card))
    with pytest.raises(ModelLoadError, match="ragchat reader train"):
        ReaderModel.load(folder)


def test_a_missing_model_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ModelLoadError, match="cannot load"):
        ReaderModel.load(tmp_path)
