"""Every public function of ``chatkeep`` answers wrong-typed or hostile positional arguments
with a chatkeep error (or a result), never a raw TypeError/AttributeError/KeyError."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import chatkeep

GARBAGE: list[Any] = [
    None,
    5,
    "\ud800",
    [1],
    {"a": 1},
    [{"role": "user"}],
    [None],
    b"x",
    [{"role": "user", "content": [None]}],
]
#: Every public function is covered; none is exempt.
TYPED_HELPERS: set[str] = set()


def _public_functions() -> list[str]:
    out = []
    for name in chatkeep.__all__:
        obj = getattr(chatkeep, name)
        # open() is covered by the property suite (with no argument it opens the user's store)
        skip = name in TYPED_HELPERS or name == "open"
        if callable(obj) and not isinstance(obj, type) and not skip:
            out.append(name)
    return out


@pytest.mark.parametrize("name", _public_functions())
def test_public_function_answers_garbage_with_chatkeep_errors(name: str) -> None:
    """Each garbage value in each required positional argument gives a result or a
    chatkeep error."""
    store = chatkeep.open(":memory:")
    fn = getattr(chatkeep, name)
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    for bad in GARBAGE:
        args = [store if p.name in ("store", "profile") else bad for p in params]
        kwargs: dict[str, Any] = {}
        if name == "build_request":
            kwargs = {"user_entry": bad, "system_prompt": bad, "model": bad, "base_url": bad}
        try:
            fn(*args, **kwargs)
        except chatkeep.ChatkeepError:
            pass
    store.close()
