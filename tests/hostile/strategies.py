"""Hypothesis strategies for hostile input: JSON-ish values with everything the store must
refuse or survive mixed in (lone surrogates, deep nesting, huge numbers, NaN, non-string keys,
tuples, NUL), entries, import documents, and an example budget scaled by ``CHATKEEP_FUZZ_SCALE``
(``make fuzz`` raises it so the same suite runs a million examples)."""

from __future__ import annotations

import base64
import io
import os
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

SCALE = float(os.environ.get("CHATKEEP_FUZZ_SCALE", "1"))


def budget(n: int) -> Any:
    """Hypothesis settings for ``n`` examples at scale 1 (no deadline: CI machines are shared)."""
    return settings(
        max_examples=max(1, int(n * SCALE)),
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
        database=None,
        derandomize=SCALE == 1,
    )


def _png(size: tuple[int, int], color: tuple[int, int, int]) -> str:
    from PIL import Image

    buf = io.BytesIO()
    n = size[0] * size[1] * 3
    noise = bytes((i * 7919 + sum(color)) % 251 for i in range(n))  # incompressible enough
    Image.frombytes("RGB", size, noise).save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


#: Real images: a tiny one stored inline, bigger ones stored as blobs (≥ 256 chars).
IMAGES = [_png((1, 1), (1, 2, 3)), _png((40, 30), (200, 10, 10)), _png((64, 64), (5, 5, 250))]
assert len(IMAGES[1]) >= 256

# every code point, lone surrogates and NUL included
any_text = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)
nice_text = st.text(max_size=40)
texts = st.one_of(nice_text, nice_text, any_text, st.sampled_from(["", "\x00", "\x00b:", "\ud800"]))

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.integers(),
    st.integers(min_value=2**63, max_value=2**70),
    st.floats(),
    st.floats(allow_nan=False, allow_infinity=False),
    texts,
    st.sampled_from(IMAGES),
)

json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(texts, children, max_size=4),
        st.lists(children, max_size=3).map(tuple),
        st.dictionaries(st.one_of(st.integers(), st.none()), children, min_size=1, max_size=2),
    ),
    max_leaves=12,
)


def nest(depth: int, leaf: Any = "x", as_dict: bool = False) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": value} if as_dict else [value]
    return value


deep_values = st.builds(
    nest, st.integers(min_value=90, max_value=130), st.sampled_from(["x", IMAGES[1]]), st.booleans()
)
values = st.one_of(json_values, json_values, json_values, deep_values)

keys = st.one_of(
    st.text(min_size=1, max_size=30),
    any_text,
    st.text(min_size=195, max_size=205),
    st.integers(),
    st.none(),
    st.sampled_from(["history", "savedSessions", "session_x", "activeSessionId", "maxSessions"]),
)


def _part(kind: str, payload: Any) -> Any:
    if kind == "text":
        return {"type": "text", "text": payload}
    if kind == "image":
        return {"type": "image_url", "image_url": {"url": payload}}
    if kind == "image_str":
        return {"type": "image_url", "image_url": payload}
    return payload


parts = st.one_of(
    st.builds(_part, st.just("text"), texts),
    st.builds(_part, st.just("image"), st.one_of(st.sampled_from(IMAGES), texts)),
    st.builds(_part, st.just("image_str"), st.sampled_from(IMAGES)),
    st.builds(_part, st.just("raw"), json_values),
)

entries = st.builds(
    lambda role, content, extra: {"role": role, "content": content, **extra},
    st.one_of(st.sampled_from(["user", "assistant"]), st.sampled_from(["system", ""]), scalars),
    st.one_of(texts, st.lists(parts, max_size=4), scalars),
    st.dictionaries(
        st.sampled_from(
            ["attachId", "imagesSeen", "interrupted", "provider", "videoSrc", "note", "x"]
        ),
        values,
        max_size=2,
    ),
)

good_entries = st.builds(
    lambda role, content: {"role": role, "content": content},
    st.sampled_from(["user", "assistant"]),
    st.one_of(nice_text, st.lists(st.builds(_part, st.just("text"), nice_text), max_size=3)),
)

legacy_ids = st.one_of(
    st.sampled_from(["a", "b", "dup", "with\x00nul", "x" * 193, "y" * 300, ""]),
    st.text(max_size=10),
    st.integers(),
    st.none(),
)

legacy_rows = st.builds(
    lambda sid, name, hist, pinned: {"id": sid, "name": name, "history": hist, "pinned": pinned},
    legacy_ids,
    texts,
    st.one_of(st.lists(good_entries, max_size=3), st.lists(entries, max_size=2), scalars),
    st.one_of(st.booleans(), scalars),
)

browsa_dumps = st.builds(
    lambda hist, rows, extra: {"history": hist, "savedSessions": rows, **extra},
    st.one_of(st.lists(good_entries, max_size=4), st.lists(entries, max_size=2), scalars),
    st.one_of(st.lists(legacy_rows, max_size=4), scalars),
    st.dictionaries(keys, values, max_size=3),
)

json_texts = st.one_of(
    st.text(max_size=60),
    st.builds(lambda n: "[" * n + "]" * n, st.integers(min_value=95, max_value=3000)),
    st.builds(lambda n: "1" * n, st.integers(min_value=15, max_value=5000)),
    st.sampled_from(
        ["1e400", "-1e400", "NaN", "Infinity", '"\\ud800"', '{"a":"\\udfff"}', "{}", "[]", "1.5"]
    ),
    st.builds(lambda v: __import__("json").dumps(v, default=str), json_values),
)
