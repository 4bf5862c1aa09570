"""Wire builders checked against the official SDK type definitions (SPEC §6.3)."""

from __future__ import annotations

import copy

import pytest
from anthropic.types import MessageParam
from openai.types.chat import ChatCompletionMessageParam
from openai.types.responses import ResponseInputParam
from pydantic import TypeAdapter
from rules_helpers import assistant, attachment, check_shape, img_part, jpeg_url, png_url, txt, user

from chatkeep.errors import ProviderConfigError
from chatkeep.rules.wire import WireRequest, api_root, build_request, join_base_url, serialize

CHAT = TypeAdapter(list[ChatCompletionMessageParam])
RESPONSES = TypeAdapter(ResponseInputParam)
ANTHROPIC = TypeAdapter(list[MessageParam])

IMG = png_url((8, 8))
JPG = jpeg_url((8, 8))
BIG_BODY = "x" * 9000


def _history():
    return [
        assistant("leftover reply from a trimmed turn"),
        attachment("## Figures\n1. Figure 1: plot", images=[IMG], attach_id="p"),
        user("what is in the figure?"),
        assistant("a plot"),
        {**user("and this?", [JPG]), "imagesSeen": True},
        {
            "role": "assistant",
            "content": [txt("it is "), txt("a photo")],
            "provider": {"name": "n", "model": "m"},
        },
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "legacy part"},
                {"type": "image_url", "image_url": IMG},
            ],
        },
    ]


def _build(style, history=None, **kw):
    kw.setdefault("user_entry", user("next", [IMG]))
    kw.setdefault("system_prompt", "Be brief.")
    kw.setdefault("model", "m-1")
    kw.setdefault("base_url", "https://api.example.com")
    return build_request(style, _history() if history is None else history, **kw)


@pytest.mark.parametrize(
    ("base", "expected"),
    [
        ("https://api.openai.com", "https://api.openai.com/v1"),
        ("https://api.openai.com/", "https://api.openai.com/v1"),
        ("http://localhost:11434/v1/", "http://localhost:11434/v1"),
        ("https://x.ai/api/v2", "https://x.ai/api/v2"),
        ("https://x.ai/v1beta", "https://x.ai/v1beta/v1"),
    ],
)
def test_api_root(base, expected):
    """Trailing `/` stripped; `/v<digits>` kept, otherwise `/v1` appended."""
    assert api_root(base) == expected


def test_join_base_url():
    """The path is joined under the API root with one slash."""
    assert join_base_url("https://h/v1/", "/chat/completions") == "https://h/v1/chat/completions"
    assert (
        join_base_url("https://api.anthropic.com", "messages")
        == "https://api.anthropic.com/v1/messages"
    )


def test_chat_shape_and_body():
    """Chat: system first, parts canonical, only role/content, SDK-valid, options in body."""
    req = _build("chat", temperature=0.2, max_tokens=100)
    assert isinstance(req, WireRequest) and req.style == "chat"
    assert req.url == "https://api.example.com/v1/chat/completions"
    body = req.body
    assert list(body) == [
        "model",
        "stream",
        "stream_options",
        "temperature",
        "max_tokens",
        "messages",
    ]
    assert body["model"] == "m-1" and body["stream"] is True
    msgs = body["messages"]
    check_shape(CHAT, msgs)
    assert msgs[0] == {"role": "system", "content": "Be brief."}
    assert msgs[5]["content"] == [txt("and this?"), txt("[image 1]")]  # seen → label
    assert msgs[7]["content"] == [txt("legacy part"), img_part(IMG)]  # canonicalised
    assert msgs[-1] == {"role": "user", "content": [txt("next"), img_part(IMG)]}


def test_chat_without_options():
    """Unset temperature/max_tokens are absent; stream can be off."""
    body = _build("chat", stream=False).body
    assert "temperature" not in body and "max_tokens" not in body and body["stream"] is False


def test_responses_shape_and_body():
    """Responses: instructions, input_text/input_image, assistant text as string, SDK-valid."""
    req = _build("responses", max_tokens=50)
    assert req.url == "https://api.example.com/v1/responses"
    body = req.body
    assert body["instructions"] == "Be brief." and body["max_output_tokens"] == 50
    check_shape(RESPONSES, body["input"])
    first = body["input"][0]
    assert first["role"] == "assistant" and first["content"] == "leftover reply from a trimmed turn"
    assert body["input"][1]["content"][1] == {
        "type": "input_image",
        "image_url": IMG,
        "detail": "auto",
    }
    assert body["input"][5]["content"] == "it is \na photo"
    assert "previous_response_id" not in body


def test_responses_previous_response_id_sends_agent_turn_only():
    """With previous_response_id only the trailing run + new text go; pasted images first."""
    history = [user("q"), assistant("a"), attachment("fresh page", images=[JPG], attach_id="f")]
    req = _build(
        "responses", history, previous_response_id="resp_1", user_entry=user("sum up", [IMG])
    )
    body = req.body
    assert body["previous_response_id"] == "resp_1"
    check_shape(RESPONSES, body["input"])
    (msg,) = body["input"]
    assert msg["content"][0]["type"] == "input_text"
    assert "fresh page" in msg["content"][0]["text"] and msg["content"][0]["text"].endswith(
        "sum up"
    )
    assert [p["image_url"] for p in msg["content"][1:]] == [IMG, JPG]


def test_previous_response_id_other_style_rejected():
    """previous_response_id makes sense only for the responses style (a typed chatkeep error)."""
    with pytest.raises(ProviderConfigError):
        _build("chat", previous_response_id="r")


def test_unknown_style():
    """An unknown style is a provider configuration error."""
    with pytest.raises(ProviderConfigError):
        _build("soap")


def test_anthropic_shape_and_body():
    """Anthropic: system block cached, user first, roles merged, base64 images, SDK-valid."""
    req = _build("anthropic")
    assert req.url == "https://api.example.com/v1/messages"
    body = req.body
    assert body["max_tokens"] == 4096
    assert body["system"] == [
        {"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}
    ]
    msgs = body["messages"]
    check_shape(ANTHROPIC, msgs)
    assert msgs[0]["role"] == "user"  # the leading assistant entry is dropped
    roles = [m["role"] for m in msgs]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))
    image = msgs[0]["content"][1]
    assert image["type"] == "image" and image["source"]["media_type"] == "image/png"
    assert image["source"]["data"] == IMG.split(",", 1)[1]
    # the legacy user entry and the new turn merge into one user message
    last = msgs[-1]
    assert [b["type"] for b in last["content"]] == ["text", "image", "text", "image"]
    assert last["content"][-1]["cache_control"] == {"type": "ephemeral"}
    # planned marks (SPEC §6.5; see test_rules_cache.py): with the system mark, at most four
    assert 1 <= sum("cache_control" in b for m in msgs for b in m["content"]) <= 3


def test_anthropic_empty_text_blocks_dropped():
    """Empty text (which the API rejects) never becomes a block; max_tokens passes through."""
    history = [user("q"), {"role": "assistant", "content": ""}, user("again")]
    body = _build("anthropic", history, max_tokens=10, temperature=0.5).body
    check_shape(ANTHROPIC, body["messages"])
    assert body["max_tokens"] == 10 and body["temperature"] == 0.5
    assert len(body["messages"]) == 1


def test_builders_apply_aging():
    """Every style sends a cold attachment as its stub."""
    history = [attachment(BIG_BODY, attach_id="old")] + [user("q"), assistant("a")] * 3
    history.append(attachment("new", attach_id="new"))
    for style in ("chat", "responses", "anthropic"):
        raw = serialize(_build(style, history).body).decode()
        assert BIG_BODY not in raw and "Attached page context trimmed" in raw


def test_builders_never_send_flag_or_extra_fields():
    """No imagesSeen, attachId, videoSrc or provider key reaches any request."""
    history = _history()
    history[1]["videoSrc"] = {"platform": "yt", "url": "https://y"}
    for style in ("chat", "responses", "anthropic"):
        raw = serialize(_build(style, history).body).decode()
        for key in ("imagesSeen", "attachId", "videoSrc", '"provider"'):
            assert key not in raw


KEPT_ONLY = {
    "createdAt": 1_767_000_000_000,
    "reasoning": "SECRET-THOUGHT weighing the options",
    "toolCalls": [{"name": "lookup", "arguments": '{"q": "SECRET-ARGS"}', "id": "call_1"}],
    "toolResult": [{"content": "SECRET-RESULT", "name": "lookup", "id": "call_1"}],
    "usage": {"input": 5, "cachedRead": 0, "cacheWrite": 0, "output": 2},
}


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_times_reasoning_and_tool_records_are_never_sent(style):
    """createdAt, reasoning, toolCalls and toolResult on any entry (the new turn included) reach
    no request, and the body is byte for byte the one built without them: a cached prefix is
    not broken by a stored time or thought."""
    plain = _history()
    kept = [{**e, **KEPT_ONLY} for e in plain]
    entry = user("next", [IMG])
    with_fields = serialize(_build(style, kept, user_entry={**entry, "createdAt": 1}).body)
    assert with_fields == serialize(_build(style, plain, user_entry=entry).body)
    raw = with_fields.decode()
    for key in ("createdAt", "reasoning", "toolCalls", "toolResult", "SECRET", '"usage"'):
        assert key not in raw


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
def test_a_reply_that_held_only_reasoning_is_not_sent(style):
    """An assistant entry with no answer text (its reasoning kept, the stream cut) is left out
    of every style's request: the APIs refuse an empty assistant message."""
    history = [
        user("q"),
        {"role": "assistant", "content": "", "reasoning": "thinking…", "interrupted": True},
        user("again"),
    ]
    body = _build(style, history, user_entry=user("next")).body
    messages = body.get("messages") or body.get("input")
    roles = [m["role"] for m in messages if m["role"] != "system"]
    assert "assistant" not in roles and "thinking" not in serialize(body).decode()
    check_shape({"chat": CHAT, "responses": RESPONSES, "anthropic": ANTHROPIC}[style], messages)


def test_builders_do_not_mutate_and_are_deterministic():
    """History and user entry untouched; building twice gives identical bytes."""
    history, entry = _history(), user("n", [IMG])
    before = copy.deepcopy((history, entry))
    for style in ("chat", "responses", "anthropic"):
        a = serialize(_build(style, history, user_entry=entry).body)
        b = serialize(_build(style, history, user_entry=entry).body)
        assert a == b
    assert (history, entry) == before


def test_serialize_compact_unicode():
    """Serialization is compact, keeps insertion order and does not escape non-ASCII."""
    assert serialize({"b": 1, "a": "图"}) == '{"b":1,"a":"图"}'.encode()
