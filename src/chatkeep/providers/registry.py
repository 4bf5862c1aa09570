"""The provider-card registry (SPEC §7.1): add, replace, remove and pick cards.

Every face (CLI ``chatkeep provider …``, the panel's settings) changes cards through this one
class, so the rules for the active selection are written once. Each operation is **one
transaction** over ``providers``, ``activeProvider`` and ``activeModel``
(:meth:`LocalArea.modify_many`), so a card and the selection never disagree, even with another
process writing at the same time.

Rules:

* :meth:`CardRegistry.put` validates the card (:func:`~.cards.validate_card`) before anything is
  written. A card sent without ``apiKey`` keeps the stored card's key when ``keep_key`` (the
  panel never echoes keys back); ``"apiKey": ""`` removes it. The card becomes active when asked
  (``activate=True``), or when nothing usable is active (``activate=None``); ``activate=False``
  never changes the selection. Whenever the active card is (re)written or newly picked,
  ``activeModel`` is reset to ``""`` so the card's own model is used.
* :meth:`CardRegistry.remove` removes a card; when it was active, the selection moves to the
  only card left (if exactly one is left) or becomes ``""``, and ``activeModel`` is reset.
* :meth:`CardRegistry.use` picks a stored card, optionally with another model.
* :meth:`CardRegistry.rows` lists cards for display (API keys never included).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, ProviderConfigError, UnknownProvider
from .cards import validate_card

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["CARD_KEYS", "CardRegistry", "MAX_CARD_NAME"]

CARD_KEYS = ("providers", "activeProvider", "activeModel")
MAX_CARD_NAME = 60
_ADD_HINT = "add one with `chatkeep provider add NAME --style chat --base-url URL --model M`"


def _check_name(name: Any) -> str:
    if (
        not isinstance(name, str)
        or not name.strip()
        or len(name) > MAX_CARD_NAME
        or any(c in name for c in "\r\n\x00/")
    ):
        raise ProviderConfigError(
            f"a provider card name must be 1 to {MAX_CARD_NAME} characters on one line, "
            f"without '/', got {name!r}",
            hint="pick a short name such as 'openai' or 'local'",
        )
    return name


def _cards(values: Mapping[str, Any]) -> dict[str, Any]:
    cards = values.get("providers")
    return dict(cards) if isinstance(cards, dict) else {}


def _active(values: Mapping[str, Any]) -> str:
    active = values.get("activeProvider")
    return active if isinstance(active, str) else ""


class CardRegistry:
    """The provider cards of one profile (see the module docstring)."""

    def __init__(self, profile: Profile) -> None:
        self._profile = profile

    def get(self, name: str) -> dict[str, Any] | None:
        """The stored card ``name`` (a copy), or ``None``."""
        card = _cards(self._profile.local.get(list(CARD_KEYS))).get(name)
        return card if isinstance(card, dict) else None

    def rows(self) -> dict[str, Any]:
        """``{"providers": [{name, style, baseUrl, model, apiKeyEnv, hasKey, active}],
        "activeProvider", "activeModel"}`` — for listings; keys are never included."""
        values = self._profile.local.get(list(CARD_KEYS))
        active = _active(values)
        rows = []
        for name, card in sorted(_cards(values).items()):
            if not isinstance(card, dict):
                continue
            try:
                card = validate_card(card, name=name)
            except ProviderConfigError:
                pass  # shown as stored; resolving it will say what is wrong
            rows.append(
                {
                    "name": name,
                    "style": card.get("style", "chat"),
                    "baseUrl": card.get("baseUrl", ""),
                    "model": card.get("model", ""),
                    "apiKeyEnv": card.get("apiKeyEnv", "") or "",
                    "hasKey": bool(card.get("apiKey")),
                    "active": name == active,
                }
            )
        model = values.get("activeModel")
        return {
            "providers": rows,
            "activeProvider": active,
            "activeModel": model if isinstance(model, str) else "",
        }

    def put(
        self,
        name: str,
        card: Mapping[str, Any],
        *,
        activate: bool | None = None,
        keep_key: bool = False,
    ) -> dict[str, Any]:
        """Add or replace card ``name``; returns ``{"card", "active", "created"}``."""
        _check_name(name)
        if not isinstance(card, Mapping):
            raise ProviderConfigError(
                f"provider card {name!r} must be an object", hint="send {style, baseUrl, model}"
            )
        new = dict(card)
        validate_card(new, name=name)  # before the transaction: a bad card writes nothing
        outcome: dict[str, Any] = {}

        def fn(values: dict[str, Any]) -> dict[str, Any]:
            cards = _cards(values)
            old = cards.get(name)
            stored = dict(new)
            if keep_key and "apiKey" not in stored and isinstance(old, dict) and old.get("apiKey"):
                stored["apiKey"] = old["apiKey"]
            if stored.get("apiKey") == "":
                stored.pop("apiKey")
            stored = validate_card(stored, name=name)
            cards[name] = stored
            active = _active(values)
            changes: dict[str, Any] = {"providers": cards}
            usable = bool(active) and active in cards
            select = activate is True or (activate is None and not usable)
            if select or active == name:
                changes["activeProvider"] = name
                changes["activeModel"] = ""
                active = name
            outcome.update(card=stored, active=active == name, created=old is None)
            return changes

        self._profile.local.modify_many(CARD_KEYS, fn)
        return outcome

    def remove(self, name: str) -> dict[str, Any]:
        """Remove card ``name``; returns ``{"removed", "activeProvider"}``. Unknown → ``NotFound``."""
        outcome: dict[str, Any] = {}

        def fn(values: dict[str, Any]) -> dict[str, Any]:
            cards = _cards(values)
            if name not in cards:
                known = ", ".join(sorted(cards)) or "none yet"
                raise NotFound(
                    f"no provider card named {name!r} (known: {known})",
                    hint="see `chatkeep provider list`",
                )
            del cards[name]
            changes: dict[str, Any] = {"providers": cards}
            active = _active(values)
            if active == name or (active and active not in cards):
                active = next(iter(cards)) if len(cards) == 1 else ""
                changes["activeProvider"] = active
                changes["activeModel"] = ""
            outcome.update(removed=name, activeProvider=active)
            return changes

        self._profile.local.modify_many(CARD_KEYS, fn)
        return outcome

    def use(self, name: str, model: str | None = None) -> dict[str, Any]:
        """Make card ``name`` active (with ``model`` instead of its own, when given)."""
        if model is not None and (not isinstance(model, str) or any(c in model for c in "\r\n")):
            raise ProviderConfigError(f"a model id must be one line, got {model!r}")

        def fn(values: dict[str, Any]) -> dict[str, Any]:
            cards = _cards(values)
            if name not in cards:
                known = ", ".join(sorted(cards)) or "none yet"
                raise UnknownProvider(
                    f"no provider named {name!r} (known: {known})", hint=_ADD_HINT
                )
            return {"activeProvider": name, "activeModel": (model or "").strip()}

        self._profile.local.modify_many(CARD_KEYS, fn)
        return {"activeProvider": name, "activeModel": (model or "").strip()}
