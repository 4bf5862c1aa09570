"""A reply that streamed but could not be stored (SPEC §12: faults lose nothing).

When the store fails after the reply has been streamed to the user — the disk is full, the
store became read-only, the PostgreSQL server went away — :func:`finish_or_keep` keeps the
turn on the engine (``chat.unsaved``) and raises the store's ``StoreError`` with a hint saying
so. The user's question was stored before the reply streamed, so ``regenerate`` can answer it
again from any process; in this process :func:`save_unsaved_reply` stores the kept reply itself once
the store works again (the panel's Retry, or a library caller).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import StoreError
from .turn import Reply

__all__ = ["UNSAVED_HINT", "finish_or_keep", "save_unsaved_reply"]

UNSAVED_HINT = (
    "the reply was shown but not saved: it is kept in this process "
    "(chatkeep.save_unsaved_reply(store) stores it once the store works again) and your "
    "question is kept for `chatkeep regenerate`"
)


def finish_or_keep(chat: Any, finish: Callable[..., Reply], args: tuple[Any, ...]) -> Reply:
    """``finish(*args)``; on a ``StoreError`` after text (or reasoning) streamed, keep the turn
    for later."""
    try:
        return finish(*args)
    except StoreError as exc:
        outcome = args[1]
        if outcome.done.text or outcome.done.reasoning:
            chat.unsaved = (finish, args)
            exc.hint = f"{UNSAVED_HINT}; {exc.hint}" if exc.hint else UNSAVED_HINT
        raise


def save_unsaved_reply(store: Any) -> Reply | None:
    """Store the kept reply of ``store.chat`` (``None`` when nothing is kept)."""
    chat = store.chat
    pending = getattr(chat, "unsaved", None)
    if pending is None:
        return None
    finish, args = pending
    turn, outcome, start_session, _warnings, _notify, discard_partial = args
    reply = finish(turn, outcome, start_session, [], lambda _m: None, discard_partial)
    chat.unsaved = None
    return reply
