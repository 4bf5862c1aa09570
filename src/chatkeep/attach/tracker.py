"""Change tracker for re-attached pages (SPEC §8.3).

``store.local["attachSnapshots"]`` maps ``"<mode>::<url>"`` to ``{hash, length, attachedAt}``:

- ``<url>`` is the source URL as it appears in the attachment header, i.e. with credentials and
  secret-looking query values redacted (§8.2): no secret is kept in the tracker, and a signed
  URL whose signature rotates still maps to one page. Sources without a URL (pasted images) are
  not tracked.
- ``hash`` is ``"sha256:" + hexdigest`` of the UTF-8 extracted text, followed, for each image
  in order, by ``"\\n\\x00"`` and the image's data URL: a page changes when its text or any of
  its pictures change. ``length`` is the length of the extracted text in characters.
- ``attachedAt`` is the attach time in epoch milliseconds (like ``createdAt`` of sessions).
- At most :data:`MAX_SNAPSHOTS` entries: after an update, the entries with the smallest
  ``attachedAt`` are evicted (malformed entries count as oldest).

The change note added to the ``Mode:`` line when the hash differs from the stored one is
``\\nNote: this page's content has changed since it was last attached (previously attached
<date>).`` where ``<date>`` is the previous ``attachedAt`` as ``YYYY-MM-DD HH:MM UTC``.

Pure helpers plus :func:`record_snapshot`, which updates the key with ``store.local.modify`` in
one transaction. Standard library only.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Iterable
from typing import Any

from ..constants import ATTACH_SNAPSHOTS_KEY

__all__ = [
    "MAX_SNAPSHOTS",
    "change_note",
    "content_hash",
    "format_attached_at",
    "previous_snapshot",
    "record_snapshot",
    "snapshot_key",
]

MAX_SNAPSHOTS = 50
_NOTE = "\nNote: this page's content has changed since it was last attached (previously attached {date})."


def snapshot_key(mode: str, url: str) -> str:
    """``"<mode>::<url>"`` — ``url`` as shown in the attachment header (already redacted)."""
    return f"{mode}::{url}"


def content_hash(text: str, images: Iterable[str] = ()) -> str:
    """``"sha256:<hex>"`` of the text and, in order, every image data URL."""
    h = hashlib.sha256(text.encode("utf-8", "surrogatepass"))
    for url in images:
        h.update(b"\n\x00")
        h.update(url.encode("ascii", "replace"))
    return "sha256:" + h.hexdigest()


def format_attached_at(ms: Any) -> str:
    """Epoch milliseconds → ``YYYY-MM-DD HH:MM UTC`` (``"an unknown date"`` when unreadable)."""
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return "an unknown date"
    try:
        when = dt.datetime.fromtimestamp(ms / 1000, tz=dt.UTC)
    except (OverflowError, OSError, ValueError):
        return "an unknown date"
    return when.strftime("%Y-%m-%d %H:%M UTC")


def _snapshots(value: Any) -> dict[str, Any]:
    """The stored map, or ``{}`` when missing or corrupt (a non-object value)."""
    return dict(value) if isinstance(value, dict) else {}


def previous_snapshot(store: Any, key: str) -> dict[str, Any] | None:
    """The stored snapshot under ``key`` (``None`` when there is none or it is malformed)."""
    snap = _snapshots(store.local.get(ATTACH_SNAPSHOTS_KEY)).get(key)
    return snap if isinstance(snap, dict) and isinstance(snap.get("hash"), str) else None


def change_note(previous: dict[str, Any] | None, new_hash: str) -> str | None:
    """The ``Mode:``-line note when ``previous`` exists and its hash differs, else ``None``."""
    if previous is None or previous.get("hash") == new_hash:
        return None
    return _NOTE.format(date=format_attached_at(previous.get("attachedAt")))


def _age(snap: Any) -> float:
    when = snap.get("attachedAt") if isinstance(snap, dict) else None
    if isinstance(when, bool) or not isinstance(when, int | float):
        return float("-inf")
    return float(when)


def _evict(snaps: dict[str, Any], keep: str, limit: int) -> dict[str, Any]:
    if len(snaps) <= limit:
        return snaps
    # Oldest first; ties keep their stored order (sorted() is stable). The new key is never
    # evicted: its attachedAt is "now", and a clock step backwards must not drop it.
    order = sorted((k for k in snaps if k != keep), key=lambda k: _age(snaps[k]))
    for k in order[: len(snaps) - limit]:
        del snaps[k]
    return snaps


def record_snapshot(
    store: Any, key: str, digest: str, length: int, attached_at: int, limit: int = MAX_SNAPSHOTS
) -> None:
    """Store ``{hash, length, attachedAt}`` under ``key`` and evict beyond ``limit``; one
    read–modify–write transaction, so concurrent attaches never lose each other's snapshot."""

    def fn(current: Any) -> dict[str, Any]:
        snaps = _snapshots(current)
        snaps.pop(key, None)
        snaps[key] = {"hash": digest, "length": length, "attachedAt": attached_at}
        return _evict(snaps, key, limit)

    store.local.modify(ATTACH_SNAPSHOTS_KEY, fn)
