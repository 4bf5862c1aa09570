"""Export/import of a whole profile, and import of browsa chrome.storage.local dumps."""

from __future__ import annotations

import json

import pytest

import chatkeep
from chatkeep import BROWSA_PAGE_CONTEXT_PREFIX, InvalidEntry, InvalidValue, StoreError
from factories import assistant, attachment, image_entry, png_data_url, user


def _populate(store: chatkeep.Store) -> None:
    url = png_data_url(100, 60, noise=True)
    store.local.set({"maxHistoryEntries": 4, "systemPrompt": "Terse.", "fontSize": 15})
    store.local.set(
        "providers", {"local": {"style": "chat", "baseUrl": "http://127.0.0.1:9/v1", "model": "m"}}
    )
    store.history.append(attachment("a page about owls " * 50, title="Owls <&>"))
    store.history.append(image_entry("what bird?", url, imagesSeen=True))
    store.history.append(assistant("an owl", provider={"name": "local", "model": "m"}))
    store.sessions.save("owls")
    for i in range(4):
        store.history.append(user(f"later {i}"))
    store.history.append(image_entry("again", url))


def test_export_import_round_trips_exactly(spec) -> None:
    """export → import into an empty profile → export gives the same document, images and archive included."""
    with spec.open() as s:
        _populate(s)
        first = s.export_data()
    assert first["format"] == "chatkeep-export" and first["version"] == 1
    assert len(first["archive"]) == 4 and len(first["history"]) == 4
    with chatkeep.open(spec.url, profile=spec.profile + "_copy") as t:
        t.import_data(json.loads(json.dumps(first)))
        second = t.export_data()
        assert t.sessions.list()[0]["name"] == "owls"
    assert second == first
    assert json.dumps(second, sort_keys=True) == json.dumps(first, sort_keys=True)


def test_import_into_non_empty_profile_is_refused(spec) -> None:
    """Importing into a profile that holds data raises StoreError with a hint and changes nothing."""
    with spec.open() as s:
        _populate(s)
        data = s.export_data()
        before = spec.dump()
        with pytest.raises(StoreError) as info:
            s.import_data(data)
        assert "--replace" in info.value.hint
        assert spec.dump() == before


def test_import_replace_is_atomic(spec) -> None:
    """replace=True swaps the profile's content for the import in one transaction."""
    with spec.open() as s:
        _populate(s)
        data = s.export_data()
        s.history.clear()
        s.local.set("junk", 1)
        s.import_data(data, replace=True)
        assert s.export_data() == data
        assert s.local.get("junk") is None


def test_bad_import_writes_nothing(spec) -> None:
    """An import with an invalid entry or a bad key raises and leaves the store byte-identical."""
    with spec.open() as s:
        before = spec.dump()
        bad_history = {
            "format": "chatkeep-export",
            "version": 1,
            "local": {},
            "history": [{"role": "bot", "content": "x"}],
            "archive": [],
        }
        with pytest.raises(InvalidEntry):
            s.import_data(bad_history)
        with pytest.raises(InvalidValue):
            s.import_data({"k" * 300: 1, "history": []}, source="browsa")
        with pytest.raises(InvalidValue):
            s.import_data(["not", "an", "object"])
        with pytest.raises(InvalidValue):
            s.import_data({"format": "chatkeep-export", "version": 99, "local": {}})
        assert spec.dump() == before


def _browsa_dump() -> dict:
    url = png_data_url(50, 50, noise=True)
    page = (
        f"{BROWSA_PAGE_CONTEXT_PREFIX}\nURL: https://example.org/paper\nTitle: A paper\nMode: auto\n---\n\n"
        + "body " * 3000
    )
    return {
        "history": [
            {"role": "user", "content": page},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "see"},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
                "imagesSeen": True,
            },
            {"role": "assistant", "content": "ok"},
        ],
        "savedSessions": [
            {
                "id": "s1",
                "name": "Old chat",
                "createdAt": 1_690_000_000_000,
                "pinned": True,
                "history": [
                    {"role": "user", "content": "legacy hello"},
                    {"role": "assistant", "content": "legacy hi"},
                ],
            },
            {
                "id": "s2",
                "name": "Paper",
                "createdAt": 1_690_000_100_000,
                "pinned": False,
                "history": [
                    {"role": "user", "content": page},
                    {"role": "assistant", "content": "summary"},
                ],
            },
        ],
        "activeSessionId": "s2",
        "systemPrompt": "From browsa.",
        "maxHistoryEntries": 60,
        "fontSize": 13,
        "attachSnapshots": {
            "auto::https://example.org/paper": {"hash": "abc", "length": 15000, "attachedAt": 1}
        },
    }


def test_browsa_dump_imports_and_migrates(spec) -> None:
    """A browsa dump with a legacy savedSessions comes out migrated: light index + session_<id> bodies."""
    dump = _browsa_dump()
    with spec.open() as s:
        report = s.import_data(json.loads(json.dumps(dump)), source="browsa")
        assert report["sessions"] == 2 and report["history"] == 3
        index = s.local.get("savedSessions")
        assert all("history" not in r for r in index)
        assert {r["id"] for r in index} == {"s1", "s2"}
        assert s.local.get("session_s1") == dump["savedSessions"][0]["history"]
        assert s.history.read() == dump["history"]
        assert s.get_all()["systemPrompt"] == "From browsa."
        assert s.get_all()["fontSize"] == 13
        assert s.local.get("attachSnapshots") == dump["attachSnapshots"]
        assert [r["id"] for r in s.sessions.list("legacy hi")] == ["s1"]
        assert s.sessions.list()[0]["id"] == "s1"  # pinned first
        assert chatkeep.is_attachment(s.history.read()[0])
        assert s.history.remove_last_page_context() == 0


def test_browsa_dump_auto_detected(spec) -> None:
    """import_data() without a source recognises a browsa dump."""
    with spec.open() as s:
        assert s.import_data(_browsa_dump())["source"] == "browsa"
