"""Caching rules as data (rules.cache_rules) and the marks the planner places under each row."""

from __future__ import annotations

import datetime as dt
import json
from urllib.parse import urlsplit

import pytest
from anthropic.types.message_create_params import MessageCreateParamsStreaming
from openai.types.chat.completion_create_params import CompletionCreateParamsStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsStreaming
from pydantic import TypeAdapter
from rules_helpers import assistant, attachment, check_shape, png_url, user

from chatkeep.errors import ProviderConfigError
from chatkeep.providers import resolve_provider
from chatkeep.rules.cache import choose_ttl
from chatkeep.rules.cache_rules import RULES, find_rule, validate_override
from chatkeep.rules.images import stamp_images_seen
from chatkeep.rules.tokens import text_tokens
from chatkeep.rules.wire import build_request

SHOT = png_url((400, 300), noise=True, seed=5)
BIG = "word " * 2400  # 12,000 chars: ages once three questions follow it
PROVIDER_HOSTS = {
    "anthropic": "platform.claude.com",
    "openai": "developers.openai.com",
    "gemini": "ai.google.dev",
    "deepseek": "api-docs.deepseek.com",
    "openrouter": "openrouter.ai",
}
BASE = {
    "anthropic": "https://api.anthropic.com",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com/v1beta/openai",
    "deepseek": "https://api.deepseek.com",
    "openrouter": "https://openrouter.ai/api/v1",
}
SHAPES = {
    "anthropic": TypeAdapter(MessageCreateParamsStreaming),
    "chat": TypeAdapter(CompletionCreateParamsStreaming),
    "responses": TypeAdapter(ResponseCreateParamsStreaming),
}


def test_every_row_has_a_source_and_a_date():
    """Each row cites its provider's own documentation (https, the provider's host) and the
    date its figures were read (an ISO date, not in the future)."""
    for rule in RULES:
        parts = urlsplit(rule.source)
        assert parts.scheme == "https" and parts.hostname == PROVIDER_HOSTS[rule.provider], rule
        day = dt.date.fromisoformat(rule.date)
        assert dt.date(2026, 1, 1) <= day <= dt.date.today(), rule
        assert rule.min_tokens > 0 and 0 < rule.read <= 1 and rule.writes
        assert rule.breakpoints == 0 or rule.marks


def test_every_provider_has_a_default_row():
    """Any model id finds a row: every provider ends with a catch-all pattern."""
    for provider in PROVIDER_HOSTS:
        rows = [r for r in RULES if r.provider == provider]
        assert rows and rows[-1].patterns == ("*",)


@pytest.mark.parametrize(
    ("style", "provider", "model", "min_tokens", "marks"),
    [
        ("anthropic", "anthropic", "claude-opus-5", 512, "cache_control"),
        ("anthropic", "anthropic", "claude-sonnet-5", 1024, "cache_control"),
        ("anthropic", "anthropic", "claude-sonnet-4-5-20250929", 1024, "cache_control"),
        ("anthropic", "anthropic", "claude-opus-4-7", 2048, "cache_control"),
        ("anthropic", "anthropic", "claude-opus-4-6", 4096, "cache_control"),
        ("anthropic", "anthropic", "claude-opus-4-5-20251101", 4096, "cache_control"),
        ("anthropic", "anthropic", "claude-haiku-4-5-20251001", 4096, "cache_control"),
        ("chat", "openai", "gpt-5.6-sol", 1024, "prompt_cache_breakpoint"),
        ("responses", "openai", "gpt-5.5", 1024, ""),
        ("chat", "gemini", "gemini-3.1-pro-preview", 4096, ""),
        ("chat", "gemini", "gemini-2.5-flash", 2048, ""),
        ("chat", "deepseek", "deepseek-chat", 64, ""),
        ("chat", "openrouter", "anthropic/claude-opus-4.5", 4096, "cache_control"),
        ("chat", "openrouter", "openai/gpt-5.6-terra", 1024, "prompt_cache_breakpoint"),
    ],
)
def test_a_card_finds_its_models_row(style, provider, model, min_tokens, marks):
    """The card's style, host and model id pick the row (OpenRouter: the vendor's own row)."""
    rule = find_rule(style, BASE[provider], model)
    assert (rule.min_tokens, rule.marks) == (min_tokens, marks)


def test_writes_cost_where_the_provider_says_so():
    """Anthropic and GPT-5.6 writes cost (1.25×; Anthropic's 1-hour writes 2×); older OpenAI
    models, Gemini and DeepSeek write for free."""
    claude = find_rule("anthropic", BASE["anthropic"], "claude-sonnet-5")
    assert claude.writes == {"5m": 1.25, "1h": 2.0} and claude.writes_cost
    assert claude.breakpoints == 4 and claude.look_back == 20
    assert find_rule("chat", BASE["openai"], "gpt-5.6").write() == 1.25
    for provider, model in (("openai", "gpt-4o"), ("gemini", "gemini-3-pro"), ("deepseek", "x")):
        assert not find_rule("chat", BASE[provider], model).writes_cost


def test_a_card_overrides_its_row():
    """``cacheRules`` on a card replaces the fields it names; a bad one is refused."""
    settings = {
        "providers": {
            "c": {
                "style": "anthropic",
                "baseUrl": BASE["anthropic"],
                "model": "claude-sonnet-5",
                "cacheRules": {"minTokens": 4096, "breakpoints": 2},
            }
        }
    }
    rule = resolve_provider(settings, "c").cache_rule
    assert (rule.min_tokens, rule.breakpoints, rule.read) == (4096, 2, 0.1)
    for bad in ({"minTokens": -1}, {"speed": 1}, {"writes": {}}, {"read": "cheap"}, []):
        with pytest.raises(ProviderConfigError):
            validate_override(bad, "provider card 'c'")


# -- the marks each family's planner places respect the family's limits -----------------------
def _conversation(minutes: float):
    """Turns ``minutes`` apart: aging attachments, screenshots and plain questions."""
    turns = [
        ([], "hello there", []),
        ([attachment(BIG, attach_id="p1")], "summarise the page", []),
        ([], "what about this?", [SHOT]),
        ([], "and the second point", []),
        ([attachment(BIG + " more", title="B", attach_id="p2", images=[SHOT])], "compare", []),
        ([], "go on", []),
        ([], "a screenshot", [SHOT]),
        ([], "thanks", []),
        ([], "one more", []),
    ]
    for n, (attached, text, shots) in enumerate(turns):
        stamp = 1_700_000_000_000 + int(n * minutes * 60_000)
        yield attached, {**user(text, shots), "createdAt": stamp}


def _requests(style: str, provider: str, model: str, minutes: float = 1.0):
    rule = find_rule(style, BASE[provider], model)
    history: list = []
    for n, (attached, question) in enumerate(_conversation(minutes)):
        history = [*history, *attached]
        body = build_request(
            style,
            history,
            user_entry=question,
            system_prompt="Be brief.",
            model=model,
            base_url=BASE[provider],
            prompt_cache_key="ck-test",
            cache_rule=rule,
        ).body
        yield rule, body
        history = [*history, question, assistant(f"answer {n} " * 200)]
        history = stamp_images_seen(history) or history


def _flat(body):
    """``(key, tokens, mark)`` of every block: system first, marks left out of the key."""
    out = []
    for block in body.get("system") or []:
        out.append(
            ("system" + block["text"], text_tokens(block["text"]), block.get("cache_control"))
        )
    for message in body.get("messages") or body.get("input") or []:
        content = message["content"]
        for block in [content] if isinstance(content, str) else content:
            bare = (
                block
                if isinstance(block, str)
                else {
                    k: v
                    for k, v in block.items()
                    if k not in ("cache_control", "prompt_cache_breakpoint")
                }
            )
            mark = None
            if isinstance(block, dict):
                mark = block.get("cache_control") or block.get("prompt_cache_breakpoint")
            text = bare if isinstance(bare, str) else bare.get("text", "")
            out.append((json.dumps([message["role"], bare]), text_tokens(text or "x" * 4000), mark))
    return out


ANTHROPIC_MODELS = [
    r.patterns[0].rstrip("*") or "claude-x" for r in RULES if r.provider == "anthropic"
]


@pytest.mark.parametrize("model", ANTHROPIC_MODELS)
@pytest.mark.parametrize("minutes", [1.0, 12.0])
def test_anthropic_marks_respect_each_familys_limits(model, minutes):
    """Every Anthropic family: at most its breakpoints, 1-hour marks never after 5-minute ones,
    and each request reaches the longest entry the previous one wrote within the look-back."""
    previous = None
    for rule, body in _requests("anthropic", "anthropic", model, minutes):
        check_shape(SHAPES["anthropic"], body)
        blocks = _flat(body)
        marks = [k for k, (_, _, m) in enumerate(blocks) if m]
        assert len(marks) <= rule.breakpoints
        ttls = [blocks[k][2].get("ttl", "5m") for k in marks]
        assert ttls == sorted(ttls, key=lambda t: t != "1h"), ttls
        if previous is not None:
            shared = 0
            while (
                shared < min(len(previous), len(blocks))
                and previous[shared][0] == blocks[shared][0]
            ):
                shared += 1
            total, written = 0, []
            for k, (_, tokens, mark) in enumerate(previous[:shared]):
                total += tokens
                if mark and total >= rule.min_tokens:
                    written.append(k)
            if written:
                q = written[-1]
                assert any(q <= m <= q + rule.look_back for m in marks), (model, marks, q)
        previous = blocks


def test_the_pace_picks_the_cache_lifetime():
    """Questions 12 minutes apart ask for the 1-hour lifetime; a minute apart or two hours
    apart keep the default (no ``ttl``)."""
    rule = find_rule("anthropic", BASE["anthropic"], "claude-sonnet-5")
    last = {}
    for minutes in (1.0, 12.0, 120.0):
        for _, body in _requests("anthropic", "anthropic", "claude-sonnet-5", minutes):
            last[minutes] = body
    ttls = {
        m: {
            b["cache_control"].get("ttl")
            for msg in body["messages"]
            for b in msg["content"]
            if "cache_control" in b
        }
        for m, body in last.items()
    }
    assert ttls == {1.0: {None}, 12.0: {"1h"}, 120.0: {None}}
    assert choose_ttl([], rule) is None
    assert choose_ttl([], find_rule("chat", BASE["openai"], "gpt-5.6")) is None


@pytest.mark.parametrize("style", ["chat", "responses"])
def test_gpt_5_6_breakpoints_respect_the_limits(style):
    """GPT-5.6: at most three explicit breakpoints (beside OpenAI's implicit one), each where
    the next turn rewrites, never on an earlier reply in Responses, every body the SDK's own
    type; ``prompt_cache_retention: "24h"`` and the key are sent to api.openai.com."""
    placed = 0
    for rule, body in _requests(style, "openai", "gpt-5.6-sol"):
        check_shape(SHAPES[style], body)
        marks = [(k, b) for k, b in enumerate(_flat(body)) if b[2]]
        assert len(marks) <= rule.breakpoints == 3
        assert all(b[2] == {"mode": "explicit"} for _, b in marks)
        if style == "responses":
            assert all(json.loads(b[0])[0] == "user" for _, b in marks)
        assert body["prompt_cache_retention"] == "24h"
        placed += len(marks)
    assert placed >= 3  # screenshots and attachments make the planner mark


@pytest.mark.parametrize(
    ("provider", "model"),
    [
        ("openai", "gpt-4o"),
        ("openai", "gpt-5.5"),
        ("gemini", "gemini-3-pro"),
        ("deepseek", "deepseek-chat"),
    ],
)
def test_automatic_caching_families_get_no_marks(provider, model):
    """Providers that cache prefixes on their own get no marks at all; the retention field
    goes only where the row allows it."""
    for rule, body in _requests("chat", provider, model):
        check_shape(SHAPES["chat"], body)
        assert not any(m for _, _, m in _flat(body))
        assert ("prompt_cache_retention" in body) == rule.retention
