"""Thumbnails and the unseen-image budget on real images (SPEC §5.4)."""

from __future__ import annotations

import base64
import copy
import subprocess
import sys

import pytest
from rules_helpers import (
    assistant,
    data_url,
    decode,
    image_bytes,
    img_part,
    jpeg_url,
    png_url,
    txt,
    user,
)

from chatkeep.rules.images import bound_unseen_images, image_parts_bytes
from chatkeep.rules.thumbnails import UndecodableImage, downscale_data_url

CORRUPT = "data:image/png;base64," + base64.b64encode(b"\x89PNG\r\n\x1a\nnot really").decode()


def test_png_with_alpha_flattened_on_white_jpeg():
    """A big transparent PNG becomes an opaque JPEG ≤ 480 px with white where it was clear."""
    url = png_url((1000, 600), mode="RGBA")
    out = downscale_data_url(url)
    assert out.startswith("data:image/jpeg;base64,")
    img = decode(out)
    assert img.format == "JPEG" and img.mode == "RGB"
    assert img.size == (480, 288)
    # The gradient alpha is 0 at the top row: the thumbnail is white there.
    r, g, b = img.getpixel((240, 0))
    assert min(r, g, b) > 240


def test_large_jpeg_scaled_longer_edge():
    """A large portrait JPEG is scaled so its longer edge (height) is 480."""
    out = downscale_data_url(jpeg_url((900, 1600), noise=True))
    img = decode(out)
    assert max(img.size) == 480 and img.size[1] == 480
    assert abs(img.size[0] - 270) <= 1


def test_custom_max_edge():
    """`max_edge` bounds the longer edge."""
    out = downscale_data_url(png_url((300, 200), noise=True), max_edge=100)
    assert decode(out).size == (100, 67)


def test_tiny_image_unchanged():
    """A small image (≤ 480 px, ≤ 64 KiB) is returned as the same string."""
    url = png_url((16, 16))
    assert downscale_data_url(url) is url


def test_small_edge_but_heavy_png_reencoded_once():
    """≤ 480 px but > 64 KiB non-JPEG is re-encoded as JPEG; a second pass changes nothing."""
    url = png_url((400, 400), noise=True)
    assert len(base64.b64decode(url.split(",")[1])) > 64 * 1024
    out = downscale_data_url(url)
    assert out.startswith("data:image/jpeg") and decode(out).size == (400, 400)
    assert downscale_data_url(out) is out


def test_thumbnail_is_never_reencoded():
    """Running the downscale on its own output returns it unchanged."""
    thumb = downscale_data_url(jpeg_url((2000, 1500), noise=True))
    assert downscale_data_url(thumb) is thumb


def test_gif_first_frame_to_jpeg():
    """A palette GIF larger than the limit becomes a JPEG thumbnail."""
    raw = image_bytes((800, 500), "GIF", mode="P")
    out = downscale_data_url(data_url(raw, "image/gif"))
    img = decode(out)
    assert img.format == "JPEG" and img.size == (480, 300)


def test_corrupt_bytes_raise_undecodable():
    """Bytes that are not an image raise UndecodableImage, a ValueError."""
    with pytest.raises(UndecodableImage):
        downscale_data_url(CORRUPT)
    assert issubclass(UndecodableImage, ValueError)


def test_truncated_image_raises_undecodable():
    """A JPEG cut in half cannot be decoded."""
    raw = image_bytes((600, 600), "JPEG", noise=True)
    with pytest.raises(UndecodableImage):
        downscale_data_url(data_url(raw[: len(raw) // 2], "image/jpeg"))


def test_bad_base64_raises_undecodable():
    """A payload that is not base64 raises UndecodableImage."""
    with pytest.raises(UndecodableImage):
        downscale_data_url("data:image/png;base64,@@@@")


def test_import_chatkeep_does_not_import_pil():
    """Importing chatkeep and its rules pulls in no imaging library."""
    code = (
        "import sys, chatkeep, chatkeep.rules.images, chatkeep.rules.thumbnails, "
        "chatkeep.rules.wire, chatkeep.rules.accounting, chatkeep.rules.context; "
        "print('PIL' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ---------------------------------------------------------------- bound_unseen_images

BIG = jpeg_url((1200, 900), noise=True, seed=1)
BIG2 = jpeg_url((1200, 900), noise=True, seed=2)
BIG3 = jpeg_url((1200, 900), noise=True, seed=3)


def test_bound_within_budget_no_change():
    """Total within budget → (None, 0)."""
    history = [user("a", [BIG]), user("b", [BIG2])]
    assert bound_unseen_images(history, budget=10 * len(BIG)) == (None, 0)


def test_bound_single_image_entry_exempt_even_over_budget():
    """One image-bearing entry alone over budget is never touched."""
    history = [user("a", [BIG, BIG2, BIG3])]
    assert bound_unseen_images(history, budget=10) == (None, 0)


def test_bound_oldest_first_until_fits_newest_exempt():
    """Oldest unseen entries become thumbnails until the total fits; the newest never."""
    history = [user("a", [BIG]), assistant("x"), user("b", [BIG2]), user("c", [BIG3])]
    before = copy.deepcopy(history)
    budget = len(BIG2) + len(BIG3) + 200_000  # room for the last two plus one thumbnail
    out, changed = bound_unseen_images(history, budget=budget)
    assert history == before
    assert out is not None and changed == 1
    assert decode(out[0]["content"][1]["image_url"]["url"]).size == (480, 360)
    assert out[2] is history[2] and out[3] is history[3]
    assert image_parts_bytes(out) <= budget
    # A second run changes nothing.
    assert bound_unseen_images(out, budget=budget) == (None, 0)


def test_bound_tiny_budget_never_touches_newest():
    """With a tiny budget every entry but the newest is thumbnailed, the newest keeps pixels."""
    history = [user("a", [BIG]), user("b", [BIG2]), user("c", [BIG3])]
    out, changed = bound_unseen_images(history, budget=1)
    assert out is not None and changed == 2
    assert out[2] is history[2]
    assert all(decode(e["content"][1]["image_url"]["url"]).size == (480, 360) for e in out[:2])


def test_bound_seen_images_count_too():
    """Seen entries count in the budget and are thumbnailed like unseen ones (§5.4, 2nd ed.)."""
    seen = {**user("a", [BIG]), "imagesSeen": True}
    history = [seen, user("b", [BIG2])]
    out, changed = bound_unseen_images(history, budget=len(BIG2))
    assert changed == 1 and out is not None and out[1] is history[1]
    assert out[0]["imagesSeen"] is True
    assert decode(out[0]["content"][1]["image_url"]["url"]).size == (480, 360)


def test_bound_newest_seen_entry_is_never_touched():
    """The newest image-bearing entry is kept even when it is seen and alone over budget."""
    history = [user("a", [BIG]), {**user("b", [BIG2]), "imagesSeen": True}]
    out, changed = bound_unseen_images(history, budget=1)
    assert changed == 1 and out[1] is history[1]


def test_bound_undecodable_entry_becomes_labels():
    """An entry holding an undecodable image turns into label placeholders."""
    bad = {
        "role": "user",
        "content": [txt("## Figures\n1. Figure 1: broken"), img_part(CORRUPT), img_part(BIG)],
    }
    history = [bad, user("c", [BIG3])]
    out, changed = bound_unseen_images(history, budget=len(BIG3))
    assert out is not None and changed == 2
    assert out[0]["content"][1:] == [txt("[Figure 1: broken]"), txt("[image 2]")]


def test_bound_keeps_string_image_url_shape():
    """A part stored as `"image_url": str` keeps that shape with the thumbnail URL."""
    old = {"role": "user", "content": [{"type": "image_url", "image_url": BIG}]}
    out, changed = bound_unseen_images([old, user("n", [BIG2])], budget=len(BIG2) + 100_000)
    assert changed == 1 and isinstance(out[0]["content"][0]["image_url"], str)
