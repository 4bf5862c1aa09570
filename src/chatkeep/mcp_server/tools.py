"""The tools ``chatkeep mcp`` serves, over one profile of one store (SPEC §17).

Each method takes the tool's arguments and returns a :class:`~.views.Result`; the server
(:mod:`.server`) turns it into MCP content. Every tool reads through the public API only;
none deletes or rewrites anything — ``save_session`` (served only with ``--allow-write``)
saves the live conversation, as ``chatkeep sessions save`` does. Bad arguments raise
:class:`chatkeep.ChatkeepError` before anything is read, with a hint.

Where a tool takes ``session``, it is ``"live"`` (the live conversation), ``"archive"``
(entries the live window dropped, and earlier versions of edited turns) or a saved or evicted
session's id (or a unique prefix of 4+ characters, as on the command line). Entry indexes are
positions in that place, the same ``index`` a ``search`` hit gives.
"""

from __future__ import annotations

from typing import Any

import chatkeep

from .views import (
    CALL_CHARS,
    IMAGES_PER_CALL,
    Budget,
    Result,
    dumps,
    entry_images,
    entry_row,
    image_block,
)

__all__ = ["LIVE", "ARCHIVE", "PLACES", "Tools"]

LIVE = "live"
ARCHIVE = "archive"
PLACES = ("live", "archive", "session", "evicted")
MODES = ("text", "semantic", "hybrid")
SNIPPET_CHARS = 400
PAGE_MAX = 100
SEARCH_MAX = 50
LIST_MAX = 100
RECENT_MAX = 50
_IDS_HINT = "list_sessions gives the ids (evicted=true: the evicted ones); search finds entries"


def _count(value: Any, name: str, *, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise chatkeep.InvalidValue(
            f"{name} must be a whole number from {low} to {high}, got {value!r}",
            hint=f"pass {name} between {low} and {high}",
        )
    return value


def _clip(snippet: str) -> str:
    """A snippet within :data:`SNIPPET_CHARS`, its ``<mark>`` spans still closed."""
    if len(snippet) <= SNIPPET_CHARS:
        return snippet
    cut = snippet[:SNIPPET_CHARS]
    tag = cut.rfind("<")
    if tag >= 0 and ">" not in cut[tag:]:
        cut = cut[:tag]  # no half tag
    if cut.count("<mark>") > cut.count("</mark>"):
        cut += "</mark>"
    return cut + "…"


class Tools:
    """The tools over ``store`` (one profile)."""

    def __init__(self, store: chatkeep.Store) -> None:
        self.store = store

    # -- places -------------------------------------------------------------------------------
    def _place(self, session: str) -> tuple[dict[str, Any], list[dict[str, Any]] | None]:
        """``(about, entries)`` of a place; ``entries`` is ``None`` for the archive, which is
        read by pages."""
        if not isinstance(session, str) or not session.strip():
            raise chatkeep.InvalidValue(
                "session must be 'live', 'archive' or a session id",
                hint="list sessions with list_sessions, or search with search",
            )
        name = session.strip()
        if name == LIVE:
            return {"session": LIVE}, self.store.history.read()
        if name == ARCHIVE:
            return {"session": ARCHIVE}, None
        try:
            sid = self.store.sessions.resolve(name, evicted=None)
        except chatkeep.NotFound as exc:
            raise chatkeep.NotFound(exc.message, hint=_IDS_HINT) from None
        found = self.store.sessions.get(sid)
        if found is None:  # deleted between the two reads
            raise chatkeep.NotFound(f"no saved session with id {name!r}", hint=_IDS_HINT)
        about = {k: v for k, v in found.items() if k != "history"}
        about["session"] = about.pop("id", sid)
        about["where"] = "evicted" if "evictedAt" in about else "session"
        return about, list(found["history"])

    def _slice(
        self, session: str, offset: int, limit: int
    ) -> tuple[dict[str, Any], int, list[dict[str, Any]]]:
        about, entries = self._place(session)
        if entries is None:
            total, start, page = self.store.history.archived_page(offset + limit, limit)
            return about, total, page[offset - start :] if offset < total else []
        return about, len(entries), entries[offset : offset + limit]

    def _entry(self, session: str, index: int) -> tuple[dict[str, Any], dict[str, Any]]:
        about, total, page = self._slice(session, index, 1)
        if not page:
            raise chatkeep.NotFound(
                f"{about['session']} has no entry at index {index} (it has {total})",
                hint="indexes start at 0; read_session shows them",
            )
        return about, page[0]

    # -- pages of entries ----------------------------------------------------------------------
    def _page(
        self, about: dict[str, Any], total: int, start: int, entries: list[Any], images: bool
    ) -> Result:
        budget = Budget(CALL_CHARS - 200 - len(dumps(about)))  # the page's own fields
        rows: list[dict[str, Any]] = []
        blocks = []
        next_index: int | None = None
        for j, entry in enumerate(entries):
            index = start + j
            row = entry_row(index, entry)
            if not budget.fits(row):
                if rows:  # the next page starts here
                    next_index = index
                    break
                # a first entry larger than the budget is shown cut (get_attachment reads on)
                row = entry_row(index, entry, max_chars=max(0, budget.chars - 2000))
                budget.chars -= len(dumps(row))
            if images:
                for k, url in enumerate(entry_images(entry), start=1):
                    meta = row["images"][k - 1]
                    if budget.images <= 0:
                        meta["omitted"] = (
                            f"{IMAGES_PER_CALL} images per call; "
                            f"get_attachment(session, index={index}, image={k}) gives it"
                        )
                        continue
                    caption = f"entry {index}, image {k}: {meta['label']}"
                    block, why = image_block(url, caption)
                    if block is None:
                        meta["omitted"] = why
                        continue
                    budget.images -= 1
                    meta["block"] = True
                    blocks.append(block)
            rows.append(row)
        end = start + len(rows)
        if next_index is None and end < total:
            next_index = end
        payload = {
            **about,
            "total": total,
            "offset": start,
            "entries": rows,
            "nextOffset": next_index,
        }
        return Result(payload, blocks)

    def read_session(
        self, session: str, offset: int = 0, limit: int = 20, images: bool = False
    ) -> Result:
        _count(offset, "offset", low=0, high=10**9)
        _count(limit, "limit", low=1, high=PAGE_MAX)
        about, total, page = self._slice(session, offset, limit)
        return self._page(about, total, offset, page, bool(images))

    def recent(self, n: int = 10, images: bool = False) -> Result:
        _count(n, "n", low=1, high=RECENT_MAX)
        tail = self.store.history.tail(n)
        total = len(self.store.history)
        start = max(0, total - len(tail))
        return self._page({"session": LIVE}, total, start, tail, bool(images))

    # -- one attachment ------------------------------------------------------------------------
    def _original(self, entry: dict[str, Any]) -> dict[str, Any] | None:
        """The entry as the user gave it, when a summary, an overflow stub or thumbnails
        rewrote it (kept under ``attachOriginal_<attachId>``)."""
        attach_id = entry.get("attachId")
        if not isinstance(attach_id, str) or not attach_id:
            return None
        kept = self.store.local.get(chatkeep.ORIGINAL_PREFIX + attach_id)
        return kept if isinstance(kept, dict) else None

    def get_attachment(
        self, session: str, index: int, image: int | None = None, offset: int = 0
    ) -> Result:
        _count(index, "index", low=0, high=10**9)
        _count(offset, "offset", low=0, high=10**12)
        about, entry = self._entry(session, index)
        original = self._original(entry)
        source = original if original is not None else entry
        head = {**about, "index": index, "role": entry.get("role")}
        if original is not None:
            head["original"] = True  # the text or pixels as given, before a rewrite
        if image is not None:
            urls = entry_images(source) or entry_images(entry)
            _count(image, "image", low=1, high=max(1, len(urls)))
            if not urls:
                raise chatkeep.NotFound(
                    f"entry {index} of {about['session']} has no image",
                    hint="read_session lists each entry's images",
                )
            row = entry_row(index, source, max_chars=0)
            meta = row["images"][image - 1]
            block, why = image_block(urls[image - 1], f"entry {index}, image {image}")
            payload = {**head, "image": meta}
            if block is None:
                payload["image"]["omitted"] = why
                return Result(payload)
            return Result(payload, [block])
        text = chatkeep.entry_text(chatkeep.compact_entry_image_parts(source))
        size = CALL_CHARS - 1000
        chunk = text[offset : offset + size]
        end = offset + len(chunk)
        payload = {
            **head,
            "totalChars": len(text),
            "offset": offset,
            "text": chunk,
            "nextOffset": end if end < len(text) else None,
        }
        if chatkeep.is_attachment(entry):
            payload["attachId"] = entry.get("attachId")
        return Result(payload)

    # -- finding -------------------------------------------------------------------------------
    def list_sessions(
        self, query: str = "", limit: int = 20, offset: int = 0, evicted: bool = False
    ) -> Result:
        _count(limit, "limit", low=1, high=LIST_MAX)
        _count(offset, "offset", low=0, high=10**9)
        if evicted:
            found = self.store.sessions.evicted(query or "")[offset : offset + limit + 1]
        else:
            found = self.store.sessions.list(query or "", limit=limit + 1, offset=offset)
        more = len(found) > limit
        budget = Budget(CALL_CHARS - 400)
        rows = []
        for row in found[:limit]:
            if not budget.fits(row):
                more = True
                break
            rows.append(row)
        return Result(
            {
                "query": query or "",
                "evicted": bool(evicted),
                "offset": offset,
                "sessions": rows,
                "nextOffset": offset + len(rows) if more else None,
            }
        )

    def search(
        self,
        query: str,
        limit: int = 10,
        offset: int = 0,
        where: list[str] | None = None,
        mode: str = "hybrid",
    ) -> Result:
        _count(limit, "limit", low=1, high=SEARCH_MAX)
        _count(offset, "offset", low=0, high=10**9)
        if mode not in MODES:
            raise chatkeep.InvalidValue(
                f"mode must be one of {', '.join(MODES)}, got {mode!r}", hint="mode='hybrid'"
            )
        places = list(where) if where else None
        for place in places or ():
            if place not in PLACES:
                raise chatkeep.InvalidValue(
                    f"where names unknown place {place!r}", hint=f"use some of {list(PLACES)}"
                )
        hits = self.store.search(query, limit=limit, offset=offset, where=places, mode=mode)
        budget = Budget(CALL_CHARS - 400)
        shown = []
        for hit in hits:
            hit = dict(hit)
            hit["snippet"] = _clip(str(hit.get("snippet") or ""))
            if not budget.fits(hit):
                break
            shown.append(hit)
        more = len(shown) < len(hits) or len(hits) == limit
        return Result(
            {
                "query": query,
                "mode": mode,
                "offset": offset,
                "hits": shown,
                "nextOffset": offset + len(shown) if more and shown else None,
            }
        )

    # -- the one write -------------------------------------------------------------------------
    def save_session(self, name: str | None = None, new: bool = False) -> Result:
        sessions = self.store.sessions
        row = sessions.save(name) if new else sessions.write_back(name)
        if row is None:
            return Result({"saved": None, "note": "the live conversation is empty: nothing saved"})
        return Result({"saved": row})
