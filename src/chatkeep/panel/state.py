"""Per-app state of the panel: the store, the image registry, the turns in flight, settings views.

* :class:`Turns` hands out one ``threading.Event`` per streamed turn (the ``cancel`` given to
  ``store.chat.send``) under a short random id, so the stop button stops exactly that turn.
* :func:`public_settings` is what the page may see of ``store.get_all()``: ``history`` dropped,
  the three panel options defaulted (also when a stored one has the wrong type), and every provider card's ``apiKey`` replaced by
  ``hasApiKey`` (a stored key never travels back to the browser).
"""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import PANEL_OPTION_DEFAULTS
from .uploads import BodyBudgets
from .views import ImageRegistry

if TYPE_CHECKING:
    from .. import Store

__all__ = ["PanelState", "Turns", "public_settings"]


class Turns:
    """Cancel events of the turns being streamed, by turn id."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._events: dict[str, threading.Event] = {}

    def start(self) -> tuple[str, threading.Event]:
        turn_id = secrets.token_hex(8)
        event = threading.Event()
        with self._lock:
            self._events[turn_id] = event
        return turn_id, event

    def finish(self, turn_id: str) -> None:
        with self._lock:
            self._events.pop(turn_id, None)

    def stop(self, turn_id: str | None = None) -> int:
        """Set the cancel event of ``turn_id`` (or of every turn); returns how many."""
        with self._lock:
            if turn_id:
                events = [self._events[turn_id]] if turn_id in self._events else []
            else:
                events = list(self._events.values())
        for event in events:
            event.set()
        return len(events)

    def __len__(self) -> int:
        with self._lock:
            return len(self._events)


@dataclass
class PanelState:
    """What every route reaches through ``request.app.state.panel``."""

    store: Store
    summarize: bool = True
    images: ImageRegistry = field(default_factory=ImageRegistry)
    turns: Turns = field(default_factory=Turns)
    bodies: BodyBudgets = field(default_factory=BodyBudgets)
    #: ``(history write counter, usage totals)`` of the live history (routes.page.usage_at)
    usage_memo: tuple[int, list[dict[str, Any]]] | None = None


def public_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """``get_all()`` as the page sees it (see the module docstring)."""
    out = dict(settings)
    out.pop("history", None)
    for key, default in PANEL_OPTION_DEFAULTS.items():
        # Panel options are not in DEFAULTS, so get_all() does not type-check them: do it here.
        if type(out.get(key)) is not type(default):
            out[key] = default
    cards: dict[str, Any] = {}
    providers = out.get("providers")
    if isinstance(providers, dict):
        for name, card in providers.items():
            if not isinstance(card, dict):
                continue
            view = {k: v for k, v in card.items() if k != "apiKey"}
            view["hasApiKey"] = bool(card.get("apiKey"))
            cards[name] = view
    out["providers"] = cards
    return out
