"""The trained reader shipped in the package (``reader/data/``): a gradient-boosted scorer of
(question, candidate) → answers, a gradient-boosted refusal model over the question's signals,
and the threshold and selection settings chosen on the validation split. Built by ``ragchat
reader train`` from the corpus; LightGBM's text format, which loads the same in every version."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from ragchat.errors import ModelLoadError
from ragchat.reader.features import FEATURES
from ragchat.reader.head import Head
from ragchat.reader.refusal import REFUSAL_FEATURES

DATA = Path(__file__).parent / "data"


@dataclass(frozen=True)
class Choices:
    """What was chosen on the validation split: the refusal threshold on P(answerable), and
    which further candidates join the lead for their probability (at least ``relative`` ×
    the lead's and ``floor``, at most ``max_sentences`` in all; the composer may add a
    pronoun's subject and the sentences beside a prose lead, ``compose.choose``). The
    trainer's simulation of these choices quotes the chosen candidates only."""

    threshold: float = 0.5
    relative: float = 0.5
    floor: float = 0.2
    max_sentences: int = 3


@dataclass(frozen=True)
class ModelCard:
    features: tuple[str, ...] = FEATURES
    refusal_features: tuple[str, ...] = REFUSAL_FEATURES
    choices: Choices = Choices()
    figures: dict[str, Any] = field(default_factory=dict)
    seed: int = 34

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["features"] = list(self.features)
        data["refusal_features"] = list(self.refusal_features)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ModelCard:
        return cls(
            features=tuple(data["features"]),
            refusal_features=tuple(data["refusal_features"]),
            choices=Choices(**data.get("choices", {})),
            figures=dict(data.get("figures", {})),
            seed=int(data.get("seed", 34)),
        )


class ReaderModel:
    """The two boosters and the card. ``candidates(x)`` → P(answers) per candidate row;
    ``answerable(r)`` → P(the passages answer) per question row."""

    def __init__(self, scorer: Any, refusal: Any, card: ModelCard, head: Head) -> None:
        if tuple(card.features) != FEATURES or tuple(card.refusal_features) != REFUSAL_FEATURES:
            raise ModelLoadError(
                "the reader model was trained on other features than this version computes; "
                "rebuild it with `ragchat reader train`"
            )
        self._scorer = scorer
        self._refusal = refusal
        self.card = card
        self.head = head

    def candidates(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0, dtype=np.float32)
        return np.asarray(self._scorer.predict(x, num_threads=1), dtype=np.float32)

    def answerable(self, rows: np.ndarray) -> np.ndarray:
        return np.asarray(self._refusal.predict(rows, num_threads=1), dtype=np.float32)

    def save(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self._scorer.save_model(str(folder / "scorer.txt"))
        self._refusal.save_model(str(folder / "refusal.txt"))
        self.head.save(folder / "head.json")
        (folder / "card.json").write_text(
            json.dumps(self.card.to_json(), indent=2) + "\n", encoding="utf-8"
        )

    @classmethod
    def load(cls, folder: Path = DATA) -> ReaderModel:
        try:
            import lightgbm as lgb

            card = ModelCard.from_json(json.loads((folder / "card.json").read_text("utf-8")))
            scorer = lgb.Booster(model_file=str(folder / "scorer.txt"))
            refusal = lgb.Booster(model_file=str(folder / "refusal.txt"))
            head = Head.load(folder / "head.json")
        except (OSError, ValueError, KeyError) as exc:
            raise ModelLoadError(f"cannot load the reader model from {folder}: {exc}") from exc
        return cls(scorer, refusal, card, head)


@lru_cache(maxsize=4)
def shipped(folder: Path = DATA) -> ReaderModel:
    """The packaged model, loaded once per process."""
    return ReaderModel.load(folder)
