"""Per-source caches in ``store.session`` with a lazy, race-free restore (SPEC §9).

A *source* is whatever the host keeps extracted data for (a browser tab, a panel, a page
context); the host names it by a string id. :class:`SiteCache` keeps one JSON value per source
in memory and writes it through to the session area under ``sc_<id>``, so a new cache object on
the same area (a restarted worker) can pick the values up again.

Contract:

- **Lazy restore.** Constructing a cache reads nothing. The first call that needs the data
  (:meth:`~SiteCache.get`, :meth:`~SiteCache.set`, :meth:`~SiteCache.ids`, ``len()``, ``in``,
  :meth:`~SiteCache.clear`) pays for the restore: one ``keys("sc_")`` and one batched ``get``
  of the area, then one call of the host's ``live_ids()``. Sources that are not live any more
  are dropped from memory and their ``sc_`` keys removed from the area. A restore that fails
  (``live_ids()`` raising, say) leaves the cache unrestored and the error reaches the caller;
  the next use tries again. Other users wait for a running restore; only :meth:`purge` never
  waits for its reads or for ``live_ids()``. ``live_ids()`` must not call back into the cache
  (except :meth:`purge`).
- **No resurrection.** :meth:`~SiteCache.purge` removes a source at once, from memory and from
  the area, even while a restore is running; that restore will not bring the purged source
  back, whatever it had already read. A value :meth:`~SiteCache.set` during the restore wins
  over the restored one.
- **Hooks on demand.** When a ``subscribe`` callable is given, the cache calls
  ``subscribe(self.purge)`` when it goes from empty to holding something and calls the
  unsubscribe function it returned when it becomes empty again, so purge listeners exist only
  while there is something to purge. :class:`PurgeEvents` is a small thread-safe event source
  with that ``subscribe`` shape, for hosts and tests.

Values are JSON; every read returns a fresh copy. Thread-safe. Standard library only.
"""

from __future__ import annotations

import copy
import threading
from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidValue

__all__ = ["KEY_PREFIX", "PurgeEvents", "SiteCache", "cache_key"]

KEY_PREFIX = "sc_"
_MAX_ID_CHARS = 200 - len(KEY_PREFIX)

Listener = Callable[[str], Any]
Unsubscribe = Callable[[], None]
Subscribe = Callable[[Listener], Unsubscribe]


def cache_key(source_id: str) -> str:
    """``sc_<id>``; ids are non-empty strings short enough to be area keys."""
    if not isinstance(source_id, str) or not source_id or len(source_id) > _MAX_ID_CHARS:
        raise InvalidValue(
            f"site cache ids are non-empty strings of at most {_MAX_ID_CHARS} characters, "
            f"got {source_id!r}"[:300],
            hint="use the host's short source id (a tab or panel id)",
        )
    return KEY_PREFIX + source_id


class PurgeEvents:
    """A minimal event source: ``subscribe(fn) -> unsubscribe`` and ``fire(source_id)``.

    Listeners are called outside the internal lock, in subscription order, so a listener may
    subscribe or unsubscribe while being called.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._listeners: list[tuple[int, Listener]] = []
        self._next = 0

    def subscribe(self, listener: Listener) -> Unsubscribe:
        with self._lock:
            token = self._next
            self._next += 1
            self._listeners.append((token, listener))

        def unsubscribe() -> None:
            with self._lock:
                self._listeners = [(t, f) for t, f in self._listeners if t != token]

        return unsubscribe

    @property
    def listener_count(self) -> int:
        with self._lock:
            return len(self._listeners)

    def fire(self, source_id: str) -> int:
        """Call every listener with ``source_id``; returns how many were called."""
        with self._lock:
            listeners = [f for _t, f in self._listeners]
        for listener in listeners:
            listener(source_id)
        return len(listeners)


class SiteCache:
    """Extracted data per source, restored lazily from the session area (see module docstring)."""

    def __init__(
        self,
        area: Any,
        live_ids: Callable[[], Iterable[str]],
        *,
        subscribe: Subscribe | None = None,
    ) -> None:
        self._area = area
        self._live_ids = live_ids
        self._subscribe = subscribe
        self._mem: dict[str, Any] = {}
        self._lock = threading.RLock()  # guards _mem, _restored, _restoring, _touched
        self._restore_lock = threading.Lock()  # one restore at a time; users wait on it
        self._hook_lock = threading.Lock()  # serializes subscribe/unsubscribe transitions
        self._restored = False
        self._restoring = False
        self._touched: dict[str, str] = {}  # id -> "purged" | "set", during a restore
        self._unsubscribe: Unsubscribe | None = None

    # -- state ------------------------------------------------------------------------------
    @property
    def restored(self) -> bool:
        """Whether the lazy restore has run (successfully)."""
        with self._lock:
            return self._restored

    @property
    def hooks_registered(self) -> bool:
        """Whether the purge listener is currently subscribed."""
        with self._hook_lock:
            return self._unsubscribe is not None

    # -- restore ----------------------------------------------------------------------------
    def _ensure_restored(self) -> None:
        if self._restored:  # fast path; the flag only ever goes False -> True
            return
        with self._restore_lock:
            with self._lock:
                if self._restored:
                    return
                self._restoring = True
                self._touched = {}
            try:
                self._restore()
            finally:
                with self._lock:
                    self._restoring = False
                    self._touched = {}
        self._sync_hooks()

    def _restore(self) -> None:
        keys = [k for k in self._area.keys(KEY_PREFIX) if len(k) > len(KEY_PREFIX)]
        stored = self._area.get(keys) if keys else {}
        live = {i for i in self._live_ids() if isinstance(i, str)}
        dead_keys: list[str] = []
        with self._lock:
            for key, value in stored.items():
                source_id = key[len(KEY_PREFIX) :]
                touched = self._touched.get(source_id)
                if touched is not None:
                    continue  # purged or set while we were reading: theirs is newer
                if source_id in live:
                    self._mem.setdefault(source_id, value)
                else:
                    dead_keys.append(key)
            if dead_keys:  # under the lock: a set() right after the restore must survive
                self._area.remove(dead_keys)
            self._restored = True

    # -- hooks ------------------------------------------------------------------------------
    def _sync_hooks(self) -> None:
        if self._subscribe is None:
            return
        with self._hook_lock:
            with self._lock:
                holding = bool(self._mem)
            if holding and self._unsubscribe is None:
                self._unsubscribe = self._subscribe(self.purge)
            elif not holding and self._unsubscribe is not None:
                unsubscribe, self._unsubscribe = self._unsubscribe, None
                unsubscribe()

    # -- public API -------------------------------------------------------------------------
    def get(self, source_id: str, default: Any = None) -> Any:
        """A copy of the value cached for ``source_id``, else ``default``."""
        cache_key(source_id)
        self._ensure_restored()
        with self._lock:
            if source_id not in self._mem:
                return default
            return copy.deepcopy(self._mem[source_id])

    def set(self, source_id: str, value: Any) -> None:
        """Cache ``value`` (JSON) for ``source_id``, in memory and in the session area."""
        key = cache_key(source_id)
        self._ensure_restored()
        with self._lock:
            self._area.set(key, value)  # validates JSON before memory changes
            self._mem[source_id] = copy.deepcopy(value)
            if self._restoring:
                self._touched[source_id] = "set"
        self._sync_hooks()

    def purge(self, source_id: str) -> bool:
        """Forget ``source_id`` now (memory and area), even during a restore; never waits for
        one. Returns whether this cache held it in memory."""
        key = cache_key(source_id)
        with self._lock:
            held = source_id in self._mem
            self._mem.pop(source_id, None)
            if self._restoring:
                self._touched[source_id] = "purged"
            self._area.remove(key)
        self._sync_hooks()
        return held

    def ids(self) -> list[str]:
        """The cached source ids, sorted."""
        self._ensure_restored()
        with self._lock:
            return sorted(self._mem)

    def clear(self) -> None:
        """Forget every source (memory and every ``sc_`` key)."""
        self._ensure_restored()
        with self._lock:
            keys = [cache_key(i) for i in self._mem]
            keys += [k for k in self._area.keys(KEY_PREFIX) if k not in keys]
            self._mem.clear()
            if keys:
                self._area.remove(keys)
        self._sync_hooks()

    def __contains__(self, source_id: object) -> bool:
        if not isinstance(source_id, str):
            return False
        self._ensure_restored()
        with self._lock:
            return source_id in self._mem

    def __len__(self) -> int:
        self._ensure_restored()
        with self._lock:
            return len(self._mem)
