"""The request planner (SPEC §6): the one place that turns settings + card + history + the new
turn into the request that is sent, and the plan that explains it.

Build, then send: :meth:`chatkeep.conversation.Chat.run` sends exactly what :func:`plan_request`
returns, and ``chatkeep request`` / the panel's preview (:func:`preview_request`) print exactly
that — the same card, system prompt, history steps, previous-response chain and wire builder.

:class:`RequestPlan`:

* ``request`` — the :class:`~chatkeep.rules.wire.WireRequest` (style, URL, JSON body);
* ``entries`` — per stored entry how it goes out: ``raw``, ``labels`` (seen images — or images
  over the per-request cap — sent as labels), ``resized`` (images sent resized for the
  provider), ``stub`` (an aged or overflow-stubbed attachment) or ``server`` (already held by
  the server: a ``serverTranscript`` chain sends only the new turn), with characters, images,
  their stored and their sent data-URL characters; ``unanswered`` for a question a failed
  send left behind, which no request sends (SPEC §3.5);
* ``steps`` — the names of the steps that ran, from the same tuples the builder ran
  (:data:`~chatkeep.rules.wire.HISTORY_STEPS` unless another tuple was passed, then the
  style's request steps: images resized for the provider, per-request image cap);
* ``previous_response_id`` — the chain the request continues, or ``None``.

:func:`preview_request` adds the accounting of §6.4 (sizes, savings against resending the stored
history verbatim, prefix reuse against the request sent last). It sends and writes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..constants import ACTIVE_SESSION_KEY
from ..entries import (
    Entry,
    image_part_url,
    is_attachment,
    is_image_part,
    is_unanswered,
    last_question,
    mark_unanswered,
    text_length,
    validate_entry,
)
from ..errors import InvalidEntry, InvalidValue, ProviderConfigError
from ..providers import Card, resolve_provider
from ..rules.accounting import request_stats
from ..rules.cache import PACE_KEY, prompt_cache_key
from ..rules.cache_read import predicted_cache_read, request_blocks
from ..rules.request_images import request_steps
from ..rules.request_print import print_from_json, request_print
from ..rules.wire import (
    HISTORY_STEPS,
    HistoryStep,
    WireRequest,
    build_request,
    request_entries,
)
from .chain import chained_response
from .prepare import reuses_last
from .state import LAST_REQUEST_KEY, RESPONSE_CHAIN_KEY, TurnState, read_state
from .turn import system_prompt

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = [
    "LAST_REQUEST_KEY",
    "PREVIEW_DRAFT",
    "RequestPlan",
    "build_for_card",
    "plan_request",
    "preview_request",
    "previous_request",
    "remember_request",
]

PREVIEW_DRAFT = "(your next message)"
SNIPPET_CHARS = 160
_IMAGE_TYPES = ("image_url", "input_image", "image")
#: What a preview is built with when no card resolves (the problem is reported beside it).
_NO_CARD = Card(name="", style="chat", base_url="http://127.0.0.1/v1", model="model")


@dataclass(frozen=True)
class RequestPlan:
    """One planned request and how each stored entry goes out (see the module docstring).
    ``entries`` is worked out on first use, so a send that never shows it does not pay."""

    request: WireRequest
    card: Card
    history: list[Entry]
    user_entry: Entry
    step_functions: tuple[HistoryStep, ...] = HISTORY_STEPS
    previous_response_id: str | None = None
    held_by_server: int = 0

    @property
    def steps(self) -> tuple[str, ...]:
        steps = self.step_functions
        if steps:  # the request steps run after the history steps (rules.wire.request_entries)
            steps = (*steps, *request_steps(self.request.style))
        return tuple(getattr(s, "__name__", repr(s)) for s in steps)

    @cached_property
    def entries(self) -> list[dict[str, Any]]:
        final, _held = request_entries(
            self.request.style,
            self.history,
            self.user_entry,
            self.step_functions,
            server_transcript=bool(self.previous_response_id),
        )
        return _treatments(self.history, final, self.held_by_server)


def build_for_card(
    card: Card,
    history: list[Entry],
    user_entry: Entry,
    system: str,
    *,
    previous_response_id: str | None = None,
    steps: Sequence[HistoryStep] = HISTORY_STEPS,
    prompt_cache_key: str | None = None,
    pace: Sequence[int] = (),
    one_off: bool = False,
    checked: bool = False,
) -> WireRequest:
    """The wire request of ``card``'s style: the one card → builder keyword mapping
    (``checked``: the history and the new entry were validated where they came in)."""
    return build_request(
        card.style,
        history,
        user_entry=user_entry,
        system_prompt=system,
        model=card.model or "model",
        base_url=card.base_url,
        temperature=card.temperature,
        max_tokens=card.max_tokens,
        stream=card.stream,
        previous_response_id=previous_response_id,
        steps=steps,
        prompt_cache_key=prompt_cache_key,
        cache_rule=card.cache_rule,
        pace=pace,
        one_off=one_off,
        checked=checked,
    )


def _image_urls(entry: Entry) -> list[str]:
    content = entry.get("content")
    if not isinstance(content, list):
        return []
    return [image_part_url(x) for x in content if is_image_part(x)]


def _treatments(history: list[Entry], final: list[Entry], held: int) -> list[dict[str, Any]]:
    """Per stored entry: what the steps made of it (``final`` is the whole request as sent,
    the new turn last; ``held`` leading entries are on the server)."""
    rows = []
    k = 0  # the position in ``final``: a question marked unanswered has none
    for i, stored in enumerate(history):
        if is_unanswered(stored):
            rows.append(
                {
                    "index": i,
                    "role": stored.get("role"),
                    "sent": "unanswered",
                    "chars": text_length(stored),
                    "sentChars": 0,
                    "images": len(_image_urls(stored)),
                    "imageBytes": sum(len(u) for u in _image_urls(stored)),
                    "sentImageBytes": 0,
                }
            )
            continue
        sent = final[k]
        k += 1
        urls, sent_urls = _image_urls(stored), _image_urls(sent)
        if i < held:
            how = "server"
        elif sent is stored:
            how = "raw"
        elif is_attachment(stored) and text_length(sent) < text_length(stored):
            how = "stub"
        elif len(sent_urls) < len(urls):
            how = "labels"
        elif sent_urls != urls:
            how = "resized"
        else:
            how = "raw"  # only bookkeeping fields (imagesSeen) were dropped
        rows.append(
            {
                "index": i,
                "role": stored.get("role"),
                "sent": how,
                "chars": text_length(stored),
                "sentChars": 0 if how == "server" else text_length(sent),
                "images": len(urls),
                "imageBytes": sum(len(u) for u in urls),
                "sentImageBytes": 0 if how == "server" else sum(len(u) for u in sent_urls),
            }
        )
    return rows


def _held_by_server(history: list[Entry]) -> int:
    """Entries before the trailing attachment run: the server already holds them (a question
    left unanswered in that run is not sent at all)."""
    k = len(history)
    while k > 0 and (is_attachment(history[k - 1]) or is_unanswered(history[k - 1])):
        k -= 1
    return k


def plan_request(
    profile: Profile,
    card: Card,
    system: str,
    history: list[Entry],
    user_entry: Entry,
    *,
    steps: Sequence[HistoryStep] = HISTORY_STEPS,
    chain: bool = True,
    one_off: bool = False,
    state: TurnState | None = None,
) -> RequestPlan:
    """Plan the request for ``history`` + ``user_entry`` (``chain=False``: never continue a
    server transcript, e.g. for the overflow rescue, which must resend everything;
    ``one_off``: no later request repeats ``user_entry``, a summary call).
    ``state``: what the turn read (:func:`~.state.read_state`) — the active session, the
    response chain and the pace come from it, and the history and entry are trusted as
    validated where they came in; without it they are read (one transaction) and checked."""
    if not isinstance(card, Card):
        raise InvalidValue("plan_request takes a resolved provider Card (chatkeep.providers)")
    if not isinstance(system, str):
        raise InvalidValue(f"the system prompt is a string, got {type(system).__name__}")
    # the chain lookup below reads the history before the builder checks it (build_request
    # checks the history and the new entry in full)
    if not isinstance(history, list) or not all(isinstance(e, dict) for e in history):
        raise InvalidEntry("the history is a list of entry objects", field="history")
    if state is not None:
        session_id, chain_record, pace = state.session_id, state.chain, state.pace
    else:
        kept = profile.local.get([ACTIVE_SESSION_KEY, RESPONSE_CHAIN_KEY, PACE_KEY])
        session_id = kept.get(ACTIVE_SESSION_KEY) or ""
        chain_record = kept.get(RESPONSE_CHAIN_KEY)
        times = kept.get(PACE_KEY)
        pace = [t for t in times if isinstance(t, int)] if isinstance(times, list) else []
    previous = chained_response(card, history, chain_record) if chain else None
    cache_key = None
    if card.prompt_cache_key:  # one OpenAI cache route per profile and conversation (§6.3)
        cache_key = prompt_cache_key(profile.profile, str(session_id))
    request = build_for_card(
        card,
        history,
        user_entry,
        system,
        previous_response_id=previous,
        steps=steps,
        prompt_cache_key=cache_key,
        pace=pace,
        one_off=one_off,
        checked=state is not None,
    )
    return RequestPlan(
        request=request,
        card=card,
        history=history,
        user_entry=user_entry,
        step_functions=tuple(steps),
        previous_response_id=previous,
        held_by_server=_held_by_server(history) if previous else 0,
    )


def remember_request(profile: Profile, request: WireRequest, raw: bytes) -> None:
    """Record the figures of the request just sent (``raw``: its serialized bytes) for the
    next turn's and preview's prefix comparison: its
    :class:`~chatkeep.rules.request_print.RequestPrint`, not the body (no image is stored,
    hashed or read back for it)."""
    made = request_print(request, raw, request_blocks(request))
    profile.local.set(LAST_REQUEST_KEY, made.to_json())


def previous_request(stored: Any) -> Any:
    """What the prefix figures compare with, from the stored ``lastRequest``: its print, the
    body an earlier version kept, or ``None``."""
    made = print_from_json(stored)
    if made is not None:
        return made
    body = stored.get("body") if isinstance(stored, dict) else None
    return body if isinstance(body, dict) else None


def _message_row(role: str, content: Any) -> dict[str, Any]:
    texts: list[str] = []
    images = 0
    if isinstance(content, str):
        texts.append(content)
    elif isinstance(content, list):
        for part in content:
            if not isinstance(part, dict):
                continue
            if part.get("type") in _IMAGE_TYPES:
                images += 1
            elif isinstance(part.get("text"), str):
                texts.append(part["text"])
    text = "\n".join(texts)
    snippet = text[:SNIPPET_CHARS] + ("…" if len(text) > SNIPPET_CHARS else "")
    return {"role": role, "chars": len(text), "images": images, "text": snippet}


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    system = body.get("instructions") or body.get("system")
    if isinstance(system, list):  # Anthropic system blocks
        system = "\n".join(b.get("text", "") for b in system if isinstance(b, dict))
    if system:
        rows.append(_message_row("system", system))
    items = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        rows.append(_message_row("user", items))
    elif isinstance(items, list):
        rows += [
            _message_row(str(m.get("role", "")), m.get("content"))
            for m in items
            if isinstance(m, dict)
        ]
    return rows


def _preview_card(
    settings: dict[str, Any], provider: str | None, model: str | None, env: Any
) -> tuple[Card, dict[str, str] | None, dict[str, str] | None]:
    """The card a preview builds for, the problem when none resolves, and the key problem
    when the card's key is not set (a preview sends nothing, so it needs no key)."""
    try:
        card = resolve_provider(settings, provider, model, env=env, need_key=False)
    except ProviderConfigError as exc:
        if provider:
            raise
        return _NO_CARD, {"message": exc.message, "hint": exc.hint}, None
    try:
        resolve_provider(settings, provider, model, env=env)
    except ProviderConfigError as exc:  # only the key can fail here: the card resolved above
        return card, None, {"message": exc.message, "hint": exc.hint}
    return card, None, None


def preview_request(
    profile: Profile,
    draft: str = "",
    *,
    provider: str | None = None,
    model: str | None = None,
    env: Any = None,
) -> dict[str, Any]:
    """What the next send of ``draft`` would send (see the module docstring). Keys:
    ``provider``, ``problem``, ``keyProblem`` (the card's API key is not set: a send would
    fail, the preview does not), ``style``, ``model``, ``url``, ``body``, ``previousResponseId``,
    ``steps``, ``entries``, ``messages``, ``request``, ``naive``, ``savings``, ``prefix``,
    ``heldBack`` (images the per-request cap would send as labels, §5.5),
    ``cacheRead`` (the prompt tokens the provider's cache should serve after the previous
    request, :func:`~chatkeep.rules.cache_read.predicted_cache_read`)."""
    if not isinstance(draft, str):
        raise InvalidValue(f"the draft must be a string, got {type(draft).__name__}")
    state = read_state(profile)
    settings = state.settings
    card, problem, key_problem = _preview_card(settings, provider, model, env)
    history = state.history
    user_entry: Entry = {
        "role": "user",
        "content": draft if draft.strip() else PREVIEW_DRAFT,
        "createdAt": int(time.time() * 1000),  # sent now: the pace the cache lifetime reads
    }
    validate_entry(user_entry)  # the draft comes in here
    if reuses_last(history, user_entry):
        history = history[:-1]  # as the send would: the draft answers the failed question
    elif draft.strip():
        # as the send would: a different question leaves a failed one behind, unsent (§3.5);
        # without a draft the next message is not known, and the history shows as it stands
        history = mark_unanswered(history)
    system = system_prompt(settings)
    plan = plan_request(profile, card, system, history, user_entry, state=state)
    request = plan.request
    naive = request_stats(build_for_card(card, history, user_entry, system, steps=(), checked=True))
    previous: Any = previous_request(state.last_request)
    source = "sent" if previous is not None else None
    if source is None:
        j = last_question(history)
        if j >= 0:
            previous = build_for_card(card, history[:j], history[j], system, checked=True).body
            source = "rebuilt"
    stats = request_stats(request, previous)
    return {
        "provider": None
        if problem
        else {"name": card.name, "style": card.style, "model": card.model},
        "problem": problem,
        "keyProblem": key_problem,
        "style": card.style,
        "model": card.model if not problem else "",
        "url": request.url,
        "body": request.body,
        "previousResponseId": plan.previous_response_id,
        "steps": list(plan.steps),
        "entries": plan.entries,
        "messages": _messages(request.body),
        "request": stats,
        "naive": naive,
        "savings": {
            "bytes": naive["bytes"] - stats["bytes"],
            "ratio": (1 - stats["bytes"] / naive["bytes"]) if naive["bytes"] else 0.0,
            "chars": naive["chars"] - stats["chars"],
            "images": naive["images"] - stats["images"],
            "imageBytes": naive["imageBytes"] - stats["imageBytes"],
        },
        "prefix": {
            "hasPrevious": source is not None,
            "source": source,
            "bytes": stats["prefixBytes"],
            "ratio": stats["prefixRatio"],
            "ofPrevious": stats["prefixOfPrevious"],
        },
        "cacheRead": predicted_cache_read(request, previous),
        "heldBack": request.held_back,
    }
