"""Conversations: the chat engine behind ``store.chat`` and the attachment auto-summary.

Public API::

    Chat(store, *, retries=2, retry_delay=1.0, sleep=time.sleep, env=None)
        .prepare_send(text, images=(), provider=None, model=None) -> Turn     # checks, no write
        .prepare_edit(i, text, images=None, provider=None, model=None) -> Turn
        .prepare_regenerate(provider=None, model=None) -> Turn
        .run(turn, *, on_delta=None, on_notice=None, cancel=None, discard_partial=False,
             on_reasoning=None) -> Reply    # on_reasoning(text): the model's reasoning pieces
        .send / .edit_and_resend / .regenerate        # prepare + run in one call
        .stop() -> int
    plan_request(profile, card, system, history, user_entry, *, steps=HISTORY_STEPS,
                 chain=True) -> RequestPlan
    preview_request(profile, draft="", *, provider=None, model=None) -> dict   # what run() sends
    Reply(text, provider, model, usage, interrupted, warnings, stats, response_id,
          finish_reason, rescued, dropped_images, landed, session_id, cost, reasoning)
    RESCUE_NOTICE                      # "attachment trimmed to fit, retrying"
    summarize_attachment(store, attach_id, *, provider=None, model=None, ...) -> bool
    summarize_in_background(store, attach_id, *, force=False, **options) -> SummaryJob | None
    should_summarize(settings, entry) -> bool
    chunk_text(text, limit=12000) -> list[str]

``store.chat`` is a :class:`Chat` bound to the store (created on first use). The contracts are
in the docstrings of :mod:`.engine` (SPEC §3.5, §6.1, §7.2–7.4), :mod:`.summary` (§7.5) and
:mod:`.chunking`. Importing this package imports no provider SDK and no HTTP library.
"""

from __future__ import annotations

from .chunking import DEFAULT_CHUNK_CHARS, chunk_text
from .engine import RESCUE_NOTICE, Chat, Turn
from .planner import RequestPlan, plan_request, preview_request
from .summary import SummaryJob, should_summarize, summarize_attachment, summarize_in_background
from .turn import Reply

__all__ = [
    "DEFAULT_CHUNK_CHARS",
    "RESCUE_NOTICE",
    "Chat",
    "Reply",
    "RequestPlan",
    "SummaryJob",
    "Turn",
    "chunk_text",
    "plan_request",
    "preview_request",
    "should_summarize",
    "summarize_attachment",
    "summarize_in_background",
]
