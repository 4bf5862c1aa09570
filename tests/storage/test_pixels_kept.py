"""Thumbnails of the unseen-image budget (§5.4) never destroy pixels: each entry whose images
shrink is kept whole first, in the same transaction, and the original comes back byte for byte."""

from __future__ import annotations

import base64
import io
import random

import chatkeep


def _photo(seed: int, size: tuple[int, int] = (900, 700)) -> str:
    from PIL import Image

    rng = random.Random(seed)
    img = Image.frombytes(
        "RGB", size, bytes(rng.randrange(256) for _ in range(size[0] * size[1] * 3))
    )
    buf = io.BytesIO()
    img.save(buf, "JPEG", quality=92)
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _user(text: str, url: str) -> dict:
    return {"role": "user", "content": [{"type": "text", "text": text},
                                        {"type": "image_url", "image_url": {"url": url}}]}  # fmt: skip


def test_thumbnailed_images_keep_their_originals(store: chatkeep.Store) -> None:
    """bound_unseen_image_bytes shrinks the older photo in the live history and keeps the
    entry whole under attachOriginal_<id>; export holds the full photo; a rerun changes nothing."""
    first, second = _photo(1), _photo(2)
    store.history.append(_user("first photo", first))
    store.history.append({"role": "assistant", "content": "nice"})
    store.history.append(_user("second photo", second))
    budget = len(second) + 1000
    assert store.bound_unseen_image_bytes(budget) == 1
    live = store.history.read()
    shrunk = live[0]["content"][1]["image_url"]["url"]
    assert shrunk != first and len(shrunk) < len(first)
    kept = store.local.get(store.local.keys("attachOriginal_"))
    assert list(kept.values()) == [_user("first photo", first)]
    assert first in str(store.export_data())
    assert store.bound_unseen_image_bytes(budget) == 0
    assert len(store.local.keys("attachOriginal_")) == 1
