"""Request preview (SPEC §6.4): what the next request would send, without sending it.

:func:`preview_request` builds the next request exactly as a send would (same provider card,
same pipeline) from the stored history plus the text of the next message, and reports, per
stored entry, how it goes out — ``raw``, ``labels`` (seen images replaced by labels) or ``stub``
(a cold attachment aged to its stub) — with totals, the savings against naively resending the
stored history, and the prefix reuse against the previous request of the conversation (kept
under the ``lastRequest`` key by the sending engine; image bytes in it are stored once, as
blobs, like everywhere else).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ProviderConfigError
from .rules.accounting import request_stats
from .rules.context import age_stale_attachments
from .rules.entries import has_image_parts, image_part_url, is_image_part, text_length
from .rules.images import prepare_history_for_model
from .rules.wire import build_request

if TYPE_CHECKING:
    from .store import Store

LAST_REQUEST_KEY = "lastRequest"
_NO_PROVIDER = {
    "name": "",
    "style": "chat",
    "base_url": "http://127.0.0.1/v1",
    "model": "(no model)",
}


def _card(settings: dict[str, Any], provider: str | None, model: str | None) -> dict[str, Any]:
    from .providers import resolve_provider

    try:
        card = resolve_provider(settings, provider, model)
    except ProviderConfigError:
        if provider:
            raise
        return dict(_NO_PROVIDER)
    return {"name": card.name, "style": card.style, "base_url": card.base_url, "model": card.model}


def entry_treatment(stored: dict[str, Any], aged: dict[str, Any], prepared: dict[str, Any]) -> str:
    if aged is not stored:
        return "stub"
    if prepared is not aged and has_image_parts(stored):
        return "labels"
    return "raw"


def remember_request(store: Store, style: str, body: dict[str, Any]) -> None:
    """Record the request just sent, for the next preview's prefix comparison."""
    store.local.set(LAST_REQUEST_KEY, {"style": style, "body": body})


def preview_request(
    store: Store, text: str = "", *, provider: str | None = None, model: str | None = None
) -> dict[str, Any]:
    settings = store.get_all()
    card = _card(settings, provider, model)
    history = store.history.read()
    aged = age_stale_attachments(history)
    prepared = prepare_history_for_model(aged)
    system = settings.get("systemPrompt") or ""
    user_entry = {"role": "user", "content": text}
    request = build_request(
        card["style"],
        history,
        user_entry=user_entry,
        system_prompt=system,
        model=card["model"],
        base_url=card["base_url"],
    )
    naive = build_request(
        card["style"],
        [],
        user_entry=user_entry,
        system_prompt=system,
        model=card["model"],
        base_url=card["base_url"],
    )
    naive_body = dict(naive.body)
    # the naive baseline resends the stored history verbatim: every pixel, every attachment
    naive_key = "input" if card["style"] == "responses" else "messages"
    naive_body[naive_key] = [{"role": e["role"], "content": e["content"]} for e in history] + list(
        naive.body.get(naive_key) or []
    )
    previous = store.local.get(LAST_REQUEST_KEY)
    prev_body = previous.get("body") if isinstance(previous, dict) else None
    stats = request_stats(request, prev_body if isinstance(prev_body, dict) else None)
    naive_stats = request_stats(naive_body)
    entries = []
    for i, (s, a, p) in enumerate(zip(history, aged, prepared, strict=True)):
        images = (
            [image_part_url(part) for part in s["content"] if is_image_part(part)]
            if isinstance(s["content"], list)
            else []
        )
        entries.append(
            {
                "index": i,
                "role": s["role"],
                "sent": entry_treatment(s, a, p),
                "chars": text_length(s),
                "sentChars": text_length(p),
                "images": len(images),
                "imageBytes": sum(len(u) for u in images),
            }
        )
    return {
        "provider": card["name"],
        "style": card["style"],
        "model": card["model"],
        "url": request.url,
        "entries": entries,
        "totals": stats,
        "naive": {
            "bytes": naive_stats["bytes"],
            "images": naive_stats["images"],
            "chars": naive_stats["chars"],
        },
        "savings": 1 - stats["bytes"] / naive_stats["bytes"] if naive_stats["bytes"] else 0.0,
        "previous": None
        if prev_body is None
        else {
            "bytes": len(_serialized(prev_body)),
            "prefixBytes": stats["prefixBytes"],
            "prefixOfPrevious": stats["prefixOfPrevious"],
        },
    }


def _serialized(body: dict[str, Any]) -> bytes:
    from .rules.wire import serialize

    return serialize(body)
