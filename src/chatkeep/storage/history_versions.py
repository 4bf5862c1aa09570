"""Earlier versions of edited or regenerated turns (SPEC §3.5), read back for the faces.

When edit & resend or regenerate replaces turn ``i`` (``History._cut``), the removed entries
go to the archive, each marked by :func:`version_marks`: ``replacedAt`` (the turn ``i``),
``replacedCut`` (one number per cut: the archive position its first entry took, so two cuts of
the same turn stay two versions) and ``replacedAfter`` (:func:`prefix_digest` of the
conversation before turn ``i``: the roles and texts of ``entries[:i]``, so flags, seen stamps
and thumbnails do not change it).

:meth:`EarlierVersions.earlier_versions` gives, per live turn, the versions it replaced,
oldest first: the groups whose ``replacedAfter`` is the digest of the live history before that
turn. So a version shows on the turn it was replaced at only while the conversation before it
is the same — not after a session switch, an edit further up, or the window moving the turn.
Only archive rows holding ``"replacedCut":`` are decoded, and the live history is read only
when there is one.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..entries import entry_text
from ..errors import CorruptValue
from . import codec
from .backend import Backend

if TYPE_CHECKING:
    from .sql import Tx

Entries = list[dict[str, Any]]

__all__ = ["EarlierVersions", "prefix_digest", "version_marks"]


def _digests(entries: Entries, wanted: set[int]) -> dict[int, str]:
    """:func:`prefix_digest` of ``entries[:i]`` for every ``i`` in ``wanted``, in one pass."""
    h = hashlib.sha256()
    out: dict[int, str] = {}
    for i in range(len(entries) + 1):
        if i in wanted:
            out[i] = h.hexdigest()[:32]
        if i < len(entries):
            e = entries[i]
            h.update(f"{e.get('role')}\0{entry_text(e)}\0".encode("utf-8", "surrogatepass"))
    return out


def prefix_digest(entries: Entries, i: int) -> str:
    """A digest of the roles and texts of ``entries[:i]``."""
    return _digests(entries[:i], {i})[i]


def version_marks(entries: Entries, i: int, cut: int) -> dict[str, Any]:
    """The fields every entry a cut at ``i`` removes carries in the archive."""
    return {"replacedAt": i, "replacedCut": cut, "replacedAfter": prefix_digest(entries, i)}


class EarlierVersions:
    """Reading the earlier versions of the live turns (see the module docstring)."""

    _b: Backend
    _profile: str

    if TYPE_CHECKING:

        def entries_in(self, tx: Tx) -> Entries: ...

    def earlier_versions(self) -> dict[int, list[Entries]]:
        """``{turn index: [version, …]}`` (oldest first; a version is the list of entries the
        cut removed, in order) for the live turns that replaced earlier versions."""
        with self._b.transaction(self._profile, write=False) as tx:
            groups: dict[int, list[dict[str, Any]]] = {}
            for text in tx.history.archive_rows_holding(
                '"replacedCut":', tx.history.archive_count()
            ):
                entry = codec.decode_many([text], tx.blobs.fetch_urls)[0]
                if isinstance(entry, CorruptValue) or not isinstance(entry, dict):
                    continue
                cut = entry.get("replacedCut")
                if not isinstance(cut, int) or not isinstance(entry.get("replacedAt"), int):
                    continue
                groups.setdefault(cut, []).insert(0, entry)  # the rows come newest first
            if not groups:
                return {}
            live = self.entries_in(tx)
        wanted = {g[0]["replacedAt"] for g in groups.values()}
        digests = _digests(live, {i for i in wanted if 0 <= i < len(live)})
        out: dict[int, list[Entries]] = {}
        for cut in sorted(groups):
            group = groups[cut]
            i = group[0]["replacedAt"]
            if i in digests and group[0].get("replacedAfter") == digests[i]:
                out.setdefault(i, []).append(group)
        return out
