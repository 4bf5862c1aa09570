"""The storage seam: areas, live history, archive, sessions and blobs over one backend.

Nothing outside this package touches a database. Backends (SQLite, PostgreSQL) share the SQL in
:mod:`.sql`; the in-memory area of ``store.session`` lives in :mod:`.memory`.
"""
