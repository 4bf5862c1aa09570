"""``chatkeep.open()`` and the :class:`Store` facade (SPEC §1, §2, §5.1, §5.4).

A store is one profile of one backend: ``store.local`` (durable), ``store.session`` (this
process), ``store.history`` (live history + archive) and ``store.sessions`` (the drawer).
"""

from __future__ import annotations

import copy
import json
import os
from typing import TYPE_CHECKING, Any

from .constants import DEFAULTS, GET_ALL_KEYS, ORIGINAL_PREFIX, SESSIONS_INDEX_KEY
from .entries import has_image_parts, image_part_url, is_image_part
from .errors import InvalidValue, StoreError
from .storage.areas import LocalArea, MemoryArea
from .storage.backend import Backend
from .storage.history import History
from .storage.sessions import Sessions

if TYPE_CHECKING:
    from .conversation import Chat

MAX_PROFILE_CHARS = 100


def default_store_path() -> str:
    import platformdirs  # lazy: only needed when no store URL is given

    return os.path.join(platformdirs.user_data_dir("chatkeep"), "chatkeep.db")


def _backend_for(url: str) -> Backend:
    if url.startswith(("postgresql://", "postgres://")):
        from .storage.postgres import PostgresBackend

        return PostgresBackend(url)
    from .storage.sqlite import SQLiteBackend

    if url == ":memory:":
        return SQLiteBackend(":memory:")
    if url.startswith("sqlite://"):
        path = url[len("sqlite://") :]
        if not path.startswith("/"):
            raise StoreError(
                f"unsupported SQLite URL {url!r}",
                hint="use sqlite:///absolute/path.db or a plain path",
            )
        return SQLiteBackend(path)
    if "://" in url:
        raise StoreError(
            f"unsupported store URL {url!r}",
            hint="use a file path, sqlite:///abs/path.db, :memory: or postgresql://user@host/db",
        )
    return SQLiteBackend(os.path.abspath(os.path.expanduser(url)))


def open(url: str | None = None, *, profile: str = "default") -> Store:  # noqa: A001
    """Open a store. ``url``: None (env ``CHATKEEP_STORE``, else the user data dir), a path,
    ``sqlite:///abs/path.db``, ``:memory:`` or ``postgresql://…``."""
    if not isinstance(profile, str) or not profile or len(profile) > MAX_PROFILE_CHARS:
        raise InvalidValue(
            f"profile must be a non-empty string of at most {MAX_PROFILE_CHARS} characters",
            hint="pass profile='default' or another short name",
        )
    target = url or os.environ.get("CHATKEEP_STORE") or default_store_path()
    return Store(_backend_for(target), profile)


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


class Store:
    """One profile of one backend. Use as a context manager or call :meth:`close`."""

    def __init__(self, backend: Backend, profile: str) -> None:
        self._backend = backend
        self.profile = profile
        self.history = History(backend, profile)
        self.local = LocalArea(backend, profile, self.history)
        self.session = MemoryArea()
        self.sessions = Sessions(backend, profile, self.history)

    @property
    def url(self) -> str:
        return self._backend.description

    @property
    def backend_name(self) -> str:
        return self._backend.dialect

    @property
    def chat(self) -> Chat:
        """The conversation engine bound to this store (``chatkeep.conversation.Chat``),
        created on first use; importing it loads no provider SDK."""
        engine = self.__dict__.get("_chat")
        if engine is None:
            from .conversation import Chat

            engine = self.__dict__.setdefault("_chat", Chat(self))
        return engine

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._backend.close()

    def __repr__(self) -> str:
        return f"<chatkeep.Store {self.url} profile={self.profile!r}>"

    # -- settings ---------------------------------------------------------------------------
    def get_all(self) -> dict[str, Any]:
        """``{**DEFAULTS, **stored}`` over :data:`GET_ALL_KEYS` only; never reads history,
        sessions or image bytes. ``history`` is always ``[]`` here."""
        with self._backend.transaction(self.profile, write=False) as tx:
            stored = tx.kv_get(list(GET_ALL_KEYS))
        out = copy.deepcopy(DEFAULTS)
        for key, value in stored.items():
            out[key] = _merge_default(key, value) if key in DEFAULTS else value
        return out

    # -- image lifecycle --------------------------------------------------------------------
    def mark_images_seen(self) -> int:
        """Stamp ``imagesSeen: true`` on every live entry with image parts (§5.1)."""
        from .rules.images import stamp_images_seen

        changed = 0

        def fn(entries: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
            nonlocal changed
            result = stamp_images_seen(entries)
            if result is not None:
                changed = sum(1 for a, b in zip(entries, result, strict=True) if a is not b)
            return result

        self.history.mutate(fn)
        return changed

    def bound_unseen_image_bytes(self, budget: int = 8 * 1024 * 1024) -> int:
        """Thumbnail the oldest unseen images until their data URLs fit ``budget`` (§5.4)."""
        from .rules.images import bound_unseen_images

        changed = 0

        def fn(entries: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
            nonlocal changed
            result, changed = bound_unseen_images(entries, budget)
            return result

        self.history.mutate(fn)
        return changed

    def keep_original(self, entry: dict[str, Any]) -> bool:
        """Keep a copy of an attachment entry under ``attachOriginal_<attachId>`` before a
        rewrite (auto-summary, overflow stub) replaces its text; the first copy wins.

        The live history then holds the short text the model needs, and the full text the user
        attached is still in the store (a targeted read, exported with the profile). Returns
        whether a copy was written."""
        attach_id = entry.get("attachId") if isinstance(entry, dict) else None
        if not isinstance(attach_id, str) or not attach_id:
            return False
        wrote = False

        def fn(current: Any) -> Any:
            nonlocal wrote
            if current is not None:
                return None
            wrote = True
            return entry

        self.local.modify(ORIGINAL_PREFIX + attach_id, fn)
        return wrote

    # -- export / import / stats ------------------------------------------------------------
    def export_data(self) -> dict[str, Any]:
        from .storage.transfer import export_profile

        return export_profile(self._backend, self.profile, self.history)

    def import_data(
        self, data: Any, *, source: str = "auto", replace: bool = False
    ) -> dict[str, Any]:
        from .storage.transfer import import_profile

        return import_profile(self, self._backend, data, source=source, replace=replace)

    def stats(self) -> dict[str, Any]:
        """Counts and sizes: entries, archive, sessions, bytes stored, unseen image bytes,
        and the keys whose stored value could not be read."""
        corrupt: list[str] = []
        with self._backend.transaction(self.profile, write=False) as tx:
            # parse the stored texts only: blobs (images, long texts) are not loaded for this
            for key, text in tx.kv_raw(tx.kv_keys()).items():
                try:
                    value = json.loads(text)
                except ValueError:
                    corrupt.append(key)
                    continue
                if not _type_ok(key, value) or (
                    key == SESSIONS_INDEX_KEY and not isinstance(value, list)
                ):
                    corrupt.append(key)
            stored_rows = tx.hist_state()[0]
            sizes = tx.sizes()
            archived = tx.archive_count()
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
            "bytesStored": sizes["kvBytes"]
            + sizes["historyBytes"]
            + sizes["archiveBytes"]
            + sizes["blobBytes"],
            "blobs": sizes["blobs"],
            "blobBytes": sizes["blobBytes"],
            "unseenImageBytes": unseen,
            "corruptKeys": sorted(set(corrupt)),
        }
