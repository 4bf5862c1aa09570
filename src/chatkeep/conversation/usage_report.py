"""What the stored turns cost: the data behind ``chatkeep usage`` and the panel's totals.

``usage_report(store, *, session=None, by=None) -> dict`` reads the usage stored on assistant
entries (SPEC §6.4) and totals it with :func:`chatkeep.rules.usage.usage_totals`, pricing each
turn with the ``prices`` of the card that answered it (``provider.name``; a deleted or unpriced
card leaves the turn unpriced).

Sources, without ``session``: the live history, the archive (entries the live window moved
out, §3.3) and every saved session — except the session loaded in the live history, whose turns
are counted once, from the live history. With ``session`` (an id, or a unique prefix of at
least 4 characters): that session only (the live history when it is the loaded one); an unknown
id raises :class:`~chatkeep.errors.NotFound`.

Attachment summaries (SPEC §7.5) are paid calls too: without ``session``, the usage of every
summary call (stored under ``summaryUsage``, :mod:`.summary`) is counted in ``totals`` and
reported on its own as ``summary`` (each call one "turn", priced by the card that made it).
With ``session`` they are not counted (a summary belongs to no session).

Result::

    {"totals": {turns, input, cachedRead, cacheWrite, output, cacheHitRate, cost, pricedTurns},
     "summary": {the same fields, over the summary calls},
     "by": None | "session" | "day",
     "groups": [{"key": str, "label": str, **totals}, ...]}

``by="session"``: one group per source that has turns (key ``live``, ``archive`` or the session
id). ``by="day"``: entries carry no timestamps, so a saved session's turns count on the day the
session was created (UTC, ``YYYY-MM-DD``); the live history and the archive are their own groups
(keys ``live`` and ``archive``). Summary calls are the group ``summary`` by session and count on
the day they were made by day. Read-only.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..entries import Entry
from ..errors import InvalidValue, NotFound
from ..rules.usage import EMPTY_TOTALS, add_totals, prices_from_settings, usage_totals
from .summary import SUMMARY_USAGE_KEY, summary_usage_entries

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["BY", "usage_report"]

BY = ("session", "day")
_MIN_PREFIX = 4


def _day(created: Any) -> str:
    try:
        stamp = float(created)
    except (TypeError, ValueError):
        return "unknown"
    if stamp <= 0:
        return "unknown"
    seconds = stamp / 1000 if stamp > 1e11 else stamp  # createdAt is in milliseconds
    return _dt.datetime.fromtimestamp(seconds, _dt.UTC).strftime("%Y-%m-%d")


def _resolve(rows: list[dict[str, Any]], wanted: str) -> dict[str, Any]:
    exact = [r for r in rows if r.get("id") == wanted]
    if exact:
        return exact[0]
    if len(wanted) >= _MIN_PREFIX:
        found = [r for r in rows if str(r.get("id", "")).startswith(wanted)]
        if len(found) == 1:
            return found[0]
        if len(found) > 1:
            raise InvalidValue(
                f"session id prefix {wanted!r} matches {len(found)} sessions",
                hint="give more characters of the id (see `chatkeep sessions list`)",
            )
    raise NotFound(f"no saved session {wanted!r}", hint="see `chatkeep sessions list` for the ids")


def _sources(store: Profile, session: str | None) -> Iterator[tuple[str, str, str, list[Entry]]]:
    """``(key, label, day, entries)`` of every source to count."""
    sessions = store.sessions
    active = sessions.active_id()
    rows = list(sessions.list())
    if session is not None:
        row = _resolve(rows, session)
        sid = str(row["id"])
        if sid == active:
            entries = store.history.read()
        else:
            body = sessions.get(sid)
            entries = body["history"] if body else []
        yield sid, str(row.get("name") or sid), _day(row.get("createdAt")), entries
        return
    active_row = next((r for r in rows if r.get("id") == active), None)
    label = str(active_row.get("name") or active) if active_row else "live conversation"
    yield "live", label, "live", store.history.read()
    yield "archive", "archive", "archive", store.history.archived()
    for row in rows:
        sid = str(row.get("id"))
        if sid == active:
            continue
        body = sessions.get(sid)
        if body is not None:
            yield sid, str(row.get("name") or sid), _day(row.get("createdAt")), body["history"]


def usage_report(
    store: Profile, *, session: str | None = None, by: str | None = None
) -> dict[str, Any]:
    """Usage totals (and groups) over the stored turns; see the module docstring."""
    if by is not None and by not in BY:
        raise InvalidValue(f"--by must be one of {', '.join(BY)}, got {by!r}")
    prices_of = prices_from_settings(store.get_all())
    totals: dict[str, Any] = dict(EMPTY_TOTALS)
    groups: dict[str, dict[str, Any]] = {}
    for key, label, day, entries in _sources(store, session):
        part = usage_totals(entries, prices_of)
        totals = add_totals(totals, part)
        if by is None or not part["turns"]:
            continue
        gkey, glabel = (key, label) if by == "session" else (day, day)
        if gkey in groups:
            merged = add_totals(groups[gkey], part)
            groups[gkey] = {"key": gkey, "label": glabel, **merged}
        else:
            groups[gkey] = {"key": gkey, "label": glabel, **part}
    summary: dict[str, Any] = dict(EMPTY_TOTALS)
    if session is None:
        calls = summary_usage_entries(store.local.get(SUMMARY_USAGE_KEY))
        summary = usage_totals(calls, prices_of)
        totals = add_totals(totals, summary)
        for entry in calls if by is not None else ():
            gkey = "summary" if by == "session" else _day(entry.get("createdAt"))
            part = usage_totals([entry], prices_of)
            if gkey in groups:
                groups[gkey] = {**groups[gkey], **add_totals(groups[gkey], part)}
            else:
                label = gkey
                groups[gkey] = {"key": gkey, "label": label, **part}
    ordered = list(groups.values())
    if by == "day":
        ordered.sort(key=lambda g: (g["key"] in ("live", "archive"), g["key"]))
    return {"totals": totals, "summary": summary, "by": by, "groups": ordered}
