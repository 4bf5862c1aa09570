"""The live history, its window and archive, the lock and every §3.4 operation, on every backend."""

from __future__ import annotations

import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import chatkeep
from chatkeep import BROWSA_PAGE_CONTEXT_PREFIX, InvalidEntry
from factories import assistant, attachment, image_entry, png_data_url, user

BAD_ENTRIES = [
    ("role", {"role": "system", "content": "x"}),
    ("role", {"role": "tool", "content": "x"}),
    ("content", {"role": "user"}),
    ("content", {"role": "user", "content": 42}),
    ("content[0].type", {"role": "user", "content": [{"type": "audio", "data": "x"}]}),
    ("content[0]", {"role": "user", "content": ["plain string part"]}),
    ("content[0].text", {"role": "user", "content": [{"type": "text", "text": 5}]}),
    (
        "content[1].image_url.url",
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "x"},
                {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}},
            ],
        },
    ),
    (
        "content[0].image_url.url",
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": "data:text/html;base64,PGI+"}}],
        },
    ),
    ("content[0].image_url", {"role": "user", "content": [{"type": "image_url"}]}),
    ("imagesSeen", {"role": "user", "content": "x", "imagesSeen": "yes"}),
    ("videoSrc", {"role": "user", "content": "x", "videoSrc": "https://youtu.be/x"}),
    ("provider", {"role": "assistant", "content": "x", "provider": {"name": "a"}}),
    ("attachId", {"role": "user", "content": "x", "attachId": 7}),
    ("meta", {"role": "user", "content": "x", "meta": float("nan")}),
    (
        "content[0].extra",
        {"role": "user", "content": [{"type": "text", "text": "x", "extra": object()}]},
    ),
]


@pytest.mark.parametrize(
    ("field", "entry"), BAD_ENTRIES, ids=[f"{f}-{i}" for i, (f, _e) in enumerate(BAD_ENTRIES)]
)
def test_invalid_entries_raise_and_change_nothing(
    store: chatkeep.Store, spec, field, entry
) -> None:
    """An invalid entry raises InvalidEntry naming the field; append and mutate leave the store byte-identical."""
    store.history.append(user("before"))
    before = spec.dump()
    with pytest.raises(InvalidEntry) as info:
        store.history.append(entry)
    assert field in str(info.value)
    with pytest.raises(InvalidEntry):
        store.history.mutate(lambda es: [*es, user("fine"), entry])
    with pytest.raises(InvalidEntry):
        store.history.mutate(lambda es: "not a list")
    assert spec.dump() == before


def test_valid_entry_shapes_accepted(store: chatkeep.Store) -> None:
    """String and part content, string image_url, input_text parts and every optional field are accepted."""
    url = png_data_url()
    entries = [
        user("plain"),
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "t"},
                {"type": "image_url", "image_url": url},
            ],
        },
        {
            "role": "user",
            "content": "v",
            "attachId": "a1",
            "videoSrc": {"platform": "youtube", "url": "https://youtu.be/x"},
        },
        assistant("partial", interrupted=True, provider={"name": "p", "model": "m"}),
        image_entry("seen", url, imagesSeen=True, summarized=True),
    ]
    for e in entries:
        store.history.append(e)
    assert store.history.read() == entries


def test_read_returns_data_urls_and_copies(store: chatkeep.Store) -> None:
    """read() returns entries with their data: URLs, as fresh copies each time."""
    url = png_data_url(noise=True)
    store.history.append(image_entry("look", url))
    got = store.history.read()
    assert got[0]["content"][1]["image_url"]["url"] == url
    got[0]["content"].clear()
    assert store.history.read()[0]["content"][1]["image_url"]["url"] == url


def test_window_keeps_last_entries_and_archives_the_rest(store: chatkeep.Store) -> None:
    """Past maxHistoryEntries the oldest entries move to the archive, in order, never destroyed."""
    store.local.set("maxHistoryEntries", 3)
    lengths = [store.history.append(user(f"m{i}")) for i in range(7)]
    assert lengths == [1, 2, 3, 3, 3, 3, 3]
    assert store.history.read() == [user("m4"), user("m5"), user("m6")]
    assert store.history.archived() == [user(f"m{i}") for i in range(4)]


def test_window_char_budget_counts_text_not_image_bytes(store: chatkeep.Store) -> None:
    """maxHistoryChars drops oldest entries by text length; image bytes do not count."""
    store.local.set("maxHistoryChars", 100)
    big_image = png_data_url(200, 200, noise=True)
    store.history.append(image_entry("a" * 40, big_image))
    store.history.append(user("b" * 40))
    assert len(store.history.read()) == 2
    store.history.append(user("c" * 40))
    assert [e if isinstance(e["content"], str) else "img" for e in store.history.read()] == [
        user("b" * 40),
        user("c" * 40),
    ]
    assert store.history.archived()[0]["content"][1]["image_url"]["url"] == big_image


def test_window_never_below_one_entry(store: chatkeep.Store) -> None:
    """An entry alone over the char budget stays live."""
    store.local.set("maxHistoryChars", 10)
    store.history.append(user("x" * 50))
    store.history.append(user("y" * 50))
    assert store.history.read() == [user("y" * 50)]
    assert store.history.archived() == [user("x" * 50)]


def test_window_applies_to_mutate_too(store: chatkeep.Store) -> None:
    """A mutation that grows the list is bounded and its overflow archived."""
    store.local.set("maxHistoryEntries", 2)
    store.history.mutate(lambda es: [user("a"), user("b"), user("c")])
    assert store.history.read() == [user("b"), user("c")]
    assert store.history.archived() == [user("a")]


def test_empty_history_clears_active_session(store: chatkeep.Store) -> None:
    """Emptying the live history sets activeSessionId to ''."""
    store.history.append(user("hi"))
    store.sessions.save("s")
    assert store.local.get("activeSessionId")
    store.history.remove_at(0)
    assert store.local.get("activeSessionId") == ""


def test_append_returns_length_and_does_not_rewrite(store: chatkeep.Store, spec) -> None:
    """append() returns the new length and writes one row: earlier rows stay byte-identical."""
    for i in range(5):
        store.history.append(user(f"m{i}"))
    before = spec.dump()["ck_history"]
    assert store.history.append(assistant("reply")) == 6
    after = spec.dump()["ck_history"]
    assert after[:5] == before
    assert len(after) == 6


def test_truncate_keeps_prefix_rows(store: chatkeep.Store, spec) -> None:
    """truncate_from(i) keeps [:i] without rewriting the kept rows."""
    for i in range(6):
        store.history.append(user(f"m{i}"))
    before = spec.dump()["ck_history"]
    assert store.history.truncate_from(2) is True
    assert spec.dump()["ck_history"] == before[:2]
    assert store.history.read() == [user("m0"), user("m1")]
    # not destroyed: an earlier version in the archive (SPEC §3.5)
    archived = store.history.archived()
    marks = {k: archived[0][k] for k in ("replacedAt", "replacedCut", "replacedAfter")}
    assert archived == [{**user(f"m{i}"), **marks} for i in range(2, 6)]
    assert marks["replacedAt"] == 2
    assert store.history.truncate_from(-1) is False
    assert store.history.truncate_from(10) is True
    assert len(store.history.read()) == 2


def test_read_missing_is_empty(store: chatkeep.Store) -> None:
    """A fresh store reads an empty history and empty archive."""
    assert store.history.read() == []
    assert store.history.archived() == []


def test_clear(store: chatkeep.Store) -> None:
    """clear() empties the live history and resets activeSessionId."""
    store.history.append(user("a"))
    store.local.set("activeSessionId", "abc")
    store.history.clear()
    assert store.history.read() == []
    assert store.local.get("activeSessionId") == ""


def test_remove_at(store: chatkeep.Store, spec) -> None:
    """remove_at(i) removes one entry; out of range returns False and writes nothing."""
    for t in "abc":
        store.history.append(user(t))
    assert store.history.remove_at(1) is True
    assert store.history.read() == [user("a"), user("c")]
    before = spec.dump()
    assert store.history.remove_at(2) is False
    assert store.history.remove_at(-1) is False
    assert spec.dump() == before


def test_remove_by_attach_id(store: chatkeep.Store, spec) -> None:
    """remove_by_attach_id returns the removed index, or -1 (falsy/unknown id, no write)."""
    att = attachment("body")
    store.history.append(user("q"))
    store.history.append(att)
    store.history.append(user("after"))
    before = spec.dump()
    assert store.history.remove_by_attach_id("") == -1
    assert store.history.remove_by_attach_id("unknown") == -1
    assert spec.dump() == before
    assert store.history.remove_by_attach_id(att["attachId"]) == 1
    assert store.history.read() == [user("q"), user("after")]


def test_remove_last_page_context(store: chatkeep.Store) -> None:
    """remove_last_page_context removes the newest attachment entry (chatkeep or browsa prefix)."""
    old = attachment("old")
    browsa = user(f"{BROWSA_PAGE_CONTEXT_PREFIX}\nURL: x\n---\n\nbody")
    store.history.append(old)
    store.history.append(browsa)
    store.history.append(assistant("answer"))
    assert store.history.remove_last_page_context() == 1
    assert store.history.remove_last_page_context() == 0
    assert store.history.remove_last_page_context() == -1
    assert store.history.read() == [assistant("answer")]


def test_mutate_none_writes_nothing(store: chatkeep.Store, spec) -> None:
    """A mutator returning None writes nothing."""
    store.history.append(user("a"))
    before = spec.dump()
    assert store.history.mutate(lambda es: None) is None
    assert spec.dump() == before


def test_mutate_exception_releases_lock_and_reaches_caller(store: chatkeep.Store, spec) -> None:
    """An exception in fn reaches the caller, writes nothing, and the lock is free again."""
    store.history.append(user("a"))
    before = spec.dump()

    def boom(entries):
        entries.append(user("half-done"))
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        store.history.mutate(boom)
    assert spec.dump() == before
    done = threading.Event()
    threading.Thread(target=lambda: (store.history.append(user("b")), done.set())).start()
    assert done.wait(10)
    assert store.history.read() == [user("a"), user("b")]


def test_mutator_gets_a_copy(store: chatkeep.Store) -> None:
    """Changing the list passed to fn and returning None stores nothing."""
    store.history.append(user("a"))

    def fn(entries):
        entries[0]["content"] = "changed"
        return None

    store.history.mutate(fn)
    assert store.history.read() == [user("a")]


def test_lock_is_fifo_within_a_process(store: chatkeep.Store) -> None:
    """Threads that queue on the history lock are served in arrival order."""
    holding = threading.Event()
    release = threading.Event()

    def slow(entries):
        holding.set()
        release.wait(10)
        return [*entries, user("first")]

    t0 = threading.Thread(target=store.history.mutate, args=(slow,))
    t0.start()
    assert holding.wait(10)
    threads = []
    for i in range(6):
        t = threading.Thread(target=store.history.append, args=(user(f"w{i}"),))
        t.start()
        threads.append(t)
        time.sleep(0.05)  # make the arrival order unambiguous
    release.set()
    for t in [t0, *threads]:
        t.join(10)
    assert [e["content"] for e in store.history.read()] == ["first"] + [f"w{i}" for i in range(6)]


def test_concurrent_threads_lose_nothing(store: chatkeep.Store) -> None:
    """8 threads × 25 mutate-appends: every entry is there exactly once."""

    def worker(n: int) -> None:
        for k in range(25):
            store.history.mutate(lambda es, n=n, k=k: [*es, user(f"{n}-{k}")])

    store.local.set("maxHistoryEntries", 1000)
    threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    got = [e["content"] for e in store.history.read()]
    assert sorted(got) == sorted(f"{n}-{k}" for n in range(8) for k in range(25))
    for n in range(8):
        mine = [c for c in got if c.startswith(f"{n}-")]
        assert mine == [f"{n}-{k}" for k in range(25)]


def test_unreadable_row_is_skipped(store: chatkeep.Store, spec) -> None:
    """A history row that is not JSON is skipped by read() and counted by stats()."""
    store.history.append(user("a"))
    store.history.append(user("b"))
    spec.raw_rows(
        "UPDATE ck_history SET value=? WHERE profile=? AND pos=(SELECT min(pos) FROM ck_history WHERE profile=?)",
        ("{broken", spec.profile, spec.profile),
    )
    with spec.open() as s:
        assert s.history.read() == [user("b")]
        assert s.stats()["unreadableEntries"] == 1
        s.history.append(user("c"))
        assert s.history.read() == [user("b"), user("c")]


def test_images_stored_once_and_collected_when_unreferenced(store: chatkeep.Store, spec) -> None:
    """One image in live history, archive and two sessions is one blob; it is deleted only when nothing references it."""
    url = png_data_url(120, 90, noise=True)
    store.local.set("maxHistoryEntries", 2)
    store.history.append(image_entry("pic", url))
    s1 = store.sessions.save("one")
    s2 = store.sessions.save("two")
    store.history.append(user("x"))
    store.history.append(user("y"))  # the image entry moves to the archive
    assert store.history.archived()[0]["content"][1]["image_url"]["url"] == url
    blobs = spec.dump()["ck_blobs"]
    assert len(blobs) == 1
    assert store.sessions.get(s1["id"])["history"][0]["content"][1]["image_url"]["url"] == url
    store.sessions.delete(s1["id"])
    store.sessions.delete(s2["id"])
    assert len(spec.dump()["ck_blobs"]) == 1  # the archive still holds it
    assert store.export_data()["archive"][0]["content"][1]["image_url"]["url"] == url


def test_blob_deleted_when_last_reference_goes(store: chatkeep.Store, spec) -> None:
    """Removing the only entry and the only session holding an image deletes its blob."""
    url = png_data_url(80, 80, noise=True)
    store.history.append(image_entry("pic", url))
    sid = store.sessions.save()["id"]
    store.history.clear()
    assert len(spec.dump()["ck_blobs"]) == 1
    store.sessions.delete(sid)
    assert spec.dump()["ck_blobs"] == []
    assert spec.dump()["ck_blob_refs"] == []


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(before=st.one_of(st.none(), st.integers(-3, 30)), limit=st.integers(-2, 30))
def test_an_archive_page_is_a_slice_of_the_archive(store, before, limit) -> None:
    """archived_page(before, limit) is archived()[before - limit:before] (clamped), with the
    archive's length and the page's start, on both backends; archived_last_with finds the
    newest entry before a position that holds the key."""
    if not store.history.archived_count():
        store.local.set("maxHistoryEntries", 1)
        for i in range(21):
            extra = {"videoSrc": {"platform": "youtube", "url": f"https://youtu.be/v{i}"}}
            entry = {**user(f'e{i} "videoSrc": no'), **(extra if i % 7 == 3 else {})}
            store.history.append(entry)
    whole = store.history.archived()
    total, start, got = store.history.archived_page(before, limit)
    end = len(whole) if before is None else max(0, min(before, len(whole)))
    assert (total, start) == (len(whole), max(0, end - max(0, limit)))
    assert got == whole[start:end]
    want = next((e for e in reversed(whole[:start]) if "videoSrc" in e), None)
    assert store.history.archived_last_with("videoSrc", start) == want
    if before is not None:
        cut = max(0, min(before, len(whole)))
        want = next((e for e in reversed(whole[:cut]) if "videoSrc" in e), None)
        assert store.history.archived_last_with("videoSrc", before) == want
