"""Export and import of a whole profile.

chatkeep export (``format: "chatkeep-export"``, version 1)::

    {"format": "chatkeep-export", "version": 1,
     "local":   {key: value, ...},      # every durable key except the history
     "history": [entry, ...],           # the live window
     "archive": [entry, ...]}           # entries dropped by the window, oldest first

Exporting, importing into an empty profile and exporting again gives the same document.

A browsa ``chrome.storage.local`` dump is a JSON object of keys. Its ``history`` becomes the
live history (bounded by the window; the overflow goes to the archive), every other key is
stored as is, then the sessions index is migrated (legacy ``savedSessions`` rows that embed
their history become light rows + ``session_<id>`` bodies).

An import is one transaction, the sessions-index migration included: it happens whole or not
at all, on every backend. Every value is checked against the limits of §12 before anything is
written. Saved sessions whose ids could not be kept (repeated, NUL, too long for a key) get
fresh ids; the result's ``renamedSessions`` lists ``{from, to, name}`` for each. Importing into
a profile that already holds data needs ``replace=True`` (the profile is then replaced, still
atomically).

Replacing never loses what was there: inside the import's own write transaction, before anything
is wiped, the profile is written to a backup export (:mod:`.backup`) beside the store; the report
names it (``backup``). When the backup cannot be written, the import fails and nothing changes.

A browsa dump is recognised only by its signature (:func:`browsa_problem`): at least one key
browsa writes, each such key holding a value of its type. An object without it is refused.
"""

from __future__ import annotations

from typing import Any

from ..constants import (
    ACTIVE_SESSION_KEY,
    ATTACH_SNAPSHOTS_KEY,
    DEFAULTS,
    HISTORY_KEY,
    PANEL_OPTION_DEFAULTS,
    SESSION_BODY_PREFIX,
    SESSIONS_INDEX_KEY,
)
from ..entries import has_image_parts, text_length, validate_entries
from ..errors import InvalidEntry, InvalidValue, ProfileNotEmpty
from ..limits import check_key, check_value
from . import codec
from .backend import Backend
from .backup import EXPORT_FORMAT, EXPORT_VERSION, write_backup
from .history import History
from .sessions import Sessions
from .sql import Tx, now_ms


def export_profile(backend: Backend, profile: str, history: History) -> dict[str, Any]:
    with backend.transaction(profile, write=False) as tx:
        keys = tx.kv.keys()
        local = tx.kv.get(keys)
        live = history.entries_in(tx)
        archive = history.archived_in(tx)
    return {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "local": {k: local[k] for k in sorted(local)},
        "history": live,
        "archive": archive,
    }


def detect_source(data: Any) -> str:
    if isinstance(data, dict) and data.get("format") == EXPORT_FORMAT:
        return "chatkeep"
    return "browsa"


#: Keys whose shape the profile depends on: a browsa dump never holds them in another type.
_STRUCTURAL = (
    HISTORY_KEY,
    SESSIONS_INDEX_KEY,
    ACTIVE_SESSION_KEY,
    ATTACH_SNAPSHOTS_KEY,
    "providers",
)


def _structural(key: str) -> bool:
    return key in _STRUCTURAL or (
        key.startswith(SESSION_BODY_PREFIX) and len(key) > len(SESSION_BODY_PREFIX)
    )


def _shape_ok(key: str, value: Any) -> bool:
    """Whether ``value`` has the type browsa stores under ``key``."""
    if key in (HISTORY_KEY, SESSIONS_INDEX_KEY):
        return isinstance(value, list) and all(isinstance(e, dict) for e in value)
    if key.startswith(SESSION_BODY_PREFIX):
        return isinstance(value, list)
    if key == ACTIVE_SESSION_KEY:
        return value is None or isinstance(value, str)
    if key == ATTACH_SNAPSHOTS_KEY:
        return isinstance(value, dict)
    if key == "providers":
        return isinstance(value, dict) and all(isinstance(c, dict) for c in value.values())
    default = DEFAULTS.get(key, PANEL_OPTION_DEFAULTS.get(key))
    if isinstance(default, bool) or isinstance(value, bool):
        return type(value) is type(default)
    return isinstance(value, type(default))


def browsa_problem(data: Any) -> str | None:
    """Why ``data`` is not a browsa ``chrome.storage.local`` dump (``None``: it is one).

    The signature: a JSON object without a ``format`` key, holding at least one key browsa
    writes with a value of the type browsa stores there — ``history`` or ``savedSessions`` (a
    list of objects), ``session_<id>`` (a list), ``activeSessionId`` (a string or null),
    ``attachSnapshots`` (an object), ``providers`` (an object of cards), or a setting of §2 or
    a panel option (its default's type). One of the structural keys (all but the settings)
    holding another type refuses the file; a setting of another type is imported as it is (it
    reads as its default) but does not count as the signature. Other keys may come along."""
    if not isinstance(data, dict):
        return f"it is a JSON {type(data).__name__}, not an object of keys"
    if "format" in data:
        return f"it carries a `format` of {str(data['format'])[:40]!r}, which browsa never writes"
    signed = False
    for key, value in data.items():
        if not isinstance(key, str):
            continue
        if _structural(key):
            if not _shape_ok(key, value):
                return f"its {key!r} holds a {type(value).__name__}, not what browsa stores there"
            signed = True
        elif key in DEFAULTS or key in PANEL_OPTION_DEFAULTS:
            signed = signed or _shape_ok(key, value)
    if not signed:
        shown = ", ".join(repr(str(k)[:30]) for k in list(data)[:4]) or "none"
        return f"it holds no key browsa writes, with the type browsa stores (its keys: {shown})"
    return None


def check_browsa(data: Any) -> None:
    """Raise :class:`InvalidValue` when ``data`` lacks the browsa signature (nothing written)."""
    why = browsa_problem(data)
    if why is not None:
        raise InvalidValue(
            f"not a browsa dump: {why}; nothing was imported",
            hint="pass a chrome.storage.local dump, or name the file's format with --from",
        )


def _check_local(items: Any, where: str) -> dict[str, tuple[str, dict[str, Any]]]:
    if not isinstance(items, dict):
        raise InvalidValue(f"{where} must be a JSON object of keys")
    encoded = {}
    for k, v in items.items():
        check_key(k)
        check_value(v, f"the value of {k!r}")
        encoded[k] = codec.encode(v, codec.text_blobs_for(k), checked=True)
    return encoded


def clear_for_import(tx: Tx, backend: Backend, profile: str, replace: bool) -> str | None:
    """Inside the import's transaction: an empty profile is used as it is; one that holds data
    is written to a backup export and then wiped when ``replace``, else the import is refused
    (nothing written). Returns the backup's path (``None``: nothing was replaced)."""
    if tx.profile_is_empty():
        return None
    if not replace:
        raise ProfileNotEmpty(
            f"profile {profile!r} already holds data; nothing was imported",
            hint="import into a new --profile, or pass --replace to overwrite this one "
            "(a backup export of it is written first)",
        )
    path = write_backup(tx, backend, profile)
    tx.wipe_profile()
    return path


def import_profile(
    backend: Backend,
    profile: str,
    history: History,
    sessions: Sessions,
    data: Any,
    *,
    source: str = "auto",
    replace: bool = False,
) -> dict[str, Any]:
    if not isinstance(source, str):
        raise InvalidValue(f"the import source must be a string, got {type(source).__name__}")
    if source == "browsa" and isinstance(data, dict):
        check_browsa(data)  # named: the signature is required (a file's detection needs it too)
    if source == "auto":
        source = detect_source(data)
    if source not in ("chatkeep", "browsa"):
        raise InvalidValue(f"unknown import source {source!r}", hint="use chatkeep or browsa")
    if not isinstance(data, dict):
        raise InvalidValue(
            "an import must be a JSON object",
            hint="pass a chatkeep export or a browsa chrome.storage.local dump",
        )
    if source == "chatkeep":
        if data.get("format") != EXPORT_FORMAT:
            raise InvalidValue(
                "not a chatkeep export (missing format field)", hint="try --from browsa"
            )
        if data.get("version") != EXPORT_VERSION:
            raise InvalidValue(f"unsupported chatkeep export version {data.get('version')!r}")
        local = _check_local(data.get("local", {}), "local")
        local.pop(HISTORY_KEY, None)
        live = data.get("history", [])
        archive = data.get("archive", [])
    else:
        local = _check_local({k: v for k, v in data.items() if k != HISTORY_KEY}, "the dump")
        live = data.get(HISTORY_KEY, [])
        archive = []
    try:
        validate_entries(live)
        validate_entries(archive)
    except InvalidEntry as exc:
        raise InvalidEntry(
            f"the import's history is not valid: {exc.message}", field=exc.field, hint=exc.hint
        ) from None
    live_enc = [codec.encode(e, text_blobs=True, checked=True) for e in live]
    archive_enc = [codec.encode(e, text_blobs=True, checked=True) for e in archive]

    with backend.transaction(profile) as tx:
        backup = clear_for_import(tx, backend, profile, replace)
        for k, (text, blobs) in local.items():
            tx.kv.put_encoded(k, text, blobs)
        stamp = now_ms()
        for seq, (text, blobs) in enumerate(archive_enc):
            tx.history.archive_insert(seq, text, blobs, stamp)
        if source == "chatkeep":
            for pos, ((text, blobs), entry) in enumerate(zip(live_enc, live, strict=True)):
                tx.history.insert(
                    pos, text_length(entry), text, blobs, has_image_parts(entry), entry
                )
            tx.history.set_state(len(live), sum(text_length(e) for e in live))
        else:
            history.replace_in(tx, live)
        tx.history.archive_recount()
        renamed = sessions.migrate_in(tx)
        return {
            "source": source,
            "keys": len(local),
            "history": len(history.entries_in(tx)),
            "archived": tx.history.archive_count(),
            "sessions": len(sessions.list()),
            "renamedSessions": renamed,
            "backup": backup,
        }
