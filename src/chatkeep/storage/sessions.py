"""Saved sessions: a light index plus one body key per session (SPEC §4).

``savedSessions`` holds ``[{id, name, createdAt, pinned, textDigest}]`` and never message
bodies; each body is the verbatim history list under ``session_<id>`` (image bytes and
``imagesSeen`` flags included, shared with the live history through the blob table).

:meth:`Sessions.migrate_in` migrates a legacy index in place, in the caller's transaction
(:mod:`.legacy_index`): rows that embed ``history`` and rows whose id is missing, repeated or
unusable as a key (which get a fresh id; nothing is lost). Reading the index (``list``,
``get``, …) runs the same migration first when the stored index needs it.

Writers take the session lock, then the history lock (one backend write transaction holds
both), never the reverse. Switching (``load``, ``new``) writes the live conversation back first,
in the switch's transaction (:mod:`.switching`); the ``maxSessions`` cap moves sessions to the
evicted list, never destroys them (:mod:`.evicted`). Only ``delete`` and ``clear_all`` destroy.

Every method that takes a session id checks it first with the one id rule of
:func:`chatkeep.limits.check_id` (non-empty, NUL-free, valid Unicode, at most
:data:`~chatkeep.limits.MAX_ID_CHARS` characters): an id that could not be read back is
refused with :class:`InvalidValue` before anything is read or written.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

from ..constants import (
    ACTIVE_SESSION_KEY,
    IMPORTED_NAME_MAX,
    SESSION_BODY_PREFIX,
    SESSIONS_INDEX_KEY,
)
from ..entries import validate_entries, validate_entry
from ..errors import CorruptValue, InvalidEntry, InvalidValue, NotFound
from ..limits import check_count, check_text
from ..limits import check_id as check_id_as
from . import codec
from . import evicted as _evicted
from .backend import Backend
from .batch_rows import SessionBatch
from .drawer_rows import (
    Row,
    RowList,
    auto_name,
    check_id,
    check_name,
    clean_index,
    evicted_light,
    light,
    ms_or_now,
    valid,
    with_evicted,
)
from .history import Entries, History
from .legacy_index import body_key, migrate_index, needs_migration
from .session_batch import BodyBatch
from .session_texts import SessionTexts
from .sql import Tx, now_ms
from .stored_copy import body_len, body_name, put_body
from .switching import Body, Switching
from .writeback import mark_in, unchanged

__all__ = ["MIN_ID_PREFIX", "Sessions", "auto_name"]

#: Fewest characters of a session id that :meth:`Sessions.resolve` accepts as a prefix.
MIN_ID_PREFIX = 4


class Sessions(Switching, SessionTexts):
    """``store.sessions``: the drawer (and its evicted list)."""

    def __init__(self, backend: Backend, profile: str, history: History) -> None:
        self._b = backend
        self._profile = profile
        self._history = history

    # -- index and migration ----------------------------------------------------------------
    def _read_index(self, tx: Tx) -> RowList:
        """The index rows without their digests (all that listing and writes need)."""
        return clean_index(tx.sessions.index_light())

    def _ensure_migrated(self) -> None:
        with self._b.transaction(self._profile, write=False) as tx:
            # one indexed probe: rows needing the migration are marked legacy when written
            if not tx.sessions.index_has_legacy():
                return
            raw = tx.sessions.index_light()
        if needs_migration(raw):
            with self._b.transaction(self._profile) as tx:
                self.migrate_in(tx)

    def index(self) -> RowList:
        """The light index with digests, migrating legacy embedded snapshots in place first."""
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            return clean_index(tx.kv.get([SESSIONS_INDEX_KEY]).get(SESSIONS_INDEX_KEY))

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
        if query:
            self._fold_digests()
        for probe in (True, False):  # one read in the usual case: no legacy rows
            with self._b.transaction(self._profile, write=False) as tx:
                if not (probe and tx.sessions.index_has_legacy()):
                    found = tx.sessions.index_page(
                        query, limit, offset, legacy=False if probe else None
                    )
                    decoded = codec.decode_many([t for _o, t in found], tx.blobs.fetch_urls)
                    break
            self._ensure_migrated()  # legacy rows: migrate them, then read
        rows = [light(r) for r in decoded if isinstance(r, dict) and valid(r)]
        for row in rows if query else ():
            row["contentMatch"] = query not in str(row["name"]).lower()
        return rows

    def _fold_digests(self) -> None:
        """Before a search: the text appended since the last one goes into the digests (one
        indexed probe when there is none, :meth:`~.body_rows.BodyRows.digests_fold`)."""
        with self._b.transaction(self._profile, write=False) as tx:
            if not tx.sessions.digests_pending():
                return
        with self._b.transaction(self._profile) as tx:
            tx.sessions.digests_fold()

    def resolve(self, prefix: str, *, evicted: bool | None = False) -> str:
        """The full id of the one session whose id starts with ``prefix`` (at least
        :data:`MIN_ID_PREFIX` characters; a full id always resolves to itself), among the
        drawer's sessions (``evicted=False``), the evicted ones (``True``) or both (``None``).
        Raises :class:`NotFound` when none matches (saying so when only an evicted session
        does) and :class:`InvalidValue` when several do."""
        raw = prefix if isinstance(prefix, str) else ""
        exact = raw.strip()
        given = exact.lower()  # prefixes match case-insensitively; a full id exactly first
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            drawer = [] if evicted else tx.sessions.index_ids()
            # evicted ids are read for `evicted=False` too, to say where a missing id went
            missing = not {raw, exact, given} & set(drawer)
            gone = _evicted.evicted_ids(tx) if evicted is not False or missing else []
        ids = drawer if evicted is False else [*drawer, *gone]
        for full in (raw, exact, given):
            if full and full in ids:
                return full
        if len(given) < MIN_ID_PREFIX:
            raise InvalidValue(
                f"session id {prefix!r} is too short: give at least {MIN_ID_PREFIX} characters",
                hint="list ids with `chatkeep sessions list`",
            )
        found = [i for i in ids if i.lower().startswith(given)]
        if not found:
            if evicted is False and any(i.lower().startswith(given) for i in gone):
                raise NotFound(
                    f"session {prefix!r} left the drawer (maxSessions); it is in the evicted list",
                    hint=f"bring it back with `chatkeep sessions restore {prefix}`",
                )
            where = "evicted session" if evicted else "saved session"
            raise NotFound(
                f"no {where} with id {prefix!r}",
                hint="list ids with `chatkeep sessions list"
                + (" --evicted`" if evicted is True else "`"),
            )
        if len(found) > 1:
            raise InvalidValue(
                f"session id prefix {prefix!r} matches {len(found)} sessions",
                hint="give more characters of the id (`chatkeep sessions list` shows them)",
            )
        return found[0]

    def row(self, session_id: str) -> Row | None:
        """The light row ``{id, name, createdAt, pinned}`` of one session (no body read)."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile, write=False) as tx:
            found = tx.sessions.index_find(session_id)
        return None if found is None else light(found[1])

    def get(self, session_id: str) -> Row | None:
        check_id(session_id)
        for probe in (True, False):  # one read transaction in the usual case: no legacy rows
            with self._b.transaction(self._profile, write=False) as tx:
                if not (probe and tx.sessions.index_has_legacy()):
                    found = tx.sessions.index_find(session_id)
                    gone = _evicted.find(tx, session_id) if found is None else None
                    if found is None and gone is None:
                        return None
                    body = tx.kv.get([body_key(session_id)]).get(body_key(session_id))
                    row = light(found[1]) if found is not None else evicted_light(gone or {})
                    return {**row, "history": body if isinstance(body, list) else []}
            self._ensure_migrated()  # legacy rows: migrate them, then read
        return None  # not reached: the second pass always reads

    # -- writes -----------------------------------------------------------------------------
    def _evict(self, tx: Tx, keep: Iterable[str]) -> int:
        """Move the oldest unpinned rows over ``maxSessions`` to the evicted list (never pinned
        ones, never those in ``keep``); returns how many left the drawer."""
        cap = tx.kv.get(["maxSessions"]).get("maxSessions")
        if not isinstance(cap, int) or isinstance(cap, bool) or cap <= 0:
            return 0
        excess = tx.sessions.index_count() - cap
        if excess <= 0:
            return 0
        kept = {k for k in keep if k}
        oldest = tx.sessions.index_oldest_unpinned("", excess + len(kept))
        return _evicted.evict_in(tx, [i for i in dict.fromkeys(oldest) if i not in kept][:excess])

    def _save_in(
        self, tx: Tx, name: str | None, body: Body, live: int, keep: Iterable[str] = ()
    ) -> Row:
        """Save ``body`` as a new session whose last ``live`` entries are the live history;
        it becomes the loaded one. The row says ``evicted`` when sessions left the drawer."""
        sid = uuid.uuid4().hex
        row: Row = {
            "id": sid,
            "name": check_name(name) if name and name.strip() else body_name(body),
            "createdAt": now_ms(),
            "pinned": False,
        }
        digest = put_body(tx, body_key(sid), body)
        tx.sessions.index_append(row)
        tx.sessions.digest_add(sid, digest)  # a fresh uuid4 id: no old digest
        evicted = self._evict(tx, keep=[sid, *keep])
        tx.kv.put(ACTIVE_SESSION_KEY, sid)
        mark_in(tx, sid, body_len(body) - live)
        return with_evicted(light(row), evicted)

    def save(self, name: str | None = None) -> Row | None:
        """Save the live conversation as a new session (a copy of the whole loaded session when
        one is loaded: its entries before the live window too). Empty → ``None``."""
        if name is not None:
            check_text(name, "the session name")
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            live = self._live_in(tx)
            if not body_len(live):
                return None
            body = self._whole(tx, self._active_in(tx), live)
            return self._save_in(tx, name, body, body_len(live))

    def add_many(
        self,
        sessions: Iterable[tuple[Row, Entries]],
        *,
        skip_invalid: Callable[[Row, InvalidEntry], None] | None = None,
    ) -> RowList:
        """Add saved sessions with given ``id``, ``name`` and ``createdAt`` (an import; the
        name is kept whole, up to :data:`~chatkeep.constants.IMPORTED_NAME_MAX` characters).

        One write transaction for the whole batch: each body is validated as it comes (a long
        iterable is never held in memory); bodies, index rows and digests are written a few
        hundred sessions at a time in multi-row statements (:mod:`.session_batch`,
        :mod:`.batch_rows`), so the cost follows the batch, not the drawer; a large batch then
        refreshes the search indexes' statistics. A row whose id is already saved (or repeated in the batch) is
        skipped: adding a batch twice adds nothing. Any error (an invalid body, or one the
        iterable raises) rolls back everything — unless ``skip_invalid`` is given: a body that
        is not valid is then left out and passed to it with its error (an import reports it),
        and the rest is added. The live history, ``activeSessionId`` and
        ``maxSessions`` are not touched. Returns the rows."""
        self._ensure_migrated()
        added: RowList = []
        with self._b.transaction(self._profile) as tx:
            self._b.plan_each_statement()  # plans made for these ids, not while the tables were empty
            known: set[str] = set()  # ids of this batch; earlier ones are looked up
            batch, bodies = SessionBatch(tx.sessions), BodyBatch(tx)  # index rows, digests; bodies
            for row, body in sessions:
                sid = check_id_as(row.get("id"), hint="derive ids from the source's own ids")
                if sid in known or tx.sessions.index_has_id(sid):
                    continue
                try:
                    validate_entries(body)
                except InvalidEntry as exc:
                    if skip_invalid is None:
                        raise
                    skip_invalid(row, exc)
                    continue
                created = row.get("createdAt")
                name = row.get("name")
                new = {
                    "id": sid,
                    "name": check_name(name, IMPORTED_NAME_MAX)  # a title is kept whole
                    if isinstance(name, str) and name.strip()
                    else auto_name(body),
                    "createdAt": ms_or_now(created),
                    "pinned": bool(row.get("pinned", False)),
                }
                batch.add(new, bodies.add(sid, list(body)))  # validated just above; its digest
                known.add(sid)
                added.append(light(new))
            bodies.flush()
            batch.flush()
        if len(added) >= self._b.bulk_rows:
            self._b.refresh_statistics()
        return added

    def _update_in(self, tx: Tx, session_id: str, body: Body) -> Row | None:
        """Write one session's body and digest; its index row (name, pin, place) is kept."""
        found = tx.sessions.index_find(session_id)
        if found is None:
            return None
        tx.sessions.digest_put(session_id, put_body(tx, body_key(session_id), body))
        return light(found[1])

    def _write_into(self, tx: Tx, session_id: str, live: Body) -> Row | None:
        """Write the live history back into session ``session_id``: the loaded session is kept
        whole (:mod:`.writeback`); ``None`` when that session is not in the drawer."""
        if session_id != self._active_in(tx):  # not the loaded one: the live history as it is
            return self._update_in(tx, session_id, live)
        if unchanged(tx, session_id) and tx.sessions.kv_form(body_key(session_id)) is not None:
            found = tx.sessions.index_find(session_id)
            return None if found is None else light(found[1])  # it holds the live history
        body = self._whole(tx, session_id, live)
        row = self._update_in(tx, session_id, body)
        if row is not None:
            mark_in(tx, session_id, body_len(body) - body_len(live))
        return row

    def update(self, session_id: str) -> Row | None:
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            live = self._live_in(tx)
            if not body_len(live):
                return None
            return self._write_into(tx, session_id, live)

    def append(self, session_id: str, entry: dict[str, Any]) -> Row | None:
        check_id(session_id)
        validate_entry(entry)
        return self.extend(session_id, [entry])

    def extend(self, session_id: str, entries: Entries) -> Row | None:
        """Append ``entries`` to a saved body (unknown id → ``None``): their rows are inserted
        and nothing the body holds already is read back or written again (:mod:`.body_rows`).
        A body whose stored value does not read is left as it is (``None``)."""
        check_id(session_id)
        validate_entries(entries)
        with self._b.transaction(self._profile) as tx:
            if tx.sessions.index_has_legacy():  # the index's migration, in this transaction
                self.migrate_in(tx)
            found = tx.sessions.index_find(session_id)
            if found is None:
                return None
            if entries and not tx.sessions.body_append(session_id, list(entries)):
                return None
            return light(found[1])

    def pop(self, session_id: str) -> dict[str, Any] | None:
        """Remove the newest entry of a saved session (in the drawer or evicted) and return it;
        ``None`` when there is none. One row is deleted: the rest of the body is not read."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            done, entry = tx.sessions.body_pop(session_id)
            if done and not isinstance(entry, dict):  # rolled back: nothing is lost
                raise CorruptValue(
                    f"the newest entry of session {session_id!r} does not read",
                    hint="run `chatkeep doctor` to check the store",
                )
            return entry if done else None

    def modify(self, session_id: str, fn: Callable[[Entries], Entries | None]) -> Row | None:
        """Read–modify–write of one saved body under the session lock: ``fn(body)`` returns the
        new body (validated, digest updated) or ``None`` for no change. Unknown id → ``None``."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            body = tx.kv.get([body_key(session_id)]).get(body_key(session_id))
            if not isinstance(body, list):
                return None
            new = fn(body)
            if new is None:
                return None
            validate_entries(new)
            return self._update_in(tx, session_id, new)

    def _edit_row(self, session_id: str, **changes: Any) -> bool:
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            found = tx.sessions.index_find(session_id)
            if found is None:
                return False
            item = {k: v for k, v in found[1].items() if k != "textDigest"}
            tx.sessions.index_replace(found[0], {**item, **changes})
            return True

    def rename(self, session_id: str, name: str) -> bool:
        return self._edit_row(session_id, name=check_name(name))

    def pin(self, session_id: str, pinned: bool = True) -> bool:
        return self._edit_row(session_id, pinned=bool(pinned))

    def delete(self, session_id: str) -> bool:
        """Destroy one session, in the drawer or in the evicted list, and its body."""
        check_id(session_id)
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            if tx.sessions.index_find(session_id) is not None:
                tx.sessions.index_delete_ids([session_id])
                tx.sessions.digest_delete([session_id])
            elif _evicted.find(tx, session_id) is not None:
                tx.kv.delete([_evicted.evicted_key(session_id)])
            else:
                return False
            tx.kv.delete([body_key(session_id)])
            if self._active_in(tx) == session_id:
                tx.kv.put(ACTIVE_SESSION_KEY, "")
            return True

    def clear_all(self) -> int:
        """Destroy every session of the drawer and its body; the evicted list is kept (its
        sessions are destroyed one by one, by name, with :meth:`delete`)."""
        self._ensure_migrated()
        with self._b.transaction(self._profile) as tx:
            index = self._read_index(tx)
            gone = {body_key(i) for i in _evicted.evicted_ids(tx)}
            bodies = [k for k in tx.kv.keys(SESSION_BODY_PREFIX) if k not in gone]
            tx.kv.delete([*bodies, SESSIONS_INDEX_KEY])
            tx.kv.put(ACTIVE_SESSION_KEY, "")
            return len(index)

    def active_id(self) -> str:
        with self._b.transaction(self._profile, write=False) as tx:
            return self._active_in(tx)

    def _active_in(self, tx: Tx) -> str:
        v = tx.kv.get([ACTIVE_SESSION_KEY]).get(ACTIVE_SESSION_KEY)
        return v if isinstance(v, str) else ""
