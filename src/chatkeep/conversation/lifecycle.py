"""Image lifecycle on a stored profile (SPEC §5.1, §5.4): the storage side of the image rules.

Both operations run a pure rule from :mod:`chatkeep.rules.images` in one locked
read–modify–write: the seen stamp over the live entries that still hold unseen images
(``profile.history.stamp_seen``, just those rows, pixels untouched), the image budget over the whole live
window (``profile.history.mutate``), because seen images count in it too (§5.4). An entry
whose images become thumbnails is kept whole first (``attachOriginal_<id>``, same transaction):
no pixel the user gave is destroyed.
"""

from __future__ import annotations

from typing import Any

from ..rules.images import DEFAULT_UNSEEN_BUDGET, bound_unseen_images
from ..storage.profile import Profile

__all__ = ["bound_unseen_image_bytes", "mark_images_seen"]


def mark_images_seen(profile: Profile) -> int:
    """Stamp ``imagesSeen: true`` on every live entry with image parts (§5.1); returns how
    many entries changed (no write when 0)."""
    return profile.history.stamp_seen()


#: Where a profile object remembers ``(budget, history write counter)`` of its last pass that
#: found nothing to do: the same history is within the same budget, so it is not read again.
_CHECKED = "_imageBudgetChecked"


def bound_unseen_image_bytes(profile: Profile, budget: int = DEFAULT_UNSEEN_BUDGET) -> int:
    """Thumbnail the oldest images until their data URLs fit ``budget`` (§5.4); returns the
    number of image parts changed. A history this profile object already found within
    ``budget`` at its current write counter is not read again (the pass runs each time the
    panel opens; a long conversation would pay a whole locked read for nothing)."""
    history = profile.history
    before = history.write_count()
    if profile.__dict__.get(_CHECKED) == (budget, before):
        return 0
    changed = 0

    def fn(entries: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
        nonlocal changed
        result, changed = bound_unseen_images(entries, budget)
        if result is not None:
            # the full pixels stay in the store (§5): each entry about to become thumbnails is
            # kept whole first, in this same transaction
            for old, new in zip(entries, result, strict=True):
                if new is not old:
                    profile.keep_original(old)
        return result

    # seen images count too (§5.4: an answered image still occupies the store), so this reads
    # the whole live window, not only the rows flagged unseen
    if history.mutate(fn) is None:
        # nothing to do at ``before`` or later: a write in between moved the counter past
        # ``before``, so this memo never matches a history it did not check
        profile.__dict__[_CHECKED] = (budget, before)
    return changed
