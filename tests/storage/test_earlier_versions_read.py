"""Earlier versions read back per live turn (SPEC §3.5): ``history.earlier_versions()`` gives the
versions a turn replaced, oldest first, only while the conversation before it is the same."""

from __future__ import annotations

import chatkeep
from factories import assistant, user


def _contents(versions: dict[int, list[list[dict]]]) -> dict[int, list[list[str]]]:
    return {i: [[e["content"] for e in v] for v in vs] for i, vs in versions.items()}


def _turns(store: chatkeep.Store, *texts: str) -> None:
    for k, text in enumerate(texts):
        store.history.append(user(text) if k % 2 == 0 else assistant(text))


def test_each_cut_is_one_version_of_its_turn(store: chatkeep.Store) -> None:
    """Two regenerations of turn 2 are two versions of turn 2, oldest first; flags added to the
    conversation before it (a seen stamp) do not hide them."""
    _turns(store, "q1", "a1", "q2", "a2")
    assert store.history.earlier_versions() == {}
    store.history.replace_from(2, user("q2"))
    _turns(store, "q2", "a2 again")
    store.history.replace_from(2, user("q2"))
    _turns(store, "q2", "a2 third")
    store.history.mutate(lambda es: [{**es[0], "imagesSeen": True}, *es[1:]])
    assert _contents(store.history.earlier_versions()) == {2: [["q2", "a2"], ["q2", "a2 again"]]}
    archived = store.history.archived()
    assert [e["replacedAt"] for e in archived] == [2, 2, 2, 2]
    assert len({e["replacedCut"] for e in archived}) == 2


def test_an_edit_further_up_hides_the_versions_below_it(store: chatkeep.Store) -> None:
    """After turn 0 is edited, the old versions of turn 2 belong to a conversation that is no
    longer live: only turn 0's version shows."""
    _turns(store, "q1", "a1", "q2", "a2")
    store.history.truncate_from(2)
    _turns(store, "q2 edited", "a2b")
    store.history.truncate_from(0)
    _turns(store, "q1 edited", "a1b", "q2 edited", "a2c")
    assert _contents(store.history.earlier_versions()) == {0: [["q1", "a1", "q2 edited", "a2b"]]}


def test_another_conversation_shows_no_versions(store: chatkeep.Store) -> None:
    """A new conversation (the live history cleared) does not inherit the archive's versions,
    even at the same turn index with the same number of turns before it."""
    _turns(store, "q1", "a1", "q2", "a2")
    store.history.truncate_from(2)
    store.history.clear()
    _turns(store, "other", "reply", "next", "answer")
    assert store.history.earlier_versions() == {}
    assert len(store.history.archived()) == 2  # still kept
