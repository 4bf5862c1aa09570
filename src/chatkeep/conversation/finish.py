"""The end of a turn (SPEC §6.4, §7.2): the reply's figures and notices, then where it lands.

:func:`finish_turn` compares the request with the one sent before it (the print kept under
``lastRequest``, read with the turn's state: :mod:`chatkeep.rules.request_print`), adds the
notices (a silent truncation, a reply cut short or at its output limit, a cache-hit drop), builds
the assistant entry and lands it (:func:`~.landing.land`) — the reply, the seen stamp, this
request's print and the response chain in **one write transaction**. An empty or discarded
reply stores nothing but the request's print.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from ..entries import Entry
from ..providers import truncation_warning
from ..rules.accounting import request_stats
from ..rules.cache_hits import hit_drop_notice
from ..rules.usage import turn_cost
from ..rules.wire import serialize
from .chain import remember_response
from .landing import ARCHIVED_NOTICE, land
from .planner import previous_request, remember_request
from .prepare import Turn
from .streaming import Outcome
from .turn import Reply, now_ms

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["CUT_SHORT_WARNING", "EMPTY_REPLY_WARNING", "NO_ANSWER_WARNING", "finish_turn"]

EMPTY_REPLY_WARNING = "the model returned an empty reply; nothing was stored (regenerate to retry)"
NO_ANSWER_WARNING = (
    "the model sent its reasoning but no answer; the reasoning was kept (regenerate to retry)"
)
CUT_SHORT_WARNING = (
    "the provider ended the reply without its end marker, so it is incomplete: the partial "
    "answer was kept, marked interrupted; ask for a full one with `chatkeep regenerate` "
    "(the panel's Retry)"
)


def finish_turn(
    store: Profile,
    turn: Turn,
    outcome: Outcome,
    start_session: str,
    warnings: list[str],
    notify: Callable[[str], None],
    discard_partial: bool,
) -> Reply:
    """The :class:`Reply` of a streamed turn, its entry stored (see the module docstring)."""
    done = outcome.done
    request = outcome.plan.request
    raw = serialize(request.body)
    stats = request_stats(request, previous_request(turn.state.last_request), raw=raw)
    warning = truncation_warning(stats["estTokens"], done.usage)
    if warning:
        notify(warning)
    if done.cut_short and (done.text or done.reasoning) and not discard_partial:
        notify(CUT_SHORT_WARNING)
    if done.finish_reason in ("length", "max_tokens", "max_output_tokens"):
        notify("the reply hit the model's output limit and may be cut short")
    card = turn.card
    fell = hit_drop_notice(turn.hits_before, done.usage, model=card.model, now_ms=now_ms())
    if fell:
        notify(fell)
    reply = Reply(
        text=done.text,
        provider=card.name,
        model=card.model,
        usage=done.usage,
        interrupted=done.interrupted,
        warnings=warnings,
        stats=stats,
        response_id=done.response_id,
        finish_reason=done.finish_reason,
        rescued=bool(outcome.changed),
        dropped_images=turn.dropped,
        landed="none",
        cost=turn_cost(done.usage, card.prices),
        reasoning=done.reasoning,
    )
    if done.interrupted and (discard_partial or not (done.text or done.reasoning)):
        remember_request(store, request, raw)
        return reply
    if not done.text and not done.reasoning:
        notify(EMPTY_REPLY_WARNING)
        remember_request(store, request, raw)
        return reply
    if not done.text and not done.interrupted:
        notify(NO_ANSWER_WARNING)
    assistant: Entry = {
        "role": "assistant",
        "content": done.text,
        "provider": {"name": card.name, "model": card.model},
    }
    if done.reasoning:
        assistant["reasoning"] = done.reasoning
    if done.interrupted:
        assistant["interrupted"] = True
    if done.usage is not None:
        assistant["usage"] = dict(done.usage)
    assistant["createdAt"] = now_ms()
    with store.history.locked():  # one write transaction for everything the turn leaves
        remember_request(store, request, raw)
        reply.landed, reply.session_id = land(
            store,
            turn.user_entry,
            assistant,
            start_session,
            outcome.changed,
            not done.interrupted,
            expect=turn.stored_at,
        )
        if reply.landed == "live" and not done.interrupted:
            remember_response(store, card, assistant, done.response_id)
    if reply.landed == "archive":
        notify(ARCHIVED_NOTICE)
    return reply
