"""Provider cards, selection and the environment fallback (SPEC §7.1)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from chatkeep.errors import ProviderConfigError
from chatkeep.providers import Card, api_root, resolve_provider, sdk_base_url, validate_card

OPENAI_CARD = {
    "style": "chat",
    "baseUrl": "https://api.openai.com/v1",
    "model": "gpt-4o-mini",
    "apiKeyEnv": "OPENAI_API_KEY",
}
LOCAL_CARD = {"style": "chat", "baseUrl": "http://localhost:11434", "model": "llama3.2"}
CLAUDE_CARD = {
    "style": "anthropic",
    "baseUrl": "https://api.anthropic.com",
    "model": "claude-sonnet-4-5",
    "apiKeyEnv": "ANTHROPIC_API_KEY",
    "temperature": 0.3,
    "maxTokens": 2048,
    "stream": False,
}


def settings(**kw):
    base = {"providers": {}, "activeProvider": "", "activeModel": ""}
    base.update(kw)
    return base


def test_active_card_with_key_from_env():
    """activeProvider picks the card and apiKeyEnv is read from the given env."""
    s = settings(providers={"openai": OPENAI_CARD, "local": LOCAL_CARD}, activeProvider="openai")
    card = resolve_provider(s, env={"OPENAI_API_KEY": "sk-live"})
    assert card == Card(
        name="openai",
        style="chat",
        base_url="https://api.openai.com/v1",
        model="gpt-4o-mini",
        api_key="sk-live",
        prompt_cache_key=True,  # api.openai.com takes the field
    )


def test_all_card_fields_are_carried():
    """temperature, maxTokens and stream reach the Card."""
    s = settings(providers={"claude": CLAUDE_CARD}, activeProvider="claude")
    card = resolve_provider(s, env={"ANTHROPIC_API_KEY": "sk-ant"})
    assert (card.style, card.temperature, card.max_tokens, card.stream) == (
        "anthropic",
        0.3,
        2048,
        False,
    )


def test_api_key_is_not_in_repr():
    """A card's repr never shows the key."""
    card = Card("x", "chat", "http://h/v1", "m", api_key="sk-secret-123")
    assert "sk-secret-123" not in repr(card)


def test_missing_key_variable_is_named():
    """apiKeyEnv naming an unset variable fails and names the variable."""
    s = settings(providers={"openai": OPENAI_CARD}, activeProvider="openai")
    with pytest.raises(ProviderConfigError) as info:
        resolve_provider(s, env={})
    assert "OPENAI_API_KEY" in info.value.message
    assert "OPENAI_API_KEY" in info.value.hint


def test_inline_api_key_and_keyless_local_card():
    """apiKey is used as-is; a card with neither key field has no key."""
    s = settings(providers={"a": {**LOCAL_CARD, "apiKey": "inline"}, "b": LOCAL_CARD})
    assert resolve_provider(s, name="a", env={}).api_key == "inline"
    assert resolve_provider(s, name="b", env={}).api_key is None


def test_active_model_overrides_only_the_active_card():
    """activeModel applies to the active card; an explicitly named other card keeps its model."""
    s = settings(
        providers={"openai": OPENAI_CARD, "local": LOCAL_CARD},
        activeProvider="local",
        activeModel="qwen2.5:7b",
    )
    env = {"OPENAI_API_KEY": "k"}
    assert resolve_provider(s, env=env).model == "qwen2.5:7b"
    assert resolve_provider(s, name="local", env=env).model == "qwen2.5:7b"
    assert resolve_provider(s, name="openai", env=env).model == "gpt-4o-mini"
    assert resolve_provider(s, name="openai", model="gpt-4.1", env=env).model == "gpt-4.1"


def test_single_card_is_used_when_none_is_active():
    """With one stored card and no activeProvider, that card is used."""
    assert resolve_provider(settings(providers={"local": LOCAL_CARD}), env={}).name == "local"


def test_several_cards_none_active_is_an_error():
    """Several cards and none active: the error lists the names to pick from."""
    s = settings(providers={"b": LOCAL_CARD, "a": LOCAL_CARD})
    with pytest.raises(ProviderConfigError) as info:
        resolve_provider(s, env={})
    assert "a, b" in info.value.hint


def test_unknown_name_is_an_error():
    """A name that is not stored fails with the stored names and a hint."""
    s = settings(providers={"local": LOCAL_CARD}, activeProvider="local")
    with pytest.raises(ProviderConfigError) as info:
        resolve_provider(s, name="nope", env={})
    assert "'nope'" in info.value.message and "local" in info.value.message
    assert "provider add" in info.value.hint


def test_env_fallback_builds_a_chat_card():
    """No cards: OPENAI_BASE_URL / OPENAI_API_KEY / CHATKEEP_MODEL make a chat card."""
    env = {
        "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1",
        "OPENAI_API_KEY": "sk-env",
        "CHATKEEP_MODEL": "local-model",
    }
    card = resolve_provider(settings(), env=env)
    assert card == Card("env", "chat", "http://127.0.0.1:8080/v1", "local-model", "sk-env")


def test_env_fallback_defaults_to_openai_and_allows_keyless_local():
    """Key without base URL → api.openai.com; base URL without key → keyless card."""
    card = resolve_provider(settings(), env={"OPENAI_API_KEY": "k", "CHATKEEP_MODEL": "m"})
    assert card.base_url == "https://api.openai.com/v1"
    local = resolve_provider(
        settings(), env={"OPENAI_BASE_URL": "http://localhost:11434/v1", "CHATKEEP_MODEL": "m"}
    )
    assert local.api_key is None and local.base_url == "http://localhost:11434/v1"


def test_env_fallback_needs_a_model():
    """Without CHATKEEP_MODEL (or an explicit model) the fallback names the variable."""
    with pytest.raises(ProviderConfigError) as info:
        resolve_provider(settings(), env={"OPENAI_API_KEY": "k"})
    assert "CHATKEEP_MODEL" in info.value.message
    assert resolve_provider(settings(), model="m2", env={"OPENAI_API_KEY": "k"}).model == "m2"


def test_nothing_configured_is_an_error_with_the_default_hint():
    """No cards and no env: ProviderConfigError whose hint shows both ways to configure."""
    with pytest.raises(ProviderConfigError) as info:
        resolve_provider(settings(), env={})
    assert "provider add" in info.value.hint and "OPENAI_BASE_URL" in info.value.hint


def test_stored_cards_take_precedence_over_env():
    """When a card exists, env variables do not replace it."""
    env = {"OPENAI_BASE_URL": "http://elsewhere/v1", "CHATKEEP_MODEL": "x"}
    card = resolve_provider(settings(providers={"local": LOCAL_CARD}), env=env)
    assert card.name == "local" and card.base_url == "http://localhost:11434"


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"style": "gemini"}, "style"),
        ({"baseUrl": ""}, "baseUrl"),
        ({"baseUrl": "localhost:11434"}, "baseUrl"),
        ({"baseUrl": "ftp://host/v1"}, "baseUrl"),
        ({"model": "  "}, "model"),
        ({"apiKeyEnv": "NOT A NAME"}, "apiKeyEnv"),
        ({"temperature": 3}, "temperature"),
        ({"temperature": True}, "temperature"),
        ({"maxTokens": -5}, "maxTokens"),
        ({"maxTokens": 1.5}, "maxTokens"),
        ({"stream": "yes"}, "stream"),
    ],
)
def test_validate_card_rejects_bad_fields(patch, field):
    """Each bad field raises ProviderConfigError naming that field."""
    with pytest.raises(ProviderConfigError) as info:
        validate_card({**OPENAI_CARD, **patch}, name="bad")
    assert field in info.value.message


def test_validate_card_normalizes_and_copies():
    """A good card comes back normalized (stream default, trimmed) without touching the input."""
    raw = {"baseUrl": " http://localhost:8000/v1 ", "model": " m ", "extra": 1}
    out = validate_card(raw)
    assert out == {
        "style": "chat",
        "baseUrl": "http://localhost:8000/v1",
        "model": "m",
        "stream": True,
        "extra": 1,
    }
    assert raw["model"] == " m " and "stream" not in raw


def test_validate_card_rejects_non_objects():
    """A card that is not an object is refused."""
    with pytest.raises(ProviderConfigError):
        validate_card(["chat"])


@pytest.mark.parametrize(
    ("base", "root"),
    [
        ("https://api.openai.com/v1", "https://api.openai.com/v1"),
        ("https://api.openai.com/v1/", "https://api.openai.com/v1"),
        ("http://localhost:11434", "http://localhost:11434/v1"),
        ("http://localhost:11434/", "http://localhost:11434/v1"),
        ("https://open.bigmodel.cn/api/paas/v4", "https://open.bigmodel.cn/api/paas/v4"),
        ("https://example.com/openai", "https://example.com/openai/v1"),
    ],
)
def test_api_root(base, root):
    """Strip '/', keep a /v<digits> tail, else append /v1."""
    assert api_root(base) == root


def test_sdk_base_url_per_style():
    """OpenAI styles get the /v1 root; the Anthropic SDK gets it without /v1."""
    assert sdk_base_url(Card("a", "chat", "http://h:1", "m")) == "http://h:1/v1"
    assert sdk_base_url(Card("a", "responses", "http://h:1/v1/", "m")) == "http://h:1/v1"
    assert sdk_base_url(Card("a", "anthropic", "https://api.anthropic.com", "m")) == (
        "https://api.anthropic.com"
    )
    assert sdk_base_url(Card("a", "anthropic", "https://api.anthropic.com/v1", "m")) == (
        "https://api.anthropic.com"
    )


def test_importing_providers_loads_no_sdk_or_http_library():
    """import chatkeep / chatkeep.providers imports neither SDK nor any httpx."""
    code = (
        "import sys, chatkeep, chatkeep.providers, chatkeep.rules.overflow;"
        "print(sorted(m for m in ('openai','anthropic','httpx','httpx2') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_prompt_cache_key_only_where_accepted():
    """api.openai.com gets prompt_cache_key; other servers only with promptCacheKey: true."""
    s = settings(providers={"local": LOCAL_CARD, "claude": CLAUDE_CARD}, activeProvider="local")
    env = {"ANTHROPIC_API_KEY": "k"}
    assert resolve_provider(s, env=env).prompt_cache_key is False
    opted = settings(providers={"local": {**LOCAL_CARD, "promptCacheKey": True}})
    assert resolve_provider(opted, env=env).prompt_cache_key is True
    assert resolve_provider(s, "claude", env=env).prompt_cache_key is False
    with pytest.raises(ProviderConfigError, match="promptCacheKey"):
        validate_card({**LOCAL_CARD, "promptCacheKey": "yes"})


def test_prices_validated_and_carried():
    """prices per million tokens: input and output required, numbers ≥ 0, unknown keys named."""
    card = validate_card({**LOCAL_CARD, "prices": {"input": 3, "output": 15, "cachedRead": 0.3}})
    assert card["prices"] == {"input": 3.0, "cachedRead": 0.3, "output": 15.0}
    s = settings(providers={"local": card}, activeProvider="local")
    assert resolve_provider(s, env={}).prices == card["prices"]
    for bad, word in (
        ({"input": 1}, "output"),
        ({"input": -1, "output": 1}, "prices.input"),
        ({"input": 1, "output": 1, "cached": 1}, "cached"),
        ("cheap", "object"),
        ({"input": True, "output": 1}, "prices.input"),
    ):
        with pytest.raises(ProviderConfigError, match=word):
            validate_card({**LOCAL_CARD, "prices": bad})
