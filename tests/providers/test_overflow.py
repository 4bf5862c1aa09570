"""is_context_overflow (SPEC §7.4) against the error bodies providers really send."""

from __future__ import annotations

import pytest

from chatkeep.errors import ContextOverflow, ProviderError
from chatkeep.rules.overflow import OVERFLOW_PATTERNS, is_context_overflow
from support.provider_server import ERROR_BODIES

OVERFLOW_FLAVORS = [
    "openai_chat",
    "openai_responses",
    "azure",
    "anthropic",
    "anthropic_max_tokens",
    "anthropic_413",
    "gemini",
    "vllm",
    "llamacpp",
]
ORDINARY = [
    "openai_400",
    "openai_401",
    "openai_404",
    "openai_429",
    "openai_500",
    "anthropic_400",
    "anthropic_401",
    "anthropic_404",
    "anthropic_429",
    "anthropic_500",
]


class FakeSDKError(Exception):
    """Shaped like an SDK status error: ``status_code``, ``body``, ``code``, ``message``."""

    def __init__(self, status_code, body, code=None, message="Error"):
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.code = code
        self.message = message


@pytest.mark.parametrize("flavor", OVERFLOW_FLAVORS)
def test_overflow_bodies_match_as_dicts(flavor):
    """Each provider's real overflow body is recognised as a dict."""
    _status, body = ERROR_BODIES[flavor]
    assert is_context_overflow(body) is True


@pytest.mark.parametrize("flavor", OVERFLOW_FLAVORS)
def test_overflow_bodies_match_as_provider_errors(flavor):
    """A ProviderError carrying the real status and body is recognised."""
    status, body = ERROR_BODIES[flavor]
    assert is_context_overflow(ProviderError("HTTP error", status=status, body=body)) is True


@pytest.mark.parametrize("name", ORDINARY)
def test_ordinary_errors_do_not_match(name):
    """Ordinary 400/401/404/429/500 bodies are not overflow, in every accepted form."""
    status, body = ERROR_BODIES[name]
    assert is_context_overflow(body) is False
    assert is_context_overflow(ProviderError("HTTP error", status=status, body=body)) is False
    assert is_context_overflow(FakeSDKError(status, body, message=f"Error code: {status}")) is False


def test_structured_code_wins_without_any_message():
    """The code alone decides: context_length_exceeded with a neutral message."""
    assert is_context_overflow({"error": {"code": "context_length_exceeded", "message": "nope"}})
    assert is_context_overflow({"error": {"type": "exceed_context_size_error", "message": "x"}})
    assert is_context_overflow(ProviderError("boom", code="context_length_exceeded"))


def test_status_413_alone_is_overflow():
    """HTTP 413 with a body that says nothing about context is still overflow."""
    assert is_context_overflow(ProviderError("Payload Too Large", status=413, body="<html>"))
    assert is_context_overflow(FakeSDKError(413, None, message="Error code: 413"))


def test_sdk_error_shapes():
    """SDK-like errors: OpenAI's unwrapped inner body, Anthropic's whole body, code attribute."""
    inner = ERROR_BODIES["openai_chat"][1]["error"]
    assert is_context_overflow(FakeSDKError(400, inner, code=inner["code"]))
    anthropic_body = ERROR_BODIES["anthropic"][1]
    assert is_context_overflow(FakeSDKError(400, anthropic_body, message=str(anthropic_body)))


def test_context_overflow_instance_is_overflow():
    """An already-classified ContextOverflow needs no further evidence."""
    assert is_context_overflow(ContextOverflow("too big")) is True


@pytest.mark.parametrize(
    "text",
    [
        "prompt is too long: 208310 tokens > 200000 maximum",
        "This model's maximum context length is 4096 tokens.",
        "Your input exceeds the context window of this model.",
        "the request exceeds the available context size, try increasing it",
        "The input token count (1200293) exceeds the maximum number of tokens allowed (1048576).",
        "Conversation has grown too long, please start a new one",
        "Too many input tokens in request",
        "too many tokens",
        "Request too large for gpt-4o in organization org-x on tokens per min (TPM): Limit 30000, "
        "Requested 41000. The input or output tokens must be reduced in order to run successfully.",
        "Input length 9000 exceeds the model limit",
        "input tokens exceed the configured limit",
        "CONTEXT_WINDOW exhausted",
        "Context limit reached",
        "输入内容过长，请缩短后重试",
        "请求长度超过模型最大限制",
        "输入长度限制为 8192 个 token",
        "上下文长度超出模型限制",
        "模型上下文已满，内容太长",
    ],
)
def test_message_patterns_match_strings(text):
    """Every listed wording (English and Chinese) matches case-insensitively as a plain string."""
    assert is_context_overflow(text) is True
    assert is_context_overflow(text.upper()) is True


@pytest.mark.parametrize(
    "text",
    [
        "Incorrect API key provided",
        "Rate limit reached for gpt-4o on requests per min (RPM)",
        "The server had an error while processing your request.",
        "model: claude-9-dream",
        "Overloaded",
        "Invalid value for 'temperature': expected a decimal between 0 and 2.",
        "无效的 API 密钥",
        "请求过于频繁，请稍后再试",
        "",
    ],
)
def test_non_overflow_strings(text):
    """Messages about keys, rate limits, servers or parameters do not match."""
    assert is_context_overflow(text) is False


def test_stream_failure_event_shape():
    """A Responses ``response.failed`` event (overflow reported mid-stream) is recognised."""
    event = {
        "type": "response.failed",
        "response": {
            "status": "failed",
            "error": {"code": "context_length_exceeded", "message": "Your input exceeds..."},
        },
    }
    assert is_context_overflow(event) is True


def test_raw_json_string_body():
    """A body still in its raw JSON text form is decoded and judged like a dict."""
    assert is_context_overflow('{"error": {"code": "context_length_exceeded", "message": "x"}}')
    assert not is_context_overflow('{"error": {"code": "invalid_api_key", "message": "bad key"}}')


def test_odd_inputs_are_false_not_errors():
    """None, numbers and empty containers are simply not overflow."""
    for value in (None, 0, 400, [], {}, b"", object()):
        assert is_context_overflow(value) is False


def test_pattern_list_is_the_spec_list():
    """The pattern list is exactly the fourteen phrases of SPEC §7.4."""
    assert len(OVERFLOW_PATTERNS) == 14
    assert r"上下文.{0,12}(超|限|过长|太长)" in OVERFLOW_PATTERNS


def test_input_is_not_mutated():
    """Judging a body leaves it unchanged."""
    _status, body = ERROR_BODIES["vllm"]
    before = repr(body)
    is_context_overflow(body)
    assert repr(body) == before
