"""Row operations on the live history and the archive: ``tx.history`` of :class:`~.sql.Tx`.

``ck_history`` holds one row per live entry, ordered by ``pos`` (``chars`` = its text length,
``unseen`` = image parts and no ``imagesSeen: true``); ``ck_history_state`` its count and text
length; ``ck_archive`` the entries the live window dropped, in order. Every write counts one
more ``history`` write (``Tx.bump``) so per-process caches of the live history stay exact.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from .codec import Blob
from .tx_part import TxPart

_COUNT = "(SELECT count(*) FROM ck_archive a WHERE a.profile = ck_history_state.profile)"
#: Migration 0013: the archive's length kept beside it (``NULL``: not counted yet), and the
#: seq after its last row when it was counted (:meth:`HistoryRows.archive_count`).
ARCHIVE_COUNT_MIGRATION = (
    "ALTER TABLE ck_history_state ADD COLUMN archived BIGINT",
    "ALTER TABLE ck_history_state ADD COLUMN archived_next BIGINT",
    # every profile's archive counted once, here, so no read has to
    f"UPDATE ck_history_state SET archived = {_COUNT}, archived_next = coalesce((SELECT"
    " max(a.seq) + 1 FROM ck_archive a WHERE a.profile = ck_history_state.profile), 0)",
)


class HistoryRows(TxPart):
    """History and archive rows of one profile (``tx.history``)."""

    def state(self) -> tuple[int, int]:
        r = self.tx.rows("SELECT live_count, live_chars FROM ck_history_state WHERE profile=?")
        return (int(r[0][0]), int(r[0][1])) if r else (0, 0)

    def set_state(self, count: int, chars: int) -> None:
        self.tx.bump("history")
        self.tx.run(
            "INSERT INTO ck_history_state (profile, live_count, live_chars) VALUES (?,?,?)"
            " ON CONFLICT (profile) DO UPDATE SET live_count = excluded.live_count,"
            " live_chars = excluded.live_chars",
            (count, chars),
        )

    def live_rows(self) -> list[tuple[int, int, str]]:
        return [
            (int(p), int(c), v)
            for p, c, v in self.tx.rows(
                "SELECT pos, chars, value FROM ck_history WHERE profile=? ORDER BY pos"
            )
        ]

    def next_pos(self) -> int:
        r = self.tx.rows("SELECT max(pos) FROM ck_history WHERE profile=?")
        return 0 if not r or r[0][0] is None else int(r[0][0]) + 1

    def joined(self) -> tuple[int, str] | None:
        """(row count, every live row's text in order as one JSON array text): one row fetched."""
        r = self.tx.rows(self._b.joined_history_sql)
        if not r or not r[0][0]:
            return None
        return int(r[0][0]), "[" + str(r[0][1]) + "]"

    def tail(self, n: int) -> list[tuple[int, int, str]]:
        """The newest ``n`` live rows, newest first."""
        return [
            (int(p), int(c), v)
            for p, c, v in self.tx.rows(
                "SELECT pos, chars, value FROM ck_history WHERE profile=? ORDER BY pos DESC LIMIT ?",
                (n,),
            )
        ]

    def insert(
        self,
        pos: int,
        chars: int,
        text: str,
        blobs: dict[str, Blob],
        unseen: bool = True,
        value: Any = None,
    ) -> None:
        """Write one live row; ``value``: the entry encoded as ``text``, when the caller has it
        (the search index reads its text from it instead of parsing ``text`` again)."""
        self.tx.bump("history")
        self.tx.blobs.put(blobs)
        self.tx.run(
            "INSERT INTO ck_history (profile, pos, chars, value, unseen) VALUES (?,?,?,?,?)",
            (pos, chars, text, int(unseen)),
        )
        self.tx.blobs.add_refs(f"h:{pos}", blobs)
        self.tx.search.put("h", pos, text, blobs, value=value)

    def unseen_rows(self) -> list[tuple[int, int, str]]:
        """(pos, chars, text) of the live rows flagged as holding unseen images, in order."""
        return [
            (int(p), int(c), v)
            for p, c, v in self.tx.rows(
                "SELECT pos, chars, value FROM ck_history WHERE profile=? AND unseen = 1"
                " ORDER BY pos"
            )
        ]

    def update(self, pos: int, chars: int, text: str, blobs: dict[str, Blob], unseen: bool) -> None:
        """Rewrite one live row in place (its position, hence its order, is kept)."""
        self.tx.bump("history")
        self.tx.blobs.put(blobs)
        self._b.execute(
            "UPDATE ck_history SET chars=?, value=?, unseen=? WHERE profile=? AND pos=?",
            (chars, text, int(unseen), self.profile, pos),
        )
        owner = f"h:{pos}"
        old = self.tx.blobs.drop_refs([owner])
        self.tx.blobs.add_refs(owner, blobs)
        self.tx.blobs.gc(old - set(blobs))
        self.tx.search.put("h", pos, text, blobs, replace=True)

    def restamp(self, pos: int, chars: int, text: str) -> None:
        """Rewrite one live row's stored text that keeps the same blobs (the seen stamp)."""
        self.tx.bump("history")
        self._b.execute(
            "UPDATE ck_history SET chars=?, value=?, unseen=0 WHERE profile=? AND pos=?",
            (chars, text, self.profile, pos),
        )

    def clear_unseen(self, positions: Sequence[int]) -> None:
        for chunk in self.tx.chunks(positions):
            self.tx.run(
                f"UPDATE ck_history SET unseen = 0 WHERE profile=? AND pos IN ({self.tx.marks(len(chunk))})",
                chunk,
            )

    def delete(self, positions: Sequence[int]) -> None:
        self.tx.bump("history")
        for chunk in self.tx.chunks(positions):
            self.tx.run(
                f"DELETE FROM ck_history WHERE profile=? AND pos IN ({self.tx.marks(len(chunk))})",
                chunk,
            )
        self.tx.blobs.gc(self.tx.blobs.drop_refs([f"h:{p}" for p in positions]))
        self.tx.search.drop("h", "", positions)

    def archive_oldest(self, n: int) -> tuple[int, int]:
        """Move the ``n`` oldest live rows to the archive; returns (rows moved, chars moved)."""
        self.tx.bump("history")
        rows = self.tx.rows(
            "SELECT pos, chars, value FROM ck_history WHERE profile=? ORDER BY pos LIMIT ?", (n,)
        )
        if not rows:
            return 0, 0
        r = self.tx.rows("SELECT max(seq) FROM ck_archive WHERE profile=?")
        seq = 0 if not r or r[0][0] is None else int(r[0][0]) + 1
        stamp = self.tx.now_ms()
        self.tx.search.archived([(int(p), seq + i) for i, (p, _c, _v) in enumerate(rows)])
        for pos, _chars, value in rows:
            self.tx.run(
                "INSERT INTO ck_archive (profile, seq, archived_at, value) VALUES (?,?,?,?)",
                (seq, stamp, value),
            )
            self.tx.blobs.move_refs(f"h:{pos}", f"a:{seq}")
            seq += 1
        self.archive_counted(seq - len(rows), len(rows))
        self.tx.run("DELETE FROM ck_history WHERE profile=? AND pos <= ?", (int(rows[-1][0]),))
        return len(rows), sum(int(c) for _p, c, _v in rows)

    def oldest_chars(self, limit: int) -> list[int]:
        return [
            int(r[0])
            for r in self.tx.rows(
                "SELECT chars FROM ck_history WHERE profile=? ORDER BY pos LIMIT ?", (limit,)
            )
        ]

    def archive_rows(self) -> list[str]:
        return [
            r[0] for r in self.tx.rows("SELECT value FROM ck_archive WHERE profile=? ORDER BY seq")
        ]

    def archive_page(self, after: int, limit: int) -> list[tuple[int, str]]:
        """(seq, text) of up to ``limit`` archive rows after ``after``, in order."""
        return [
            (int(q), v)
            for q, v in self.tx.rows(
                "SELECT seq, value FROM ck_archive WHERE profile=? AND seq > ? ORDER BY seq LIMIT ?",
                (after, limit),
            )
        ]

    def archive_slice_rows(self, skip: int, n: int) -> list[str]:
        """Texts of ``n`` archive rows, newest first, after the newest ``skip``."""
        return [
            r[0]
            for r in self.tx.rows(
                "SELECT value FROM ck_archive WHERE profile=? ORDER BY seq DESC LIMIT ? OFFSET ?",
                (n, skip),
            )
        ]

    def archive_rows_holding(self, needle: str, before: int) -> Iterator[str]:
        """Texts of the archive rows at positions before ``before`` holding ``needle``, newest
        first (the scan stops where the caller does, a page of candidates at a time)."""
        fn = self._b.substring_fn
        at = self.tx.rows(
            "SELECT seq FROM ck_archive WHERE profile=? ORDER BY seq LIMIT 1 OFFSET ?", (before,)
        )
        below = int(at[0][0]) if at else 2**62  # the seq at that position, or past the end
        while True:
            rows = self.tx.rows(
                f"SELECT seq, value FROM ck_archive WHERE profile=? AND {fn}(value, ?) > 0"
                " AND seq < ? ORDER BY seq DESC LIMIT 16",
                (needle, below),
            )
            for seq, text in rows:
                yield text
                below = int(seq)
            if len(rows) < 16:
                return

    def archive_next_seq(self) -> int:
        r = self.tx.rows("SELECT max(seq) FROM ck_archive WHERE profile=?")
        return 0 if not r or r[0][0] is None else int(r[0][0]) + 1

    def archive_count(self) -> int:
        """The archive's length: the count kept in ``ck_history_state`` (migration 0013) while
        the archive still ends where that count was taken, else counted (exact either way;
        a write by code that does not keep the count, an older version, moves the end)."""
        r = self.tx.rows(
            "SELECT s.archived, s.archived_next, (SELECT max(a.seq) FROM ck_archive a"
            " WHERE a.profile = s.profile) FROM ck_history_state s WHERE s.profile=?"
        )
        if r and r[0][0] is not None and r[0][1] == (-1 if r[0][2] is None else r[0][2]) + 1:
            return int(r[0][0])
        return int(self.tx.rows("SELECT count(*) FROM ck_archive WHERE profile=?")[0][0])

    def archive_counted(self, old_next: int, added: int) -> None:
        """Keep the archive's count: ``added`` rows went in from seq ``old_next`` on. The kept
        count grows by them if it was taken where they start, else it is counted afresh."""
        self._b.execute(  # the profile is the last parameter here
            "UPDATE ck_history_state SET archived = CASE WHEN archived_next = ?"
            f" THEN archived + ? ELSE {_COUNT} END, archived_next = ? WHERE profile=?",
            (old_next, added, old_next + added, self.profile),
        )

    def archive_recount(self) -> None:
        """Count the archive afresh (after an import or a repair wrote or removed rows)."""
        self.tx.run(ARCHIVE_COUNT_MIGRATION[-1] + " WHERE profile=?")

    def archive_insert(self, seq: int, text: str, blobs: dict[str, Blob], stamp: int) -> None:
        self.tx.blobs.put(blobs)
        self.tx.run(
            "INSERT INTO ck_archive (profile, seq, archived_at, value) VALUES (?,?,?,?)",
            (seq, stamp, text),
        )
        self.tx.blobs.add_refs(f"a:{seq}", blobs)
        self.tx.search.put("a", seq, text, blobs)
