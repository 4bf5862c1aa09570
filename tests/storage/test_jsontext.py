"""``chatkeep.jsontext.loads`` is ``json.loads``: the same value for every text, the same error
for every text that is not JSON (it only avoids importing the ``json`` package first)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chatkeep.jsontext import loads

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=8), kids, max_size=4)
    ),
    max_leaves=20,
)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _outcome(fn: Any, text: str) -> tuple[str, Any]:
    try:
        return "value", fn(text)
    except (ValueError, RecursionError, TypeError) as exc:
        return "error", (type(exc), str(exc))


def _check(text: str) -> None:
    mine, theirs = _outcome(loads, text), _outcome(json.loads, text)
    assert mine[0] == theirs[0], (text, mine, theirs)
    assert _same(mine[1], theirs[1]) if mine[0] == "value" else mine == theirs


@settings(max_examples=300, deadline=None)
@given(value=_JSON, indent=st.sampled_from([None, 0, 2]), pad=st.sampled_from(["", " ", "\n\t"]))
def test_dumped_values_read_back_as_json_loads_reads_them(
    value: Any, indent: int | None, pad: str
) -> None:
    _check(pad + json.dumps(value, indent=indent, ensure_ascii=False) + pad)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet='[]{}",:0123456789.eE+-truefalsnNIinfyaN \t\n\\u\ufeff', max_size=30))
def test_any_text_gives_json_loads_value_or_error(text: str) -> None:
    _check(text)


@pytest.mark.parametrize(
    "text",
    [
        "",
        " ",
        "[1] x",
        "[1]  ",
        '{"a": 1,}',
        "\ufeff[]",
        "NaN",
        "-Infinity",
        '"\\ud800"',
        "1" * 5000,
        "[" * 100_000 + "]" * 100_000,
        '{"a":1,"a":2}',
        "1e400",
    ],
)
def test_edge_texts(text: str) -> None:
    _check(text)
