"""The server-side transcript chain (SPEC §6.3): OpenAI Responses with ``previous_response_id``.

A ``responses`` card with ``serverTranscript`` lets the server keep the conversation. After a
reply lands in the live history, :func:`remember_response` keeps its response id under
:data:`RESPONSE_CHAIN_KEY` with the digest (:func:`chatkeep.digest.digest_json`) of the stored
history up to that reply. :func:`chained_response` returns that id while the history up to it
is unchanged and only attachments (and questions left unanswered, which are never sent) came
after it; any edit, regenerate, load or rewrite breaks
the chain and the full transcript is sent again. The planner asks this module, so the preview
and the send agree on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..digest import digest_json
from ..entries import Entry, is_attachment, is_unanswered
from ..providers import Card
from .state import RESPONSE_CHAIN_KEY
from .turn import find_entry

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["RESPONSE_CHAIN_KEY", "chained_response", "remember_response"]


def chained_response(card: Card, history: list[Entry], chain: Any) -> str | None:
    """The response id to continue from, or ``None`` (send the full transcript); ``chain`` is
    the stored :data:`RESPONSE_CHAIN_KEY` value (read with the turn's state)."""
    if card.style != "responses" or not card.server_transcript:
        return None
    if not isinstance(chain, dict) or chain.get("provider") != [card.name, card.model]:
        return None
    upto = chain.get("upTo")
    if not isinstance(upto, int) or not 0 < upto <= len(history):
        return None
    if digest_json(history[:upto]) != chain.get("digest"):
        return None
    if not all(is_attachment(e) or is_unanswered(e) for e in history[upto:]):
        return None
    response_id = chain.get("responseId")
    return response_id if isinstance(response_id, str) and response_id else None


def remember_response(
    profile: Profile, card: Card, assistant: Entry, response_id: str | None
) -> None:
    """Keep the chain after ``assistant`` landed in the live history (no-op otherwise)."""
    if card.style != "responses" or not card.server_transcript or not response_id:
        return
    history = profile.history.read()
    j = find_entry(history, assistant)
    if j < 0:
        return
    profile.local.set(
        RESPONSE_CHAIN_KEY,
        {
            "provider": [card.name, card.model],
            "responseId": response_id,
            "upTo": j + 1,
            "digest": digest_json(history[: j + 1]),
        },
    )
