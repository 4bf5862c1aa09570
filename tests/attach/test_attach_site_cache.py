"""SiteCache over store.session: lazy restore, dead sources dropped, no resurrection, hooks on demand."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from chatkeep.attach.site_cache import PurgeEvents, SiteCache, cache_key
from chatkeep.errors import InvalidValue

WAIT = 10.0


class SpyArea:
    """Wraps a real area, counts calls, and can hold a chosen call until released."""

    def __init__(self, area: Any) -> None:
        self.area = area
        self.calls: list[str] = []
        self.block_on: str | None = None
        self.entered = threading.Event()
        self.release = threading.Event()

    def _hit(self, name: str) -> None:
        self.calls.append(name)
        if self.block_on == name:
            self.block_on = None
            self.entered.set()
            assert self.release.wait(WAIT)

    def get(self, keys):
        self._hit("get")
        return self.area.get(keys)

    def set(self, key, value=None):
        self._hit("set")
        return self.area.set(key, value)

    def remove(self, keys):
        self._hit("remove")
        return self.area.remove(keys)

    def keys(self, prefix=""):
        self._hit("keys")
        return self.area.keys(prefix)


class Live:
    """A host's live_ids(): a set of ids, a call counter, and an optional gate."""

    def __init__(self, *ids: str) -> None:
        self.ids = set(ids)
        self.calls = 0
        self.gate: threading.Event | None = None
        self.entered = threading.Event()

    def __call__(self) -> set[str]:
        self.calls += 1
        self.entered.set()
        if self.gate is not None:
            assert self.gate.wait(WAIT)
        return set(self.ids)


def _seed(area, **values: Any) -> None:
    area.set({cache_key(k): v for k, v in values.items()})


def test_construction_reads_nothing(store):
    """Creating a cache touches neither the area nor live_ids()."""
    spy, live = SpyArea(store.session), Live("a")
    cache = SiteCache(spy, live)
    assert spy.calls == [] and live.calls == 0 and cache.restored is False


def test_first_use_restores_live_sources_and_drops_dead_ones(store):
    """The first get restores live sources once, removes dead sc_ keys, leaves other keys alone."""
    _seed(store.session, a={"title": "A"}, b=[1, 2], dead={"x": 1})
    store.session.set("unrelated", 7)
    spy, live = SpyArea(store.session), Live("a", "b")
    cache = SiteCache(spy, live)
    assert cache.get("a") == {"title": "A"}
    assert cache.restored is True
    assert spy.calls == ["keys", "get", "remove"]
    assert store.session.keys("sc_") == ["sc_a", "sc_b"]
    assert store.session.get("unrelated") == 7
    assert cache.ids() == ["a", "b"] and "dead" not in cache and len(cache) == 2
    cache.get("b")
    assert live.calls == 1, "the restore runs once"


def test_a_new_cache_picks_up_what_an_old_one_wrote(store):
    """Values written through one cache are restored by a later cache on the same area."""
    first = SiteCache(store.session, Live("t1"))
    first.set("t1", {"page": "night trains", "chars": 1200})
    second = SiteCache(store.session, Live("t1"))
    assert second.get("t1") == {"page": "night trains", "chars": 1200}


def test_failed_restore_changes_nothing_and_retries(store):
    """live_ids() raising reaches the caller, drops nothing, and the next use restores."""
    _seed(store.session, a=1, dead=2)
    calls = {"n": 0}

    def flaky() -> set[str]:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("host not ready")
        return {"a"}

    cache = SiteCache(store.session, flaky)
    with pytest.raises(RuntimeError):
        cache.get("a")
    assert cache.restored is False and store.session.keys("sc_") == ["sc_a", "sc_dead"]
    assert cache.get("a") == 1 and store.session.keys("sc_") == ["sc_a"]


def test_purge_while_live_ids_runs_is_not_resurrected(store):
    """A source purged while the restore waits on live_ids() stays gone, in memory and area."""
    _seed(store.session, a={"v": 1}, b={"v": 2})
    live = Live("a", "b")
    live.gate = threading.Event()
    cache = SiteCache(store.session, live)
    got: dict[str, Any] = {}
    reader = threading.Thread(target=lambda: got.setdefault("b", cache.get("b")))
    reader.start()
    assert live.entered.wait(WAIT)  # the restore has read the area and waits on the host
    done = threading.Event()
    purger = threading.Thread(target=lambda: (cache.purge("a"), done.set()))
    purger.start()
    assert done.wait(WAIT), "purge must not wait for the restore"
    live.gate.set()
    reader.join(WAIT)
    purger.join(WAIT)
    assert got["b"] == {"v": 2}
    assert "a" not in cache and cache.get("a") is None
    assert store.session.keys("sc_") == ["sc_b"]


def test_purge_while_the_area_is_read_is_not_resurrected(store):
    """A purge landing between the restore's key listing and its value read stays gone."""
    _seed(store.session, a={"v": 1}, b={"v": 2})
    spy = SpyArea(store.session)
    spy.block_on = "get"
    cache = SiteCache(spy, Live("a", "b"))
    reader = threading.Thread(target=cache.ids)
    reader.start()
    assert spy.entered.wait(WAIT)
    cache.purge("a")
    spy.release.set()
    reader.join(WAIT)
    assert cache.ids() == ["b"] and store.session.get("sc_a") is None


def test_purge_after_values_were_read_is_not_resurrected(store):
    """Purge after the restore already holds the value in hand: still not brought back."""
    _seed(store.session, a={"v": 1}, b={"v": 2})
    live = Live("a", "b")
    live.gate = threading.Event()
    cache = SiteCache(store.session, live)
    reader = threading.Thread(target=cache.ids)
    reader.start()
    assert live.entered.wait(WAIT)
    assert cache.purge("a") is False  # not in memory yet: the restore has not finished
    live.gate.set()
    reader.join(WAIT)
    assert cache.ids() == ["b"]


def test_set_waits_for_the_restore_and_wins(store):
    """A set from another thread during a restore waits for it and its value is kept."""
    _seed(store.session, a={"v": "old"})
    live = Live("a")
    live.gate = threading.Event()
    cache = SiteCache(store.session, live)
    reader = threading.Thread(target=cache.ids)
    reader.start()
    assert live.entered.wait(WAIT)
    writer_done = threading.Event()
    writer = threading.Thread(target=lambda: (cache.set("a", {"v": "new"}), writer_done.set()))
    writer.start()
    assert not writer_done.wait(0.2), "set must wait for the running restore"
    live.gate.set()
    reader.join(WAIT)
    writer.join(WAIT)
    assert cache.get("a") == {"v": "new"} and store.session.get("sc_a") == {"v": "new"}


def test_hooks_registered_only_while_holding_something(store):
    """The purge listener exists only while the cache holds at least one source."""
    events = PurgeEvents()
    cache = SiteCache(store.session, Live("t1", "t2"), subscribe=events.subscribe)
    assert events.listener_count == 0
    assert cache.ids() == [] and events.listener_count == 0, "an empty restore registers nothing"
    cache.set("t1", {"x": 1})
    assert events.listener_count == 1 and cache.hooks_registered
    cache.set("t2", {"x": 2})
    assert events.listener_count == 1, "registered once, not per source"
    cache.purge("t1")
    assert events.listener_count == 1
    cache.purge("t2")
    assert events.listener_count == 0 and not cache.hooks_registered


def test_restored_cache_registers_and_events_purge(store):
    """A restore that finds live sources registers the hook; firing it purges that source."""
    _seed(store.session, t1={"x": 1}, t2={"x": 2})
    events = PurgeEvents()
    cache = SiteCache(store.session, Live("t1", "t2"), subscribe=events.subscribe)
    assert events.listener_count == 0, "nothing before first use"
    assert len(cache) == 2 and events.listener_count == 1
    assert events.fire("t1") == 1
    assert cache.ids() == ["t2"] and store.session.get("sc_t1") is None
    events.fire("t2")
    assert len(cache) == 0 and events.listener_count == 0
    assert events.fire("t2") == 0


def test_clear_forgets_everything_and_unregisters(store):
    """clear() removes every sc_ key and the purge listener."""
    events = PurgeEvents()
    cache = SiteCache(store.session, Live("a", "b"), subscribe=events.subscribe)
    cache.set("a", 1)
    cache.set("b", 2)
    cache.clear()
    assert store.session.keys("sc_") == [] and events.listener_count == 0 and len(cache) == 0


def test_values_are_copies(store):
    """Mutating a value given to or returned by the cache does not change what it holds."""
    cache = SiteCache(store.session, Live("a"))
    value = {"items": [1]}
    cache.set("a", value)
    value["items"].append(2)
    got = cache.get("a")
    got["items"].append(3)
    assert cache.get("a") == {"items": [1]}


def test_falsy_values_are_real_entries(store):
    """A cached null or 0 counts as held: purge reports it and the hook is removed."""
    events = PurgeEvents()
    cache = SiteCache(store.session, Live("z"), subscribe=events.subscribe)
    cache.set("z", None)
    assert "z" in cache and events.listener_count == 1
    assert cache.purge("z") is True and events.listener_count == 0


@pytest.mark.parametrize("bad", ["", "x" * 198, 5])
def test_bad_ids_are_refused(store, bad):
    """Empty, too long or non-string ids raise InvalidValue and store nothing."""
    cache = SiteCache(store.session, Live())
    with pytest.raises(InvalidValue):
        cache.set(bad, 1)
    assert store.session.keys("sc_") == []


def test_non_json_value_is_refused_and_not_held(store):
    """A value the area cannot hold raises and leaves the cache empty."""
    cache = SiteCache(store.session, Live("a"))
    with pytest.raises(InvalidValue):
        cache.set("a", {1, 2})
    assert "a" not in cache and store.session.keys("sc_") == []
