"""Request preview (SPEC §6.4): what the next request would send, without sending it.

:func:`preview_request` builds the next request exactly as a send would — same provider card,
same system prompt, same pipeline (aging, seen-image labels), same wire format — from the stored
history plus the draft of the next message, and reports (nothing is sent, nothing is written):

* ``provider`` ``{name, style, model}``, or ``None`` with ``problem`` ``{message, hint}`` when no
  card resolves (the preview is then built in the ``chat`` format);
* ``entries`` — per stored entry, how it goes out: ``raw``, ``labels`` (seen images replaced by
  labels) or ``stub`` (a cold attachment aged to its stub), with its characters and images;
* ``messages`` — per message of the request: role, characters, images, the first characters;
* ``request`` and ``naive`` — :func:`~chatkeep.rules.accounting.request_stats` of the request and
  of the naive one (the same wire format, the stored history resent verbatim, no pipeline step);
* ``savings`` — bytes, ratio, characters, images and image bytes saved against ``naive``;
* ``prefix`` — bytes shared with the previous request of the conversation: the request actually
  sent last (kept under ``lastRequest`` by the sending engine, :func:`remember_request`), or,
  before any send, the previous turn rebuilt from storage (``source`` says which);
* ``cacheRead`` — the prompt tokens the provider's cache should serve for this request after
  that previous one (:func:`~chatkeep.rules.cache_read.predicted_cache_read`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .entries import (
    Entry,
    has_image_parts,
    image_part_url,
    is_attachment,
    is_image_part,
    text_length,
)
from .errors import ProviderConfigError
from .rules.accounting import request_stats
from .rules.cache_read import predicted_cache_read
from .rules.context import age_stale_attachments
from .rules.images import prepare_history_for_model
from .rules.wire import BUILDERS, build_request

if TYPE_CHECKING:
    from .storage.profile import Profile

LAST_REQUEST_KEY = "lastRequest"
PREVIEW_DRAFT = "(your next message)"
SNIPPET_CHARS = 160
_IMAGE_TYPES = ("image_url", "input_image", "image")
_NO_CARD = {"name": "", "style": "chat", "model": "", "base_url": "http://127.0.0.1/v1"}


def remember_request(store: Profile, style: str, body: dict[str, Any]) -> None:
    """Record the request just sent, for the next preview's prefix comparison (images in it
    are stored once, as blobs, like everywhere else)."""
    store.local.set(LAST_REQUEST_KEY, {"style": style, "body": body})


def _card(
    settings: dict[str, Any], provider: str | None, model: str | None
) -> tuple[dict[str, Any], dict[str, str] | None]:
    from .providers import resolve_provider

    try:
        card = resolve_provider(settings, provider, model)
    except ProviderConfigError as exc:
        if provider:
            raise
        return dict(_NO_CARD), {"message": exc.message, "hint": exc.hint}
    return {
        "name": card.name,
        "style": card.style,
        "model": card.model,
        "base_url": card.base_url,
        "temperature": card.temperature,
        "max_tokens": card.max_tokens,
        "stream": card.stream,
    }, None


def _treatment(stored: Entry, aged: Entry, prepared: Entry) -> str:
    if aged is not stored:
        return "stub"
    if prepared is not aged and has_image_parts(stored):
        return "labels"
    return "raw"


def _entry_rows(history: list[Entry]) -> list[dict[str, Any]]:
    aged = age_stale_attachments(history)
    prepared = prepare_history_for_model(aged)
    rows = []
    for i, (s, a, p) in enumerate(zip(history, aged, prepared, strict=True)):
        content = s.get("content")
        urls = (
            [image_part_url(x) for x in content if is_image_part(x)]
            if isinstance(content, list)
            else []
        )
        rows.append(
            {
                "index": i,
                "role": s.get("role"),
                "sent": _treatment(s, a, p),
                "chars": text_length(s),
                "sentChars": text_length(p),
                "images": len(urls),
                "imageBytes": sum(len(u) for u in urls),
            }
        )
    return rows


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


def _last_question(history: list[Entry]) -> int:
    for i in range(len(history) - 1, -1, -1):
        if history[i].get("role") == "user" and not is_attachment(history[i]):
            return i
    return -1


def preview_request(
    store: Profile, draft: str = "", *, provider: str | None = None, model: str | None = None
) -> dict[str, Any]:
    """The preview of the next request (see the module docstring)."""
    from .conversation.turn import system_prompt

    settings = store.get_all()
    card, problem = _card(settings, provider, model)
    history = store.history.read()
    user_entry: Entry = {"role": "user", "content": draft if draft.strip() else PREVIEW_DRAFT}
    style = card["style"]
    common: dict[str, Any] = {
        "system_prompt": system_prompt(settings),
        "model": card["model"] or "model",
        "base_url": card["base_url"],
        "temperature": card.get("temperature"),
        "max_tokens": card.get("max_tokens"),
        "stream": card.get("stream", True),
    }
    request = build_request(style, history, user_entry=user_entry, **common)
    naive = request_stats(BUILDERS[style](history, user_entry=user_entry, **common))
    stored = store.local.get(LAST_REQUEST_KEY)
    previous: Any = stored.get("body") if isinstance(stored, dict) else None
    source = "sent" if isinstance(previous, dict) else None
    if source is None:
        j = _last_question(history)
        if j >= 0:
            previous, source = (
                build_request(style, history[:j], user_entry=history[j], **common),
                "rebuilt",
            )
    stats = request_stats(request, previous)
    return {
        "provider": None
        if problem
        else {"name": card["name"], "style": style, "model": card["model"]},
        "problem": problem,
        "style": style,
        "model": card["model"],
        "url": request.url,
        "entries": _entry_rows(history),
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
    }
