"""The storage seam: areas, live history, archive, saved sessions and blobs of one profile.

The rest of chatkeep holds a :class:`~.profile.Profile`, opened on a :class:`~.backend.Backend`
(:mod:`.sqlite`, the default, or :mod:`.postgres`); both backends run the SQL of :mod:`.sql`
inside its transaction object. Nothing outside this package touches chatkeep's database (the
``llm`` importer only reads that tool's own ``logs.db``). ``store.session`` is the in-memory
:class:`~.areas.MemoryArea`; ``chatkeep doctor`` is :mod:`.doctor`.
"""
