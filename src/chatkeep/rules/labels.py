"""Label placeholders for images the model has already seen (SPEC §5.3).

- :func:`parse_figure_labels` reads the numbered list after the first ``## Figures`` heading.
- :func:`compact_entry_image_parts` replaces the k-th image part of an entry by the text part
  ``[<label k>]`` (or ``[image k]`` when there is no k-th label). Other parts keep their
  positions, the entry's other fields are kept, the function is idempotent, and an entry without
  image parts is returned as the same object. The input is never mutated.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..entries import Entry, entry_text, has_image_parts, image_part_url, is_image_part

__all__ = [
    "FIGURES_HEADING",
    "compact_entry_image_parts",
    "label_for",
    "map_image_parts",
    "parse_figure_labels",
]

FIGURES_HEADING = "## Figures"
_LABEL_LINE_RE = re.compile(r"^\d+\.\s+(.+)$")


def parse_figure_labels(text: str) -> list[str]:
    """Captions listed after the first ``## Figures``: each ``N. caption`` line, stripped, in order."""
    if not isinstance(text, str):
        return []
    at = text.find(FIGURES_HEADING)
    if at < 0:
        return []
    tail = text[at + len(FIGURES_HEADING) :]
    labels = []
    for line in tail.splitlines():
        m = _LABEL_LINE_RE.match(line)
        if m and m.group(1).strip():
            labels.append(m.group(1).strip())
    return labels


def label_for(k: int, labels: list[str]) -> str:
    """The placeholder text of the k-th (1-based) image given the entry's figure labels."""
    label = labels[k - 1] if 0 < k <= len(labels) else ""
    return "[" + (label or f"image {k}") + "]"


def compact_entry_image_parts(entry: Entry) -> Entry:
    """A copy of ``entry`` whose image parts are label placeholders; the same object if it has none."""
    if not has_image_parts(entry):
        return entry
    labels = parse_figure_labels(entry_text(entry))
    parts: list[Any] = []
    k = 0
    for part in entry["content"]:
        if is_image_part(part):
            k += 1
            parts.append({"type": "text", "text": label_for(k, labels)})
        else:
            parts.append(part)
    out = dict(entry)
    out["content"] = parts
    return out


def map_image_parts(entry: Entry, fn: Callable[[int, str], str | None]) -> Entry:
    """``entry`` with the k-th image part's URL (1-based) replaced by ``fn(k, url)``: the same
    string keeps the part as it is, ``None`` makes it its label placeholder, another string a
    new image part. The same object when nothing changes; the input is never mutated."""
    parts: list[Any] = []
    changed = False
    labels: list[str] | None = None
    k = 0
    for part in entry["content"]:
        if not is_image_part(part):
            parts.append(part)
            continue
        k += 1
        url = image_part_url(part)
        new = fn(k, url)
        if new is url:
            parts.append(part)
            continue
        changed = True
        if new is None:
            if labels is None:
                labels = parse_figure_labels(entry_text(entry))
            parts.append({"type": "text", "text": label_for(k, labels)})
        else:
            parts.append({"type": "image_url", "image_url": {"url": new}})
    return {**entry, "content": parts} if changed else entry
