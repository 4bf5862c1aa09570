"""The storage profile: everything one profile of one backend stores (SPEC §1–§4).

:class:`Profile` is the storage floor's seam: the two areas, the live history with its
archive, the saved sessions, export/import and statistics. It knows nothing of requests or
providers; the engine (``chatkeep.conversation``, ``chatkeep.attach``) types against it, and
the facade :class:`chatkeep.Store` extends it with the engine (``store.chat``) and the image
lifecycle operations that combine storage with the request rules.
"""

from __future__ import annotations

import copy
import os
import tempfile
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from json import loads
from typing import IO, Any

from ..constants import DEFAULTS, GET_ALL_KEYS, ORIGINAL_PREFIX, SESSIONS_INDEX_KEY
from ..digest import digest_json, hex_of
from ..entries import has_image_parts, image_part_url, is_image_part
from ..errors import StoreError
from . import codec
from .areas import LocalArea, MemoryArea
from .backend import Backend
from .history import History
from .sessions import Sessions
from .trace import Trace
from .transfer import export_profile, import_profile

__all__ = ["Profile"]


def _type_ok(key: str, value: Any) -> bool:
    """Whether a stored value has the type of its default (unknown keys always pass)."""
    if key not in DEFAULTS:
        return True
    default = DEFAULTS[key]
    if isinstance(default, bool) or isinstance(value, bool):
        return type(value) is type(default)
    if isinstance(default, int):
        return isinstance(value, int)
    return isinstance(value, type(default))


def _merge_default(key: str, stored: Any) -> Any:
    if not _type_ok(key, stored):
        return copy.deepcopy(DEFAULTS[key])
    if key == "providers":
        merged = copy.deepcopy(DEFAULTS[key])
        for name, card in stored.items():
            base = merged.get(name, {})
            merged[name] = (
                {**base, **card} if isinstance(card, dict) and isinstance(base, dict) else card
            )
        return merged
    return stored


class Profile:
    """One profile of one backend. Use as a context manager or call :meth:`close`."""

    def __init__(self, backend: Backend, profile: str) -> None:
        self._backend = backend
        self.profile = profile
        self.history = History(backend, profile)
        self.local = LocalArea(backend, profile, self.history)
        self.session = MemoryArea()
        self.sessions = Sessions(backend, profile, self.history)
        self._settings: tuple[int, str] | None = None  # (key write counter, get_all() JSON)

    @property
    def url(self) -> str:
        return self._backend.description

    @property
    def backend_name(self) -> str:
        return self._backend.dialect

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    # -- settings ---------------------------------------------------------------------------
    def get_all(self) -> dict[str, Any]:
        """``{**DEFAULTS, **stored}`` over :data:`GET_ALL_KEYS` only; never reads history,
        sessions or image bytes. ``history`` is always ``[]`` here.

        One indexed read of those keys, kept in this process until the profile's key write
        counter moves (any key write, from any process): a repeated call reads one row."""
        cached = self._settings
        if cached is not None:  # the usual call: one autocommit read of the counter row
            now = self._backend.read_one(
                "SELECT kv FROM ck_versions WHERE profile=?", (self.profile,)
            )
            if (int(now) if now is not None else 0) == cached[0]:
                return loads(cached[1])
        with self._backend.transaction(self.profile, write=False) as tx:
            version = tx.versions()[0]
            stored = tx.kv.get(list(GET_ALL_KEYS))
            out = copy.deepcopy(DEFAULTS)
            for key, value in stored.items():
                out[key] = _merge_default(key, value) if key in DEFAULTS else value
            if not tx.write:  # a write transaction may still roll back what it read
                self._settings = (version, codec.dumps(out))
        return out

    def keep_original(self, entry: dict[str, Any]) -> bool:
        """Keep a copy of an entry under ``attachOriginal_<id>`` before a rewrite (auto-summary,
        overflow stub, thumbnails of §5.4) replaces its text or pixels; the first copy wins.
        ``<id>`` is the entry's ``attachId``, else ``img`` and the entry's digest (a pasted
        image has no attachment id).

        The live history then holds what the model and the panel need, and what the user gave
        is still in the store whole (a targeted read, exported with the profile; image bytes
        are shared blobs, so the copy costs no second copy of the pixels). Returns whether a
        copy was written."""
        if not isinstance(entry, dict):
            return False
        attach_id = entry.get("attachId")
        if not isinstance(attach_id, str) or not attach_id:
            attach_id = "img" + hex_of(digest_json(entry))[:32]
        wrote = False

        def fn(current: Any) -> Any:
            nonlocal wrote
            if current is not None:
                return None
            wrote = True
            return entry

        self.local.modify(ORIGINAL_PREFIX + attach_id, fn)
        return wrote

    @contextmanager
    def reading(self) -> Iterator[None]:
        """One read transaction around several reads (settings, keys, the live history): they
        all see the same state, and the store is asked once instead of once per read."""
        with self._backend.transaction(self.profile, write=False):
            yield

    # -- diagnostics ------------------------------------------------------------------------
    def trace(self) -> AbstractContextManager[Trace]:
        """``with store.trace() as t:`` records the SQL statements and transactions this
        store's connection runs inside the block (:class:`chatkeep.storage.trace.Trace`):
        what one send, save or load costs the database, on either backend."""
        return self._backend.trace()

    # -- search -----------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        limit: int = 20,
        offset: int = 0,
        where: Any = None,
        mode: str = "hybrid",
    ) -> list[dict[str, Any]]:
        """Message hits for ``query`` in the live history, the archive and every saved or
        evicted session (SPEC §16): ``{where, sessionId, sessionName, index, role,
        createdAt, snippet, score}``, best first; ``where`` narrows the places (``"live"``,
        ``"archive"``, ``"session"``, ``"evicted"`` or a list of them); ``mode`` is
        ``"text"``, ``"semantic"`` or ``"hybrid"`` (:mod:`chatkeep.storage.search`)."""
        from .search import search  # lazy: only a search needs the ranking code

        return search(
            self._backend, self.profile, query, limit=limit, offset=offset, where=where, mode=mode
        )

    # -- export / import / stats ------------------------------------------------------------
    def export_data(self) -> dict[str, Any]:
        return export_profile(self._backend, self.profile, self.history)

    def import_data(
        self, data: Any, *, source: str = "auto", replace: bool = False
    ) -> dict[str, Any]:
        report = import_profile(
            self._backend,
            self.profile,
            self.history,
            self.sessions,
            data,
            source=source,
            replace=replace,
        )
        self._backend.refresh_statistics()
        return report

    def doctor(self, repair: bool = False, *, restore_quarantine: bool = False) -> dict[str, Any]:
        """Integrity check (``chatkeep doctor``): index ↔ bodies, blob references, missing
        blobs, unreadable and over-limit rows, file permissions; ``repair=True`` fixes what is
        safe and moves rows that cannot be read at all to ``quarantine_<n>`` keys;
        ``restore_quarantine=True`` first puts back each quarantined row that reads now, then
        repairs. See :mod:`chatkeep.storage.doctor` and :mod:`chatkeep.storage.quarantine`."""
        from .doctor import check

        return check(
            self._backend,
            self.profile,
            repair=bool(repair),
            path=getattr(self._backend, "path", None),
            restore_quarantine=bool(restore_quarantine),
        )

    def damaged_pages(self) -> list[tuple[str, str]]:
        """(table, what SQLite says) for each table of an SQLite store whose file pages do not
        read (zeroed or overwritten); empty when the file checks out, and on other backends."""
        return self._backend.schema.page_damage()

    @contextmanager
    def rescued(self) -> Iterator[tuple[Profile, list[dict[str, Any]]]]:
        """A read-only look at a damaged SQLite store: this profile in a temporary copy that
        holds every row that still reads (:mod:`.salvage`), and what could not be read (each
        ``{"table", "where", "what"}``; rows of search indexes and counts, which the copy
        makes again, are not listed). The store itself is not changed; the copy is deleted
        on leaving (it is made beside the store when that directory is writable)."""
        from .doctor_pages import REBUILT
        from .salvage import describe, where

        path = getattr(self._backend, "path", None)
        if not isinstance(path, str) or path == ":memory:":
            raise StoreError("only an SQLite store file can be rescued")
        folder = os.path.dirname(os.path.abspath(path))
        with tempfile.TemporaryDirectory(
            prefix=".chatkeep-rescue-", dir=folder if os.access(folder, os.W_OK) else None
        ) as tmp:
            target = os.path.join(tmp, "rescued.db")
            _counts, lost = self._backend.rescue_into(target)  # type: ignore[attr-defined]
            skipped = [
                {"table": row.table, "where": where(row), "what": describe(row)}
                for row in lost
                if row.table not in REBUILT and row.profile in (None, self.profile)
            ]
            copy = Profile(type(self._backend)(target), self.profile)  # type: ignore[call-arg]
            try:
                # rows that read from the file but do not parse (a zeroed stretch of a value)
                skipped += [
                    {
                        "table": p["where"],
                        "where": p["where"],
                        "what": f"{p['where']}: {p['detail']}",
                    }
                    for p in copy.doctor()["problems"]
                    if p["kind"] == "unreadable"
                ]
                yield copy, skipped
            finally:
                copy.close()

    def export_to(self, fh: IO[str]) -> dict[str, int]:
        """Stream the export document into the text file ``fh`` one value at a time (memory
        holds one entry or one session, not the profile); ``json.load`` of it equals
        :meth:`export_data`. Returns counts of keys, live entries and archived entries."""
        from .stream import export_to  # lazy: only export needs it

        return export_to(self._backend, self.profile, self.history, fh)

    def export_lines(self) -> Iterator[str]:
        """The lines :meth:`export_to` writes, without their newlines, produced one at a time
        (one read transaction, held until the last line is taken or the iterator is closed)."""
        from .stream import export_lines  # lazy: only export needs it

        return export_lines(self._backend, self.profile, self.history)

    def import_from(self, fh: IO[str], *, replace: bool = False) -> dict[str, Any]:
        """Import a file written by :meth:`export_to` line by line (one transaction); any
        other JSON file is read whole and goes through :meth:`import_data`."""
        from .stream import import_from  # lazy: only import needs it

        report = import_from(
            self._backend, self.profile, self.history, self.sessions, fh, replace=replace
        )
        self._backend.refresh_statistics()
        return report

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: entries, archive, sessions (and evicted ones), bytes stored, unseen
        image bytes, the keys whose stored value could not be read, and ``missingBlobs``: the
        blobs (images, long texts) that rows point at but whose own row is gone — each reads
        as a placeholder (``[image missing: sha256:…]``); ``chatkeep doctor`` names the rows."""
        corrupt: list[str] = []
        with self._backend.transaction(self.profile, write=False) as tx:
            # parse the stored texts only: blobs (images, long texts) are not loaded for this
            for key, text in tx.kv.raw(tx.kv.keys()).items():
                try:
                    value = loads(text)
                except ValueError:
                    corrupt.append(key)
                    continue
                if not _type_ok(key, value) or (
                    key == SESSIONS_INDEX_KEY and not isinstance(value, list)
                ):
                    corrupt.append(key)
            stored_rows = tx.history.state()[0]
            sizes = tx.sizes()
            archived = tx.history.archive_count()
            # blobs the rows point at whose own row is gone (they read as placeholders)
            missing = tx.rows(
                "SELECT COUNT(DISTINCT r.hash) FROM ck_blob_refs r WHERE r.profile=?"
                " AND NOT EXISTS (SELECT 1 FROM ck_blobs b"
                " WHERE b.profile = r.profile AND b.hash = r.hash)"
            )[0][0]
        live = self.history.read()
        unseen = sum(
            len(image_part_url(p))
            for e in live
            if has_image_parts(e) and not e.get("imagesSeen")
            for p in e["content"]
            if is_image_part(p)
        )
        return {
            "profile": self.profile,
            "store": self.url,
            "backend": self.backend_name,
            "entries": len(live),
            "unreadableEntries": max(0, stored_rows - len(live)),
            "archived": archived,
            "sessions": len(self.sessions.list()),
            "evictedSessions": len(self.sessions.evicted()),
            "bytesStored": sizes["kvBytes"]
            + sizes["historyBytes"]
            + sizes["archiveBytes"]
            + sizes["blobBytes"],
            "blobs": sizes["blobs"],
            "blobBytes": sizes["blobBytes"],
            "missingBlobs": int(missing),
            "unseenImageBytes": unseen,
            "corruptKeys": sorted(set(corrupt)),
        }
