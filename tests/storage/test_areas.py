"""Storage areas (SPEC §1) and the get-all contract (§2) on every backend."""

from __future__ import annotations

import copy

import pytest

import chatkeep
from chatkeep import DEFAULTS, GET_ALL_KEYS, InvalidValue
from factories import image_entry, png_data_url, user


def test_get_single_and_many(store: chatkeep.Store) -> None:
    """get(key) returns the value or None; get([..]) returns only the keys that exist."""
    store.local.set("a", {"x": [1, 2]})
    store.local.set({"b": "two", "c": 3.5})
    assert store.local.get("a") == {"x": [1, 2]}
    assert store.local.get("missing") is None
    assert store.local.get(["a", "b", "missing"]) == {"a": {"x": [1, 2]}, "b": "two"}


def test_get_returns_fresh_deep_copies(store: chatkeep.Store) -> None:
    """Mutating a returned (or a set) value never changes what is stored or another caller's copy."""
    value = {"cards": {"x": {"model": "m"}}, "list": [1, [2, 3]]}
    store.local.set("k", value)
    value["cards"]["x"]["model"] = "changed"
    first = store.local.get("k")
    first["list"][1].append(99)
    second = store.local.get("k")
    assert second == {"cards": {"x": {"model": "m"}}, "list": [1, [2, 3]]}
    assert second is not first


def test_remove_and_keys(store: chatkeep.Store) -> None:
    """remove() takes one key or many; keys(prefix) lists stored keys with that prefix."""
    store.local.set({"session_a": 1, "session_b": 2, "other": 3})
    assert store.local.keys("session_") == ["session_a", "session_b"]
    store.local.remove("session_a")
    store.local.remove(["session_b", "nope"])
    assert store.local.keys() == ["other"]


@pytest.mark.parametrize(
    "bad",
    [float("nan"), {1: "int key"}, {"x": object()}, b"bytes", {"s": {1, 2}}, float("inf")],
)
def test_non_json_value_rejected_store_unchanged(store: chatkeep.Store, spec, bad) -> None:
    """A value that is not JSON raises InvalidValue and the batch writes nothing."""
    store.local.set("keep", 1)
    before = spec.dump()
    with pytest.raises(InvalidValue):
        store.local.set({"fine": 2, "bad": bad})
    assert spec.dump() == before
    assert store.local.get("fine") is None


@pytest.mark.parametrize("key", ["", "k" * 201, 42, None, "a\x00b"])
def test_bad_keys_rejected(store: chatkeep.Store, spec, key) -> None:
    """Empty, huge, non-string or NUL-bearing keys raise InvalidValue with a hint, nothing written."""
    before = spec.dump()
    with pytest.raises(InvalidValue) as info:
        store.local.set({"ok": 1, key: 2})
    assert info.value.hint
    assert spec.dump() == before


def test_modify_is_read_modify_write(store: chatkeep.Store) -> None:
    """modify() reads, applies fn and writes in one transaction; None means no write."""
    store.local.set("counter", 1)
    assert store.local.modify("counter", lambda v: v + 1) == 2
    assert store.local.modify("counter", lambda v: None) is None
    assert store.local.get("counter") == 2
    assert store.local.modify("fresh", lambda v: (v or 0) + 5, default=0) == 5


def test_profiles_are_isolated(spec) -> None:
    """Two profiles of one database never see each other's keys, history or sessions."""
    a = spec.open()
    b = chatkeep.open(spec.url, profile=spec.profile + "_other")
    try:
        a.local.set("secret", "a-only")
        a.history.append(user("hello from a"))
        a.sessions.save("a's session")
        assert b.local.get("secret") is None
        assert b.history.read() == []
        assert b.sessions.list() == []
        assert b.local.keys() == []
        assert b.export_data()["local"] == {}
    finally:
        a.close()
        b.close()


def test_values_persist_across_connections(spec) -> None:
    """What one connection stores, a new connection to the same store reads."""
    with spec.open() as s:
        s.local.set("systemPrompt", "Be brief.")
    with spec.open() as s:
        assert s.local.get("systemPrompt") == "Be brief."
        assert s.get_all()["systemPrompt"] == "Be brief."


def test_session_area_is_in_memory_only(spec) -> None:
    """store.session has the same API, returns copies, and is gone with the process's store."""
    with spec.open() as s:
        s.session.set({"sc_1": {"t": [1]}, "sc_2": 2})
        got = s.session.get("sc_1")
        got["t"].append(2)
        assert s.session.get("sc_1") == {"t": [1]}
        assert s.session.keys("sc_") == ["sc_1", "sc_2"]
        s.session.remove("sc_2")
        assert s.session.get(["sc_1", "sc_2"]) == {"sc_1": {"t": [1]}}
        with pytest.raises(InvalidValue):
            s.session.set("x", float("nan"))
    with spec.open() as s:
        assert s.session.get("sc_1") is None
        assert s.local.get("sc_1") is None


def test_history_key_is_the_live_history(store: chatkeep.Store) -> None:
    """local.get('history') is history.read(); setting it replaces the history through the lock."""
    store.history.append(user("one"))
    assert store.local.get("history") == [user("one")]
    store.local.set("history", [user("a"), user("b")])
    assert store.history.read() == [user("a"), user("b")]
    assert "history" in store.local.keys()
    store.local.remove("history")
    assert store.history.read() == []


def test_defaults_and_get_all_keys() -> None:
    """DEFAULTS has the spec's keys and values; GET_ALL_KEYS is DEFAULTS minus history plus three panel options."""
    assert DEFAULTS["maxHistoryEntries"] == 60
    assert DEFAULTS["maxHistoryChars"] == 300000
    assert DEFAULTS["maxSessions"] == 0
    assert DEFAULTS["systemPrompt"] == "You are a helpful assistant."
    assert DEFAULTS["history"] == []
    expected = [k for k in DEFAULTS if k != "history"] + [
        "fontSize",
        "sendShortcut",
        "thoughtAutoCollapse",
    ]
    assert list(GET_ALL_KEYS) == expected
    for key in ("history", "savedSessions", "activeSessionId", "attachSnapshots"):
        assert key not in GET_ALL_KEYS


def test_get_all_fresh_store_is_defaults(store: chatkeep.Store) -> None:
    """A fresh store's get_all() equals DEFAULTS, and returns copies."""
    all_ = store.get_all()
    assert all_ == DEFAULTS
    all_["providers"]["x"] = {}
    assert store.get_all()["providers"] == {}


def test_get_all_merges_stored_and_never_history(store: chatkeep.Store) -> None:
    """get_all() overlays stored values (providers per card) and its history is always []."""
    store.history.append(user("hi"))
    store.local.set(
        {
            "providers": {
                "local": {"style": "chat", "baseUrl": "http://127.0.0.1:1/v1", "model": "m"}
            },
            "fontSize": 16,
            "maxHistoryEntries": 10,
            "unrelated": "not read",
        }
    )
    all_ = store.get_all()
    assert all_["history"] == []
    assert all_["providers"]["local"]["model"] == "m"
    assert all_["fontSize"] == 16
    assert all_["maxHistoryEntries"] == 10
    assert "unrelated" not in all_


def test_get_all_does_not_touch_history_sessions_or_blobs(pg_spec) -> None:
    """With history, archive and blob tables locked by another session, get_all() still answers.

    Another connection holds ACCESS EXCLUSIVE locks on those tables; any read of them from
    get_all() would block until the store connection's 3 s statement timeout fails it.
    """
    import psycopg

    with pg_spec.open() as s:
        s.history.append(image_entry("x", png_data_url(noise=True)))
        s.sessions.save("with image")
        s.local.set("maxSessions", 5)
    timeout_url = pg_spec.url + "?options=-c%20statement_timeout%3D3000"
    with (
        chatkeep.open(timeout_url, profile=pg_spec.profile) as s,
        psycopg.connect(pg_spec.url) as locker,
    ):
        locker.execute(
            "LOCK TABLE ck_history, ck_archive, ck_blobs, ck_blob_refs, ck_history_state"
            " IN ACCESS EXCLUSIVE MODE"
        )
        assert s.get_all()["maxSessions"] == 5
        with pytest.raises(chatkeep.StoreError):
            s.history.read()  # the probe can fail: reading history does hit the locked tables
        locker.rollback()


def test_get_all_reads_only_its_keys_sqlite(sqlite_spec) -> None:
    """On SQLite, get_all() reads only ck_kv rows and the profile's write counters (checked
    with an authorizer on the connection)."""
    with sqlite_spec.open() as s:
        s.history.append(user("hi"))
        s.sessions.save()
        tables: set[str] = set()

        def auth(action, arg1, arg2, dbname, source):
            if arg1 and arg1.startswith("ck_"):
                tables.add(arg1)
            return 0  # SQLITE_OK

        conn = s._backend._conn
        conn.set_authorizer(auth)
        try:
            s.get_all()
        finally:
            conn.set_authorizer(None)
        assert tables == {"ck_kv", "ck_versions"}


def test_corrupt_stored_value_reads_as_default(spec) -> None:
    """A stored value that is not JSON, or has the wrong type, reads as its default and shows in stats."""
    with spec.open() as s:
        s.local.set({"systemPrompt": "custom", "maxHistoryEntries": 5, "fontSize": 18})
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        ("{not json", spec.profile, "systemPrompt"),
    )
    spec.raw_rows(
        "UPDATE ck_kv SET value=? WHERE profile=? AND key=?",
        ('"five"', spec.profile, "maxHistoryEntries"),
    )
    with spec.open() as s:
        all_ = s.get_all()
        assert all_["systemPrompt"] == DEFAULTS["systemPrompt"]
        assert all_["maxHistoryEntries"] == DEFAULTS["maxHistoryEntries"]
        assert all_["fontSize"] == 18
        assert s.local.get("systemPrompt") is None
        assert s.stats()["corruptKeys"] == ["maxHistoryEntries", "systemPrompt"]
        s.history.append(user("still works"))
        assert s.history.read() == [user("still works")]


def test_open_rejects_bad_urls_and_profiles(tmp_path) -> None:
    """Unknown URL schemes and bad profiles raise typed errors with hints."""
    with pytest.raises(chatkeep.StoreError) as info:
        chatkeep.open("mysql://x/y")
    assert "hint" in str(info.value)
    with pytest.raises(InvalidValue):
        chatkeep.open(str(tmp_path / "a.db"), profile="")


def test_sqlite_file_mode_0600_and_default_path(tmp_path, monkeypatch) -> None:
    """The SQLite file is created with mode 0600; with no URL it lives in the user data dir (or CHATKEEP_STORE)."""
    import stat

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("CHATKEEP_STORE", raising=False)
    with chatkeep.open() as s:
        assert s.url.endswith("/xdg/chatkeep/chatkeep.db")
    path = tmp_path / "xdg" / "chatkeep" / "chatkeep.db"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    monkeypatch.setenv("CHATKEEP_STORE", str(tmp_path / "env.db"))
    with chatkeep.open() as s:
        s.local.set("x", 1)
    assert (tmp_path / "env.db").exists()
    with chatkeep.open("sqlite://" + str(tmp_path / "url.db")) as s:
        assert s.url == "sqlite://" + str(tmp_path / "url.db")


def test_memory_store(tmp_path) -> None:
    """':memory:' gives a working throwaway SQLite store."""
    with chatkeep.open(":memory:") as s:
        s.history.append(user("x"))
        assert s.history.read() == [user("x")]


def test_closed_store_raises(spec) -> None:
    """Using a closed store raises StoreError instead of a driver error."""
    s = spec.open()
    s.close()
    with pytest.raises(chatkeep.StoreError):
        s.local.get("x")


def test_copy_semantics_on_get_all(store: chatkeep.Store) -> None:
    """get_all() results can be mutated freely."""
    a = store.get_all()
    b = copy.deepcopy(a)
    a["providers"]["p"] = 1
    assert store.get_all() == b
