"""Real error bodies of LLM providers, as they send them, for the loopback server and tests.

:data:`ERROR_BODIES` maps a name to ``(status, body)``: every provider's context-overflow
response (OpenAI chat and Responses, Azure, Anthropic's two wordings and its 413, Gemini, vLLM,
llama.cpp server) and ordinary 400/401/404/429/500 errors in the OpenAI and Anthropic shapes.
"""

from __future__ import annotations

from typing import Any

from .provider_wire import HttpError, StyledError

_OPENAI_CHAT_OVERFLOW = (
    "This model's maximum context length is 128000 tokens. However, your messages resulted in "
    "140591 tokens. Please reduce the length of the messages."
)
_RESPONSES_OVERFLOW = (
    "Your input exceeds the context window of this model. Please adjust your input and try again."
)

ERROR_BODIES: dict[str, tuple[int, Any]] = {
    # --- overflow, as each provider sends it
    "openai_chat": (
        400,
        {
            "error": {
                "message": _OPENAI_CHAT_OVERFLOW,
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    "openai_responses": (
        400,
        {
            "error": {
                "message": _RESPONSES_OVERFLOW,
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
    ),
    "azure": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your "
                "messages resulted in 9309 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
                "status": 400,
            }
        },
    ),
    "anthropic": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "prompt is too long: 208310 tokens > 200000 maximum",
            },
            "request_id": "req_011CSHoEeqs5C35K2UUqR7Fy",
        },
    ),
    "anthropic_max_tokens": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": "input length and `max_tokens` exceed context limit: 199759 + 8192 "
                "> 200000, decrease input length or `max_tokens` and try again",
            },
        },
    ),
    "anthropic_413": (
        413,
        {
            "type": "error",
            "error": {
                "type": "request_too_large",
                "message": "Request exceeds the maximum allowed number of bytes.",
            },
        },
    ),
    "gemini": (
        400,
        {
            "error": {
                "code": 400,
                "message": "The input token count (1200293) exceeds the maximum number of tokens "
                "allowed (1048576).",
                "status": "INVALID_ARGUMENT",
            }
        },
    ),
    "vllm": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 4096 tokens. However, you "
            "requested 5120 tokens (4096 in the messages, 1024 in the completion). Please reduce "
            "the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "llamacpp": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 4476,
                "n_ctx": 4096,
            }
        },
    ),
    # --- ordinary errors (OpenAI shape)
    "openai_401": (
        401,
        {
            "error": {
                "message": "Incorrect API key provided: sk-test1***********7890. You can find "
                "your API key at https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        },
    ),
    "openai_404": (
        404,
        {
            "error": {
                "message": "The model `gpt-9-imaginary` does not exist or you do not have "
                "access to it.",
                "type": "invalid_request_error",
                "param": None,
                "code": "model_not_found",
            }
        },
    ),
    "openai_429": (
        429,
        {
            "error": {
                "message": "Rate limit reached for gpt-4o in organization org-abc123 on requests "
                "per min (RPM): Limit 500, Used 500, Requested 1. Please try again in 120ms. "
                "Visit https://platform.openai.com/account/rate-limits to learn more.",
                "type": "requests",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "openai_500": (
        500,
        {
            "error": {
                "message": "The server had an error while processing your request. Sorry about "
                "that!",
                "type": "server_error",
                "param": None,
                "code": None,
            }
        },
    ),
    "openai_400": (
        400,
        {
            "error": {
                "message": "Invalid value for 'temperature': expected a decimal between 0 and 2.",
                "type": "invalid_request_error",
                "param": "temperature",
                "code": "invalid_value",
            }
        },
    ),
    # --- ordinary errors (Anthropic shape)
    "anthropic_401": (
        401,
        {
            "type": "error",
            "error": {"type": "authentication_error", "message": "invalid x-api-key"},
        },
    ),
    "anthropic_404": (
        404,
        {"type": "error", "error": {"type": "not_found_error", "message": "model: claude-9-dream"}},
    ),
    "anthropic_429": (
        429,
        {
            "type": "error",
            "error": {
                "type": "rate_limit_error",
                "message": "This request would exceed your organization's rate limit of 50,000 "
                "input tokens per minute. For details, refer to: "
                "https://docs.claude.com/en/api/rate-limits.",
            },
        },
    ),
    "anthropic_500": (
        500,
        {"type": "error", "error": {"type": "api_error", "message": "Internal server error"}},
    ),
    "anthropic_400": (
        400,
        {
            "type": "error",
            "error": {
                "type": "invalid_request_error",
                "message": 'messages: roles must alternate between "user" and "assistant", '
                'but found multiple "user" roles in a row',
            },
        },
    ),
}

OVERFLOW_FLAVORS = (
    "openai_chat",
    "openai_responses",
    "azure",
    "anthropic",
    "anthropic_max_tokens",
    "anthropic_413",
    "gemini",
    "vllm",
    "llamacpp",
)
STYLED = {"rate_limit": "429", "server": "500", "auth": "401", "not_found": "404"}


def overflow(flavor: str) -> HttpError:
    """The real context-overflow error response of ``flavor`` (see :data:`ERROR_BODIES`)."""
    if flavor not in OVERFLOW_FLAVORS:
        raise ValueError(f"unknown overflow flavor {flavor!r}; known: {OVERFLOW_FLAVORS}")
    status, body = ERROR_BODIES[flavor]
    return HttpError(status, body)


def rate_limited() -> StyledError:
    return StyledError("rate_limit")


def server_error() -> StyledError:
    return StyledError("server")


def unauthorized() -> StyledError:
    return StyledError("auth")


def not_found() -> StyledError:
    return StyledError("not_found")
