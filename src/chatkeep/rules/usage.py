"""The bill: what turns cost, from the usage stored on assistant entries (SPEC §6.4). Pure.

Every answered turn's assistant entry may carry ``usage: {input, cachedRead, cacheWrite,
output}`` (``input`` counts every prompt token, cached, written or not). Cards may carry
``prices: {input, cachedRead, cacheWrite, output}`` in currency units per million tokens
(``input``/``output`` required; a missing ``cachedRead``/``cacheWrite`` price is the input
price).

- :func:`turn_cost(usage, prices)` — the estimated cost of one turn: uncached input
  (``input − cachedRead − cacheWrite``) at the input price, cache reads and writes at theirs,
  output at the output price; ``None`` without prices or usage.
- :func:`usage_totals(entries, prices_of)` — over the assistant entries that carry usage:
  ``turns``, the four token sums, ``cacheHit`` (``cachedRead / input``, 0.0 without input; also
  under its earlier name ``cacheHitRate``),
  ``cost`` (the sum over priced turns, ``None`` when no turn is priced), ``pricedTurns``.
  ``prices_of(entry)`` returns the prices for an entry (e.g. from its ``provider`` card) or
  ``None``.
- :func:`prices_from_settings(settings)` — a ``prices_of`` that reads the card named by each
  entry's ``provider.name`` in ``settings["providers"]``.
- :func:`add_totals(a, b)` — two totals combined.

Every figure is bounded (SPEC §12, :mod:`chatkeep.limits`): a usage whose counts are not
integers from 0 to 2**63 − 1 is not counted (an older store or a hand-made entry may hold one);
token totals and the turn count stop at 2**63 − 1; a price that is not a finite number from 0
to :data:`~chatkeep.limits.MAX_PRICE` leaves the turn unpriced. So ``cost`` is always a finite
number (or ``None``) and every total fits in 64 bits.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..entries import USAGE_KEYS, Entry, is_usage, require_entry_list
from ..errors import InvalidEntry
from ..limits import add_counts, is_count, price_problem

__all__ = [
    "EMPTY_TOTALS",
    "add_totals",
    "prices_from_settings",
    "turn_cost",
    "usage_totals",
]

PricesOf = Callable[[Entry], Mapping[str, Any] | None]

EMPTY_TOTALS: dict[str, Any] = {
    "turns": 0,
    "input": 0,
    "cachedRead": 0,
    "cacheWrite": 0,
    "output": 0,
    "cacheHit": 0.0,
    "cacheHitRate": 0.0,
    "cost": None,
    "pricedTurns": 0,
}


def _price(prices: Mapping[str, Any], key: str) -> float | None:
    value = prices.get(key)
    if value is None or price_problem(value) is not None:
        return None
    return float(value)


def _counted(usage: Any) -> bool:
    """A usage object whose four counts can be totalled (each within 64 bits)."""
    return is_usage(usage) and all(is_count(usage[k]) for k in USAGE_KEYS)


def turn_cost(usage: Mapping[str, Any] | None, prices: Mapping[str, Any] | None) -> float | None:
    """Estimated cost of one turn (module docstring), or ``None``."""
    if not isinstance(usage, Mapping) or not isinstance(prices, Mapping):
        return None
    if not usage or not prices or not _counted(dict(usage)):
        return None
    base = _price(prices, "input")
    out = _price(prices, "output")
    if base is None or out is None:
        return None
    read = _price(prices, "cachedRead")
    write = _price(prices, "cacheWrite")
    read = base if read is None else read
    write = base if write is None else write
    uncached = max(0, usage["input"] - usage["cachedRead"] - usage["cacheWrite"])
    total = (
        uncached * base
        + usage["cachedRead"] * read
        + usage["cacheWrite"] * write
        + usage["output"] * out
    )
    return total / 1_000_000


def add_totals(a: Mapping[str, Any], b: Mapping[str, Any]) -> dict[str, Any]:
    """Two totals combined (``cost`` stays ``None`` only when neither side is priced)."""
    keys = ("turns", *USAGE_KEYS, "pricedTurns")
    out: dict[str, Any] = {k: add_counts(a[k], b[k]) for k in keys}
    costs = [c for c in (a.get("cost"), b.get("cost")) if c is not None]
    out["cost"] = _finite(sum(costs)) if costs else None
    out["cacheHit"] = out["cacheHitRate"] = _hit(out)
    return out


def _hit(totals: Mapping[str, Any]) -> float:
    return totals["cachedRead"] / totals["input"] if totals["input"] else 0.0


def _finite(cost: float) -> float:
    """A cost sum as a finite number (bounded prices and counts keep it far below the float
    limit; this is the last guard, so ``--json`` never prints ``Infinity``)."""
    return cost if math.isfinite(cost) else sys.float_info.max


def usage_totals(entries: Iterable[Entry], prices_of: PricesOf | None = None) -> dict[str, Any]:
    """Totals over the assistant entries of ``entries`` that carry usage (module docstring)."""
    if isinstance(entries, str | bytes) or not isinstance(entries, Iterable):
        raise InvalidEntry("entries must be a list of entry objects", field="entries")
    entries = require_entry_list(list(entries), "entries")
    totals = dict(EMPTY_TOTALS)
    cost = 0.0
    for entry in entries:
        usage = entry.get("usage") if isinstance(entry, dict) else None
        if entry.get("role") != "assistant" or not _counted(usage):
            continue
        assert isinstance(usage, dict)
        totals["turns"] = add_counts(totals["turns"], 1)
        for key in USAGE_KEYS:
            totals[key] = add_counts(totals[key], usage[key])
        price = turn_cost(usage, prices_of(entry) if prices_of else None)
        if price is not None:
            totals["pricedTurns"] = add_counts(totals["pricedTurns"], 1)
            cost += price
    totals["cost"] = _finite(cost) if totals["pricedTurns"] else None
    totals["cacheHit"] = totals["cacheHitRate"] = _hit(totals)
    return totals


def prices_from_settings(settings: Mapping[str, Any]) -> PricesOf:
    """``prices_of`` reading each entry's ``provider.name`` card in ``settings["providers"]``."""
    cards = settings.get("providers")
    cards = cards if isinstance(cards, Mapping) else {}

    def prices_of(entry: Entry) -> Mapping[str, Any] | None:
        provider = entry.get("provider")
        name = provider.get("name") if isinstance(provider, dict) else None
        card = cards.get(name) if isinstance(name, str) else None
        prices = card.get("prices") if isinstance(card, Mapping) else None
        return prices if isinstance(prices, Mapping) else None

    return prices_of
