"""The base of the named parts of a transaction (:class:`~.sql.Tx`): ``tx.kv``, ``tx.blobs``,
``tx.history``, ``tx.sessions`` and ``tx.search``.

A part holds the transaction it belongs to and reaches its primitives through it
(``self.tx.rows``, ``self.tx.run``, ``self.tx.marks``, ``self.tx.chunks``, ``self.tx.bump``),
and the other parts as ``self.tx.<part>``. ``profile`` and ``_b`` (the backend) are the
transaction's, kept on the part for the statements that pass them themselves.
"""

from __future__ import annotations

from typing import Any


class TxPart:
    """One named part of a transaction, made once by the transaction it belongs to."""

    def __init__(self, tx: Any) -> None:
        self.tx = tx
        self.profile: str = tx.profile
        self._b: Any = tx._b
