"""The limits of §12 on every backend: what is refused is refused before anything is written,
what an older version stored past them still reads, clears and exports, and legacy session
ids that cannot be kept get fresh ids with nothing lost."""

from __future__ import annotations

import json
from typing import Any

import pytest

import chatkeep
from chatkeep import InvalidEntry, InvalidValue
from chatkeep.limits import ENTRY_MAX_DEPTH, MAX_DEPTH, parse_json


def _nest(n: int, leaf: Any = "x") -> Any:
    for _ in range(n):
        leaf = [leaf]
    return leaf


def _poison(store: chatkeep.Store) -> None:
    """Write, as an older version did, a live row nested 550 deep holding an image blob."""
    from chatkeep.storage import codec

    entry = {
        "role": "user",
        "content": "old",
        "x": _nest(550, "data:image/png;base64," + "A" * 400),
    }
    text, blobs = codec.encode(entry, text_blobs=True, checked=True)  # the old, unchecked path
    with store._backend.transaction(store.profile) as tx:
        tx.history.insert(tx.history.next_pos(), 3, text, blobs)
        count, chars = tx.history.state()
        tx.history.set_state(count + 1, chars + 3)


def test_depth_limit_is_exact(store: chatkeep.Store, spec: Any) -> None:
    """A value of exactly 100 nested levels is stored, one more is refused; an entry nests one
    level less (a saved session's body is a list of entries); refusals write nothing."""
    store.local.set("ok", _nest(MAX_DEPTH))
    assert store.local.get("ok") == _nest(MAX_DEPTH)
    store.history.append({"role": "user", "content": "a", "x": _nest(ENTRY_MAX_DEPTH - 1)})
    assert store.sessions.save("deep") is not None
    before = spec.dump()
    with pytest.raises(InvalidValue, match="nests deeper than 100 levels"):
        store.local.set("too", _nest(MAX_DEPTH + 1))
    with pytest.raises(InvalidEntry, match="nests deeper than 99 levels"):
        store.history.append({"role": "user", "content": "a", "x": _nest(ENTRY_MAX_DEPTH)})
    assert spec.dump() == before


@pytest.mark.parametrize(
    "call",
    [
        lambda s: s.history.append({"role": "user", "content": "\ud800"}),
        lambda s: s.local.set("k", {"a": "\udfff"}),
        lambda s: s.local.set("\ud800", 1),
        lambda s: s.local.set({1: 2}),
        lambda s: s.local.get(5),
        lambda s: s.sessions.list("\ud800"),
        lambda s: s.sessions.rename("id", "\ud800"),
        lambda s: s.sessions.get(None),
        lambda s: s.sessions.save(7),
        lambda s: s.history.mutate(lambda e: [{"role": "user", "content": "\ud800"}]),
        lambda s: s.local.set("n", 2**64),
        lambda s: s.local.set("f", float("inf")),
        lambda s: s.local.set("k" * 201, 1),
        lambda s: s.import_data({"k": "\ud800"}),
    ],
)
def test_bad_input_is_a_chatkeep_error_and_changes_nothing(
    store: chatkeep.Store, spec: Any, call: Any
) -> None:
    """Lone surrogates, non-string keys, out-of-range numbers and long keys are refused with
    a chatkeep error naming the limit, and nothing is written."""
    store.history.append({"role": "user", "content": "kept"})
    before = spec.dump()
    with pytest.raises(chatkeep.ChatkeepError):
        call(store)
    assert spec.dump() == before


def test_open_refuses_a_surrogate_profile() -> None:
    """open(profile=…) with a lone surrogate is an InvalidValue, not a UnicodeEncodeError."""
    with pytest.raises(InvalidValue, match="profile name"):
        chatkeep.open(":memory:", profile="\ud800")


def test_poisoned_row_reads_clears_exports(store: chatkeep.Store) -> None:
    """A row nested past the limit (stored by an older version) still reads, shows in stats
    and export, and clear() removes it; doctor reports it as over the limit."""
    store.history.append({"role": "user", "content": "before"})
    _poison(store)
    live = store.history.read()
    assert [e["content"] for e in live] == ["before", "old"]
    assert store.stats()["entries"] == 2
    assert len(store.export_data()["history"]) == 2
    assert any(p["kind"] == "over-limit" for p in store.doctor()["problems"])
    store.history.clear()
    assert store.history.read() == []


def test_doctor_repair_quarantines_a_poisoned_row_and_export_reimports(
    store: chatkeep.Store,
) -> None:
    """doctor --repair moves the over-limit row to a quarantine key (its text kept); the
    profile then exports and re-imports."""
    store.history.append({"role": "user", "content": "before"})
    _poison(store)
    report = store.doctor(repair=True)
    assert report["healthy"] and report["quarantined"] == ["quarantine_1"]
    kept = store.local.get("quarantine_1")
    assert kept["from"].startswith("h:") and '"old"' in kept["text"]
    assert [e["content"] for e in store.history.read()] == ["before"]
    doc = store.export_data()
    fresh = chatkeep.open(":memory:")
    fresh.import_data(parse_json(json.dumps(doc)))
    assert fresh.export_data() == doc


_H = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]


@pytest.mark.parametrize("bad_id", ["same", "with\x00nul", "x" * 300, 7])
def test_legacy_ids_that_cannot_be_kept_get_fresh_ids(store: chatkeep.Store, bad_id: Any) -> None:
    """Duplicated, NUL-holding, over-long and non-string legacy ids get fresh ids in the same
    import transaction; every history is kept and the mapping is reported."""
    rows = [
        {"id": "same", "name": "first", "history": _H},
        {"id": bad_id, "name": "second", "history": _H[:1]},
    ]
    report = store.import_data({"savedSessions": rows, "history": []})
    listed = store.sessions.list()
    assert sorted(r["name"] for r in listed) == ["first", "second"]
    bodies = {r["name"]: store.sessions.get(r["id"])["history"] for r in listed}
    assert bodies == {"first": _H, "second": _H[:1]}
    assert [m["name"] for m in report["renamedSessions"]] == ["second"]
    assert all(len("session_" + r["id"]) <= 200 for r in listed)
    # the profile's own export imports again
    again = chatkeep.open(":memory:")
    again.import_data(parse_json(json.dumps(store.export_data())))
    assert len(again.sessions.list()) == 2


def test_deleting_one_of_two_rows_sharing_an_id_keeps_the_other(store: chatkeep.Store) -> None:
    """An index that already holds two rows with one id (no embedded history) is split on
    first use; deleting one keeps the other and its body."""
    store.local.set("session_dup", _H)
    with store._backend.transaction(store.profile) as tx:  # as an older version left it
        tx.kv.put("savedSessions", [{"id": "dup", "name": "A"}, {"id": "dup", "name": "B"}])
    listed = store.sessions.list()
    assert len({r["id"] for r in listed}) == 2
    a = next(r for r in listed if r["name"] == "A")
    assert store.sessions.delete(a["id"])
    (rest,) = store.sessions.list()
    assert rest["name"] == "B" and store.sessions.get(rest["id"])["history"] == _H


def test_import_is_one_transaction_with_its_migration(store: chatkeep.Store, spec: Any) -> None:
    """A refused import (one bad value among legacy sessions) writes nothing at all, and an
    accepted one leaves no legacy row behind (the migration ran inside it)."""
    before = spec.dump()
    with pytest.raises(InvalidValue):
        store.import_data({"savedSessions": [{"id": "a", "history": _H}], "bad": "\ud800"})
    assert spec.dump() == before
    store.import_data({"savedSessions": [{"id": "a", "name": "n", "history": _H}]})
    raw = spec.raw_rows(
        "SELECT value FROM ck_kv WHERE profile=? AND key='savedSessions'", (spec.profile,)
    )
    assert "history" not in json.loads(raw[0][0])[0]


def test_an_entry_with_70000_images(store: chatkeep.Store) -> None:
    """An entry with more distinct images than a driver takes parameters (65,535) is stored
    and read back: every IN list is chunked."""
    base = "data:image/png;base64,"
    parts = [{"type": "text", "text": "many"}] + [
        {"type": "image_url", "image_url": {"url": base + f"{i:08d}".ljust(256, "A")}}
        for i in range(70_000)
    ]
    store.local.set("maxHistoryChars", 10**9)
    store.history.append({"role": "user", "content": parts})
    (entry,) = store.history.read()
    assert len(entry["content"]) == 70_001 and entry["content"][-1] == parts[-1]
