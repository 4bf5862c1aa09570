"""Prompt-caching rules per provider and model family, as versioned data (SPEC §6.5). Pure.

Each :class:`CacheRule` row says, for one provider and model family, what its prompt cache
does and what it bills, with the date the figures were read and the provider's own page that
states them (``source``):

* ``min_tokens`` — the shortest prefix the provider caches at all;
* ``read`` — the price of a token read from the cache, as a multiple of the base input price;
* ``writes`` — ``{ttl: multiple}`` for every lifetime a request can ask for (the first one is
  the default); a provider whose writes cost nothing extra has ``{ttl: 1.0}``;
* ``marks`` — how a request says where to cache: ``"cache_control"`` (Anthropic's explicit
  breakpoints), ``"prompt_cache_breakpoint"`` (OpenAI's explicit breakpoints, GPT-5.6 and
  later, beside one implicit breakpoint), or ``""`` (automatic prefix caching, nothing to mark);
* ``breakpoints`` — the most marks a request may carry (0 when there is nothing to mark);
* ``look_back`` — how many blocks before a mark the provider searches for an earlier entry
  (``None``: no limit);
* ``step`` — the granularity a cached prefix is counted in (OpenAI's 128-token steps before
  GPT-5.6; 0 when the hit ends exactly at a breakpoint or a stored prefix unit);
* ``retention`` — whether the request may ask for OpenAI's ``prompt_cache_retention: "24h"``;
* ``whole_units`` — a hit needs a whole stored prefix unit (DeepSeek's disk cache: the end of an
  earlier request's input or output), never a part of one.

:func:`find_rule(style, base_url, model, override)` finds the row of the model a card talks to:
the provider from the card (the Anthropic style, or the API host: api.openai.com,
generativelanguage.googleapis.com, api.deepseek.com, openrouter.ai), else from the model id's
name; then the first row of that provider whose patterns match the model id (lower-cased, a
``vendor/`` prefix dropped, dots read as hyphens, so ``anthropic/claude-opus-4.5`` is
``claude-opus-4-5``); else the provider's default row. OpenRouter passes each provider's own
caching through (``cache_control`` included), so its models get their vendor's row. A card's
``cacheRules`` object overrides fields of the row it found (:func:`validate_override` checks it:
``minTokens``, ``read``, ``writes``, ``breakpoints``, ``lookBack``).

Figures change: a new row (or a changed one, with its new date and source) is the whole update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from fnmatch import fnmatchcase
from typing import Any
from urllib.parse import urlsplit

from ..errors import ProviderConfigError

__all__ = [
    "ANTHROPIC",
    "OPENAI",
    "OVERRIDE_KEYS",
    "RULES",
    "CacheRule",
    "find_rule",
    "model_key",
    "provider_of",
    "validate_override",
]

ANTHROPIC = "https://platform.claude.com/docs/en/build-with-claude/prompt-caching"
OPENAI = "https://developers.openai.com/api/docs/guides/prompt-caching"
_GEMINI = "https://ai.google.dev/gemini-api/docs/caching"
_DEEPSEEK = "https://api-docs.deepseek.com/guides/kv_cache"
_OPENROUTER = "https://openrouter.ai/docs/guides/best-practices/prompt-caching"
_ANTHROPIC_WRITES = {"5m": 1.25, "1h": 2.0}


@dataclass(frozen=True)
class CacheRule:
    """One provider and model family's caching rules (module docstring)."""

    provider: str
    family: str
    patterns: tuple[str, ...]
    min_tokens: int
    read: float
    writes: Mapping[str, float]
    date: str
    source: str
    marks: str = ""
    breakpoints: int = 0
    look_back: int | None = None
    step: int = 0
    retention: bool = False
    whole_units: bool = False
    ttl_seconds: Mapping[str, int] = field(default_factory=dict)

    @property
    def writes_cost(self) -> bool:
        """Whether writing the cache costs more than the base input price."""
        return any(m > 1.0 for m in self.writes.values())

    @property
    def default_ttl(self) -> str:
        return next(iter(self.writes))

    def write(self, ttl: str | None = None) -> float:
        """The write multiple for ``ttl`` (the default lifetime when ``None`` or unknown)."""
        return self.writes.get(ttl or "", self.writes[self.default_ttl])

    def seconds(self, ttl: str | None = None) -> int:
        """How long an entry written with ``ttl`` lives without use."""
        return self.ttl_seconds.get(ttl or self.default_ttl, 300)


def _anthropic(family: str, patterns: tuple[str, ...], min_tokens: int) -> CacheRule:
    return CacheRule(
        "anthropic",
        family,
        patterns,
        min_tokens,
        0.1,
        _ANTHROPIC_WRITES,
        "2026-12-02",
        ANTHROPIC,
        marks="cache_control",
        breakpoints=4,
        look_back=20,
        ttl_seconds={"5m": 300, "1h": 3600},
    )


def _openai(family: str, patterns: tuple[str, ...], read: float, retention: bool) -> CacheRule:
    return CacheRule(
        "openai",
        family,
        patterns,
        1024,
        read,
        {"in_memory": 1.0},
        "2026-12-02",
        OPENAI,
        step=128,
        retention=retention,
        ttl_seconds={"in_memory": 300},
    )


#: The rows, most specific first within each provider; the last row of a provider is its
#: default (pattern ``*``).
RULES: tuple[CacheRule, ...] = (
    _anthropic(
        "Claude 5-series Opus, Fable 5, Mythos 5",
        ("claude-opus-5*", "claude-fable-5*", "claude-mythos-5*"),
        512,
    ),
    _anthropic("Claude Opus 4.7", ("claude-opus-4-7*",), 2048),
    _anthropic(
        "Claude Opus 4.5 / 4.6, Haiku 4.5",
        ("claude-opus-4-5*", "claude-opus-4-6*", "claude-haiku-4-5*"),
        4096,
    ),
    _anthropic(
        "Claude Haiku 3 / 3.5", ("claude-haiku-3*", "claude-3-haiku*", "claude-3-5-haiku*"), 2048
    ),
    _anthropic(
        "Claude Sonnet 5 and 4.x, Opus 4.8 / 4.1 / 4",
        ("claude-sonnet-5*", "claude-sonnet-4*", "claude-opus-4*"),
        1024,
    ),
    _anthropic("Claude, other models", ("*",), 1024),
    CacheRule(
        "openai",
        "GPT-5.6 and later",
        ("gpt-5-6*", "gpt-5-7*", "gpt-5-8*", "gpt-5-9*", "gpt-6*"),
        1024,
        0.1,
        {"30m": 1.25},
        "2026-12-02",
        OPENAI,
        marks="prompt_cache_breakpoint",
        breakpoints=3,  # written beside the implicit breakpoint OpenAI places itself
        retention=True,
        ttl_seconds={"30m": 1800},
    ),
    _openai("GPT-5 to GPT-5.5", ("gpt-5*",), 0.1, True),
    _openai("GPT-4.1", ("gpt-4-1*",), 0.25, True),
    _openai("o-series reasoning models", ("o1*", "o3*", "o4*"), 0.25, False),
    _openai("GPT-4o and other models", ("*",), 0.5, False),
    CacheRule(
        "gemini",
        "Gemini 3 and later (implicit caching)",
        ("gemini-3*", "gemini-4*"),
        4096,
        0.1,
        {"implicit": 1.0},
        "2026-12-02",
        _GEMINI,
        ttl_seconds={"implicit": 300},
    ),
    CacheRule(
        "gemini",
        "Gemini 2.5 (implicit caching)",
        ("*",),
        2048,
        0.1,
        {"implicit": 1.0},
        "2026-12-02",
        _GEMINI,
        ttl_seconds={"implicit": 300},
    ),
    CacheRule(
        "deepseek",
        "DeepSeek (context caching on disk)",
        ("*",),
        64,
        0.1,
        {"disk": 1.0},
        "2026-12-02",
        _DEEPSEEK,
        whole_units=True,
        ttl_seconds={"disk": 3600},
    ),
    CacheRule(
        "openrouter",
        "OpenRouter, models without a vendor row (cache_control passed through)",
        ("*",),
        1024,
        0.25,
        {"5m": 1.25},
        "2026-12-02",
        _OPENROUTER,
        ttl_seconds={"5m": 300},
    ),
)

_HOSTS = {
    "api.anthropic.com": "anthropic",
    "api.openai.com": "openai",
    "generativelanguage.googleapis.com": "gemini",
    "api.deepseek.com": "deepseek",
    "openrouter.ai": "openrouter",
}
_VENDORS = {
    "anthropic": "anthropic",
    "openai": "openai",
    "google": "gemini",
    "deepseek": "deepseek",
}
_NAMES = (("claude", "anthropic"), ("gemini", "gemini"), ("deepseek", "deepseek"))


def model_key(model: str) -> str:
    """The model id as the patterns read it (module docstring)."""
    name = (model or "").strip().lower()
    return name.rsplit("/", 1)[-1].replace(".", "-")


def provider_of(style: str, base_url: str, model: str) -> str:
    """The provider whose rules apply: the style, the API host, else the model's name."""
    if style == "anthropic":
        return "anthropic"
    host = (urlsplit((base_url or "").strip()).hostname or "").lower()
    for known, provider in _HOSTS.items():
        if host == known or host.endswith("." + known):
            return provider
    name = (model or "").lower()
    for word, provider in _NAMES:
        if word in name:
            return provider
    return "openai"  # the chat and responses styles speak OpenAI's API


def _row(provider: str, key: str) -> CacheRule:
    rows = [r for r in RULES if r.provider == provider]
    return next(r for r in rows if any(fnmatchcase(key, p) for p in r.patterns))


OVERRIDE_KEYS = ("minTokens", "read", "writes", "breakpoints", "lookBack")


def find_rule(
    style: str, base_url: str, model: str, override: Mapping[str, Any] | None = None
) -> CacheRule:
    """The row for the model a card talks to, with the card's ``cacheRules`` applied."""
    provider = provider_of(style, base_url, model)
    key = model_key(model)
    if provider == "openrouter":
        vendor = _VENDORS.get((model or "").strip().lower().split("/", 1)[0], "")
        rule = _row(vendor, key) if vendor else _row("openrouter", key)
    else:
        rule = _row(provider, key)
    if not override:
        return rule
    changes: dict[str, Any] = {}
    if "minTokens" in override:
        changes["min_tokens"] = override["minTokens"]
    if "read" in override:
        changes["read"] = float(override["read"])
    if "writes" in override:
        changes["writes"] = {str(k): float(v) for k, v in override["writes"].items()}
    if "breakpoints" in override:
        changes["breakpoints"] = override["breakpoints"]
    if "lookBack" in override:
        changes["look_back"] = override["lookBack"]
    return replace(rule, family=rule.family + " (card override)", **changes)


def _count(value: Any, low: int, high: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def _multiple(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 10


def validate_override(value: Any, where: str) -> dict[str, Any]:
    """Check a card's ``cacheRules`` object; a bad one raises ``ProviderConfigError``."""
    hint = (
        "cacheRules overrides the caching rules chatkeep found for the model, e.g. "
        '{"minTokens": 4096, "read": 0.1, "writes": {"5m": 1.25, "1h": 2}, "breakpoints": 4}'
    )
    if not isinstance(value, Mapping):
        raise ProviderConfigError(f"{where}: cacheRules must be an object", hint=hint)
    unknown = sorted(str(k) for k in value if k not in OVERRIDE_KEYS)
    if unknown:
        raise ProviderConfigError(
            f"{where}: unknown cacheRules field {unknown[0]!r} (known: {', '.join(OVERRIDE_KEYS)})",
            hint=hint,
        )
    checks = {
        "minTokens": lambda v: _count(v, 0, 1_000_000),
        "read": _multiple,
        "breakpoints": lambda v: _count(v, 0, 64),
        "lookBack": lambda v: _count(v, 1, 10_000),
        "writes": lambda v: (
            isinstance(v, Mapping)
            and bool(v)
            and all(isinstance(k, str) and k and _multiple(m) for k, m in v.items())
        ),
    }
    for key, ok in checks.items():
        if key in value and not ok(value[key]):
            raise ProviderConfigError(f"{where}: cacheRules.{key} is not valid", hint=hint)
    return dict(value)
