"""Image lifecycle rules: seen stamp, labels for the model, budgets and placement (SPEC §5).

All functions are pure: they never mutate their input, and "nothing changed" is reported by
returning the input object itself (or ``None`` for the store-side transforms).

Request side
    :func:`prepare_history_for_model` — seen images become labels, the ``imagesSeen`` flag never
    reaches a request, everything else passes through as the same objects.
    :func:`first_fit` / :func:`cap_turn_images` — the per-request image cap (§5.5: at most 8
    images and 3 MiB of data-URL characters, first fit in order); it limits what a request
    carries (:mod:`chatkeep.rules.request_images`), never what is stored.
    :func:`interleave_image_parts` — images placed at their ``[图k]`` anchors.

Store side (wrapped by the store in one locked read–modify–write each)
    :func:`stamp_images_seen` — ``imagesSeen: true`` on every image-bearing entry.
    :func:`bound_unseen_images` — oldest images (seen or not) become thumbnails until the
    budget fits.

Image sizes are counted in data-URL characters (:func:`image_parts_bytes`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..constants import DEFAULT_UNSEEN_BUDGET
from ..entries import (
    Entry,
    has_image_parts,
    image_part_url,
    is_image_part,
    require_entry_list,
    require_list,
)
from ..errors import UndecodableImage
from ..limits import check_text
from .labels import compact_entry_image_parts, label_for, parse_figure_labels
from .thumbnails import downscale_data_url

__all__ = [
    "DEFAULT_UNSEEN_BUDGET",
    "TURN_IMAGE_MAX_CHARS",
    "TURN_IMAGE_MAX_COUNT",
    "bound_unseen_images",
    "cap_turn_images",
    "first_fit",
    "compact_entry_image_parts",
    "image_part",
    "image_parts_bytes",
    "interleave_image_parts",
    "label_for",
    "parse_figure_labels",
    "prepare_history_for_model",
    "stamp_images_seen",
]

TURN_IMAGE_MAX_COUNT = 8
TURN_IMAGE_MAX_CHARS = 3 * 1024 * 1024


def image_part(url: str) -> dict[str, Any]:
    """The canonical stored shape of an image part."""
    return {"type": "image_url", "image_url": {"url": url}}


def _entry_image_chars(entry: Any) -> int:
    if not has_image_parts(entry):
        return 0
    return sum(len(image_part_url(p)) for p in entry["content"] if is_image_part(p))


def image_parts_bytes(entries_or_entry: Entry | Sequence[Entry]) -> int:
    """Data-URL characters of the image parts of one entry or of a list of entries."""
    if not isinstance(entries_or_entry, dict):
        require_entry_list(
            list(entries_or_entry) if isinstance(entries_or_entry, tuple) else entries_or_entry,
            "entries",
        )
    if isinstance(entries_or_entry, dict):
        return _entry_image_chars(entries_or_entry)
    return sum(_entry_image_chars(e) for e in entries_or_entry)


# --------------------------------------------------------------------------- request side


def prepare_history_for_model(history: list[Entry]) -> list[Entry]:
    """Seen images → labels, ``imagesSeen`` removed; the input list itself when nothing changes."""
    require_entry_list(history)
    out: list[Entry] | None = None
    for i, entry in enumerate(history):
        new = entry
        if isinstance(entry, dict) and "imagesSeen" in entry:
            new = compact_entry_image_parts(entry) if entry["imagesSeen"] is True else entry
            new = {k: v for k, v in new.items() if k != "imagesSeen"}
        if new is not entry:
            if out is None:
                out = list(history[:i])
            out.append(new)
        elif out is not None:
            out.append(entry)
    return history if out is None else out


def first_fit(
    sizes: Sequence[int],
    max_count: int = TURN_IMAGE_MAX_COUNT,
    max_chars: int = TURN_IMAGE_MAX_CHARS,
) -> list[bool]:
    """Which of the images of ``sizes`` (data-URL characters, in order) fit, first fit in
    order: at most ``max_count`` images and ``max_chars`` characters in all (§5.5)."""
    fits: list[bool] = []
    count = total = 0
    for size in sizes:
        ok = count < max_count and total + size <= max_chars
        if ok:
            count += 1
            total += size
        fits.append(ok)
    return fits


def cap_turn_images(
    images: Sequence[str],
    max_count: int = TURN_IMAGE_MAX_COUNT,
    max_chars: int = TURN_IMAGE_MAX_CHARS,
) -> tuple[list[str], int]:
    """First fit in order: at most ``max_count`` images, at most ``max_chars`` data-URL chars.

    Returns ``(kept, dropped_count)``; ``kept`` keeps the input order. The request pipeline
    applies the same rule to what one request carries
    (:func:`chatkeep.rules.request_images.cap_request_images`); nothing stored is capped.
    """
    require_list(images, "images", str)
    fits = first_fit([len(u) for u in images], max_count, max_chars)
    kept = [u for u, ok in zip(images, fits, strict=True) if ok]
    return kept, len(images) - len(kept)


def _as_image_part(image: str | dict[str, Any]) -> dict[str, Any]:
    """A data-URL string, a ``{"url": …}`` object (what extractors produce) or an image part
    → a proper ``image_url`` part (§5.6)."""
    if isinstance(image, str):
        return image_part(image)
    if is_image_part(image):
        return {"type": "image_url", "image_url": {"url": image_part_url(image)}}
    url = image.get("url") if isinstance(image, dict) else None
    if isinstance(url, dict):  # {"url": {"url": …}}: the part's own image_url shape
        url = url.get("url")
    if not isinstance(url, str):
        raise ValueError(
            f"an image must be a data URL, a {{'url': …}} object or a part: {image!r:.80}"
        )
    return image_part(url)


def interleave_image_parts(
    text: str, images: Sequence[str | dict[str, Any]]
) -> str | list[dict[str, Any]]:
    """Image k goes right after the first line containing ``[图k]``; the rest are appended.

    ``images`` items are data-URL strings, ``{"url": …}`` objects or image parts; each becomes a
    proper ``image_url`` part. Text between anchors becomes text parts (their concatenation is exactly ``text``); with no
    images the string itself is returned.
    """
    check_text(text, "text")
    require_list(images, "images", (str, dict))
    if not images:
        return text
    parts_of = [_as_image_part(im) for im in images]
    lines = text.splitlines(keepends=True)
    placed_at: dict[int, list[int]] = {}
    unplaced: list[int] = []
    for k in range(1, len(parts_of) + 1):
        anchor = f"[图{k}]"
        line_no = next((n for n, line in enumerate(lines) if anchor in line), None)
        if line_no is None:
            unplaced.append(k)
        else:
            placed_at.setdefault(line_no, []).append(k)
    out: list[dict[str, Any]] = []
    buf: list[str] = []
    for n, line in enumerate(lines):
        buf.append(line)
        if n in placed_at:
            out.append({"type": "text", "text": "".join(buf)})
            buf = []
            out.extend(parts_of[k - 1] for k in placed_at[n])
    if buf:
        out.append({"type": "text", "text": "".join(buf)})
    out.extend(parts_of[k - 1] for k in unplaced)
    return out


# --------------------------------------------------------------------------- store side


def stamp_images_seen(entries: list[Entry]) -> list[Entry] | None:
    """Every image-bearing entry gets ``imagesSeen: true``; ``None`` when nothing changes.

    The number of stamped entries is ``sum(a is not b for a, b in zip(entries, result))``.
    """
    require_entry_list(entries, "entries")
    out: list[Entry] | None = None
    for i, entry in enumerate(entries):
        if has_image_parts(entry) and entry.get("imagesSeen") is not True:
            if out is None:
                out = list(entries)
            out[i] = {**entry, "imagesSeen": True}
    return out


def _with_url(part: dict[str, Any], url: str) -> dict[str, Any]:
    img = part.get("image_url")
    if isinstance(img, dict):
        return {**part, "image_url": {**img, "url": url}}
    return {**part, "image_url": url}


def _thumbnail_entry(entry: Entry, max_edge: int) -> tuple[Entry, int]:
    """(new entry, parts changed): thumbnails, or labels when any image cannot be decoded."""
    parts: list[Any] = []
    changed = 0
    try:
        for part in entry["content"]:
            if is_image_part(part):
                url = image_part_url(part)
                thumb = downscale_data_url(url, max_edge=max_edge)
                if thumb != url:
                    parts.append(_with_url(part, thumb))
                    changed += 1
                    continue
            parts.append(part)
    except UndecodableImage:
        n_images = sum(1 for p in entry["content"] if is_image_part(p))
        return compact_entry_image_parts(entry), n_images
    if not changed:
        return entry, 0
    return {**entry, "content": parts}, changed


def bound_unseen_images(
    entries: list[Entry],
    budget: int = DEFAULT_UNSEEN_BUDGET,
    *,
    max_edge: int = 480,
) -> tuple[list[Entry] | None, int]:
    """Shrink the oldest images to thumbnails until their data-URL total fits ``budget``.

    Every entry with image parts counts, seen or not (an answered image still occupies the
    store, §5.4). Within budget, or with a single such entry, nothing happens. The newest
    image-bearing entry is never touched, even when it alone exceeds the budget. An entry with
    an image that cannot be decoded becomes label placeholders. Returns ``(new list or None,
    number of image parts changed)``.
    """
    require_entry_list(entries, "entries")
    bearing = [i for i, e in enumerate(entries) if has_image_parts(e)]
    total = sum(_entry_image_chars(entries[i]) for i in bearing)
    if total <= budget or len(bearing) <= 1:
        return None, 0
    out: list[Entry] | None = None
    changed = 0
    for i in bearing[:-1]:
        if total <= budget:
            break
        entry = entries[i]
        new, n = _thumbnail_entry(entry, max_edge)
        if new is entry:
            continue
        if out is None:
            out = list(entries)
        out[i] = new
        changed += n
        total += _entry_image_chars(new) - _entry_image_chars(entry)
    return out, changed
