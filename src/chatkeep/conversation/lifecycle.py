"""Image lifecycle on a stored profile (SPEC §5.1, §5.4): the storage side of the image rules.

Both operations are one locked read–modify–write of the live history through
``profile.history.mutate``, running a pure rule from :mod:`chatkeep.rules.images`.
"""

from __future__ import annotations

from typing import Any

from ..rules.images import DEFAULT_UNSEEN_BUDGET, bound_unseen_images, stamp_images_seen
from ..storage.profile import Profile

__all__ = ["bound_unseen_image_bytes", "mark_images_seen"]


def mark_images_seen(profile: Profile) -> int:
    """Stamp ``imagesSeen: true`` on every live entry with image parts (§5.1); returns how
    many entries changed (no write when 0)."""
    changed = 0

    def fn(entries: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        nonlocal changed
        result = stamp_images_seen(entries)
        if result is not None:
            changed = sum(1 for a, b in zip(entries, result, strict=True) if a is not b)
        return result

    profile.history.mutate(fn)
    return changed


def bound_unseen_image_bytes(profile: Profile, budget: int = DEFAULT_UNSEEN_BUDGET) -> int:
    """Thumbnail the oldest images until their data URLs fit ``budget`` (§5.4); returns the
    number of image parts changed."""
    changed = 0

    def fn(entries: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        nonlocal changed
        result, changed = bound_unseen_images(entries, budget)
        return result

    profile.history.mutate(fn)
    return changed
