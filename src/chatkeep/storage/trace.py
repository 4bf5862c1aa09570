"""Diagnostics at the backend's execute seam: what one call costs the database.

``with store.trace() as t: …`` records, for the block, every statement the store's connection
runs (``t.statements``, in order, with their SQL text) and every transaction it opens
(``t.transactions``: ``"write"``, ``"read"``, or ``"autocommit"`` for a lone read statement
outside a transaction, which the database runs as a transaction of its own). Both backends
record at the same seam — :meth:`Backend.execute` / :meth:`Backend.query`, and the ``BEGIN`` /
``COMMIT`` of :meth:`Backend.transaction` — so the figures compare across SQLite and
PostgreSQL. Recording costs nothing when no trace is open.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Trace"]


@dataclass
class Trace:
    """The statements and transactions run while a :meth:`Backend.trace` block was open."""

    statements: list[str] = field(default_factory=list)
    transactions: list[str] = field(default_factory=list)

    @property
    def writes(self) -> int:
        """How many write transactions were opened."""
        return self.transactions.count("write")

    def summary(self) -> dict[str, int]:
        """``{"transactions", "writes", "statements"}``: the counts a bench line prints."""
        return {
            "transactions": len(self.transactions),
            "writes": self.writes,
            "statements": len(self.statements),
        }
