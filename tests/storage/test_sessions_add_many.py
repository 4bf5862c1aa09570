"""``store.sessions.add_many``: saved sessions with given ids, names and times, in one
transaction, skipping ids already saved — on every backend."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

import chatkeep
from factories import assistant, image_entry, png_data_url, user


def _rows() -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    return [
        (
            {"id": "a" * 32, "name": "First", "createdAt": 1_700_000_000_000},
            [user("q1"), assistant("a1")],
        ),
        ({"id": "b" * 32, "name": "", "createdAt": None}, [user("needle question")]),
    ]


def test_add_many_adds_rows_with_given_fields(store: chatkeep.Store) -> None:
    """Rows keep their id, name and createdAt; a blank name gets the auto-name; bodies saved."""
    added = store.sessions.add_many(_rows())
    assert [r["id"] for r in added] == ["a" * 32, "b" * 32]
    first = store.sessions.get("a" * 32)
    assert first is not None
    assert (first["name"], first["createdAt"], first["history"]) == (
        "First",
        1_700_000_000_000,
        [user("q1"), assistant("a1")],
    )
    assert store.sessions.get("b" * 32)["name"] == "needle question"
    assert [r["id"] for r in store.sessions.list("needle")] == ["b" * 32]


def test_add_many_twice_adds_nothing_and_leaves_live_history(store: chatkeep.Store) -> None:
    """The same batch again adds nothing; the live history and active session are untouched."""
    store.history.append(user("live"))
    store.sessions.add_many(_rows())
    assert store.sessions.add_many(_rows()) == []
    assert len(store.sessions.list()) == 2
    assert store.history.read() == [user("live")]
    assert store.sessions.active_id() == ""


def test_add_many_rolls_back_on_an_invalid_body(store: chatkeep.Store) -> None:
    """An invalid body anywhere in the batch raises InvalidEntry and nothing is added."""
    rows = [*_rows(), ({"id": "c" * 32, "name": "bad"}, [{"role": "robot", "content": "x"}])]
    with pytest.raises(chatkeep.InvalidEntry):
        store.sessions.add_many(rows)
    assert store.sessions.list() == []


def test_add_many_rolls_back_when_the_source_fails(store: chatkeep.Store) -> None:
    """An error raised by the iterable half-way (a file breaking mid-read) adds nothing."""

    def rows() -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
        yield _rows()[0]
        raise chatkeep.InvalidValue("the file broke")

    with pytest.raises(chatkeep.InvalidValue):
        store.sessions.add_many(rows())
    assert store.sessions.list() == []


def test_add_many_stores_a_repeated_image_once(store: chatkeep.Store, spec: Any) -> None:
    """The same image in many imported sessions is one content-addressed blob."""
    url = png_data_url(32, 32, noise=True)
    store.sessions.add_many(
        ({"id": f"{k:032x}", "name": f"s{k}"}, [image_entry("same", url)]) for k in range(5)
    )
    assert store.stats()["blobs"] == 1


def test_add_many_rejects_bad_ids(store: chatkeep.Store) -> None:
    """A missing or over-long id is an InvalidValue and nothing is added."""
    for bad in ("", "x" * 193, None):
        with pytest.raises(chatkeep.InvalidValue):
            store.sessions.add_many([({"id": bad}, [user("q")])])
    assert store.sessions.list() == []


def test_add_many_replaces_what_a_new_id_left_behind(store: chatkeep.Store) -> None:
    """A body stored under an id the drawer does not list (written by other means) is replaced
    whole by the batch's body: its rows, search rows and image references go with it."""
    sid = "d" * 32
    with store._backend.transaction(store.profile) as tx:
        tx.kv.put("session_" + sid, [image_entry("old wombat words", png_data_url(5))])
    rows = [
        ({"id": "e" * 32, "name": "Other", "createdAt": 1}, [user("other numbat")]),
        ({"id": sid, "name": "Kept", "createdAt": 2}, [user("new numbat words")]),
    ]
    assert [r["id"] for r in store.sessions.add_many(rows)] == ["e" * 32, sid]
    assert store.sessions.get(sid)["history"] == [user("new numbat words")]
    assert store.search("wombat", mode="text") == []
    found = {(h["sessionId"], h["index"]) for h in store.search("numbat", mode="text")}
    assert found == {(sid, 0), ("e" * 32, 0)}
    assert store.stats()["blobs"] == 0
