"""What ``chatkeep history`` and ``chatkeep sessions list`` print: the listings as text (plain,
with control characters escaped) or as JSON, made from the store without any Click object."""

from __future__ import annotations

import datetime as dt
from typing import Any

from .. import entry_view
from .output import columns_text, json_text, plain, render_entry


def when(ms: object) -> str:
    """A stored millisecond timestamp as local ``YYYY-MM-DD HH:MM`` (``?`` when not a number)."""
    if not isinstance(ms, int | float):
        return "?"
    return dt.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def history_text(store: Any, *, as_json: bool, archived: bool, last: int | None) -> str:
    """``chatkeep history [--json] [--archived] [-n N]``: the live history or the archive."""
    if archived and last is not None:  # the last N only: read from the archive's newest end
        _total, first, entries = store.history.archived_page(None, last)
        views = [entry_view(first + k, e) for k, e in enumerate(entries)]
    else:
        entries = store.history.archived() if archived else store.history.read()
        start = 0 if last is None else max(0, len(entries) - last)
        views = [entry_view(i, entries[i]) for i in range(start, len(entries))]
    if as_json:
        return json_text(views)
    lines = [plain(render_entry(v)) for v in views]
    if not entries:
        lines.insert(0, "(the archive is empty)" if archived else "(no messages yet)")
    return "".join(line + "\n" for line in lines)


def sessions_list_text(
    store: Any,
    query: str,
    *,
    as_json: bool,
    bold: bool,
    limit: int | None = None,
    offset: int = 0,
) -> str:
    """``chatkeep sessions list [QUERY] [--json] [--limit N] [--offset M]``: pinned first then
    newest; ``bold`` header."""
    rows = store.sessions.list(query, limit=limit, offset=offset)
    if as_json:
        return json_text(rows)
    if not rows:
        return "(no matching sessions)\n" if query.strip() else "(no saved sessions)\n"
    headers = ("id", "name", "created", "pinned") + (("match",) if query.strip() else ())
    table = []
    for r in rows:
        cells = [r["id"], r["name"], when(r["createdAt"]), "★" if r["pinned"] else ""]
        if query.strip():
            cells.append("content" if r.get("contentMatch") else "name")
        table.append([plain(c) for c in cells])  # user text shown as text
    return columns_text(headers, table, bold=bold)
