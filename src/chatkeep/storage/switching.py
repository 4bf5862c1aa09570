"""Moving between the live conversation, the drawer and the evicted list (SPEC §4.4).

Mixed into :class:`~.sessions.Sessions`. Each operation is one write transaction:

- :meth:`Switching.write_back` — the live conversation into the loaded session (``update``, the
  session kept whole: :mod:`.writeback`), else — none loaded, or it was deleted meanwhile —
  as a new auto-named session. ``chatkeep sessions save`` and the write-back of a switch.
- :meth:`Switching.switch` / ``load`` — first :meth:`write_back`, then the session's body
  becomes the live history, in the same transaction: switching never hides work, and the turns
  of a loaded session go back into it, not into the archive.
- :meth:`Switching.new` — first :meth:`write_back`, then an empty live history.
- :meth:`Switching.restore` — an evicted session back into the drawer, as a fresh save: it
  comes back at the top (``createdAt`` = now; the first one is kept as ``firstCreatedAt``), so
  the cap, when still full, moves the next oldest unpinned session out instead of it.

The cap never evicts the session a write is about (the new one, the one being loaded or
restored) nor the loaded one: the drawer may then hold one or two more than ``maxSessions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..constants import ACTIVE_SESSION_KEY
from ..limits import check_text
from . import evicted as _evicted
from .backend import Backend
from .drawer_rows import check_id, check_name, evicted_light, light, with_evicted
from .history import Entries, History
from .legacy_index import body_key, text_digest
from .sql import Tx, now_ms
from .stored_copy import StoredBody, body_len, stored_body, stored_live, write_live
from .writeback import full_body, full_stored, mark_in

Row = dict[str, Any]
#: A session body as stored (copied, :mod:`.stored_copy`) or decoded (a damaged row read).
Body = StoredBody | Entries


class Switching:
    """Write-back, switching and restoring (see the module docstring)."""

    _b: Backend
    _profile: str
    _history: History

    if TYPE_CHECKING:

        def _ensure_migrated(self) -> None: ...
        def _active_in(self, tx: Tx) -> str: ...
        def _evict(self, tx: Tx, keep: Iterable[str]) -> int: ...
        def _write_into(self, tx: Tx, session_id: str, live: Body) -> Row | None: ...
        def _save_in(
            self, tx: Tx, name: str | None, body: Body, live: int, keep: Iterable[str] = ()
        ) -> Row: ...

    def _live_in(self, tx: Tx) -> Body:
        """The live history as stored (one read of its rows, nothing decoded), or decoded
        when a row does not read (it is then skipped, as every read skips it)."""
        live = stored_live(tx)
        return live if live is not None else self._history.entries_in(tx)

    def _whole(self, tx: Tx, session_id: str, live: Body) -> Body:
        """Session ``session_id`` as the live history continues it (:mod:`.writeback`)."""
        if isinstance(live, StoredBody):
            body = full_stored(tx, session_id, live)
            if body is not None:
                return body
            live = self._history.entries_in(tx)
        return full_body(tx, session_id, live)

    def _write_back_in(
        self, tx: Tx, name: str | None = None, keep: Iterable[str] = (), live: Body | None = None
    ) -> Row | None:
        live = self._live_in(tx) if live is None else live
        if not body_len(live):
            return None
        active = self._active_in(tx)
        row = self._write_into(tx, active, live) if active else None
        if row is None:  # none loaded, or it was deleted meanwhile: never drop the work
            return self._save_in(tx, name, live, body_len(live), keep)
        if name and name.strip():
            found = tx.sessions.index_find(active)
            if found is not None:
                item = {k: v for k, v in found[1].items() if k != "textDigest"}
                tx.sessions.index_replace(found[0], {**item, "name": check_name(name)})
                row = {**row, "name": check_name(name)}
        return row

    def write_back(self, name: str | None = None) -> Row | None:
        """Write the live conversation into the loaded session (kept whole; its pin and place
        stay; ``name``, when given, renames it), else save it as a new session named ``name``
        (or auto-named). Empty live history → ``None``, nothing written. The row says
        ``evicted`` when the save moved sessions out of the drawer."""
        if name is not None:
            check_text(name, "the session name")
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            return self._write_back_in(tx, name)

    def switch(self, session_id: str) -> dict[str, Any] | None:
        """:meth:`load` with its report: ``{"count": live length, "savedBack": the row the live
        conversation was written back to (or ``None``), "evicted": sessions that write moved
        out of the drawer}``; ``None`` (nothing written) when ``session_id`` is not in the
        drawer."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            if tx.sessions.index_find(session_id) is None or not tx.kv.raw([body_key(session_id)]):
                return None
            live = self._live_in(tx)  # the live rows, read once
            saved = self._write_back_in(tx, keep=[session_id], live=live)
            count = self._become_live(tx, session_id, live)
            if count is None:
                return None
            tx.kv.put(ACTIVE_SESSION_KEY, session_id if count[0] else "")
            if count[0]:
                mark_in(tx, session_id, count[1] - count[0])
            evicted = saved.pop("evicted", 0) if saved else 0
            return {"count": count[0], "savedBack": saved, "evicted": evicted}

    def _become_live(self, tx: Tx, session_id: str, live: Body) -> tuple[int, int] | None:
        """Session ``session_id``'s body as the live history: its stored rows copied (nothing
        decoded or hashed) when they read, else decoded; (live length, body length), or
        ``None`` when the body is not a list."""
        key = body_key(session_id)
        body = stored_body(tx, key) if isinstance(live, StoredBody) else None
        if body is not None and isinstance(live, StoredBody):
            return write_live(self._history, tx, body, live), len(body.values)
        decoded = tx.kv.get([key]).get(key)
        if not isinstance(decoded, list):
            return None
        return self._history.replace_in(tx, decoded), len(decoded)

    def load(self, session_id: str) -> int:
        """Write the live conversation back (:meth:`write_back`), then make session ``session_id``
        the live history, in one transaction; returns its live length (``-1``: not in the
        drawer, nothing written)."""
        report = self.switch(session_id)
        return -1 if report is None else int(report["count"])

    def new(self) -> Row | None:
        """Write the live conversation back (:meth:`write_back`), then clear the live history, in one
        transaction. Empty live history → ``None`` and nothing changes."""
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            row = self._write_back_in(tx)
            if row is not None:
                self._history.replace_in(tx, [])
            return row

    # -- the evicted list ---------------------------------------------------------------------
    def evicted(self, q: str = "") -> list[Row]:
        """The evicted sessions, most recently evicted first: ``{id, name, createdAt, pinned,
        evictedAt}``; a non-blank ``q`` keeps those whose name holds it (case-insensitive)."""
        check_text(q, "the search query")
        needle = q.strip().lower()
        with self._b.transaction(self._profile, write=False) as tx:
            rows = _evicted.evicted_rows(tx)
        return [
            evicted_light(r) for r in rows if not needle or needle in str(r.get("name")).lower()
        ]

    def restore(self, session_id: str) -> Row | None:
        """Bring an evicted session back into the drawer (see the module docstring); its row,
        with ``evicted`` when the cap moved others out. Not evicted → ``None``."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            found = _evicted.find(tx, session_id)
            if found is None:
                return None
            body = tx.kv.get([body_key(session_id)]).get(body_key(session_id))
            if not isinstance(body, list):
                body = []
                tx.kv.put(body_key(session_id), body)  # a lost body: the row still comes back
            row = {k: v for k, v in found.items() if k != "evictedAt"}
            row.setdefault("firstCreatedAt", row.get("createdAt", 0))
            row["createdAt"] = now_ms()
            tx.kv.delete([_evicted.evicted_key(session_id)])
            tx.sessions.index_append(row)
            tx.sessions.items_digested([session_id])  # the digest is made from the whole body
            tx.sessions.digest_add(session_id, text_digest(body))
            evicted = self._evict(tx, keep=[session_id, self._active_in(tx)])
            return with_evicted(light(row), evicted)
