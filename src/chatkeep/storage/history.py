"""The live history and its archive (SPEC §3.3, §3.4).

Every write goes through one lock (the backend's write transaction: FIFO in-process,
exclusive across processes) and is validated, then bounded by the live window:
keep the last ``maxHistoryEntries`` entries, then drop the oldest while the text length exceeds
``maxHistoryChars`` (never below one entry), never archiving the turn in progress (the newest
user entry and what follows it stay live, however large). Dropped entries move to the archive,
in order.

Writes are differential: a mutation rewrites only the rows after the longest unchanged prefix,
and :meth:`History.append` inserts one row without reading the history at all.

Each live row carries an ``unseen`` flag (the entry has image parts and no ``imagesSeen:
true``), so :meth:`History.stamp_seen` — the seen stamp — reads and rewrites only those rows: its cost follows the entries it changes, not the history length.
:meth:`History.read` fetches every row's text joined into one value and parses it once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from json import loads
from typing import Any

from ..constants import ACTIVE_SESSION_KEY, DEFAULTS
from ..entries import (
    has_image_parts,
    is_attachment,
    validate_entries,
    validate_entry,
)
from ..errors import CorruptValue, InvalidValue
from . import codec
from .backend import Backend
from .history_archive import ArchiveRows, _encode_entry
from .history_tail import HistoryTail
from .history_versions import EarlierVersions, version_marks
from .sql import Tx

Entries = list[dict[str, Any]]


class _Snapshot:
    """The live rows' texts joined into one JSON array, at one value of the write counter."""

    __slots__ = ("version", "count", "text", "clean", "readable")

    def __init__(self, version: int, count: int, text: str, clean: bool) -> None:
        self.version = version
        self.count = count
        self.text = text
        self.clean = clean  # no blob marker or escape to resolve, and every row is readable
        self.readable = count if clean else -1  # readable rows, once a read has counted them


class _Row:
    __slots__ = ("pos", "chars", "text")

    def __init__(self, pos: int, chars: int, text: str) -> None:
        self.pos = pos
        self.chars = chars
        self.text = text


def _setting(values: dict[str, Any], key: str) -> int:
    v = values.get(key)
    if isinstance(v, int) and not isinstance(v, bool) and v >= 1:
        return v
    return int(DEFAULTS[key])


_ROLES = ("user", "assistant")  # a tuple: a stored role may be unhashable


def _readable(value: Any) -> bool:
    return isinstance(value, dict) and value.get("role") in _ROLES and "content" in value


def _unseen(entry: Any) -> bool:
    """The row flag: image parts and no ``imagesSeen: true`` (what the image rules act on)."""
    return has_image_parts(entry) and entry.get("imagesSeen") is not True


class History(ArchiveRows, HistoryTail, EarlierVersions):
    """``store.history``: the one flat live conversation of a profile."""

    def __init__(self, backend: Backend, profile: str) -> None:
        self._b = backend
        self._profile = profile
        self._cached: _Snapshot | None = None  # as last read outside a write transaction

    # -- reading ----------------------------------------------------------------------------
    def _load(self, tx: Tx) -> tuple[list[_Row], list[_Row], Entries]:
        """All rows, the readable rows, and their entries (aligned with the readable rows)."""
        rows = [_Row(p, c, t) for p, c, t in tx.history.live_rows()]
        good: list[_Row] = []
        entries: Entries = []
        for row, value in zip(
            rows, codec.decode_many([r.text for r in rows], tx.blobs.fetch_urls), strict=True
        ):
            if isinstance(value, dict) and _readable(value):
                good.append(row)
                entries.append(value)
        return rows, good, entries

    def read(self) -> Entries:
        """The live list (``[]`` if missing); unreadable rows are skipped and reported by stats."""
        with self._b.transaction(self._profile, write=False) as tx:
            return self.entries_in(tx)

    def read_versioned(self) -> tuple[Entries, int]:
        """:meth:`read` and the history write counter it was read at (:meth:`append_at`)."""
        with self._b.transaction(self._profile, write=False) as tx:
            return self.entries_in(tx), tx.versions()[1]

    def version(self) -> int:
        """The history write counter: it moves with every write to the live history, from any
        process, so an equal counter means the rows read at it are still the live ones."""
        with self._b.transaction(self._profile, write=False) as tx:
            return tx.versions()[1]

    def entries_in(self, tx: Tx) -> Entries:
        """The live entries: one fetch of every row's text joined, one parse, one blob query;
        row by row only when some row does not parse (to skip just that row)."""
        snap = self._snapshot(tx)
        if snap is None:
            return []
        if snap.clean:  # known: plain JSON, one readable entry per row
            return list(loads(snap.text))
        try:
            values = codec.decode(snap.text, tx.blobs.fetch_urls)
        except CorruptValue:
            values = None
        if not isinstance(values, list) or len(values) != snap.count:
            entries = self._load(tx)[2]
        else:
            entries = [v for v in values if isinstance(v, dict) and _readable(v)]
        snap.readable = len(entries)
        return entries

    def _all_readable(self, version: int) -> int | None:
        """The row count when this process read the history at ``version`` and every row was
        readable (so positions are row ranks), else ``None``."""
        snap = self._cached
        if snap is None or snap.version != version or snap.readable != snap.count:
            return None
        return snap.count

    def _snapshot(self, tx: Tx) -> _Snapshot | None:
        """The joined row texts (blob markers unresolved), kept in this process until the
        profile's history write counter moves — in this process or in any other."""
        version = tx.versions()[1]
        cached = self._cached
        if cached is not None and cached.version == version:
            return cached if cached.count else None
        joined = tx.history.joined()
        count, text = joined if joined is not None else (0, "[]")
        clean = False
        if not codec.needs_resolve(text):
            try:
                values = loads(text)
            except (TypeError, ValueError, RecursionError):
                values = None
            clean = (
                isinstance(values, list)
                and len(values) == count
                and all(isinstance(v, dict) and _readable(v) for v in values)
            )
        snap = _Snapshot(version, count, text, clean)
        if not tx.write:  # a write transaction may still roll back what it read
            self._cached = snap
        return snap if count else None

    def tail(self, n: int) -> Entries:
        """The newest ``n`` live entries (fewer when the history is shorter), oldest first."""
        with self._b.transaction(self._profile, write=False) as tx:
            texts = [t for _p, _c, t in tx.history.tail(n)]
            values = codec.decode_many(texts[::-1], tx.blobs.fetch_urls)
        return [v for v in values if isinstance(v, dict) and _readable(v)]

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the history lock around several history operations: they run in one write
        transaction (all or nothing) and no other writer sees a state in between."""
        with self._b.transaction(self._profile):
            yield

    def __len__(self) -> int:
        with self._b.transaction(self._profile, write=False) as tx:
            return tx.history.state()[0]

    def replace_from(
        self, i: int, original: dict[str, Any] | None, keep: Entries | None = None
    ) -> tuple[Entries, int]:
        """Edit & resend and regenerate (SPEC §3.5): :meth:`truncate_from` ``i`` keeping
        ``keep`` after ``entries[:i]``, checked in the same transaction: ``InvalidValue``
        (nothing changed) when ``entries[i]`` is no longer ``original``. Returns the live
        entries written and the history write counter after the write (:meth:`append_at`)."""

        def check(entries: Entries) -> None:
            if i >= len(entries) or entries[i] != original:
                raise InvalidValue(
                    f"entry {i} changed before it could be replaced; nothing was sent",
                    hint="look at the history again and retry",
                )

        with self._b.transaction(self._profile) as tx:
            entries = self._cut(i, list(keep or []), check)
            return entries, tx.versions()[1]

    def _cut(self, i: int, keep: Entries, check: Callable[[Entries], None] | None) -> Entries:
        """Remove ``entries[i:]`` but ``keep`` (which stay after ``entries[:i]``); the removed
        ones go to the end of the archive as an earlier version of turn ``i`` (each marked
        with :func:`~.history_versions.version_marks`: ``replacedAt: i`` and which cut, after
        which conversation), in one transaction — nothing is destroyed (SPEC §3.5)."""
        with self._b.transaction(self._profile) as tx:
            loaded = self._load(tx)
            entries = loaded[2]
            if check is not None:
                check(entries)
            if i >= len(entries):
                return entries
            gone = [e for e in entries[i:] if not any(e == k for k in keep)]
            if gone:
                marks = version_marks(entries, i, tx.history.archive_next_seq())
                self._archive_in(tx, [{**e, **marks} for e in gone])
            self.replace_in(tx, entries[:i] + keep, loaded)
            return entries[:i] + keep

    # -- writing ----------------------------------------------------------------------------
    def _bound(self, tx: Tx, count: int, chars: int) -> tuple[int, int]:
        settings = tx.kv.get(["maxHistoryEntries", "maxHistoryChars"])
        max_entries = _setting(settings, "maxHistoryEntries")
        max_chars = _setting(settings, "maxHistoryChars")
        drop = max(0, count - max_entries)
        if drop == 0 and chars <= max_chars:
            return count, chars
        # the turn in progress (the newest user entry and what follows it) always stays live
        limit = max(0, count - self._turn_length(tx))
        drop = min(drop, limit)
        fetch = drop + 16
        olds = tx.history.oldest_chars(fetch)
        dropped_chars = sum(olds[:drop])
        while chars - dropped_chars > max_chars and drop < limit:
            if drop >= len(olds):
                fetch *= 2
                olds = tx.history.oldest_chars(fetch)
                if drop >= len(olds):
                    break
            dropped_chars += olds[drop]
            drop += 1
        moved, moved_chars = tx.history.archive_oldest(drop)
        return count - moved, chars - moved_chars

    @staticmethod
    def _turn_length(tx: Tx) -> int:
        """Rows from the newest user entry to the end (at least 1): the turn in progress,
        which the window never archives (SPEC §3.3). Reads only the newest rows."""
        n = 8
        while True:
            tail = tx.history.tail(n)
            for i, (_pos, _chars, text) in enumerate(tail):
                try:
                    value = codec.loads_stored(text)  # blob markers stay markers: no blob read
                except CorruptValue:
                    continue
                if isinstance(value, dict) and value.get("role") == "user":
                    return i + 1
            if len(tail) < n:
                return 1
            n *= 4

    def _after_write(self, tx: Tx, count: int, chars: int) -> int:
        count, chars = self._bound(tx, count, chars)
        tx.history.set_state(count, chars)
        if count == 0:
            tx.kv.put(ACTIVE_SESSION_KEY, "")
        return count

    def replace_in(
        self,
        tx: Tx,
        new_entries: Any,
        loaded: tuple[list[_Row], list[_Row], Entries] | None = None,
    ) -> int:
        """Write ``new_entries`` as the live history inside ``tx``; returns the live length.
        ``loaded``: what :meth:`_load` just returned in this transaction (spares a re-read)."""
        validate_entries(new_entries)
        encoded = [_encode_entry(e, i) for i, e in enumerate(new_entries)]
        rows, good, _ = loaded if loaded is not None else self._load(tx)
        keep = 0
        while keep < len(good) and keep < len(encoded) and good[keep].text == encoded[keep][0]:
            keep += 1
        stale = good[keep:]
        if stale:
            tx.history.delete([r.pos for r in stale])
        pos = tx.history.next_pos()
        for (text, blobs, chars), entry in zip(encoded[keep:], new_entries[keep:], strict=True):
            tx.history.insert(pos, chars, text, blobs, _unseen(entry), entry)
            pos += 1
        count = len(rows) - len(stale) + len(encoded) - keep
        chars = sum(r.chars for r in rows) - sum(r.chars for r in stale)
        chars += sum(c for _t, _b, c in encoded[keep:])
        return self._after_write(tx, count, chars)

    def mutate(self, fn: Callable[[Entries], Entries | None]) -> Entries | None:
        """Run ``fn(entries)`` under the history lock; a returned list is validated, bounded
        and written (``None`` = no change). Returns what was written, or ``None``."""
        with self._b.transaction(self._profile) as tx:
            loaded = self._load(tx)
            result = fn(loaded[2])
            if result is None:
                return None
            self.replace_in(tx, result, loaded)
            return self.entries_in(tx)

    def stamp_seen(self) -> int:
        """The seen stamp (SPEC §5.1) on the stored rows themselves: ``imagesSeen: true`` is
        added to every live entry flagged unseen, and its image bytes stay in their blobs —
        nothing is resolved, re-encoded or hashed again, so the cost is that of the rows'
        JSON text, never of their pixels. Gives what
        ``rules.images.stamp_images_seen`` gives; returns the entries stamped."""
        with self._b.transaction(self._profile) as tx:
            stamped: list[tuple[int, int, str]] = []
            cleared: list[int] = []
            for pos, chars, text in tx.history.unseen_rows():
                try:
                    value = codec.loads_stored(text)  # blob strings left as they are stored
                except CorruptValue:
                    continue
                if _readable(value) and _unseen(value):
                    value["imagesSeen"] = True
                    stamped.append((pos, chars, codec.dumps(value)))
                else:
                    cleared.append(pos)  # flagged by default before the flag existed
            if cleared:
                tx.history.clear_unseen(cleared)
            for pos, chars, text in stamped:
                tx.history.restamp(pos, chars, text)
            return len(stamped)

    def append(self, entry: dict[str, Any]) -> int:
        """Append one entry; returns the new live length. Never reads the history."""
        validate_entry(entry)
        text, blobs, chars = _encode_entry(entry)
        with self._b.transaction(self._profile) as tx:
            pos = tx.history.next_pos()
            tx.history.insert(pos, chars, text, blobs, _unseen(entry), entry)
            count, total = tx.history.state()
            return self._after_write(tx, count + 1, total + chars)

    def append_at(
        self,
        entry: dict[str, Any],
        version: int,
        rewrite: tuple[int, dict[str, Any]] | None = None,
    ) -> int | None:
        """Append ``entry`` — already validated where it came in (the engine's prepare) — when
        the history is still at write counter ``version`` (:meth:`read_versioned`); returns the
        counter after the write, or ``None`` with nothing written when the history moved.
        ``rewrite=(i, changed)``: in the same transaction, entry ``i`` of the history read at
        ``version`` becomes ``changed`` (its text unchanged: a question marked unanswered)."""
        text, blobs, chars = _encode_entry(entry)
        with self._b.transaction(self._profile) as tx:
            if tx.versions()[1] != version:
                return None
            if rewrite is not None:
                at = tx.rows(
                    "SELECT pos FROM ck_history WHERE profile=? ORDER BY pos LIMIT 1 OFFSET ?",
                    (rewrite[0],),
                )
                if at:
                    t2, b2, c2 = _encode_entry(rewrite[1])
                    tx.history.update(int(at[0][0]), c2, t2, b2, _unseen(rewrite[1]))
            pos = tx.history.next_pos()
            tx.history.insert(pos, chars, text, blobs, _unseen(entry), entry)
            count, total = tx.history.state()
            self._after_write(tx, count + 1, total + chars)
            return tx.versions()[1]

    def clear(self) -> None:
        with self._b.transaction(self._profile) as tx:
            self.replace_in(tx, [])

    def remove_at(self, i: int) -> bool:
        def fn(entries: Entries) -> Entries | None:
            if not isinstance(i, int) or i < 0 or i >= len(entries):
                return None
            return entries[:i] + entries[i + 1 :]

        return self.mutate(fn) is not None

    def remove_by_attach_id(self, attach_id: str) -> int:
        found = -1

        def fn(entries: Entries) -> Entries | None:
            nonlocal found
            if not attach_id:
                return None
            for k, e in enumerate(entries):
                if e.get("attachId") == attach_id:
                    found = k
                    return entries[:k] + entries[k + 1 :]
            return None

        self.mutate(fn)
        return found

    def truncate_from(self, i: int) -> bool:
        """Keep ``entries[:i]``; the rest go to the archive as an earlier version (SPEC §3.5)."""
        if not isinstance(i, int) or i < 0:
            return False
        self._cut(i, [], None)
        return True

    def remove_last_page_context(self) -> int:
        found = -1

        def fn(entries: Entries) -> Entries | None:
            nonlocal found
            for k in range(len(entries) - 1, -1, -1):
                if is_attachment(entries[k]):
                    found = k
                    return entries[:k] + entries[k + 1 :]
            return None

        self.mutate(fn)
        return found
