"""Key–value areas with the ``chrome.storage`` shape (SPEC §1).

``area.get(key)`` / ``area.get([k1, k2])``, ``area.set(key, value)`` / ``area.set({...})``,
``area.remove(key_or_keys)``, ``area.keys(prefix="")`` and ``area.modify(key, fn)`` (a
read–modify–write in one backend transaction). Every ``get`` returns a fresh deep copy.
Keys are non-empty strings of at most :data:`MAX_KEY_CHARS` characters; values must be JSON.

In ``store.local`` the key ``history`` is the live history: reading it returns
``store.history.read()`` and writing it replaces the history through the history lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from json import loads
from typing import Any

from ..constants import HISTORY_KEY
from ..errors import InvalidValue
from ..limits import MAX_KEY_CHARS, check_key, check_text, check_value
from . import codec
from .backend import Backend
from .history import History

__all__ = ["MAX_KEY_CHARS", "LocalArea", "MemoryArea", "check_key"]


def _keys_arg(keys: Any) -> list[str]:
    if isinstance(keys, str):
        return [check_key(keys)]
    if not isinstance(keys, list | tuple | set | frozenset | dict):
        raise InvalidValue(f"keys must be a string or a list of strings, got {type(keys).__name__}")
    return [check_key(k) for k in keys]


def _items_arg(key_or_items: Any, value: Any) -> dict[str, Any]:
    if isinstance(key_or_items, str):
        return {check_key(key_or_items): value}
    if not isinstance(key_or_items, dict):
        raise InvalidValue(
            f"set() takes a key and a value, or a dict of them; got {type(key_or_items).__name__}"
        )
    for k in key_or_items:
        check_key(k)
    return dict(key_or_items)


class LocalArea:
    """The durable area, stored in the backend."""

    def __init__(self, backend: Backend, profile: str, history: History) -> None:
        self._b = backend
        self._profile = profile
        self._history = history

    def get(self, keys: str | Iterable[str]) -> Any:
        single = isinstance(keys, str)
        names = _keys_arg(keys)
        want_history = HISTORY_KEY in names
        with self._b.transaction(self._profile, write=False) as tx:
            out = tx.kv.get([k for k in names if k != HISTORY_KEY])
            if want_history:
                count, _ = tx.history.state()
                if count:
                    out[HISTORY_KEY] = self._history.read()
        if single:
            return out.get(names[0])
        return {k: out[k] for k in names if k in out}

    def set(self, key_or_items: str | dict[str, Any], value: Any = None) -> None:
        items = _items_arg(key_or_items, value)
        encoded = {}
        for k, v in items.items():
            if k != HISTORY_KEY:
                encoded[k] = codec.encode(v, codec.text_blobs_for(k))
        history = items.get(HISTORY_KEY)
        with self._b.transaction(self._profile) as tx:
            for k, (text, blobs) in encoded.items():
                tx.kv.put_encoded(k, text, blobs)
            if HISTORY_KEY in items:
                self._history.replace_in(tx, history)

    def remove(self, keys: str | Iterable[str]) -> None:
        names = _keys_arg(keys)
        with self._b.transaction(self._profile) as tx:
            tx.kv.delete([k for k in names if k != HISTORY_KEY])
            if HISTORY_KEY in names:
                self._history.replace_in(tx, [])

    def keys(self, prefix: str = "") -> list[str]:
        check_text(prefix, "the key prefix")
        with self._b.transaction(self._profile, write=False) as tx:
            names = tx.kv.keys(prefix)
            if HISTORY_KEY.startswith(prefix) and tx.history.state()[0]:
                names = sorted([*names, HISTORY_KEY])
        return names

    def modify(self, key: str, fn: Callable[[Any], Any], default: Any = None) -> Any:
        """Read ``key``, call ``fn(value)``; a non-None result is stored. One transaction."""
        check_key(key)
        if key == HISTORY_KEY:
            raise InvalidValue("use store.history.mutate() to change the history")
        with self._b.transaction(self._profile) as tx:
            current = tx.kv.get([key]).get(key, default)
            result = fn(current)
            if result is not None:
                tx.kv.put(key, result)
            return result

    def modify_many(
        self, keys: Iterable[str], fn: Callable[[dict[str, Any]], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Read ``keys`` (missing ones absent), call ``fn(values)``; a non-None result is a dict
        of keys to store (a value of ``None`` removes the key). One transaction, so related keys
        (a card and the active selection) never disagree."""
        names = _keys_arg(keys)
        if HISTORY_KEY in names:
            raise InvalidValue("use store.history.mutate() to change the history")
        with self._b.transaction(self._profile) as tx:
            result = fn(tx.kv.get(names))
            if result is None:
                return None
            for k in result:
                check_key(k)
                if k == HISTORY_KEY:
                    raise InvalidValue("use store.history.mutate() to change the history")
            gone = [k for k, v in result.items() if v is None]
            if gone:
                tx.kv.delete(gone)
            for k, v in result.items():
                if v is not None:
                    tx.kv.put(k, v)
            return result


class MemoryArea:
    """``store.session``: lives as long as this process; same API, same copy semantics."""

    def __init__(self) -> None:
        self._data: dict[str, str] = {}
        self._lock = threading.RLock()

    def get(self, keys: str | Iterable[str]) -> Any:
        single = isinstance(keys, str)
        names = _keys_arg(keys)
        with self._lock:
            out = {k: loads(self._data[k]) for k in names if k in self._data}
        return out.get(names[0]) if single else out

    def set(self, key_or_items: str | dict[str, Any], value: Any = None) -> None:
        items = _items_arg(key_or_items, value)
        for v in items.values():
            check_value(v)
        encoded = {k: codec.dumps(v) for k, v in items.items()}
        with self._lock:
            self._data.update(encoded)

    def remove(self, keys: str | Iterable[str]) -> None:
        names = _keys_arg(keys)
        with self._lock:
            for k in names:
                self._data.pop(k, None)

    def keys(self, prefix: str = "") -> list[str]:
        check_text(prefix, "the key prefix")
        with self._lock:
            return sorted(k for k in self._data if k.startswith(prefix))

    def modify(self, key: str, fn: Callable[[Any], Any], default: Any = None) -> Any:
        check_key(key)
        with self._lock:
            current = loads(self._data[key]) if key in self._data else default
            result = fn(current)
            if result is not None:
                check_value(result)
                self._data[key] = codec.dumps(result)
            return result
