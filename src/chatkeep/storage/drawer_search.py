"""How a backend answers the drawer search (SPEC §4.3: ``store.sessions.list(q)`` matching
session names and a text digest): which table holds the digests, how one is inserted, and the
SQL that finds a query's matches.

Each backend makes one such object, ``backend.drawer``: :class:`DrawerSearch` here scans
(the defaults), :class:`~.sqlite_order.SQLiteDrawerSearch` asks SQLite's trigram tables
(:mod:`.sqlite_search`, kept in the drawer's order by :mod:`.sqlite_order`) and
:class:`~.postgres.PostgresDrawerSearch` the ``pg_trgm`` indexes. The message search is
tuned on the backend itself (:mod:`.search_schema`).
"""

from __future__ import annotations

from typing import Any


class DrawerSearch:
    """The drawer search of one backend: a plain digest table, searched by scanning."""

    digest_table = "ck_session_digest"
    #: Whether ``digest_table`` is keyed by ``(profile, id)`` (one session's digest is read
    #: through an index, so a search may join it row by row).
    digest_keyed = True
    #: Whether the trigram rows follow the drawer's order (SQLite, ``sqlite_order``): a search
    #: page is answered by :meth:`top_matches` from the first matches only.
    ordered_rids = False
    #: A join written so the planner keeps its left side outermost.
    cross_join = "JOIN"

    def __init__(self, backend: Any) -> None:
        #: The backend whose statements this object writes (and, on SQLite, runs).
        self.backend = backend

    def digest_insert(self, order: tuple[int, int] | None) -> tuple[str, tuple[Any, ...]]:
        """The statement inserting one digest (parameters: profile, id, digest, then the extra
        parameters returned with it); ``order``: (pinned, createdAt) of the session's index row
        when that row is not written yet."""
        return f"INSERT INTO {self.digest_table} (profile, id, digest) VALUES (?,?,?)", ()

    def digest_rids(self, orders: list[tuple[int, int]]) -> list[int] | None:
        """The rowids of digests inserted one after another whose sessions have these
        ``(pinned, createdAt)``, where the store orders them (:attr:`ordered_rids`); ``None``:
        the digest table numbers its rows itself."""
        return None

    def tidy_search(self) -> None:
        """Bounded upkeep of the drawer's search indexes, at the end of a write transaction
        that wrote session rows or digests (SQLite: an incremental FTS5 merge of its trigram
        tables). Never fails the write."""
        return None

    def top_matches(self, needle: str, profile: str, want: int) -> list[tuple[int, str]] | None:
        """(ord, text) of the first ``want`` rows matching ``needle`` in the drawer's order,
        or ``None`` where :attr:`ordered_rids` cannot answer."""
        return None

    def reuse_search_plans(self) -> None:
        """Inside a drawer search's transaction, before its statements: let the server reuse
        one plan per statement instead of planning it for every call (PostgreSQL). Nothing
        to do elsewhere."""
        return None

    def indexed_search(self, needle: str) -> bool:
        """Whether :meth:`match_ords_sql` answers ``needle`` from an index rather than a scan."""
        return False

    def match_ords_sql(self, needle: str, profile: str) -> tuple[str, tuple[Any, ...]]:
        """A subquery selecting ``ord, pinned, created_at`` of every index row of ``profile``
        with a usable id whose name or digest contains ``needle`` (already lower-cased), with
        its parameters. This one scans; backends with a trigram index override it."""
        fn = self.backend.substring_fn
        return (
            "SELECT ord, pinned, created_at FROM ck_sessions WHERE profile=?"
            f" AND id IS NOT NULL AND {fn}(name_lc, ?) > 0 UNION"
            f" SELECT s.ord, s.pinned, s.created_at FROM {self.digest_table} d JOIN ck_sessions s"
            f" ON s.profile = d.profile AND s.id = d.id WHERE d.profile=? AND {fn}(d.digest, ?) > 0",
            (profile, needle, profile, needle),
        )
