"""Attachment auto-summary (SPEC §7.5): condense a large stored attachment in the background.

* ``summarize_attachment(store, attach_id, *, provider=None, model=None, retries=2,
  retry_delay=1.0, sleep=time.sleep, max_workers=4, on_progress=None, raise_errors=False) ->
  bool`` — synchronous. Reads the
  attachment by ``attachId`` from the live history, splits its body (the text after the
  ``---`` header) with :func:`~chatkeep.conversation.chunking.chunk_text` (≤ 12,000 chars),
  condenses the chunks in parallel and, when there is more than one, merges them with one more
  call — through the active provider (or ``provider``/``model``) in its own API style, with the
  prompt family of the attachment (:mod:`~chatkeep.conversation.prompts`). While the
  conversation before the attachment is in the provider's cache and reading it is cheap enough, every call
  is the conversation's own request with the task at its end, so that prefix is read from the
  cache (:mod:`~chatkeep.conversation.summary_prefix`). A PDF's
  ``## Figures`` section is kept verbatim after the summary so figure labels survive.
  The write-back runs under the history lock, by ``attachId``: when the entry is gone or changed
  meanwhile nothing is written. The new text is the same header, then
  ``[chatkeep: auto-condensed from <N> chars — some detail may be lost]`` (``N`` = characters of
  the raw attachment text after its header, with thousands separators), a blank line and the summary; image parts
  are re-interleaved at their ``[图k]`` anchors (else appended in order) and the entry gets
  ``summarized: true``; other fields are kept. Returns ``True`` when written. Any failure (no
  provider, HTTP error, blank summary, ...) writes nothing and returns ``False``.
* ``summary_calls(text, chunk_chars=12_000) -> int`` — how many model calls condensing an
  attachment of this text makes (one per chunk, plus one merge when there are several): what the
  faces announce before it starts (``AttachResult.summary_calls``, ``chatkeep attach``'s line).
* Every summary call's usage (normalised, SPEC §6.4) is stored, also when the summary fails
  later, under :data:`SUMMARY_USAGE_KEY` in ``store.local`` — a list of records
  ``{attachId, title, provider: {name, model}, createdAt, calls: [usage | None, ...]}`` (one per
  condensing run, one usage per finished call). The key is outside ``GET_ALL_KEYS`` and never
  part of the history, so it is never sent to a model; ``chatkeep usage`` counts it as its
  ``summary`` line (:func:`summary_usage_entries`).
* ``should_summarize(settings, entry) -> bool`` — ``autoSummarizeAttachments`` is on, the entry
  is an unsummarized attachment with an ``attachId``, and its text is longer than
  ``summarizeThresholdChars`` (0 → 100,000).
* ``summarize_in_background(store, attach_id, *, force=False, **options) -> SummaryJob | None``
  — the ``summarize(store, attach_id)`` callback for attach code: call it after the raw entry is
  stored; it starts a :class:`SummaryJob` thread when :func:`should_summarize` says so (or
  ``force``) and returns it (``join()`` it to wait; ``written``/``error`` tell the outcome).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..constants import DEFAULT_SUMMARIZE_THRESHOLD
from ..entries import Entry, is_attachment, is_image_part, is_text_part, text_length
from ..errors import ContextOverflow
from ..providers import Card, complete, resolve_provider
from ..rules.images import interleave_image_parts
from .chunking import DEFAULT_CHUNK_CHARS, chunk_text
from .prompts import attachment_kind, chunk_prompt, merge_prompt
from .summary_prefix import summary_requests

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = [
    "SUMMARY_USAGE_KEY",
    "SummaryJob",
    "condensed_text",
    "should_summarize",
    "summary_calls",
    "summary_usage_entries",
    "summarize_attachment",
    "summarize_in_background",
]

log = logging.getLogger("chatkeep.summary")

_HEADER_RE = re.compile(r"\A(.*?\n---\n(?:\n)?)", re.S)
_TITLE_RE = re.compile(r"^Title: (.*)$", re.M)
_FIGURES = "\n\n## Figures\n"

#: ``store.local`` key of the usage of every summary call (module docstring).
SUMMARY_USAGE_KEY = "summaryUsage"


def _raw_text(entry: Entry) -> str:
    content = entry.get("content")
    if isinstance(content, str):
        return content
    return "".join(p.get("text", "") for p in content or [] if is_text_part(p))


def _split(text: str) -> tuple[str, str, str]:
    """``(header, body, figures)``: ``header + body + figures == text``."""
    m = _HEADER_RE.match(text)
    if m:
        header = m.group(1)
    else:
        first, sep, _ = text.partition("\n")
        header = first + sep
    body = text[len(header) :]
    cut = body.rfind(_FIGURES)
    if cut < 0:
        return header, body, ""
    return header, body[:cut], body[cut:]


def condensed_text(text: str, summary: str) -> str:
    """The attachment text after its summary: same header, banner, summary, figures kept.
    The banner's N counts the text after the header (the header itself is kept, not condensed)."""
    header, _body, figures = _split(text)
    condensed = len(text) - len(header)
    banner = f"[chatkeep: auto-condensed from {condensed:,} chars — some detail may be lost]"
    return f"{header}{banner}\n\n{summary.strip()}{figures}"


def summary_calls(text: str, chunk_chars: int = DEFAULT_CHUNK_CHARS) -> int:
    """The number of model calls condensing an attachment whose text is ``text`` makes."""
    _header, body, _figures = _split(text)
    chunks = len(chunk_text(body, chunk_chars))
    return chunks + (1 if chunks > 1 else 0)


def summary_usage_entries(records: Any) -> list[Entry]:
    """The stored summary calls (:data:`SUMMARY_USAGE_KEY`) as assistant-shaped entries that
    :func:`~chatkeep.rules.usage.usage_totals` can count and price (by ``provider.name``), each
    with the record's ``createdAt``; records or calls of the wrong shape are skipped."""
    out: list[Entry] = []
    for record in records if isinstance(records, list) else ():
        if not isinstance(record, dict) or not isinstance(record.get("calls"), list):
            continue
        provider = record.get("provider")
        for usage in record["calls"]:
            if not isinstance(usage, dict):
                continue
            entry: Entry = {"role": "assistant", "content": "(summary call)", "usage": usage}
            if isinstance(provider, dict):
                entry["provider"] = provider
            if isinstance(record.get("createdAt"), int):
                entry["createdAt"] = record["createdAt"]
            out.append(entry)
    return out


def _record_usage(
    store: Profile, attach_id: str, title: str, card: Card, calls: list[dict[str, int] | None]
) -> None:
    """Add one condensing run's call usages to :data:`SUMMARY_USAGE_KEY` (one transaction)."""
    if not calls:
        return
    record = {
        "attachId": attach_id,
        "title": title,
        "provider": {"name": card.name, "model": card.model},
        "createdAt": int(time.time() * 1000),
        "calls": list(calls),
    }

    def add(current: Any) -> list[Any]:
        return [*(current if isinstance(current, list) else []), record]

    store.local.modify(SUMMARY_USAGE_KEY, add, [])


def should_summarize(settings: dict[str, Any], entry: Entry | None) -> bool:
    """Whether ``entry`` is an attachment the settings want condensed (module docstring)."""
    if not entry or not settings.get("autoSummarizeAttachments", True):
        return False
    if not is_attachment(entry) or not entry.get("attachId") or entry.get("summarized"):
        return False
    threshold = settings.get("summarizeThresholdChars") or 0
    if not isinstance(threshold, int) or isinstance(threshold, bool) or threshold <= 0:
        threshold = DEFAULT_SUMMARIZE_THRESHOLD
    return text_length(entry) > threshold


def _find(entries: list[Entry], attach_id: str) -> int:
    return next((i for i, e in enumerate(entries) if e.get("attachId") == attach_id), -1)


def _ask(
    card: Card,
    builds: list[Callable[[str], dict[str, Any]]],
    prompt: str,
    call: Callable[[Card, dict[str, Any]], Any],
) -> str:
    """One summary call: the first request of ``builds``, the next one when the model's context
    window cannot take it (:func:`~.summary_prefix.summary_requests`)."""
    for k, build in enumerate(builds):
        try:
            done = call(card, build(prompt))
        except ContextOverflow:
            if k == len(builds) - 1:
                raise
            continue
        if done.interrupted:
            raise RuntimeError("the summary call was interrupted")
        return str(done.text).strip()
    raise RuntimeError("no summary request to send")  # pragma: no cover - builds is never empty


def summarize_attachment(
    store: Profile,
    attach_id: str,
    *,
    provider: str | None = None,
    model: str | None = None,
    retries: int = 2,
    retry_delay: float = 1.0,
    sleep: Callable[[float], object] = time.sleep,
    max_workers: int = 4,
    chunk_chars: int = DEFAULT_CHUNK_CHARS,
    on_progress: Callable[[int, int], object] | None = None,
    raise_errors: bool = False,
) -> bool:
    """Condense attachment ``attach_id`` and write it back; ``True`` when written.

    ``on_progress(done, total)`` is called once the chunks are known (``done=0``) and after
    each provider call (``total`` = chunks, plus one merge call when there are several).
    A failure (no provider, a provider error, …) leaves the raw entry alone and returns
    ``False``; with ``raise_errors`` it is raised instead, so the caller can report it."""
    try:
        return _summarize(
            store,
            attach_id,
            provider,
            model,
            retries,
            retry_delay,
            sleep,
            max_workers,
            chunk_chars,
            on_progress,
        )
    except Exception as exc:  # a failed summary must leave the raw entry alone
        if raise_errors:
            raise
        log.warning("auto-summary of attachment %s failed: %s", attach_id, exc)
        return False


def _summarize(
    store: Profile,
    attach_id: str,
    provider: str | None,
    model: str | None,
    retries: int,
    retry_delay: float,
    sleep: Callable[[float], object],
    max_workers: int,
    chunk_chars: int,
    on_progress: Callable[[int, int], object] | None = None,
) -> bool:
    if not attach_id:
        return False
    entries = store.history.read()
    i = _find(entries, attach_id)
    if i < 0 or not is_attachment(entries[i]):
        return False
    original = entries[i]
    text = _raw_text(original)
    card = resolve_provider(store.get_all(), provider, model)
    _header, body, _figures = _split(text)
    chunks = chunk_text(body, chunk_chars)
    if not chunks:
        return False
    kind = attachment_kind(original, text)
    m = _TITLE_RE.search(_header)
    title = m.group(1).strip() if m else ""

    total = len(chunks) + (1 if len(chunks) > 1 else 0)
    finished = 0
    progress_lock = threading.Lock()
    usages: list[dict[str, int] | None] = []  # every finished (paid) call, kept on failure too

    def call(c: Card, request_body: dict[str, Any]) -> Any:
        nonlocal finished
        done = complete(c, request_body, retries=retries, delay=retry_delay, sleep=sleep)
        with progress_lock:
            usages.append(dict(done.usage) if done.usage is not None else None)
            finished += 1
            if on_progress is not None:
                on_progress(finished, total)
        return done

    if on_progress is not None:
        on_progress(0, total)

    prompts = [chunk_prompt(kind, c, k, len(chunks), title) for k, c in enumerate(chunks, 1)]
    builds = summary_requests(store, card, entries, i, total)
    workers = max(1, min(max_workers, len(prompts)))
    try:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="chatkeep-summary") as pool:
            parts = list(pool.map(lambda p: _ask(card, builds, p, call), prompts))
        if any(not p for p in parts):
            return False
        merge = merge_prompt(kind, parts, title)
        summary = parts[0] if len(parts) == 1 else _ask(card, builds, merge, call)
    finally:
        _record_usage(store, attach_id, title, card, usages)
    if not summary.strip():
        return False
    new_text = condensed_text(text, summary)
    content = original.get("content")
    images = [p for p in content if is_image_part(p)] if isinstance(content, list) else []
    new_content = interleave_image_parts(new_text, images) if images else new_text
    written = False
    store.keep_original(original)

    def fn(current: list[Entry]) -> list[Entry] | None:
        nonlocal written
        j = _find(current, attach_id)
        if j < 0 or current[j] != original:
            return None
        out = list(current)
        out[j] = {**original, "content": new_content, "summarized": True}
        written = True
        return out

    store.history.mutate(fn)
    return written


class SummaryJob(threading.Thread):
    """A background auto-summary; ``written`` (bool) is set when it ends, ``error`` holds what
    made it fail (a provider error, …)."""

    def __init__(self, store: Profile, attach_id: str, **options: Any) -> None:
        super().__init__(name=f"chatkeep-summary-{attach_id[:8]}", daemon=True)
        self.store = store
        self.attach_id = attach_id
        self.options = options
        self.written: bool | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.written = summarize_attachment(
                self.store, self.attach_id, **{"raise_errors": True, **self.options}
            )
        except BaseException as exc:  # reported through .error
            self.error = exc
            self.written = False


def summarize_in_background(
    store: Profile, attach_id: str, *, force: bool = False, **options: Any
) -> SummaryJob | None:
    """Start the auto-summary of a stored attachment when the settings ask for it."""
    if not force:
        entries = store.history.read()
        i = _find(entries, attach_id) if attach_id else -1
        if i < 0 or not should_summarize(store.get_all(), entries[i]):
            return None
    job = SummaryJob(store, attach_id, **options)
    job.start()
    return job
