"""Attaching sources into a store, and undoing it (SPEC §3.2, §5.4, §7.5 trigger, §8).

Every ``attach_*`` function runs the same steps and returns an :class:`AttachResult`:

1. Read the settings with ``store.get_all()``: ``maxTextChars`` caps the extracted text
   (``0`` → 1,000,000); ``mode=None`` means the ``contextMode`` setting (default ``"auto"``).
2. Extract the source (:mod:`chatkeep.attach`). Bad input — an unreachable URL, an unsupported
   content type, an encrypted or damaged PDF, an oversize file, bytes that are not an image, a
   transcript without cues — raises :class:`~chatkeep.errors.AttachError` and **nothing is
   stored**: neither the history nor ``attachSnapshots`` changes.
3. Build the entry (:func:`build_attachment_entry`): a ``user`` entry whose text comes from
   ``build_page_context_text`` (prefix, redacted ``URL:``, ``Title:``, ``Mode: <mode> | <fmt>``
   plus the change note of §8.3, redacted body) and a fresh ``attachId`` (uuid4 hex). Images
   become ``image_url`` parts in order: a PDF is ``[text, figure 1, figure 2, …]`` (the order of
   its ``## Figures`` list), an image is ``[text, image]`` (screenshot style), any other source
   places its images at ``[图N]`` anchors (``interleave_image_parts``). A source without images
   is stored as a plain string. Video transcripts carry ``videoSrc``.
4. Stamp it ``createdAt`` (epoch ms: the time it was attached; never sent to a model) and
   append it through ``store.history.append`` (validated, bounded by the live window).
5. Record the change-tracker snapshot (:mod:`chatkeep.attach.tracker`) in one transaction.
6. When the entry has images, run ``store.bound_unseen_image_bytes(image_budget)`` (§5.4).
7. Summary trigger (§7.5): when ``autoSummarizeAttachments`` is on and the extracted text is
   longer than ``summarizeThresholdChars`` (``0`` → 100,000), call ``summarize(store,
   attach_id)`` if a callable was given and report ``summarizing=True`` and ``summary_calls``
   (JSON ``summaryCalls``: the model calls condensing makes, SPEC §7.5). The raw entry is
   already stored when the hook runs. The hook must only *start* the condensing job (the
   sending engine supplies one that runs it in the background and writes the summary back by
   ``attachId``) and return promptly. An exception from the hook does not undo the attachment:
   it is logged (level INFO), ``summarizing`` is ``False`` and ``summary_error`` holds its
   message (the CLI's hook condenses in the foreground, so a provider failure lands here). Without a
   hook nothing is summarized and ``summarizing`` is ``False``.

:func:`undo_attach` removes an attachment by ``attachId``; the change tracker is left as it is.

This module loads no HTTP, PDF, imaging or HTML library at import time; the extractors import
what they need when they run.
"""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from ..constants import (
    DEFAULT_MAX_TEXT_CHARS,
    DEFAULT_SUMMARIZE_THRESHOLD,
)
from ..conversation.lifecycle import bound_unseen_image_bytes
from ..conversation.summary import summary_calls
from ..entries import entry_text
from ..errors import AttachError
from ..rules.context import build_page_context_text
from ..rules.images import DEFAULT_UNSEEN_BUDGET, image_part, interleave_image_parts
from ..rules.redact import redact_url
from . import tracker
from .caps import image_source as _image_source
from .caps import require_text as _require_text
from .caps import resource_limits
from .files import extract_file
from .images import extract_image_bytes
from .sources import DEFAULT_MAX_FETCH_BYTES, DEFAULT_MAX_FILE_BYTES, DEFAULT_TIMEOUT, Extracted
from .video import extract_video
from .web import extract_url

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = [
    "AttachResult",
    "Summarizer",
    "attach_file",
    "attach_image",
    "attach_source",
    "attach_url",
    "attach_video",
    "build_attachment_entry",
    "undo_attach",
]

log = logging.getLogger(__name__)

#: ``summarize(store, attach_id)``: starts condensing one stored attachment (SPEC §7.5).
Summarizer = Callable[["Profile", str], Any]

_MAX_MODE_CHARS = 40


@dataclass(frozen=True)
class AttachResult:
    """What one attach stored. ``url`` is the redacted URL of the header (``""`` for pasted
    images); ``chars`` is the length of the extracted text; ``images`` the number of image parts."""

    attach_id: str
    kind: str
    title: str
    url: str
    chars: int
    images: int
    truncated: bool
    changed: bool
    summarizing: bool
    index: int
    summary_error: str | None = None
    #: Model calls the condensing makes (0 when it is not started): announced before it runs.
    summary_calls: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON form (``chatkeep attach --json``), camelCase like stored fields."""
        return {
            "attachId": self.attach_id,
            "kind": self.kind,
            "title": self.title,
            "url": self.url,
            "chars": self.chars,
            "images": self.images,
            "truncated": self.truncated,
            "changed": self.changed,
            "summarizing": self.summarizing,
            "index": self.index,
            "summaryError": self.summary_error,
            "summaryCalls": self.summary_calls,
        }


# --------------------------------------------------------------------------- entry building


def build_attachment_entry(
    ex: Extracted,
    *,
    mode: str,
    title: str | None = None,
    change_note: str | None = None,
    attach_id: str | None = None,
) -> dict[str, Any]:
    """The history entry for one extracted source (pure; see the module docstring, step 3)."""
    text = build_page_context_text(
        {"url": ex.url, "title": title if title is not None else ex.title},
        ex.text,
        mode,
        fmt=ex.fmt,
        change_note=change_note,
    )
    content: str | list[dict[str, Any]]
    if not ex.images:
        content = text
    elif ex.kind in ("pdf", "image"):
        # Figure k must stay the k-th image part: labels (§5.3) are matched by position.
        content = [{"type": "text", "text": text}, *(image_part(u) for u in ex.images)]
    else:
        content = interleave_image_parts(text, ex.images)
    entry: dict[str, Any] = {
        "role": "user",
        "content": content,
        "attachId": attach_id or uuid.uuid4().hex,
    }
    if ex.video_src:
        entry["videoSrc"] = dict(ex.video_src)
    return entry


# --------------------------------------------------------------------------- settings


def _positive(value: Any, default: int) -> int:
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    return default


def _mode(mode: str | None, settings: dict[str, Any]) -> str:
    chosen = mode if mode is not None else settings.get("contextMode")
    if not isinstance(chosen, str) or not chosen.strip():
        chosen = "auto"
    chosen = chosen.strip()
    if len(chosen) > _MAX_MODE_CHARS or any(c in chosen for c in "\r\n\x00") or "::" in chosen:
        raise AttachError(
            f"not a usable context mode: {chosen[:_MAX_MODE_CHARS]!r}",
            hint="use a short single-line mode name such as 'auto' or 'full'",
        )
    return chosen


def _header_url(url: str) -> str:
    return redact_url(re.sub(r"[\r\n]+", " ", url or "").strip()) if url else ""


# --------------------------------------------------------------------------- the common path


def _store_extracted(
    store: Profile,
    extract: Callable[[int], Extracted],
    *,
    title: str | None,
    mode: str | None,
    summarize: Summarizer | None,
    image_budget: int,
) -> AttachResult:
    settings = store.get_all()
    max_chars = _positive(settings.get("maxTextChars"), DEFAULT_MAX_TEXT_CHARS)
    use_mode = _mode(mode, settings)
    ex = extract(max_chars)
    shown_title = title.strip() if title and title.strip() else ex.title
    url = _header_url(ex.url)
    key = tracker.snapshot_key(use_mode, url) if url else None
    digest = tracker.content_hash(ex.text, ex.images)
    previous = tracker.previous_snapshot(store, key) if key else None
    note = tracker.change_note(previous, digest)
    entry = build_attachment_entry(ex, mode=use_mode, title=shown_title, change_note=note)
    attach_id = entry["attachId"]
    attached_at = int(time.time() * 1000)
    entry["createdAt"] = attached_at
    length = store.history.append(entry)
    if key:
        tracker.record_snapshot(store, key, digest, len(ex.text), attached_at)
    if ex.images:
        bound_unseen_image_bytes(store, image_budget)
    summarizing, error, calls = False, None, 0
    threshold = _positive(settings.get("summarizeThresholdChars"), DEFAULT_SUMMARIZE_THRESHOLD)
    if summarize is not None and settings.get("autoSummarizeAttachments") is True:
        if len(ex.text) > threshold:
            calls = summary_calls(entry_text(entry))
            try:
                summarize(store, attach_id)
                summarizing = True
            except Exception as exc:  # the attachment stands; the summary is best effort
                # reported through summary_error; logged below warning so that a library
                # user without logging set up sees no traceback on stderr
                log.info("the summary of attachment %s failed", attach_id, exc_info=True)
                error = str(exc) or exc.__class__.__name__
    return AttachResult(
        attach_id=attach_id,
        kind=ex.kind,
        title=shown_title,
        url=url,
        chars=len(ex.text),
        images=len(ex.images),
        truncated=ex.truncated,
        changed=note is not None,
        summarizing=summarizing,
        index=length - 1,
        summary_error=error,
        summary_calls=calls,
    )


# --------------------------------------------------------------------------- public functions


def attach_url(
    store: Profile,
    url: str,
    *,
    title: str | None = None,
    mode: str | None = None,
    summarize: Summarizer | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = DEFAULT_MAX_FETCH_BYTES,
    image_budget: int = DEFAULT_UNSEEN_BUDGET,
) -> AttachResult:
    """Fetch a web page (or a PDF/text served by URL) and attach it."""
    _require_text(url, "the URL")
    return _store_extracted(
        store,
        lambda cap: extract_url(url, timeout=timeout, max_bytes=max_bytes, max_chars=cap),
        title=title,
        mode=mode,
        summarize=summarize,
        image_budget=image_budget,
    )


def attach_file(
    store: Profile,
    path: str | Path,
    *,
    title: str | None = None,
    mode: str | None = None,
    summarize: Summarizer | None = None,
    max_bytes: int | None = None,
    image_budget: int = DEFAULT_UNSEEN_BUDGET,
) -> AttachResult:
    """Attach a local HTML, Markdown, text, PDF or image file (within the size, pixel and page
    limits: ``max_bytes`` or the setting ``maxSourceBytes``, ``maxImagePixels``, ``maxPdfPages``)."""
    limits = resource_limits(store)
    cap_bytes = max_bytes if max_bytes is not None else limits["max_bytes"]
    return _store_extracted(
        store,
        lambda cap: extract_file(
            path,
            max_bytes=cap_bytes,
            max_chars=cap,
            max_pixels=limits["max_pixels"],
            max_pages=limits["max_pages"],
        ),
        title=title,
        mode=mode,
        summarize=summarize,
        image_budget=image_budget,
    )


def attach_video(
    store: Profile,
    url: str,
    transcript_path: str | Path,
    *,
    title: str | None = None,
    mode: str | None = None,
    summarize: Summarizer | None = None,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> AttachResult:
    """Attach a video transcript (WebVTT/SRT) for ``url``; the entry carries ``videoSrc``."""
    _require_text(url, "the video URL")
    _require_text(
        str(transcript_path) if isinstance(transcript_path, Path) else transcript_path,
        "the transcript path",
    )
    return _store_extracted(
        store,
        lambda cap: extract_video(
            url, transcript_path, title=title, max_chars=cap, max_bytes=max_bytes
        ),
        title=title,
        mode=mode,
        summarize=summarize,
        image_budget=DEFAULT_UNSEEN_BUDGET,
    )


def attach_image(
    store: Profile,
    data_or_path: bytes | bytearray | memoryview | str | Path,
    *,
    name: str | None = None,
    title: str | None = None,
    mode: str | None = None,
    summarize: Summarizer | None = None,
    max_bytes: int | None = None,
    image_budget: int = DEFAULT_UNSEEN_BUDGET,
) -> AttachResult:
    """Attach one image as a screenshot-style entry ``[text, image]``.

    ``data_or_path``: image bytes or a ``data:image/…;base64,`` URL (a pasted image: no URL
    line, not change-tracked, named ``name`` or "pasted image"), or the path of an image file.
    Anything that does not decode as an image raises :class:`AttachError`.
    """
    limits = resource_limits(store)
    cap_bytes = max_bytes if max_bytes is not None else limits["max_bytes"]

    def extract(_cap: int) -> Extracted:
        data, label, url = _image_source(data_or_path, name, cap_bytes)
        return extract_image_bytes(data, name=label, url=url, max_pixels=limits["max_pixels"])

    return _store_extracted(
        store,
        extract,
        title=title,
        mode=mode,
        summarize=summarize,
        image_budget=image_budget,
    )


_WEB_RE = re.compile(r"^https?://", re.I)
#: ``scheme://`` at the start of a source (RFC 3986 scheme characters)
_SCHEME_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


def attach_source(
    store: Profile,
    source: str | Path,
    *,
    title: str | None = None,
    mode: str | None = None,
    summarize: Summarizer | None = None,
    image_budget: int = DEFAULT_UNSEEN_BUDGET,
) -> AttachResult:
    """Dispatch one source: an ``http(s)://`` URL, a ``data:image/…`` URL, or a local file."""
    common: dict[str, Any] = {
        "title": title,
        "mode": mode,
        "summarize": summarize,
        "image_budget": image_budget,
    }
    if isinstance(source, str) and _WEB_RE.match(source.strip()):
        return attach_url(store, source.strip(), **common)
    if isinstance(source, str) and source[:5].lower() == "data:":
        return attach_image(store, source, **common)
    if isinstance(source, str):
        scheme = _SCHEME_RE.match(source.strip())
        if scheme and scheme.group(1).lower() == "file":
            return attach_file(store, _file_url_path(source.strip()), **common)
        if scheme:
            raise AttachError(
                f"unsupported URL scheme {scheme.group(1)!r} in {source.strip()!r}",
                hint="chatkeep attaches http(s):// and file:// URLs, data:image/… URLs and "
                "local paths; download other sources and attach the file",
            )
    return attach_file(store, source, **common)


def _file_url_path(url: str) -> str:
    """The local path of a ``file://`` URL (``file:///abs/path`` or ``file://localhost/…``)."""
    parts = urlsplit(url)
    if parts.netloc not in ("", "localhost"):
        raise AttachError(
            f"file URL {url!r} names another host ({parts.netloc})",
            hint="attach files of this machine (file:///path) or give the path itself",
        )
    return unquote(parts.path)


def undo_attach(store: Profile, attach_id: str) -> bool:
    """Remove the attachment entry with ``attach_id``; ``False`` (and no write) when unknown."""
    if not isinstance(attach_id, str) or not attach_id.strip():
        return False
    return store.history.remove_by_attach_id(attach_id.strip()) >= 0
