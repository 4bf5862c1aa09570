"""Blob rows (``ck_blobs``) and who references them (``ck_blob_refs``): ``tx.blobs`` of
:class:`~.sql.Tx`: content-addressed image bytes and long texts, stored once per profile and
collected when the last reference goes."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from . import codec
from .codec import Blob
from .tx_part import TxPart


class BlobRows(TxPart):
    """Blob and reference rows of one profile (``tx.blobs``)."""

    # -- blobs ------------------------------------------------------------------------------
    def put(self, blobs: dict[str, Blob]) -> None:
        if not blobs:
            return
        hashes = list(blobs)
        have: set[str] = set()
        for chunk in self.tx.chunks(hashes):
            have.update(
                r[0]
                for r in self.tx.rows(
                    f"SELECT hash FROM ck_blobs WHERE profile=? AND hash IN ({self.tx.marks(len(chunk))})",
                    chunk,
                )
            )
        for h in hashes:
            if h not in have:
                b = blobs[h]
                self.tx.run(
                    "INSERT INTO ck_blobs (profile, hash, prefix, data) VALUES (?,?,?,?)"
                    " ON CONFLICT (profile, hash) DO NOTHING",
                    (h, b.prefix, self._b.binary(b.data)),
                )

    def fetch_urls(self, hashes: Iterable[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for chunk in self.tx.chunks(hashes):
            for h, prefix, data in self.tx.rows(
                f"SELECT hash, prefix, data FROM ck_blobs WHERE profile=? AND hash IN ({self.tx.marks(len(chunk))})",
                chunk,
            ):
                out[h] = Blob(h, prefix, bytes(data)).url()
        return out

    def add_refs(self, owner: str, hashes: Iterable[str]) -> None:
        for h in hashes:
            self.tx.run(
                "INSERT INTO ck_blob_refs (profile, owner, hash) VALUES (?,?,?)"
                " ON CONFLICT (profile, owner, hash) DO NOTHING",
                (owner, h),
            )

    def drop_refs(self, owners: Sequence[str]) -> set[str]:
        """Remove the refs of ``owners``; returns the hashes they referenced."""
        dropped: set[str] = set()
        for chunk in self.tx.chunks(owners):
            m = self.tx.marks(len(chunk))
            dropped.update(
                r[0]
                for r in self.tx.rows(
                    f"SELECT hash FROM ck_blob_refs WHERE profile=? AND owner IN ({m})", chunk
                )
            )
            self.tx.run(f"DELETE FROM ck_blob_refs WHERE profile=? AND owner IN ({m})", chunk)
        return dropped

    def move_refs(self, old_owner: str, new_owner: str) -> None:
        # profile is not the first placeholder here, so bypass run()'s profile prefix
        self._b.execute(
            "UPDATE ck_blob_refs SET owner=? WHERE profile=? AND owner=?",
            (new_owner, self.profile, old_owner),
        )

    def gc(self, candidates: Iterable[str]) -> int:
        """Delete candidate blobs that nothing references any more."""
        removed = 0
        for h in set(candidates):
            if not self.tx.rows(
                "SELECT 1 FROM ck_blob_refs WHERE profile=? AND hash=? LIMIT 1", (h,)
            ):
                self.tx.run("DELETE FROM ck_blobs WHERE profile=? AND hash=?", (h,))
                removed += 1
        return removed

    def decode(self, text: str) -> Any:
        return codec.decode(text, self.fetch_urls)
