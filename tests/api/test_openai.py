"""The OpenAI-compatible endpoints, driven by the official ``openai`` SDK."""

from __future__ import annotations

import openai
import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from ragchat.api.services.openai import sources_block, split_turn
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
    assert (reply.choices[0].message.content or "").startswith("echo: ping\n\nSources:")


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


def test_the_sources_follow_the_answer_in_the_content(real_app: FastAPI) -> None:
    """Most clients render only ``content``: "[1]" must point at something there."""
    completion = sdk(real_app).chat.completions.create(
        model="medical",
        messages=[{"role": "user", "content": "What are common migraine triggers?"}],
    )
    content = completion.choices[0].message.content or ""
    answer, _, listed = content.partition("\n\nSources:\n")
    citations = (completion.choices[0].message.model_extra or {})["citations"]
    assert "[1]" in answer and listed.splitlines()[0].startswith("[1] ")
    assert len(listed.splitlines()) == len(citations)
    first = listed.splitlines()[0]
    assert citations[0]["source"] in first  # the file name
    assert first.startswith(f"[1] {citations[0]['title']} — ")
    assert first.count(citations[0]["title"]) == 1  # not again in the section path

    stream = sdk(real_app).chat.completions.create(
        model="medical",
        stream=True,
        messages=[{"role": "user", "content": "What are common migraine triggers?"}],
    )
    chunks = list(stream)
    streamed = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert "\n\nSources:\n[1] " in streamed
    assert (chunks[-1].model_extra or {})["citations"]


def test_a_reply_sent_back_as_history_loses_its_sources_list() -> None:
    reply = "Ibuprofen can upset the stomach [1].\n\nSources:\n[1] Ibuprofen — ibuprofen.md"
    history, turn = split_turn(
        [("user", "Side effects?"), ("assistant", reply), ("user", "Why?")], 10
    )
    assert history[-1].content == "Ibuprofen can upset the stomach [1]." and turn == "Why?"
    assert sources_block([]) == ""


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("tools", [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]),
        ("tool_choice", "required"),
        ("tool_choice", {"type": "function", "function": {"name": "get_weather"}}),
        ("response_format", {"type": "json_object"}),
        (
            "response_format",
            {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}},
        ),
    ],
)
def test_what_ragchat_cannot_honour_is_a_400_naming_the_field(
    real_app: FastAPI, field: str, value: object
) -> None:
    client = TestClient(real_app)
    for stream in (False, True):
        r = client.post(
            "/v1/chat/completions",
            json={
                "model": "ragchat",
                "stream": stream,
                "messages": [{"role": "user", "content": "What helps with hay fever?"}],
                field: value,
            },
        )
        assert r.status_code == 400, r.text
        assert r.json()["error"]["type"] == "unsupported_parameter"
        assert f"'{field}'" in r.json()["error"]["message"]


def test_what_ragchat_does_anyway_is_accepted(real_app: FastAPI) -> None:
    completion = sdk(real_app).chat.completions.create(
        model="ragchat",
        messages=[{"role": "user", "content": "What helps with hay fever?"}],
        tools=[],
        tool_choice="none",
        response_format={"type": "text"},
    )
    assert completion.choices[0].message.content
