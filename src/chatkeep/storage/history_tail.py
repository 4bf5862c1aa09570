"""The end of the live history without reading the rest (SPEC §11: thousands of entries open in
a blink). A mixin of :class:`~chatkeep.storage.history.History`.

:meth:`HistoryTail.tail_window` gives the live history's length and its newest ``n`` entries
with their positions — what a face needs to show the end of a long conversation. It reads only
those ``n`` rows when this process has already read every row of the history at its current
write counter and found them all readable (then the row count is the entry count, so the
positions are exact); otherwise it reads the whole history once, as :meth:`History.read` does,
and the next call is the short one. :meth:`HistoryTail.write_count` is the history's write
counter: it grows with every write to the live history, from any process, so a value derived
from the history can be kept while it stays the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from . import codec
from .backend import Backend

if TYPE_CHECKING:
    from .sql import Tx

Entries = list[dict[str, Any]]

__all__ = ["HistoryTail", "TailWindow"]


@dataclass(frozen=True)
class TailWindow:
    """``entries`` are the live entries ``[start:length]``, read at write counter ``version``."""

    version: int
    length: int
    start: int
    entries: Entries


class HistoryTail:
    """Reading the end of the live history (see the module docstring)."""

    _b: Backend
    _profile: str

    if TYPE_CHECKING:

        def entries_in(self, tx: Tx) -> Entries: ...
        def _all_readable(self, version: int) -> int | None: ...

    def write_count(self) -> int:
        """The live history's write counter (see the module docstring)."""
        with self._b.transaction(self._profile, write=False) as tx:
            return tx.versions()[1]

    def tail_window(self, n: int) -> TailWindow:
        """The history's length and its newest ``n`` entries (``n`` ≥ 0) with where they start."""
        n = max(0, int(n))
        with self._b.transaction(self._profile, write=False) as tx:
            version = tx.versions()[1]
            count = self._all_readable(version)
            if count is not None:
                rows = tx.history.tail(n) if n else []
                values = codec.decode_many([t for _p, _c, t in rows[::-1]], tx.blobs.fetch_urls)
                tail = [v for v in values if isinstance(v, dict)]
                if len(tail) == len(values):  # the same rows read as a whole a moment ago
                    return TailWindow(version, count, count - len(tail), tail)
            entries = self.entries_in(tx)
        start = max(0, len(entries) - n)
        return TailWindow(version, len(entries), start, entries[start:])
