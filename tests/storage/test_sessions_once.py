"""Session save and load copy stored rows and blob references (ARCHITECTURE "Each thing done
once"), counted with ``store.trace()`` on SQLite and PostgreSQL: at most two transactions, the
live rows read once, no image read, written or hashed again."""

from __future__ import annotations

from factories import assistant, image_entry, png_data_url, user

IMAGE_READ = "SELECT hash, prefix, data FROM ck_blobs"  # resolving image data URLs


def _conversation(store) -> list:
    store.local.set({"maxHistoryEntries": 1000, "maxHistoryChars": 10_000_000})
    entries = [
        user(f"question {i} " + "w" * 200) if i % 2 == 0 else assistant(f"answer {i}")
        for i in range(394)
    ]
    for k in range(6):
        entries.insert(60 * k + 1, image_entry(f"figure {k}", png_data_url(60 + k, 40, noise=True)))
    entries.append(user("a long paste " + "z" * 6000))  # a long text: stored as a text blob
    store.history.mutate(lambda _: entries)
    return store.history.read()


def _no_pixels(statements: list[str]) -> None:
    assert not any(q.startswith(IMAGE_READ) for q in statements)
    assert not any(q.startswith("INSERT INTO ck_blobs") for q in statements)


def _live_reads(statements: list[str]) -> int:
    return sum("FROM ck_history WHERE profile=?" in q and "value" in q for q in statements)


def test_save_and_load_copy_rows_in_two_transactions(store) -> None:
    """save / write_back / load of a 401-entry conversation with 6 images: ≤ 2 transactions
    each, the live rows read once, no image decoded or stored again; what loads back equals
    what was saved, and the drawer search finds its words."""
    live = _conversation(store)
    with store.trace() as saved:
        row = store.sessions.save("first")
    store.history.append(user("one more"))
    with store.trace() as back:
        store.sessions.write_back()
    store.sessions.new()
    with store.trace() as loaded:
        count = store.sessions.load(row["id"])
    for t in (saved, back, loaded):
        assert len(t.transactions) <= 2, t.transactions
        _no_pixels(t.statements)
        assert _live_reads(t.statements) <= 1
    assert count == len(live) + 1
    assert store.history.read() == [*live, store.history.read()[-1]]
    assert store.sessions.get(row["id"])["history"] == store.history.read()
    assert [r["id"] for r in store.sessions.list("a long paste zzz")] == [row["id"]]
    assert store.sessions.list()[0]["name"] == "first"


def test_an_auto_named_copy_is_named_from_its_first_question(store) -> None:
    """A save without a name takes the first question's text, as stored rows or decoded."""
    store.history.append(user("where is the " + "q" * 5000))  # a text blob: read back for the name
    store.history.append(assistant("there"))
    row = store.sessions.save()
    assert row["name"].startswith("where is the qqq")


def test_the_blobs_of_a_loaded_session_outlive_the_rows_they_came_from(store) -> None:
    """Images copied by reference stay stored while any copy holds them: clearing the live
    history and deleting the other session leaves the loaded body whole."""
    url = png_data_url(50, 30, noise=True)
    store.history.append(image_entry("keep me", url))
    store.history.append(assistant("ok"))
    first = store.sessions.save("a")
    second = store.sessions.save("b")
    store.sessions.new()
    store.sessions.delete(first["id"])
    store.sessions.load(second["id"])
    store.history.clear()
    body = store.sessions.get(second["id"])["history"]
    assert body[0]["content"][1]["image_url"]["url"] == url
    assert store.stats()["missingBlobs"] == 0
