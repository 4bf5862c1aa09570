"""What the panel page receives: entry views without base64, and the image registry.

:func:`history_view` turns the live history into the JSON the page renders (built on
:func:`chatkeep.entry_view`, so images appear as their sizes, never as base64):

* user messages — ``{"kind": "message", "text", "images": [{"src", "mime", "width", "height",
  "bytes"}]}``; ``src`` is ``/api/image/<sha256 of the data URL>``, the stored pixels served at
  full resolution by the image endpoint;
* attachments — ``{"kind": "attachment", "attachment": {"title", "url", "chars", "images",
  "summarized", "trimmed"?}}``: a chip, never a bubble; the page text itself is not sent;
  ``trimmed`` (``{"originalChars", "keptChars"}``) when an overflow rescue replaced the text
  with its stub;
* assistant replies — ``{"kind": "message", "text", "html"}``: ``html`` is
  :func:`~chatkeep.panel.markdown.render_markdown` of the text, with ``[mm:ss]`` pills opening the
  video of the conversation (the entry's own ``videoSrc``, else the latest earlier one).

Every view keeps ``index``, ``role`` and the entry flags (``attachId``, ``videoSrc``,
``imagesSeen``, ``summarized``, ``interrupted``, ``unanswered``, ``provider``), a reply's ``usage``
(``{input, cachedRead, cacheWrite, output}``, SPEC §6.4) when it has one, and what an entry keeps
beside its text and never sends (``reasoning``, ``toolCalls``, ``toolResult``, ``createdAt``:
the page shows them folded, as plain text). Rendered replies are
remembered (:func:`~chatkeep.panel.markdown.render_markdown_cached`).

:func:`usage_totals` sums the replies' usage per provider, so the page can show the session's
usage and cost (prices are per provider card) without holding every view.

:class:`ImageRegistry` remembers, per content hash, the data URLs the page was told about, so
the image endpoint answers without re-reading the history; it is bounded (LRU by bytes) and a
miss falls back to a history read.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .. import (
    UndecodableImage,
    data_url_mime,
    decode_data_url,
    digest_text,
    entry_text,
    entry_view,
    image_part_url,
    is_attachment,
    is_image_part,
    trimmed_original_chars,
)
from .markdown import render_markdown_cached

__all__ = ["ALLOWED_IMAGE_TYPES", "ImageRegistry", "history_view", "image_key", "usage_totals"]

ALLOWED_IMAGE_TYPES = ("image/png", "image/jpeg", "image/webp", "image/gif")


def image_key(url: str) -> str:
    """The content key of one stored image: sha256 of its data URL, hex."""
    return digest_text(url).removeprefix("sha256:")


def _decode(url: str) -> tuple[str, bytes] | None:
    if data_url_mime(url) not in ALLOWED_IMAGE_TYPES:
        return None
    try:
        return decode_data_url(url)
    except UndecodableImage:
        return None


class ImageRegistry:
    """Data URLs by content key, bounded by ``budget`` characters (least recently used out)."""

    def __init__(self, budget: int = 64 * 1024 * 1024) -> None:
        self.budget = budget
        self._urls: OrderedDict[str, str] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def remember(self, url: str) -> str:
        key = image_key(url)
        with self._lock:
            if key in self._urls:
                self._urls.move_to_end(key)
                return key
            self._urls[key] = url
            self._size += len(url)
            while self._size > self.budget and len(self._urls) > 1:
                _, old = self._urls.popitem(last=False)
                self._size -= len(old)
        return key

    def lookup(
        self, key: str, entries: list[dict[str, Any]] | None = None
    ) -> tuple[str, bytes] | None:
        """``(mime, bytes)`` for ``key``, searching ``entries`` when it is not remembered."""
        with self._lock:
            url = self._urls.get(key)
        if url is None and entries is not None:
            for entry in entries:
                content = entry.get("content")
                if not isinstance(content, list):
                    continue
                for part in content:
                    if is_image_part(part):
                        candidate = image_part_url(part)
                        if image_key(candidate) == key:
                            url = candidate
                            self.remember(url)
                            break
                if url is not None:
                    break
        return _decode(url) if url is not None else None


def _image_urls(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    if not isinstance(content, list):
        return []
    return [image_part_url(p) for p in content if is_image_part(p)]


def video_url(entry: dict[str, Any]) -> str | None:
    """The ``videoSrc`` URL of an entry, if it has one."""
    src = entry.get("videoSrc")
    if isinstance(src, dict) and isinstance(src.get("url"), str) and src["url"]:
        return src["url"]
    return None


def history_view(
    entries: list[dict[str, Any]],
    *,
    images: ImageRegistry,
    collapse_thoughts: bool = True,
    start: int = 0,
    first: int = 0,
    video: str | None = None,
) -> list[dict[str, Any]]:
    """The page's view of the live history (see the module docstring); with ``start``, only
    the views of ``entries[start:]`` (the earlier entries still give the video context).
    ``first``: the position of ``entries[0]`` (a page of the archive); ``video``: the video
    context of the entries before it."""
    out: list[dict[str, Any]] = []
    for k, entry in enumerate(entries):
        i = first + k
        if k < start:
            video = video_url(entry) or video
            continue
        base = entry_view(i, entry)
        view: dict[str, Any] = {"index": i, "role": base["role"]}
        # the flags, and what a reply keeps beside its text and never sends (SPEC §14: shown
        # folded, as plain text)
        for key in (
            *("attachId", "videoSrc", "imagesSeen", "summarized", "interrupted", "unanswered"),
            "provider",
            *("reasoning", "toolCalls", "toolResult", "createdAt"),
        ):
            if key in base:
                view[key] = base[key]
        if isinstance(entry.get("usage"), dict):
            view["usage"] = entry["usage"]
        video = video_url(entry) or video
        infos = [p for p in base["content"] if p.get("type") == "image"]
        if is_attachment(entry):
            meta = dict(base.get("attachment") or {})
            meta["images"] = len(infos)
            meta["summarized"] = bool(entry.get("summarized"))
            original = trimmed_original_chars(entry)
            if original is not None:
                # an overflow rescue replaced the text with a stub (the whole text is kept
                # under attachOriginal_<attachId>): the chip says so, with both sizes
                meta["trimmed"] = {"originalChars": original, "keptChars": meta.get("chars", 0)}
            view["kind"] = "attachment"
            view["attachment"] = meta
        else:
            view["kind"] = "message"
            view["text"] = entry_text(entry)
            pictures = []
            for url, info in zip(_image_urls(entry), infos, strict=False):
                key = images.remember(url)
                pictures.append({**info, "src": f"/api/image/{key}"})
            view["images"] = pictures
            if entry.get("role") == "assistant":
                view["html"] = render_markdown_cached(
                    view["text"], video_url(entry) or video, collapse_thoughts
                )
        out.append(view)
    return out


USAGE_KEYS = ("input", "cachedRead", "cacheWrite", "output")


def usage_totals(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``[{"provider": {"name"}, "usage": {input, cachedRead, cacheWrite, output}}, …]``: the
    usage of the replies in ``entries`` summed per provider name (``name`` is ``None`` for
    replies without a provider), in order of first appearance."""
    totals: dict[str | None, dict[str, float]] = {}
    for entry in entries:
        usage = entry.get("usage") if isinstance(entry, dict) else None
        if not isinstance(usage, dict):
            continue
        provider = entry.get("provider")
        name = provider.get("name") if isinstance(provider, dict) else None
        key = name if isinstance(name, str) else None
        total = totals.setdefault(key, dict.fromkeys(USAGE_KEYS, 0))
        for k in USAGE_KEYS:
            value = usage.get(k)
            if isinstance(value, int | float) and not isinstance(value, bool):
                total[k] += value
    return [{"provider": {"name": name}, "usage": usage} for name, usage in totals.items()]
