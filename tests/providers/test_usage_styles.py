"""Usage normalised across the three wire styles (SPEC §6.4): OpenAI counts cached and written
tokens inside its prompt count, Anthropic beside it; chatkeep stores one shape for both."""

from __future__ import annotations

import pytest
from anthropic.types import Usage as AnthropicUsage
from openai.types import CompletionUsage
from openai.types.completion_usage import PromptTokensDetails
from openai.types.responses import Response, ResponseUsage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails
from provider_bodies import body_for

from chatkeep.providers import complete
from chatkeep.providers.chat import chat_usage
from chatkeep.providers.messages import anthropic_usage
from chatkeep.providers.responses import _usage as responses_usage
from support.provider_server import Text

#: One prompt of 3,000 tokens: 2,048 read from the cache, 512 written to it, 7 out.
EXPECTED = {"input": 3000, "cachedRead": 2048, "cacheWrite": 512, "output": 7}


def test_chat_completions_usage_type():
    """The SDK's CompletionUsage: cached and written tokens are inside prompt_tokens."""
    usage = CompletionUsage(
        prompt_tokens=3000,
        completion_tokens=7,
        total_tokens=3007,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=2048, cache_write_tokens=512),
    )
    assert chat_usage(usage) == EXPECTED


def test_responses_usage_type():
    """The SDK's ResponseUsage on a Response: input_tokens_details holds both figures."""
    usage = ResponseUsage(
        input_tokens=3000,
        input_tokens_details=InputTokensDetails(cached_tokens=2048, cache_write_tokens=512),
        output_tokens=7,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=0),
        total_tokens=3007,
    )
    assert responses_usage(Response.model_construct(usage=usage)) == EXPECTED


def test_anthropic_usage_type():
    """The SDK's Usage: input_tokens leaves the cache read and the cache write out."""
    usage = AnthropicUsage(
        input_tokens=440,
        cache_read_input_tokens=2048,
        cache_creation_input_tokens=512,
        output_tokens=7,
    )
    assert anthropic_usage(usage.model_dump()) == EXPECTED


def test_older_openai_servers_report_no_writes():
    """A usage without cache_write_tokens (before GPT-5.6, other servers) writes nothing."""
    usage = CompletionUsage(
        prompt_tokens=3000,
        completion_tokens=7,
        total_tokens=3007,
        prompt_tokens_details=PromptTokensDetails(cached_tokens=2048),
    )
    assert chat_usage(usage) == {**EXPECTED, "cacheWrite": 0}


@pytest.mark.parametrize("style", ["chat", "responses", "anthropic"])
@pytest.mark.parametrize("stream_on", [True, False])
def test_every_style_over_the_wire(style, stream_on, provider_server, make_card):
    """Through the real SDK clients and the loopback server, streamed or not, every style
    stores the same normalised usage for the same prompt."""
    provider_server.queue(
        Text(
            "ok",
            prompt_tokens=3000,
            cached_tokens=2048,
            cache_write_tokens=512,
            completion_tokens=7,
        )
    )
    done = complete(make_card(style, stream=stream_on), body_for(style))
    assert done.usage == EXPECTED
