"""Saved sessions: a light index plus one body key per session (SPEC §4).

``savedSessions`` holds ``[{id, name, createdAt, pinned, textDigest}]`` and never message
bodies; each body is the verbatim history list under ``session_<id>`` (image bytes and
``imagesSeen`` flags included, shared with the live history through the blob table).

:meth:`Sessions.migrate_in` migrates a legacy index in place, in the caller's transaction
(:mod:`.legacy_index`): rows that embed ``history`` and rows whose id is missing, repeated or
unusable as a key (which get a fresh id; nothing is lost). Reading the index (``list``,
``get``, …) runs the same migration first when the stored index needs it.

Writers take the session lock, then the history lock (one backend write transaction holds
both), never the reverse. :meth:`Sessions.load` replaces the live history; when that history was
never saved (it is not exactly the active session's body), its entries move to the archive
first, so loading a session never silently drops a conversation.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterable

from ..constants import (
    ACTIVE_SESSION_KEY,
    AUTO_NAME_MAX,
    SESSION_BODY_PREFIX,
    SESSION_NAME_MAX,
    SESSIONS_INDEX_KEY,
)
from ..entries import is_attachment, validate_entries, validate_entry
from ..errors import InvalidValue, NotFound
from ..limits import check_count, check_text
from . import codec
from .body_append import extend_body
from .legacy_index import body_key, migrate_index, needs_migration, text_digest
from .sql import now_ms

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need it
if TYPE_CHECKING:
    from typing import Any

    from .backend import Backend
    from .history import Entries, History
    from .sql import Tx

Row = dict[str, "Any"]
RowList = list[Row]  # the class below has a method named `list`
_ID_MAX = 192  # "session_" + id stays within the 200-character key limit

#: Fewest characters of a session id that :meth:`Sessions.resolve` accepts as a prefix.
MIN_ID_PREFIX = 4


def auto_name(history: Entries, today: _dt.date | None = None) -> str:
    for e in history:
        if (
            isinstance(e, dict)
            and e.get("role") == "user"
            and isinstance(e.get("content"), str)
            and not is_attachment(e)
        ):
            text = e["content"].strip()
            if text:
                return text[:AUTO_NAME_MAX] + ("…" if len(text) > AUTO_NAME_MAX else "")
    return (today or _dt.date.today()).isoformat()


def _check_id(session_id: Any) -> str:
    if not isinstance(session_id, str):
        raise InvalidValue(
            f"a session id must be a string, got {type(session_id).__name__}",
            hint="list ids with `chatkeep sessions list`",
        )
    return check_text(session_id, "the session id")


def _light(row: Row) -> Row:
    return {
        "id": row.get("id"),
        "name": row.get("name", ""),
        "createdAt": row.get("createdAt", 0),
        "pinned": bool(row.get("pinned", False)),
    }


def _clean_index(value: Any) -> RowList:
    if not isinstance(value, list):
        return []
    return [r for r in value if isinstance(r, dict) and isinstance(r.get("id"), str) and r["id"]]


def _check_name(name: Any) -> str:
    if isinstance(name, str):
        check_text(name, "the session name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidValue(
            "a session name must be a non-empty string", hint="pass a name with some text"
        )
    return name[:SESSION_NAME_MAX]


class Sessions:
    """``store.sessions``: the drawer."""

    def __init__(self, backend: Backend, profile: str, history: History) -> None:
        self._b = backend
        self._profile = profile
        self._history = history

    # -- index and migration ----------------------------------------------------------------
    def _read_index(self, tx: Tx) -> RowList:
        """The index rows without their digests (all that listing and writes need)."""
        return _clean_index(tx.index_light())

    def _ensure_migrated(self) -> None:
        with self._b.transaction(self._profile, write=False) as tx:
            # one indexed probe: rows needing the migration are marked legacy when written
            if not tx.index_has_legacy():
                return
            raw = tx.index_light()
        if needs_migration(raw):
            with self._b.transaction(self._profile) as tx:
                self.migrate_in(tx)

    def index(self) -> RowList:
        """The light index with digests, migrating legacy embedded snapshots in place first."""
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            return _clean_index(tx.kv_get([SESSIONS_INDEX_KEY]).get(SESSIONS_INDEX_KEY))

    def migrate_in(self, tx: Tx) -> list[dict[str, Any]]:
        """Migrate the stored index inside ``tx`` (:mod:`.legacy_index`); returns the ids given
        to rows whose own id could not be kept: ``[{"from", "to", "name"}]``."""
        return migrate_index(tx)

    # -- listing ----------------------------------------------------------------------------
    def list(self, q: str = "", *, limit: int | None = None, offset: int = 0) -> RowList:
        """Light rows in the drawer's order (SPEC §4.3), from ``offset``, at most ``limit``
        (``None``: all of them); the panel's drawer reads pages of :data:`DRAWER_PAGE`."""
        if q is not None:
            check_text(q, "the search query")
        check_count(limit, "limit", allow_none=True)
        check_count(offset, "offset")
        query = (q or "").strip().lower()
        for probe in (True, False):  # one read in the usual case: no legacy rows
            with self._b.transaction(self._profile, write=False) as tx:
                if not (probe and tx.index_has_legacy()):
                    found = tx.index_page(query, limit, offset, legacy=False if probe else None)
                    decoded = codec.decode_many([t for _o, t in found], tx.fetch_urls)
                    break
            self._ensure_migrated()  # legacy rows: migrate them, then read
        rows = [_light(r) for r in decoded if isinstance(r, dict) and _valid(r)]
        for row in rows if query else ():
            row["contentMatch"] = query not in str(row["name"]).lower()
        return rows

    def resolve(self, prefix: str) -> str:
        """The full id of the one saved session whose id starts with ``prefix`` (at least
        :data:`MIN_ID_PREFIX` characters; a full id always resolves to itself). Raises
        :class:`NotFound` when none matches and :class:`InvalidValue` when several do."""
        given = prefix.strip().lower() if isinstance(prefix, str) else ""
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            ids = tx.index_ids()
        if given in ids:
            return given
        if len(given) < MIN_ID_PREFIX:
            raise InvalidValue(
                f"session id {prefix!r} is too short: give at least {MIN_ID_PREFIX} characters",
                hint="list ids with `chatkeep sessions list`",
            )
        found = [i for i in ids if i.startswith(given)]
        if not found:
            raise NotFound(
                f"no saved session with id {prefix!r}",
                hint="list ids with `chatkeep sessions list`",
            )
        if len(found) > 1:
            raise InvalidValue(
                f"session id prefix {prefix!r} matches {len(found)} sessions",
                hint="give more characters of the id (`chatkeep sessions list` shows them)",
            )
        return found[0]

    def row(self, session_id: str) -> Row | None:
        """The light row ``{id, name, createdAt, pinned}`` of one session (no body read)."""
        _check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            found = tx.index_find(session_id) if session_id else None
        return None if found is None else _light(found[1])

    def get(self, session_id: str) -> Row | None:
        _check_id(session_id)
        self._ensure_migrated()
        if not isinstance(session_id, str) or not session_id:
            return None
        with self._b.transaction(self._profile, write=False) as tx:
            found = tx.index_find(session_id)
            if found is None:
                return None
            body = tx.kv_get([body_key(session_id)]).get(body_key(session_id))
            return {**_light(found[1]), "history": body if isinstance(body, list) else []}

    # -- writes -----------------------------------------------------------------------------
    def _evict(self, tx: Tx, keep: str) -> None:
        """Drop the oldest unpinned rows over ``maxSessions`` (never pinned ones, never ``keep``)."""
        cap = tx.kv_get(["maxSessions"]).get("maxSessions")
        if not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0:
            return
        excess = tx.index_count() - cap
        if excess <= 0:
            return
        evict = list(dict.fromkeys(tx.index_oldest_unpinned(keep, excess)))
        if evict:
            tx.index_delete_ids(evict)
            tx.digest_delete(evict)
            tx.kv_delete([body_key(i) for i in evict])

    def _save_in(self, tx: Tx, name: str | None, live: Entries) -> Row:
        import uuid  # here, not at import: it loads `platform`, and reading never makes an id

        sid = uuid.uuid4().hex
        digest = text_digest(live)
        row: Row = {
            "id": sid,
            "name": _check_name(name) if name and name.strip() else auto_name(live),
            "createdAt": now_ms(),
            "pinned": False,
        }
        tx.kv_put(body_key(sid), live)
        tx.index_append(row)
        tx.digest_add(sid, digest)  # a fresh uuid4 id: no old digest
        self._evict(tx, keep=sid)
        tx.kv_put(ACTIVE_SESSION_KEY, sid)
        return _light(row)

    def save(self, name: str | None = None) -> Row | None:
        if name is not None:
            check_text(name, "the session name")
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            live = self._history.entries_in(tx)
            if not live:
                return None
            return self._save_in(tx, name, live)

    def add_many(self, sessions: Iterable[tuple[Row, Entries]]) -> RowList:
        """Add saved sessions with given ``id``, ``name`` and ``createdAt`` (an import).

        One write transaction for the whole batch: each body is validated and written as it
        comes (a long iterable is never held in memory) and its row appended to the index, so
        the cost follows the batch, not the drawer; a large batch then refreshes the search
        indexes' statistics. A row whose id is already saved (or repeated in the batch) is
        skipped: adding a batch twice adds nothing. Any error (an invalid body, or one the
        iterable raises) rolls back everything. The live history, ``activeSessionId`` and
        ``maxSessions`` are not touched. Returns the rows."""
        self._ensure_migrated()
        added: RowList = []
        with self._b.transaction(self._profile) as tx:
            known: set[str] = set()  # ids of this batch; earlier ones are looked up
            for row, body in sessions:
                sid = row.get("id")
                if not isinstance(sid, str) or not sid or len(sid) > _ID_MAX:
                    raise InvalidValue(
                        f"a session id must be a non-empty string of at most {_ID_MAX} characters",
                        hint="derive ids from the source's own conversation ids",
                    )
                if sid in known or tx.index_has_id(sid):
                    continue
                validate_entries(body)
                created = row.get("createdAt")
                name = row.get("name")
                new = {
                    "id": sid,
                    "name": _check_name(name)
                    if isinstance(name, str) and name.strip()
                    else auto_name(body),
                    "createdAt": _ms_or_now(created),
                    "pinned": bool(row.get("pinned", False)),
                }
                tx.kv_put(body_key(sid), body)
                tx.index_append(new)
                tx.digest_add(sid, text_digest(body))
                known.add(sid)
                added.append(_light(new))
        if len(added) >= self._b.bulk_rows:
            self._b.refresh_statistics()
        return added

    def _update_in(self, tx: Tx, session_id: str, body: Entries) -> Row | None:
        """Write one session's body and digest; its index row (name, pin, place) is kept."""
        found = tx.index_find(session_id)
        if found is None:
            return None
        tx.kv_put(body_key(session_id), body)
        tx.digest_put(session_id, text_digest(body))
        return _light(found[1])

    def update(self, session_id: str) -> Row | None:
        if not _check_id(session_id):
            return None
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            live = self._history.entries_in(tx)
            if not live:
                return None
            return self._update_in(tx, session_id, live)

    def append(self, session_id: str, entry: dict[str, Any]) -> Row | None:
        validate_entry(entry)
        return self.extend(session_id, [entry])

    def extend(self, session_id: str, entries: Entries) -> Row | None:
        """Append ``entries`` to a saved body (unknown id → ``None``); what it holds already
        is not read back or written again (:mod:`.body_append`)."""
        validate_entries(entries)
        if not _check_id(session_id):
            return None
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            found = tx.index_find(session_id)
            if found is None:
                return None
            done = extend_body(tx, session_id, list(entries)) if entries else True
            if done is None:  # listed, but no body
                return None
            if not done:  # not extendable in place: rewrite it whole
                body = tx.kv_get([body_key(session_id)]).get(body_key(session_id))
                if not isinstance(body, list):
                    return None
                return self._update_in(tx, session_id, [*body, *entries])
            return _light(found[1])

    def modify(self, session_id: str, fn: Callable[[Entries], Entries | None]) -> Row | None:
        """Read–modify–write of one saved body under the session lock: ``fn(body)`` returns the
        new body (validated, digest updated) or ``None`` for no change. Unknown id → ``None``."""
        if not _check_id(session_id):
            return None
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            body = tx.kv_get([body_key(session_id)]).get(body_key(session_id))
            if not isinstance(body, list):
                return None
            new = fn(body)
            if new is None:
                return None
            validate_entries(new)
            return self._update_in(tx, session_id, new)

    def load(self, session_id: str) -> int:
        _check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            if not isinstance(session_id, str) or tx.index_find(session_id) is None:
                return -1
            body = tx.kv_get([body_key(session_id)]).get(body_key(session_id))
            if not isinstance(body, list):
                return -1
            live = self._history.entries_in(tx)
            if live and not self._is_saved(tx, live):
                # the conversation being replaced was never saved: it goes to the archive
                tx.archive_oldest(tx.hist_state()[0])
            count = self._history.replace_in(tx, body)
            tx.kv_put(ACTIVE_SESSION_KEY, session_id if count else "")
            return count

    def _is_saved(self, tx: Tx, live: Entries) -> bool:
        """Whether ``live`` is exactly the body of the active session (nothing unsaved)."""
        active = tx.kv_get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY)
        if not isinstance(active, str) or not active:
            return False
        return tx.kv_get([body_key(active)]).get(body_key(active)) == live

    def _edit_row(self, session_id: str, **changes: Any) -> bool:
        _check_id(session_id)
        self._ensure_migrated()
        if not isinstance(session_id, str) or not session_id:
            return False
        with self._b.transaction(self._profile) as tx:
            found = tx.index_find(session_id)
            if found is None:
                return False
            item = {k: v for k, v in found[1].items() if k != "textDigest"}
            tx.index_replace(found[0], {**item, **changes})
            return True

    def rename(self, session_id: str, name: str) -> bool:
        return self._edit_row(session_id, name=_check_name(name))

    def pin(self, session_id: str, pinned: bool = True) -> bool:
        return self._edit_row(session_id, pinned=bool(pinned))

    def delete(self, session_id: str) -> bool:
        _check_id(session_id)
        self._ensure_migrated()
        if not isinstance(session_id, str) or not session_id:
            return False
        with self._b.transaction(self._profile) as tx:
            if tx.index_find(session_id) is None:
                return False
            tx.index_delete_ids([session_id])
            tx.digest_delete([session_id])
            tx.kv_delete([body_key(session_id)])
            if tx.kv_get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY) == session_id:
                tx.kv_put(ACTIVE_SESSION_KEY, "")
            return True

    def clear_all(self) -> int:
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            index = self._read_index(tx)
            bodies = [k for k in tx.kv_keys(SESSION_BODY_PREFIX)]
            tx.kv_delete([*bodies, SESSIONS_INDEX_KEY])
            tx.kv_put(ACTIVE_SESSION_KEY, "")
            return len(index)

    def new(self) -> Row | None:
        """Save the live conversation (write-back to the active session, else a new one),
        then clear the live history. Empty live history → ``None`` and nothing changes."""
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            live = self._history.entries_in(tx)
            if not live:
                return None
            active = tx.kv_get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY)
            row = None
            if isinstance(active, str) and active:
                row = self._update_in(tx, active, live)
            if row is None:
                row = self._save_in(tx, None, live)
            self._history.replace_in(tx, [])
            return row

    def active_id(self) -> str:
        with self._b.transaction(self._profile, write=False) as tx:
            v = tx.kv_get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY)
        return v if isinstance(v, str) else ""


def _valid(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("id"), str) and bool(row["id"])


def _ms_or_now(v: Any) -> int:
    if isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e15:
        return int(v)
    return now_ms()
