"""Shared fixtures: a small hand-built knowledge base (real ``KnowledgeBase`` with the hashing
test embedder) and a tiny random cross-encoder saved to disk."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from ragchat.embed.fake import HashingEmbedder
from ragchat.types import Chunk
from ragchat.vectorstores.embedded.kb import KnowledgeBase

from .helpers import DOCS, build_chunks

KBFactory = Callable[[Sequence[Chunk]], KnowledgeBase]


@pytest.fixture(scope="session")
def make_kb(tmp_path_factory: pytest.TempPathFactory) -> KBFactory:
    """Builds a knowledge base from chunks (swap the class here to test another SearchableKB)."""
    counter = iter(range(1_000_000))

    def make(chunks: Sequence[Chunk]) -> KnowledgeBase:
        root = tmp_path_factory.mktemp("kb")
        kb = KnowledgeBase.create(root, f"t{next(counter)}", HashingEmbedder())
        kb.add_chunks(list(chunks))
        return kb

    return make


@pytest.fixture(scope="session")
def kb(make_kb: KBFactory) -> KnowledgeBase:
    """Read-only shared knowledge base over ``DOCS``: tests must not add or delete."""
    return make_kb(build_chunks(DOCS))


@pytest.fixture(scope="session")
def tiny_cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A randomly initialised one-layer BERT cross-encoder with a word-level vocab, saved the way
    a real model directory is (config, weights, tokenizer files)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizer

    path = tmp_path_factory.mktemp("tiny-ce")
    words = sorted({w.strip(".,").lower() for c in build_chunks(DOCS) for w in c.text.split()})
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", ",", *words]
    vocab_file = path / "vocab.txt"
    vocab_file.write_text("\n".join(vocab) + "\n", encoding="utf-8")
    # transformers 5 takes the WordPiece vocab file as ``vocab`` (``vocab_file`` is ignored).
    tokenizer = BertTokenizer(vocab=str(vocab_file))
    assert "[UNK]" not in tokenizer.tokenize(build_chunks(DOCS)[1].text)
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
        max_position_embeddings=128,
        initializer_range=0.5,  # large random weights: clearly different scores per pair
    )
    config.num_labels = 1  # one relevance logit per pair, as cross-encoders have
    model = BertForSequenceClassification(config)
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path
