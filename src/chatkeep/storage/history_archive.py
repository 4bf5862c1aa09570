"""The archive side of the live history (SPEC §3.3): entries the window dropped, and earlier
versions of edited or regenerated turns (SPEC §3.5), read in pages or whole and appended in a
transaction. A mixin of :class:`~chatkeep.storage.history.History`; it also encodes the entries
both sides write."""

from __future__ import annotations

from typing import Any

from ..entries import text_length, validate_entries
from ..errors import CorruptValue, InvalidEntry, InvalidValue
from . import codec
from .backend import Backend
from .sql import Tx, now_ms

Entries = list[dict[str, Any]]


def _encode_entry(entry: Any, index: int | None = None) -> tuple[str, dict[str, Any], int]:
    try:
        text, blobs = codec.encode(entry, text_blobs=True, checked=True)  # validated by caller
    except InvalidValue as exc:
        where = "entry" if index is None else f"entry[{index}]"
        raise InvalidEntry(
            f"{where} is not JSON-compatible: {exc.message}", field="content"
        ) from None
    return text, blobs, text_length(entry)


class ArchiveRows:
    """Reading and appending the archive of one profile (``_b``: the backend)."""

    _b: Backend
    _profile: str

    def archived(self) -> Entries:
        """Entries dropped by the live window, oldest first. Never destroyed."""
        with self._b.transaction(self._profile, write=False) as tx:
            return self.archived_in(tx)

    def archived_in(self, tx: Tx) -> Entries:
        values = codec.decode_many(tx.history.archive_rows(), tx.blobs.fetch_urls)
        return [v for v in values if not isinstance(v, CorruptValue)]

    def archived_count(self) -> int:
        with self._b.transaction(self._profile, write=False) as tx:
            return tx.history.archive_count()

    def archived_page(self, before: int | None, limit: int) -> tuple[int, int, Entries]:
        """``(total, start, entries)``: the archive's length and its entries at positions
        ``[start, end)``, oldest first, where ``end`` is ``before`` (``None``: the end) and
        ``start`` is ``limit`` positions earlier. Read from the newest end: a page near it reads
        only its rows, whatever the archive's size (a row that cannot be read is left out)."""
        with self._b.transaction(self._profile, write=False) as tx:
            total = tx.history.archive_count()
            end = total if before is None else max(0, min(before, total))
            start = max(0, end - max(0, limit))
            texts = tx.history.archive_slice_rows(total - end, end - start) if end > start else []
            values = codec.decode_many(texts[::-1], tx.blobs.fetch_urls)
        return total, start, [v for v in values if not isinstance(v, CorruptValue)]

    def archived_last_with(self, key: str, before: int) -> dict[str, Any] | None:
        """The newest archived entry at a position before ``before`` that has the top-level
        ``key`` (only rows whose stored text holds ``"key":`` are decoded), or ``None``."""
        with self._b.transaction(self._profile, write=False) as tx:
            for text in tx.history.archive_rows_holding(f'"{key}":', max(0, before)):
                found = codec.decode_many([text], tx.blobs.fetch_urls)[0]
                if isinstance(found, dict) and key in found:
                    return found
        return None

    def archive_append(self, entries: Entries) -> int:
        """Add ``entries`` (validated) to the end of the archive in one transaction, e.g. a
        question and its late reply whose session was deleted meanwhile (SPEC §7.2). Returns
        the archive's new length."""
        validate_entries(entries)
        with self._b.transaction(self._profile) as tx:
            self._archive_in(tx, entries)
            return tx.history.archive_count()

    def _archive_in(self, tx: Tx, entries: Entries) -> None:
        encoded = [_encode_entry(e, i) for i, e in enumerate(entries)]
        seq = tx.history.archive_next_seq()
        stamp = now_ms()
        for text, blobs, _chars in encoded:
            tx.history.archive_insert(seq, text, blobs, stamp)
            seq += 1
        tx.history.archive_counted(seq - len(encoded), len(encoded))
