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
"""

from __future__ import annotations

from ..constants import HISTORY_KEY
from ..entries import has_image_parts, text_length, validate_entries
from ..errors import InvalidEntry, InvalidValue, StoreError
from ..limits import check_key, check_value
from . import codec
from .sql import now_ms

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need it
if TYPE_CHECKING:
    from typing import Any

    from .backend import Backend
    from .history import History
    from .sessions import Sessions
    from .sql import Tx

EXPORT_FORMAT = "chatkeep-export"
EXPORT_VERSION = 1


def export_profile(backend: Backend, profile: str, history: History) -> dict[str, Any]:
    with backend.transaction(profile, write=False) as tx:
        keys = tx.kv_keys()
        local = tx.kv_get(keys)
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


def _check_local(items: Any, where: str) -> dict[str, tuple[str, dict[str, Any]]]:
    if not isinstance(items, dict):
        raise InvalidValue(f"{where} must be a JSON object of keys")
    encoded = {}
    for k, v in items.items():
        check_key(k)
        check_value(v, f"the value of {k!r}")
        encoded[k] = codec.encode(v, codec.text_blobs_for(k), checked=True)
    return encoded


def clear_for_import(tx: Tx, profile: str, replace: bool) -> None:
    """Inside the import's transaction: an empty profile is used as it is; one that holds data
    is wiped when ``replace``, else the import is refused (nothing written)."""
    if tx.profile_is_empty():
        return
    if not replace:
        raise StoreError(
            f"profile {profile!r} already holds data; nothing was imported",
            hint="import into a new --profile, or pass --replace to overwrite this one",
        )
    tx.wipe_profile()


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
        clear_for_import(tx, profile, replace)
        for k, (text, blobs) in local.items():
            tx.kv_put_encoded(k, text, blobs)
        stamp = now_ms()
        for seq, (text, blobs) in enumerate(archive_enc):
            tx.archive_insert(seq, text, blobs, stamp)
        if source == "chatkeep":
            for pos, ((text, blobs), entry) in enumerate(zip(live_enc, live, strict=True)):
                tx.hist_insert(pos, text_length(entry), text, blobs, has_image_parts(entry))
            tx.hist_set_state(len(live), sum(text_length(e) for e in live))
        else:
            history.replace_in(tx, live)
        tx.archive_recount()
        renamed = sessions.migrate_in(tx)
        return {
            "source": source,
            "keys": len(local),
            "history": len(history.entries_in(tx)),
            "archived": tx.archive_count(),
            "sessions": len(sessions.list()),
            "renamedSessions": renamed,
        }
