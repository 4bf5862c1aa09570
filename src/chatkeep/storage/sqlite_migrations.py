"""Every schema migration of an SQLite store, in the order it applies them.

The shared ones first (:mod:`.migrations`), then SQLite's own: the drawer's trigram tables
(:mod:`.sqlite_search`, :mod:`.sqlite_order`) and the message-search index (:mod:`.search_schema`,
:mod:`.search_tail`). What each one does lives beside the code that reads what it makes; this
module names them and fixes their order. Never reorder or rename a migration once made.
"""

from __future__ import annotations

from . import search_schema, search_tail, sqlite_order, sqlite_search
from .migrations import BACKFILL, Migration, for_dialect

_SQLITE = ("sqlite",)

#: Session digests in a trigram full-text index.
SESSION_FTS = Migration(
    "0003_sqlite_session_fts", dialects=_SQLITE, run=sqlite_search.create_session_fts
)
#: Digests keyed by session id, with the trigram index beside them.
SESSION_TEXT = Migration(
    "0007_sqlite_session_text", dialects=_SQLITE, run=sqlite_search.create_session_text
)
#: Session names in a trigram index too.
SESSION_NAMES = Migration(
    "0009_sqlite_session_names", dialects=_SQLITE, run=sqlite_search.create_session_names
)
#: Trigram rows in the drawer's order.
SESSION_ORDER = Migration(
    "0010_sqlite_session_order", dialects=_SQLITE, run=sqlite_order.order_rids
)
#: The digests' trigram index without positions.
DIGEST_TRGM = Migration(
    "0022_sqlite_digest_trgm", dialects=_SQLITE, run=sqlite_search.digest_detail
)
#: The message-search rows, their FTS5 trigram index, and the vectors' table.
SEARCH_ROWS = Migration(search_schema.ROWS, search_schema.SQLITE_ROW_TABLE, dialects=_SQLITE)
SEARCH_TRGM = Migration(search_schema.SQLITE_TRGM, dialects=_SQLITE, run=search_schema.sqlite_fts)
SEARCH_VECTORS = Migration(
    search_schema.VECTORS, search_schema.SQLITE_VECTOR_TABLE, dialects=_SQLITE
)
#: FTS5 written behind the message-search rows, and its pending data flushed in 8 MB pieces.
SEARCH_TAIL = Migration(search_schema.TAIL, dialects=_SQLITE, run=search_tail.write_behind)
FTS_HASH = Migration(search_schema.HASH_SIZE, dialects=_SQLITE, run=search_tail.hash_size)

#: The registry, in order.
MIGRATIONS: tuple[Migration, ...] = (
    *for_dialect("sqlite"),
    *(SESSION_FTS, SESSION_TEXT, SESSION_NAMES, SESSION_ORDER, DIGEST_TRGM),
    *(SEARCH_ROWS, SEARCH_TRGM, BACKFILL, SEARCH_VECTORS, SEARCH_TAIL, FTS_HASH),
)

#: Migrations a read-only store may lack (an SQLite without FTS5 trigrams never makes the
#: drawer's; without the message index its searches say so).
OPTIONAL = {
    *(SESSION_FTS.name, SESSION_TEXT.name, SESSION_NAMES.name, SESSION_ORDER.name),
    DIGEST_TRGM.name,
    *search_schema.OPTIONAL,
}
