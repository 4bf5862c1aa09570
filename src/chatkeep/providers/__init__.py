"""Model providers: cards, selection, one adapter per API style, retries (SPEC §7.1, §7.3).

Public API::

    Card                                   # resolved card (name, style, base_url, model, ...)
    resolve_provider(settings, name=None, model=None, env=None, *, need_key=True) -> Card
    validate_card(card: dict, *, name="") -> dict            # for `chatkeep provider add`
    CardRegistry(profile).put / remove / use / get / rows     # every card write, one tx each
    stream(card, body, *, cancel=None) -> Iterator[TextDelta | Done]
    stream_with_retries(card, body, *, cancel=None, retries=2, delay=1.0, sleep=time.sleep)
    complete(card, body, *, cancel=None, on_delta=None, ...) -> Done
    with_retries(call, *, retries=2, delay=1.0, sleep=time.sleep) -> result of call()
    is_transient(error) -> bool
    dropped_mid_reply(error, card) -> ProviderError          # a stream failed after some text
    truncation_warning(estimated_prompt_tokens, usage) -> str | None
    TextDelta(text), ReasoningDelta(text)                   # answer / reasoning pieces
    Done(text, usage, response_id, interrupted, finish_reason, cut_short, reasoning)

``body`` is the API's own JSON body for the card's style (built by ``chatkeep.rules.wire``).
Adapters talk through the official ``openai`` / ``anthropic`` SDKs, imported on first call only:
importing this package imports no SDK and no HTTP library. Errors follow SPEC §12:
``ProviderError`` (``status``, ``code``, ``body``, ``hint``), ``ContextOverflow`` for
overflow, ``ProviderConfigError`` for unusable cards. A cancelled stream ends with
``Done(interrupted=True)`` holding the partial text; it does not raise. Reasoning ("thinking")
is never part of the text: it streams as ``ReasoningDelta`` and ends in ``Done.reasoning``
(:mod:`chatkeep.providers.reasoning` says how each API style sends it).
"""

from __future__ import annotations

from ._errors import dropped_mid_reply
from .cards import Card, api_root, resolve_provider, sdk_base_url, validate_card
from .events import Done, ReasoningDelta, TextDelta
from .registry import CardRegistry
from .retry import is_transient, with_retries
from .send import adapter_for, complete, stream, stream_with_retries
from .usage import truncation_warning

__all__ = [
    "Card",
    "CardRegistry",
    "Done",
    "ReasoningDelta",
    "TextDelta",
    "adapter_for",
    "api_root",
    "complete",
    "dropped_mid_reply",
    "is_transient",
    "resolve_provider",
    "sdk_base_url",
    "stream",
    "stream_with_retries",
    "truncation_warning",
    "validate_card",
    "with_retries",
]
