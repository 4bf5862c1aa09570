"""The provider-card registry: one set of rules for cards and the active selection."""

from __future__ import annotations

import threading

import pytest

import chatkeep
from chatkeep.providers import resolve_provider

CARD = {"style": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m1"}


def test_first_card_becomes_active_and_later_ones_do_not(store: chatkeep.Store) -> None:
    """The first usable card is picked by itself; a second card leaves the selection alone."""
    first = store.cards.put("a", CARD)
    second = store.cards.put("b", {**CARD, "model": "m2"})
    assert first == {"card": {**CARD, "stream": True}, "active": True, "created": True}
    assert second["active"] is False and second["created"] is True
    assert store.get_all()["activeProvider"] == "a"


def test_rewriting_the_active_card_resets_the_model_override(store: chatkeep.Store) -> None:
    """Replacing the active card drops a stale activeModel so the card's new model is used."""
    store.cards.put("a", CARD)
    store.cards.use("a", "override")
    store.cards.put("a", {**CARD, "model": "m9"})
    settings = store.get_all()
    assert (settings["activeProvider"], settings["activeModel"]) == ("a", "")
    assert resolve_provider(settings).model == "m9"


def test_activate_false_never_changes_the_selection(store: chatkeep.Store) -> None:
    """activate=False adds a card without selecting it, even when nothing is selected."""
    result = store.cards.put("a", CARD, activate=False)
    assert result["active"] is False and store.get_all()["activeProvider"] == ""


def test_remove_moves_the_selection_in_the_same_write(store: chatkeep.Store) -> None:
    """Removing the active card selects the only card left, in one transaction."""
    store.cards.put("a", CARD)
    store.cards.put("b", CARD)
    assert store.cards.remove("a") == {"removed": "a", "activeProvider": "b"}
    settings = store.get_all()
    assert set(settings["providers"]) == {"b"}
    assert (settings["activeProvider"], settings["activeModel"]) == ("b", "")


def test_remove_unknown_is_not_found_and_writes_nothing(store: chatkeep.Store) -> None:
    """An unknown name raises NotFound and leaves the cards as they were."""
    store.cards.put("a", CARD)
    before = store.get_all()
    with pytest.raises(chatkeep.NotFound):
        store.cards.remove("zzz")
    assert store.get_all() == before


def test_bad_card_writes_nothing(store: chatkeep.Store) -> None:
    """A card that fails validation raises ProviderConfigError before any write."""
    with pytest.raises(chatkeep.ProviderConfigError):
        store.cards.put("a", {**CARD, "baseUrl": "ftp://x"})
    with pytest.raises(chatkeep.ProviderConfigError):
        store.cards.put("bad/name", CARD)
    assert store.get_all()["providers"] == {} and store.get_all()["activeProvider"] == ""


def test_keep_key_keeps_the_stored_key_and_empty_removes_it(store: chatkeep.Store) -> None:
    """keep_key: a card without apiKey keeps the stored one; apiKey "" removes it."""
    store.cards.put("a", {**CARD, "apiKey": "sk-1"})
    store.cards.put("a", {**CARD, "model": "m2"}, keep_key=True)
    assert store.cards.get("a")["apiKey"] == "sk-1"
    store.cards.put("a", {**CARD, "apiKey": ""}, keep_key=True)
    assert "apiKey" not in store.cards.get("a")
    assert all("apiKey" not in row for row in store.cards.rows()["providers"])


def test_use_unknown_card_is_a_config_error(store: chatkeep.Store) -> None:
    """use() of a card that is not stored is refused with a hint to add it."""
    with pytest.raises(chatkeep.ProviderConfigError, match="no provider named"):
        store.cards.use("ghost")


def test_browsa_cards_are_usable(store: chatkeep.Store) -> None:
    """A browsa card (apiStyle, maxTokens 0) resolves to a working card with the default."""
    store.local.set(
        {
            "providers": {
                "claude": {
                    "apiStyle": "anthropic",
                    "baseUrl": "https://api.anthropic.com/v1",
                    "model": "claude-x",
                    "apiKey": "k",
                    "maxTokens": 0,
                }
            },
            "activeProvider": "claude",
        }
    )
    card = resolve_provider(store.get_all())
    assert (card.style, card.max_tokens, card.model) == ("anthropic", None, "claude-x")


def test_concurrent_puts_lose_no_card(sqlite_spec) -> None:
    """Two threads adding cards at once: both cards are kept and one of them is active."""
    stores = [sqlite_spec.open(), sqlite_spec.open()]
    try:
        threads = [
            threading.Thread(
                target=lambda s=s, i=i: [s.cards.put(f"c{i}{k}", CARD) for k in range(10)]
            )
            for i, s in enumerate(stores)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        settings = stores[0].get_all()
        assert len(settings["providers"]) == 20
        assert settings["activeProvider"] in settings["providers"]
    finally:
        for s in stores:
            s.close()
