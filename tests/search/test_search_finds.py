"""SPEC §16's text search finds a message wherever it is kept, with its position and a
snippet: past the old 100,000-character digest cap, inside a word, in CJK text, in the
archive, in an evicted session, in an imported ChatGPT conversation; and after a delete,
nothing of the deleted session is left anywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import chatkeep

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "interop" / "real"


def _one(hits: list[dict[str, Any]]) -> dict[str, Any]:
    assert len(hits) == 1, hits
    return hits[0]


def test_word_past_the_digest_cap_is_found_at_its_entry(store: chatkeep.Store) -> None:
    """A word that only occurs past the 100,000th character of a saved session is found,
    with the entry's index, its session and a snippet marking it."""
    store.history.append({"role": "user", "content": "read this long file"})
    store.history.append({"role": "assistant", "content": "lorem ipsum " * 9000})
    store.history.append({"role": "user", "content": "filler " * 20000 + "quetzalcoatl flies"})
    row = store.sessions.save("Long one")
    assert row is not None
    hit = _one(store.search("quetzalcoatl", mode="text", where="session"))
    assert hit["sessionId"] == row["id"] and hit["sessionName"] == "Long one"
    assert (hit["where"], hit["index"], hit["role"]) == ("session", 2, "user")
    assert "<mark>quetzalcoatl</mark> flies" in hit["snippet"]
    assert len(hit["snippet"]) < 400 and hit["score"] > 0


def test_substring_inside_a_word(store: chatkeep.Store) -> None:
    """A piece of a word matches (trigram index), case-insensitively, and is marked."""
    store.history.append({"role": "user", "content": "Photosynthesis needs light"})
    store.history.append({"role": "assistant", "content": "nothing to see"})
    hit = _one(store.search("SYNTH", mode="text"))
    assert (hit["where"], hit["index"]) == ("live", 0)
    assert hit["snippet"] == "Photo<mark>synth</mark>esis needs light"


def test_cjk_phrase(store: chatkeep.Store) -> None:
    """A Chinese phrase inside a sentence without spaces is found and marked."""
    store.history.append({"role": "user", "content": "你好"})
    store.history.append({"role": "assistant", "content": "我们今天讨论数据库设计的基本原则。"})
    hit = _one(store.search("数据库设计", mode="text"))
    assert (hit["index"], hit["role"]) == (1, "assistant")
    assert "<mark>数据库设计</mark>" in hit["snippet"]


def test_two_character_cjk_word_is_found_too(store: chatkeep.Store) -> None:
    """A query shorter than a trigram still finds its entry (by a scan)."""
    store.history.append({"role": "user", "content": "天气很好"})
    hit = _one(store.search("天气", mode="text"))
    assert hit["snippet"] == "<mark>天气</mark>很好"


def test_text_in_the_archive_has_its_archive_index(store: chatkeep.Store) -> None:
    """Entries the live window moved out are found in the archive at their position there."""
    store.local.set("maxHistoryEntries", 2)
    for i in range(6):
        store.history.append({"role": "user", "content": f"turn {i} token{i}x"})
        store.history.append({"role": "assistant", "content": f"reply {i}"})
    assert len(store.history.archived()) == 10
    hit = _one(store.search("token3x", mode="text"))
    assert (hit["where"], hit["index"]) == ("archive", 6)
    assert store.history.archived()[hit["index"]]["content"] == "turn 3 token3x"
    assert store.search("token3x", mode="text", where="live") == []
    live = _one(store.search("token5x", mode="text"))
    assert (live["where"], live["index"]) == ("live", 0)


def test_text_in_an_evicted_session(store: chatkeep.Store) -> None:
    """A session the drawer cap evicted is found as ``evicted``, by name, and back as
    ``session`` once restored."""
    store.local.set("maxSessions", 1)
    store.history.append({"role": "user", "content": "the aardvark digs"})
    first = store.sessions.save("Old")
    store.history.clear()
    store.history.append({"role": "user", "content": "something newer"})
    store.sessions.save("New")
    assert first is not None
    hit = _one(store.search("aardvark", mode="text", where=["session", "evicted"]))
    assert (hit["where"], hit["sessionId"], hit["sessionName"]) == ("evicted", first["id"], "Old")
    assert store.search("aardvark", mode="text", where="session") == []
    store.local.set("maxSessions", 0)
    store.sessions.restore(first["id"])
    assert _one(store.search("aardvark", mode="text"))["where"] == "session"


def test_imported_chatgpt_message(store: chatkeep.Store) -> None:
    """A message of a real ChatGPT export is found in its imported session at its index;
    a message off the conversation's current branch is not."""
    report = chatkeep.import_file(store, str(REAL / "chatgpt" / "librechat-chatgpt-tree.json"))
    assert report["added"] == 1
    hit = _one(store.search("tell me a joke", mode="text"))
    [row] = store.sessions.list()
    assert (hit["where"], hit["sessionId"], hit["role"]) == ("session", row["id"], "user")
    body = store.sessions.get(row["id"])["history"]  # type: ignore[index]
    assert chatkeep.entry_text(body[hit["index"]]) == "tell me a joke"
    assert hit["snippet"] == "<mark>tell</mark> <mark>me</mark> <mark>a</mark> <mark>joke</mark>"
    assert store.search('"so cool bro"', mode="text") == []


def test_delete_leaves_nothing_of_the_session(store: chatkeep.Store, spec: Any) -> None:
    """After a delete no search finds the session and no index row of it is left."""
    store.history.append({"role": "user", "content": "the platypus lays eggs"})
    row = store.sessions.save("Mammals")
    assert row is not None and store.search("platypus", mode="text", where="session")
    store.history.clear()
    assert store.sessions.delete(row["id"])
    assert store.search("platypus", mode="text") == []
    left = spec.raw_rows(
        "SELECT count(*) FROM ck_search WHERE profile=? AND owner=?", (spec.profile, row["id"])
    )
    assert left == [(0,)]


def test_paging_and_order(store: chatkeep.Store) -> None:
    """``limit``/``offset`` page through hits without repeats; better hits come first."""
    for i in range(30):
        store.history.append({"role": "user", "content": f"note {i} about walrus"})
    store.history.append({"role": "user", "content": "walrus walrus walrus"})
    pages = [store.search("walrus", mode="text", limit=10, offset=o) for o in (0, 10, 20, 30)]
    assert [len(p) for p in pages] == [10, 10, 10, 1]
    seen = [h["index"] for p in pages for h in p]
    assert sorted(seen) == list(range(31))
    assert pages[0][0]["index"] == 30  # the entry saying it three times
    scores = [h["score"] for p in pages for h in p]
    assert scores == sorted(scores, reverse=True)


def test_every_term_must_match_and_quotes_keep_a_phrase(store: chatkeep.Store) -> None:
    """Several words find the entries holding all of them; a quoted phrase is one term."""
    store.history.append({"role": "user", "content": "red apples and green pears"})
    store.history.append({"role": "user", "content": "green apples"})
    assert {h["index"] for h in store.search("apples green", mode="text")} == {0, 1}
    assert [h["index"] for h in store.search("apples pears", mode="text")] == [0]
    assert [h["index"] for h in store.search('"green apples"', mode="text")] == [1]


def test_images_are_never_text(store: chatkeep.Store) -> None:
    """Image bytes are not searched: the base64 of a picture never matches."""
    url = "data:image/png;base64," + "QUJDREVG" * 100
    store.history.append(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "a picture"},
                {"type": "image_url", "image_url": {"url": url}},
            ],
        }
    )
    assert store.search("QUJDREVG", mode="text") == []
    assert _one(store.search("picture", mode="text"))["snippet"] == "a <mark>picture</mark>"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"limit": 0},
        {"limit": 501},
        {"offset": -1},
        {"mode": "fuzzy"},
        {"where": "attic"},
        {"where": []},
        {"limit": True},
    ],
)
def test_bad_arguments_are_typed_errors(store: chatkeep.Store, kwargs: dict[str, Any]) -> None:
    """A bad argument is an InvalidValue with a hint."""
    with pytest.raises(chatkeep.InvalidValue) as info:
        store.search("x", **kwargs)
    assert info.value.hint


def test_blank_query_finds_nothing(store: chatkeep.Store) -> None:
    """A query of white space only is no query: no hits, no error."""
    store.history.append({"role": "user", "content": "anything"})
    assert store.search("   ", mode="text") == []
    with pytest.raises(chatkeep.InvalidValue):
        store.search(None, mode="text")  # type: ignore[arg-type]


def test_terms_of_every_density_are_found_past_the_newest_rows(store: chatkeep.Store) -> None:
    """A profile holding more chunks than a PostgreSQL search reads first
    (``search_query.PROBE_ROWS``): a word held densely, one in every 50th entry (read on
    newest first), one in two old entries only (answered by the trigram index) and a miss
    are each found in full — the same hits on both backends, whichever way the rest is read."""
    from chatkeep.storage.search_query import DENSE_HITS, PROBE_ROWS

    n = PROBE_ROWS * 5 // 2
    body = []
    for i in range(n):
        words = [f"entry {i}", "densewd"]
        if i % 50 == 0:
            words.append("midwd")
        if i in (5, 10):
            words.append("sparsewd")
        body.append({"role": "user", "content": " ".join(words)})
    assert len(store.sessions.add_many([({"id": "many", "name": "Many"}, body)])) == 1
    newest = [i for i in range(n - PROBE_ROWS, n) if i % 50 == 0]
    assert DENSE_HITS <= len(newest) < 50  # the mid word is read on past the newest rows

    def found(word: str, limit: int = 100) -> list[int]:
        hits = store.search(word, mode="text", where="session", limit=limit)
        assert all(h["sessionId"] == "many" for h in hits)
        return sorted(h["index"] for h in hits)

    assert found("sparsewd") == [5, 10]
    assert found("midwd") == list(range(0, n, 50))
    assert len(found("densewd")) == 100
    assert found("nosuchwd") == []
