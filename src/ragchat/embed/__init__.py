"""Embedding: the ``Embedder`` contract (``base.py``), its backends and the factory that picks
one, ONNX export, the per-process cache and micro-batching, and the fakes tests use. The two
names other stages use most are importable from here."""

from ragchat.embed.base import Embedder
from ragchat.embed.cache import embed_sentences

__all__ = ["Embedder", "embed_sentences"]
