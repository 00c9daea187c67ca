"""The OpenAI-compatible endpoints, driven by the official ``openai`` SDK."""

from __future__ import annotations

import openai
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragchat.errors import LLMUnavailable

from .conftest import AppFactory
from .fakes import FakeEngine


def sdk(app: FastAPI, api_key: str = "anything") -> openai.OpenAI:
    """The sync SDK over the in-process app (TestClient is an httpx.Client)."""
    return openai.OpenAI(
        base_url="http://testserver/v1", api_key=api_key, http_client=TestClient(app), max_retries=0
    )


def test_models_lists_the_supervisor_and_every_agent(real_app: FastAPI) -> None:
    ids = [m.id for m in sdk(real_app).models.list()]
    assert ids[0] == "ragchat"
    agents = {i for i in ids if not i.startswith("kb/")}
    assert agents == {
        "ragchat",
        "support",
        "medical",
        "parenting",
        "tutor",
        "documents",
        "companion",
    }
    # ... and every knowledge base the caller may see, as a model of its own.
    assert {"kb/medical", "kb/parenting", "kb/textbook"} <= set(ids)


def test_chat_completion_non_streaming(real_app: FastAPI) -> None:
    completion = sdk(real_app).chat.completions.create(
        model="ragchat",
        messages=[
            {"role": "system", "content": "You are helpful."},
            {"role": "user", "content": "What are common migraine triggers?"},
        ],
    )
    message = completion.choices[0].message
    assert completion.object == "chat.completion" and completion.model == "ragchat"
    assert completion.choices[0].finish_reason == "stop"
    assert message.role == "assistant" and "[1]" in (message.content or "")
    citations = (message.model_extra or {})["citations"]
    assert citations and citations[0]["source"].endswith(".md")
    assert (completion.model_extra or {})["agent"] == "medical"
    assert completion.usage is not None and completion.usage.completion_tokens > 0


def test_chat_completion_streaming_with_history(real_app: FastAPI) -> None:
    stream = sdk(real_app).chat.completions.create(
        model="tutor",
        stream=True,
        messages=[
            {"role": "user", "content": "Tell me about the heart."},
            {"role": "assistant", "content": "The heart pumps blood."},
            {
                "role": "user",
                "content": [{"type": "text", "text": "What does the sinoatrial node do?"}],
            },
        ],
    )
    chunks = list(stream)
    assert all(c.object == "chat.completion.chunk" for c in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "sinoatrial" in text.lower()
    last = chunks[-1]
    assert last.choices[0].finish_reason == "stop"
    assert (last.model_extra or {})["citations"]
    assert (last.model_extra or {})["agent"] == "tutor"


def test_unknown_model_and_bad_messages(real_app: FastAPI) -> None:
    client = sdk(real_app)
    with pytest.raises(openai.NotFoundError) as missing:
        client.chat.completions.create(model="gpt-9", messages=[{"role": "user", "content": "hi"}])
    assert "ragchat" in str(missing.value)
    with pytest.raises(openai.BadRequestError):
        client.chat.completions.create(
            model="ragchat", messages=[{"role": "assistant", "content": "hi"}]
        )


def test_api_key_can_be_required(make_app: AppFactory) -> None:
    client = make_app(require_api_key_for_openai=True)
    with pytest.raises(openai.AuthenticationError):
        sdk(client.app, "rc_wrong").models.list()
    secret = client.post("/users", json={"display_name": "bot", "create_api_key": True}).json()[
        "api_key"
    ]["secret"]
    reply = sdk(client.app, secret).chat.completions.create(
        model="echo", messages=[{"role": "user", "content": "ping"}]
    )
    assert reply.choices[0].message.content == "echo: ping"


def test_llm_outage_is_503(make_app: AppFactory) -> None:
    client = make_app(FakeEngine(error=LLMUnavailable("upstream down")))
    with pytest.raises(openai.InternalServerError) as failed:
        sdk(client.app).chat.completions.create(
            model="ragchat", messages=[{"role": "user", "content": "ping"}]
        )
    assert failed.value.status_code == 503
    # Streaming: the SDK raises on the error event sent in place of the content.
    with pytest.raises(openai.APIError):
        list(
            sdk(client.app).chat.completions.create(
                model="ragchat", stream=True, messages=[{"role": "user", "content": "ping"}]
            )
        )
