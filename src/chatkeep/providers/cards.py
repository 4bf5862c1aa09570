"""Provider cards and provider selection (SPEC §7.1).

A *card* is the stored description of one LLM endpoint, kept in ``settings["providers"]`` under
its name::

    {"style": "chat" | "responses" | "anthropic",
     "baseUrl": "https://api.openai.com/v1",
     "model": "gpt-4o-mini",
     "apiKeyEnv": "OPENAI_API_KEY"      # or "apiKey": "sk-...", or neither (local servers)
     "temperature": 0.7,                # optional, 0..2
     "maxTokens": 1024,                 # optional, positive int
     "stream": true,                    # optional, default true
     "timeout": 60,                     # optional: seconds of silence (before the first byte
                                        # of a reply or between two stream chunks) before the
                                        # call fails; 1..3600, default DEFAULT_TIMEOUT
     "serverTranscript": false,         # optional, responses style only: the server keeps the
                                        # transcript; only new turns are sent (SPEC §6.3)
     "promptCacheKey": true,            # optional: send OpenAI's prompt_cache_key (default:
                                        # only to api.openai.com; chat/responses styles)
     "prices": {"input": 2.5, "cachedRead": 0.25, "cacheWrite": 2.5, "output": 10},
                                        # optional, per million tokens: turns' estimated cost
     "cacheRules": {"minTokens": 4096}} # optional: overrides the caching rules chatkeep
                                        # finds for the model (rules.cache_rules)

Contract:

* :func:`validate_card` checks one card dict (what ``chatkeep provider add`` stores) and returns a
  normalized copy; a bad card raises :class:`~chatkeep.errors.ProviderConfigError` whose message
  names the field. Unknown extra keys are kept untouched. browsa cards are understood: their
  ``apiStyle`` names the style (:data:`BROWSA_STYLES`) and ``maxTokens: 0`` means the default.
* :func:`resolve_provider` picks the card to use — the explicit ``name`` or ``activeProvider``;
  ``model`` or (for the active card) ``activeModel`` overrides the card's model; a single stored
  card is used when nothing is active — and returns a :class:`Card` with the API key resolved.
  With no card at all it falls back to the environment: ``OPENAI_BASE_URL`` (default
  ``https://api.openai.com/v1``), ``OPENAI_API_KEY`` and ``CHATKEEP_MODEL`` as a ``chat`` card
  named ``"env"``. Every failure is a ``ProviderConfigError`` with a hint; ``apiKeyEnv`` naming an
  unset variable fails and names the variable.
* :func:`api_root` / :func:`sdk_base_url` compute the base URL handed to the SDKs: strip a
  trailing ``/``; keep a trailing ``/v<digits>``, else append ``/v1``. The Anthropic SDK adds
  ``/v1/messages`` itself, so it gets the root without the trailing ``/v1`` (only ``/v1`` is
  supported for that style).

Pure: reads ``env`` (default ``os.environ``) and never writes anything.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ..errors import ProviderConfigError, UnknownProvider
from ..limits import MAX_PRICE, price_problem
from ..rules.cache import accepts_prompt_cache_key
from ..rules.cache_rules import CacheRule, find_rule, validate_override
from ..rules.wire.base import api_root  # one base-URL rule for requests and SDKs

__all__ = [
    "DEFAULT_OPENAI_BASE_URL",
    "DEFAULT_TIMEOUT",
    "ENV_CARD_NAME",
    "PRICE_KEYS",
    "STYLES",
    "Card",
    "api_root",
    "resolve_provider",
    "sdk_base_url",
    "validate_card",
]

STYLES: tuple[str, ...] = ("chat", "responses", "anthropic")
DEFAULT_OPENAI_BASE_URL = "https://api.openai.com/v1"
ENV_CARD_NAME = "env"
#: Seconds a provider may stay silent (no first byte, or no next chunk) before the call fails.
#: A chat waits for a person: a minute of silence means the server is stuck, and a read timeout
#: is not retried (SPEC §7.3 retries what a new connection can fix), so this is the whole wait.
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 3600.0

_ENV_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Card:
    """One resolved provider: everything an adapter needs to make a call."""

    name: str
    style: str
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)
    temperature: float | None = None
    max_tokens: int | None = None
    stream: bool = True
    server_transcript: bool = False
    prompt_cache_key: bool = False
    prices: dict[str, float] | None = None
    timeout: float = DEFAULT_TIMEOUT
    cache_rules: dict[str, Any] | None = None

    @property
    def cache_rule(self) -> CacheRule:
        """The caching rules of the model this card talks to (the card's overrides applied)."""
        return find_rule(self.style, self.base_url, self.model, self.cache_rules)


def sdk_base_url(card: Card) -> str:
    """The ``base_url`` to give the card's SDK (see module docstring)."""
    root = api_root(card.base_url)
    if card.style == "anthropic" and root.endswith("/v1"):
        return root[: -len("/v1")]
    return root


#: browsa's ``apiStyle`` values and the chatkeep style each one means.
BROWSA_STYLES = {
    "openai": "chat",
    "chat": "chat",
    "chat-completions": "chat",
    "openai-compatible": "chat",
    "responses": "responses",
    "openai-responses": "responses",
    "anthropic": "anthropic",
    "claude": "anthropic",
    "messages": "anthropic",
}


def _from_browsa(out: dict[str, Any]) -> None:
    """Read a browsa card in place: ``apiStyle`` names the style (when ``style`` is absent) and
    ``maxTokens: 0`` means the provider's default."""
    api_style = out.get("apiStyle")
    if "style" not in out and isinstance(api_style, str):
        out["style"] = BROWSA_STYLES.get(api_style.strip().lower(), api_style)
    if out.get("maxTokens") == 0 and not isinstance(out.get("maxTokens"), bool):
        out.pop("maxTokens")


def validate_card(card: Any, *, name: str = "") -> dict[str, Any]:
    """Check one stored card; return a normalized copy or raise ``ProviderConfigError``."""
    where = f"provider card {name!r}" if name else "provider card"
    if not isinstance(card, Mapping):
        raise ProviderConfigError(
            f"{where} must be an object, got {type(card).__name__}",
            hint="a card is {style, baseUrl, model, apiKeyEnv | apiKey, temperature, maxTokens, stream}",
        )
    out = dict(card)
    _from_browsa(out)

    style = out.get("style", "chat")
    if style not in STYLES:
        raise ProviderConfigError(
            f"{where}: style must be one of {', '.join(STYLES)}, got {style!r}",
            hint="use --style chat for OpenAI-compatible servers (Ollama, llama.cpp, vLLM)",
        )
    out["style"] = style

    base_url = out.get("baseUrl")
    if not isinstance(base_url, str) or not base_url.strip():
        raise ProviderConfigError(
            f"{where}: baseUrl is missing",
            hint="give the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
        )
    parts = urlsplit(base_url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ProviderConfigError(
            f"{where}: baseUrl must be an http(s) URL, got {base_url!r}",
            hint="give the API root, e.g. https://api.openai.com/v1 or http://localhost:11434/v1",
        )
    out["baseUrl"] = base_url.strip()

    model = out.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ProviderConfigError(
            f"{where}: model is missing", hint="pass --model with the provider's model id"
        )
    out["model"] = model.strip()

    key_env = out.get("apiKeyEnv")
    if key_env not in (None, ""):
        if not isinstance(key_env, str) or not _ENV_NAME_RE.match(key_env):
            raise ProviderConfigError(
                f"{where}: apiKeyEnv must be an environment variable name, got {key_env!r}",
                hint="e.g. --api-key-env OPENAI_API_KEY (the key itself is never stored then)",
            )
    api_key = out.get("apiKey")
    if api_key not in (None, "") and not isinstance(api_key, str):
        raise ProviderConfigError(f"{where}: apiKey must be a string", hint="prefer apiKeyEnv")

    temperature = out.get("temperature")
    if temperature is not None:
        if (
            isinstance(temperature, bool)
            or not isinstance(temperature, int | float)
            or not math.isfinite(temperature)
            or not 0 <= temperature <= 2
        ):
            raise ProviderConfigError(
                f"{where}: temperature must be a number from 0 to 2, got {temperature!r}",
                hint="leave it out to use the provider's default",
            )
    max_tokens = out.get("maxTokens")
    if max_tokens is not None:
        if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or max_tokens <= 0:
            raise ProviderConfigError(
                f"{where}: maxTokens must be a positive integer, got {max_tokens!r}",
                hint="leave it out to use the provider's default",
            )
    stream = out.get("stream", True)
    if not isinstance(stream, bool):
        raise ProviderConfigError(f"{where}: stream must be true or false, got {stream!r}")
    out["stream"] = stream
    transcript = out.get("serverTranscript", False)
    if not isinstance(transcript, bool):
        raise ProviderConfigError(
            f"{where}: serverTranscript must be true or false, got {transcript!r}"
        )
    if transcript and style != "responses":
        raise ProviderConfigError(
            f"{where}: serverTranscript needs the responses style",
            hint="only the OpenAI Responses API keeps a transcript on the server",
        )
    cache_key = out.get("promptCacheKey")
    if cache_key is not None and not isinstance(cache_key, bool):
        raise ProviderConfigError(
            f"{where}: promptCacheKey must be true or false, got {cache_key!r}",
            hint="true sends OpenAI's prompt_cache_key to an OpenAI-compatible server",
        )
    if "prices" in out:
        out["prices"] = _validate_prices(out["prices"], where)
    if "cacheRules" in out:
        out["cacheRules"] = validate_override(out["cacheRules"], where)
    timeout = out.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not math.isfinite(timeout)
        or not 1 <= timeout <= MAX_TIMEOUT
    ):
        raise ProviderConfigError(
            f"{where}: timeout must be a number of seconds from 1 to {MAX_TIMEOUT:g}, "
            f"got {timeout!r}",
            hint=f"leave it out for {DEFAULT_TIMEOUT:g} s; raise it for slow local models "
            "(provider add … --timeout 300)",
        )
    return out


PRICE_KEYS = ("input", "cachedRead", "cacheWrite", "output")


def _validate_prices(prices: Any, where: str) -> dict[str, float]:
    """``{input, output[, cachedRead, cacheWrite]}``: finite numbers from 0 to
    :data:`~chatkeep.limits.MAX_PRICE`, per million tokens."""
    hint = (
        "prices are per million tokens, e.g. {input: 2.5, cachedRead: 0.25, output: 10}, "
        f"at most {MAX_PRICE:,.0f} (a currency unit per token)"
    )
    if not isinstance(prices, Mapping):
        raise ProviderConfigError(f"{where}: prices must be an object", hint=hint)
    unknown = sorted(str(k) for k in prices if k not in PRICE_KEYS)
    if unknown:
        raise ProviderConfigError(
            f"{where}: unknown price {unknown[0]!r} (known: {', '.join(PRICE_KEYS)})", hint=hint
        )
    out: dict[str, float] = {}
    for key in PRICE_KEYS:
        if key not in prices:
            continue
        value = prices[key]
        why = price_problem(value)
        if why is not None:
            raise ProviderConfigError(f"{where}: prices.{key}: {why}", hint=hint)
        out[key] = float(value)
    for key in ("input", "output"):
        if key not in out:
            raise ProviderConfigError(f"{where}: prices.{key} is missing", hint=hint)
    return out


def resolve_provider(
    settings: Mapping[str, Any],
    name: str | None = None,
    model: str | None = None,
    env: Mapping[str, str] | None = None,
    *,
    need_key: bool = True,
) -> Card:
    """The card to call: explicit ``name``, else ``activeProvider``, else the env fallback.

    ``need_key=False`` (a preview, which sends nothing): a card whose ``apiKeyEnv`` is not set
    resolves with no key instead of raising."""
    env = os.environ if env is None else env
    providers = settings.get("providers") or {}
    if not isinstance(providers, Mapping):
        raise ProviderConfigError("the stored 'providers' setting is not an object of cards")
    active = settings.get("activeProvider") or ""
    active_model = settings.get("activeModel") or ""

    chosen = name or active
    if not chosen:
        if not providers:
            return _env_card(env, model)
        if len(providers) == 1:
            chosen = next(iter(providers))
        else:
            raise ProviderConfigError(
                f"{len(providers)} provider cards are stored and none is active",
                hint=f"pick one with `chatkeep provider use NAME` ({', '.join(sorted(providers))})",
            )
    if chosen not in providers:
        known = ", ".join(sorted(providers)) or "none"
        raise UnknownProvider(
            f"no provider card named {chosen!r} (stored cards: {known})",
            hint="add it with `chatkeep provider add NAME --style S --base-url URL --model M` "
            "or pick another with `chatkeep provider use NAME`",
        )
    data = validate_card(providers[chosen], name=chosen)
    # activeModel belongs to the active card; an explicitly named other card keeps its own model.
    override = model or (active_model if chosen == active else "")
    return Card(
        name=chosen,
        style=data["style"],
        base_url=data["baseUrl"],
        model=override or data["model"],
        api_key=_resolve_key(data, chosen, env) if need_key else _key_if_set(data, env),
        temperature=data.get("temperature"),
        max_tokens=data.get("maxTokens"),
        stream=data["stream"],
        server_transcript=bool(data.get("serverTranscript", False)),
        prompt_cache_key=data["style"] != "anthropic"
        and accepts_prompt_cache_key(data["baseUrl"], data.get("promptCacheKey")),
        prices=data.get("prices"),
        timeout=float(data.get("timeout") or DEFAULT_TIMEOUT),
        cache_rules=data.get("cacheRules"),
    )


def _resolve_key(data: Mapping[str, Any], name: str, env: Mapping[str, str]) -> str | None:
    key_env = data.get("apiKeyEnv")
    if key_env:
        value = env.get(key_env, "")
        if not value.strip():
            raise ProviderConfigError(
                f"provider card {name!r} reads its API key from ${key_env}, which is not set",
                hint=f"export {key_env}=<your key> (or change the card's apiKeyEnv)",
            )
        return value.strip()
    key = data.get("apiKey")
    return key if isinstance(key, str) and key else None


def _key_if_set(data: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    key_env = data.get("apiKeyEnv")
    if key_env:
        return env.get(key_env, "").strip() or None
    key = data.get("apiKey")
    return key if isinstance(key, str) and key else None


def _env_card(env: Mapping[str, str], model: str | None) -> Card:
    base = (env.get("OPENAI_BASE_URL") or "").strip()
    key = (env.get("OPENAI_API_KEY") or "").strip()
    env_model = model or (env.get("CHATKEEP_MODEL") or "").strip()
    if not (base or key or env_model):
        raise ProviderConfigError("no provider is configured")
    if not env_model:
        raise ProviderConfigError(
            "CHATKEEP_MODEL is not set, so the environment fallback has no model",
            hint="export CHATKEEP_MODEL=<model id>, or add a card with `chatkeep provider add`",
        )
    if not base and not key:
        raise ProviderConfigError(
            "neither OPENAI_BASE_URL nor OPENAI_API_KEY is set",
            hint="export OPENAI_API_KEY for api.openai.com, or OPENAI_BASE_URL for a local server",
        )
    data = validate_card(
        {"style": "chat", "baseUrl": base or DEFAULT_OPENAI_BASE_URL, "model": env_model},
        name=ENV_CARD_NAME,
    )
    return Card(
        name=ENV_CARD_NAME,
        style="chat",
        base_url=data["baseUrl"],
        model=data["model"],
        api_key=key or None,
        prompt_cache_key=accepts_prompt_cache_key(data["baseUrl"]),
    )
