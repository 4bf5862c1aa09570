"""Store-side image lifecycle (SPEC §5.1, §5.4): seen stamp and the unseen-image budget, on every backend."""

from __future__ import annotations

import base64
import io

from PIL import Image

import chatkeep
from factories import assistant, image_entry, png_data_url, user


def _size(url: str) -> tuple[str, tuple[int, int]]:
    raw = base64.b64decode(url.split(",", 1)[1])
    with Image.open(io.BytesIO(raw)) as img:
        return img.format, img.size


def test_mark_images_seen_stamps_only_image_entries(store: chatkeep.Store, spec) -> None:
    """mark_images_seen() stamps entries with image parts, keeps pixels, is idempotent and writes nothing the second time."""
    url = png_data_url(90, 60, noise=True)
    store.history.append(user("text only"))
    store.history.append(image_entry("look", url))
    store.history.append(assistant("ok"))
    assert store.mark_images_seen() == 1
    live = store.history.read()
    assert "imagesSeen" not in live[0] and "imagesSeen" not in live[2]
    assert live[1]["imagesSeen"] is True
    assert live[1]["content"][1]["image_url"]["url"] == url
    before = spec.dump()
    assert store.mark_images_seen() == 0
    assert spec.dump() == before


def test_bound_unseen_within_budget_writes_nothing(store: chatkeep.Store, spec) -> None:
    """Unseen images within the budget are left alone."""
    store.history.append(image_entry("a", png_data_url(600, 400, noise=True)))
    store.history.append(image_entry("b", png_data_url(600, 400, noise=True)))
    before = spec.dump()
    assert store.bound_unseen_image_bytes() == 0
    assert spec.dump() == before


def test_bound_unseen_thumbnails_oldest_spares_newest(store: chatkeep.Store) -> None:
    """Over budget, the oldest unseen images become ≤480 px JPEG thumbnails; the newest image entry keeps its pixels."""
    big = [png_data_url(900, 700, noise=True) for _ in range(3)]
    for i, url in enumerate(big):
        store.history.append(image_entry(f"shot {i}", url))
    budget = len(big[2]) + 10
    changed = store.bound_unseen_image_bytes(budget)
    assert changed == 2
    live = store.history.read()
    for entry in live[:2]:
        fmt, (w, h) = _size(entry["content"][1]["image_url"]["url"])
        assert fmt == "JPEG" and max(w, h) <= 480
    assert live[2]["content"][1]["image_url"]["url"] == big[2]
    assert store.bound_unseen_image_bytes(budget) == 0  # thumbnails are never re-encoded


def test_bound_unseen_newest_alone_over_budget_untouched(store: chatkeep.Store, spec) -> None:
    """A single image-bearing entry is never thumbnailed, even over budget."""
    store.history.append(image_entry("huge", png_data_url(1200, 900, noise=True)))
    before = spec.dump()
    assert store.bound_unseen_image_bytes(1000) == 0
    assert spec.dump() == before
