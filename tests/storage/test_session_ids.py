"""Ids at the library's public boundary: every ``store.sessions`` method that takes a session id,
and ``chatkeep.open(profile=…)``, check it with the one id rule of ``chatkeep.limits`` and
refuse what the store could not read back with InvalidValue, before anything is written."""

from __future__ import annotations

from typing import Any

import pytest

import chatkeep
from chatkeep.limits import MAX_ID_CHARS, MAX_PROFILE_CHARS, check_id, id_problem

ENTRY = {"role": "user", "content": "hello"}
BAD = {"nul": "a\x00b", "over-long": "s" * (MAX_ID_CHARS + 1), "empty": ""}

CALLS = {
    "get": lambda s, i: s.sessions.get(i),
    "entries_json": lambda s, i: s.sessions.entries_json(i),
    "row": lambda s, i: s.sessions.row(i),
    "update": lambda s, i: s.sessions.update(i),
    "append": lambda s, i: s.sessions.append(i, ENTRY),
    "extend": lambda s, i: s.sessions.extend(i, [ENTRY]),
    "modify": lambda s, i: s.sessions.modify(i, lambda body: [*body, ENTRY]),
    "rename": lambda s, i: s.sessions.rename(i, "x"),
    "pin": lambda s, i: s.sessions.pin(i),
    "delete": lambda s, i: s.sessions.delete(i),
    "switch": lambda s, i: s.sessions.switch(i),
    "load": lambda s, i: s.sessions.load(i),
    "restore": lambda s, i: s.sessions.restore(i),
    "add_many": lambda s, i: s.sessions.add_many([({"id": i, "name": "n"}, [ENTRY])]),
}


@pytest.mark.parametrize("call", sorted(CALLS))
@pytest.mark.parametrize("bad", sorted(BAD))
def test_every_sessions_method_refuses_an_unreadable_id(
    store: chatkeep.Store, spec: Any, call: str, bad: str
) -> None:
    """NUL, over-long and empty session ids: InvalidValue with a hint, nothing written."""
    store.history.append({"role": "user", "content": "live"})
    store.sessions.save("kept")
    before = spec.dump()
    with pytest.raises(chatkeep.InvalidValue) as err:
        CALLS[call](store, BAD[bad])
    assert err.value.hint
    assert spec.dump() == before


def test_extend_with_a_nul_id_keeps_every_acked_entry(store: chatkeep.Store, spec: Any) -> None:
    """The reported loss through the library: extend("a\\x00b") is refused, and the session
    beside it keeps what it was given."""
    store.sessions.add_many([({"id": "ab", "name": "ab"}, [ENTRY])])
    with pytest.raises(chatkeep.InvalidValue):
        store.sessions.extend("a\x00b", [{"role": "user", "content": "lost?"}])
    assert store.sessions.extend("ab", [{"role": "assistant", "content": "kept"}]) is not None
    with spec.open() as again:
        got = again.sessions.get("ab")
    assert got is not None and [e["content"] for e in got["history"]] == ["hello", "kept"]


def test_the_longest_session_id_round_trips(store: chatkeep.Store, spec: Any) -> None:
    """An id of exactly MAX_ID_CHARS is usable everywhere: added, extended, read back."""
    sid = "Ω" * MAX_ID_CHARS
    store.sessions.add_many([({"id": sid, "name": "long"}, [ENTRY])])
    store.sessions.extend(sid, [{"role": "assistant", "content": "ok"}])
    with spec.open() as again:
        got = again.sessions.get(sid)
        assert [r["id"] for r in again.sessions.list()] == [sid]
    assert got is not None and len(got["history"]) == 2


@pytest.mark.parametrize(
    "profile", ["a\x00b", "p" * (MAX_PROFILE_CHARS + 1), "", "\udcff", 7], ids=repr
)
def test_open_refuses_an_unreadable_profile(spec: Any, profile: Any) -> None:
    """chatkeep.open(profile=…) takes the same rule (NUL, over-long, empty, not Unicode)."""
    with pytest.raises(chatkeep.InvalidValue) as err:
        chatkeep.open(spec.url, profile=profile)
    assert err.value.hint and "profile" in err.value.hint


def test_one_rule_for_every_id() -> None:
    """check_id names what is wrong; id_problem is None exactly for the ids it accepts."""
    assert check_id("user-42") == "user-42"
    assert id_problem("x" * MAX_ID_CHARS) is None
    assert "NUL" in (id_problem("a\x00") or "")
    assert "192-character" in (id_problem("x" * 193) or "")
    assert "empty" in (id_problem("") or "")
    assert "Unicode" in (id_problem("\ud800") or "")
    assert "string" in (id_problem(None) or "")
    with pytest.raises(chatkeep.InvalidValue, match="NUL"):
        check_id("a\x00b", "the framework session id")
