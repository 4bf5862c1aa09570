"""Property-based hostile input over the public write, read, import and builder entry points.

For every generated input each call either succeeds or raises a chatkeep error (nothing else
escapes), never changes its input, and every accepted write reads back equal and survives an
export → JSON text → import round trip. Examples: the sum of the ``budget(...)`` figures
(≥ 20,000 at scale 1; ``make fuzz`` runs ×50)."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chatkeep
from chatkeep import ChatkeepError
from chatkeep.limits import DOCUMENT_MAX_DEPTH, problem
from hostile.strategies import (
    browsa_dumps,
    budget,
    entries,
    json_texts,
    json_values,
    keys,
    texts,
    values,
)


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[chatkeep.Store]:
    """One SQLite file store reused across examples (every check below is per call)."""
    store = chatkeep.open(str(tmp_path_factory.mktemp("props") / "p.db"))
    store.local.set({"maxHistoryEntries": 8})
    yield store
    store.close()


def _plain(value: Any) -> Any:
    """What the value is as JSON (tuples are lists), for read-back comparison."""
    return json.loads(json.dumps(value, ensure_ascii=False))


def _reimports(store: chatkeep.Store, doc: dict[str, Any]) -> dict[str, Any]:
    """Export document → JSON text → parse_json → import into a scratch profile → export."""
    text = json.dumps(doc, ensure_ascii=False)
    scratch = chatkeep.open(store.url.replace("sqlite://", ""), profile="scratch")
    try:
        scratch.import_data(chatkeep.parse_json(text), replace=True)
        return scratch.export_data()
    finally:
        scratch.close()


def _doc(local: dict[str, Any], history: list[Any]) -> dict[str, Any]:
    return {"format": "chatkeep-export", "version": 1, "local": local, "history": history,
            "archive": []}  # fmt: skip


def _call(fn: Any, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
    """(accepted, result); a chatkeep error is a refusal, anything else fails the test."""
    try:
        return True, fn(*args, **kwargs)
    except ChatkeepError as exc:
        assert exc.message, "every chatkeep error says what happened"
        return False, exc


@budget(3000)
@given(entry=entries)
def test_history_append(shared: chatkeep.Store, entry: Any) -> None:
    """history.append: a chatkeep error or an entry that reads back equal and re-imports."""
    before = copy.deepcopy(entry)
    ok, _ = _call(shared.history.append, entry)
    assert repr(entry) == repr(before)  # nothing mutated
    if ok:
        assert shared.history.read()[-1] == _plain(entry)
        again = _reimports(shared, _doc({}, [entry]))
        assert again["history"] == [_plain(entry)]


@budget(2500)
@given(key=keys, value=values)
def test_local_set(shared: chatkeep.Store, key: Any, value: Any) -> None:
    """local.set: refused with a chatkeep error, or the value reads back and re-imports."""
    before = copy.deepcopy(value)
    ok, _ = _call(shared.local.set, key, value)
    assert repr(value) == repr(before)
    if ok and key not in ("history", "savedSessions") and not str(key).startswith("session_"):
        assert shared.local.get(key) == _plain(value)
        again = _reimports(shared, _doc({key: value}, []))
        assert again["local"][key] == _plain(value)


@budget(2500)
@given(items=st.one_of(st.dictionaries(keys, values, max_size=3), values))
def test_local_set_many_and_read(shared: chatkeep.Store, items: Any) -> None:
    """local.set({...}) is whole or nothing; get/keys/remove answer any argument."""
    before_keys = shared.local.keys()
    ok, _ = _call(shared.local.set, items)
    if not ok and isinstance(items, dict):
        assert shared.local.keys() == before_keys  # nothing of a refused batch was written
    _call(shared.local.get, items if not isinstance(items, dict) else list(items))
    _call(shared.local.keys, items if isinstance(items, str) else "")
    if ok and isinstance(items, dict):
        _call(shared.local.remove, [k for k in items if k not in ("maxHistoryEntries",)])


@budget(2000)
@given(key=keys, value=values)
def test_session_area(shared: chatkeep.Store, key: Any, value: Any) -> None:
    """store.session: same limits as the durable area, and reads back what it accepted."""
    ok, _ = _call(shared.session.set, key, value)
    if ok:
        assert shared.session.get(key) == _plain(value)


@budget(2000)
@given(
    op=st.sampled_from(["list", "get", "rename", "pin", "delete", "load", "save", "append"]),
    arg=st.one_of(texts, json_values),
    name=st.one_of(texts, json_values),
)
def test_sessions_ops(shared: chatkeep.Store, op: str, arg: Any, name: Any) -> None:
    """Every drawer operation answers any argument with a result or a chatkeep error."""
    s = shared.sessions
    calls = {
        "list": lambda: s.list(arg),
        "get": lambda: s.get(arg),
        "rename": lambda: s.rename(arg, name),
        "pin": lambda: s.pin(arg),
        "delete": lambda: s.delete(arg),
        "load": lambda: s.load(arg),
        "save": lambda: s.save(name),
        "append": lambda: s.append(arg, name),
    }
    _call(calls[op])
    _call(s.list)


@budget(3000)
@given(text=json_texts)
def test_parse_json(text: str) -> None:
    """parse_json gives a value within the limits or an InvalidValue, for any text."""
    ok, value = _call(chatkeep.parse_json, text)
    if ok:
        assert problem(value, DOCUMENT_MAX_DEPTH) is None
    else:
        assert isinstance(value, chatkeep.InvalidValue)


@budget(1500)
@given(dump=browsa_dumps)
def test_import_browsa_dump(tmp_path_factory: pytest.TempPathFactory, dump: Any) -> None:
    """An import is whole or nothing; what it accepts exports, re-imports and exports again
    identically, with every legacy session kept under a usable id."""
    store = chatkeep.open(":memory:")
    try:
        before = copy.deepcopy(dump)
        ok, report = _call(store.import_data, dump)
        assert repr(dump) == repr(before)
        if not ok:
            assert store.export_data()["local"] == {} and store.history.read() == []
            return
        rows = dump.get("savedSessions")
        if isinstance(rows, list):
            assert report["sessions"] == sum(1 for r in rows if isinstance(r, dict))
        first = store.export_data()
        again = chatkeep.open(":memory:")
        again.import_data(chatkeep.parse_json(json.dumps(first, ensure_ascii=False)))
        assert again.export_data() == first
        again.close()
    finally:
        store.close()


_STYLES = st.sampled_from(["chat", "responses", "anthropic"])


@budget(2500)
@given(
    style=st.one_of(_STYLES, texts),
    history=st.one_of(st.lists(entries, max_size=3), json_values),
    user=st.one_of(entries, json_values),
    system=st.one_of(texts, json_values),
)
def test_build_request(style: Any, history: Any, user: Any, system: Any) -> None:
    """build_request answers any input with a request or a chatkeep error, inputs untouched,
    and request_stats measures whatever it built."""
    before = repr((history, user))
    ok, request = _call(
        chatkeep.build_request,
        style,
        history,
        user_entry=user,
        system_prompt=system,
        model="m",
        base_url="http://127.0.0.1:9/v1",
    )
    assert repr((history, user)) == before
    if ok:
        stats = chatkeep.request_stats(request, request)
        assert stats["prefixBytes"] == stats["bytes"]


@budget(1500)
@given(body=st.one_of(json_values, st.binary(max_size=30)), previous=st.one_of(st.none(), values))
def test_request_stats(body: Any, previous: Any) -> None:
    """request_stats answers any body with figures or a chatkeep error."""
    _call(chatkeep.request_stats, body, previous)


@budget(1000)
@given(profile=st.one_of(texts, json_values), url=st.sampled_from([":memory:", 5, b"x", "x://y"]))
def test_open(profile: Any, url: Any) -> None:
    """open() answers any profile name and URL with a store or a chatkeep error."""
    ok, store = _call(chatkeep.open, url, profile=profile)
    if ok:
        store.history.append({"role": "user", "content": "hi"})
        assert store.history.read()[-1]["content"] == "hi"
        store.close()


def test_budget_is_at_least_twenty_thousand_examples() -> None:
    """The CI profile of this suite runs at least 20,000 examples in total."""
    import inspect
    import re

    source = inspect.getsource(inspect.getmodule(test_open))  # type: ignore[arg-type]
    total = sum(int(n) for n in re.findall(r"@budget\((\d+)\)", source))
    assert total >= 20_000, total
