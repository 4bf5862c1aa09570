"""The panel's request preview (SPEC §6.4, §11): what the next send would carry.

:func:`request_preview` builds, with the library's own builders and nothing else:

* ``request`` — :func:`chatkeep.request_stats` of the request the next send would make: the live
  history through the send-time pipeline (aging, seen-image labels) plus the draft text, in the
  wire format of the active provider card (``chat`` when no card resolves; ``problem`` then says
  why, with the provider error's message and hint);
* ``naive`` — the same figures for the naive request: the same wire format and the stored
  history sent verbatim (every image, every attachment in full, no pipeline step);
* ``savings`` — bytes, characters and images the pipeline saves against ``naive``;
* ``prefix`` — bytes shared with the previous turn's request, rebuilt from storage (the last
  user message that is not an attachment, with the history before it), i.e. what a provider
  prompt cache can reuse;
* ``messages`` — one row per message of the request: ``role``, ``chars``, ``images`` and the
  first characters of its text (never image bytes).

Nothing is sent and nothing is written.
"""

from __future__ import annotations

from typing import Any

from ..conversation.turn import system_prompt
from ..errors import ProviderConfigError
from ..providers import resolve_provider
from ..rules.accounting import request_stats
from ..rules.entries import Entry, is_attachment
from ..rules.wire import BUILDERS, build_request

__all__ = ["PREVIEW_DRAFT", "request_preview"]

PREVIEW_DRAFT = "(your next message)"
SNIPPET_CHARS = 160
_IMAGE_TYPES = ("image_url", "input_image", "image")


def _card(settings: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    try:
        card = resolve_provider(settings)
    except ProviderConfigError as exc:
        fallback = {
            "name": "",
            "style": "chat",
            "model": "",
            "base_url": "http://127.0.0.1/v1",
            "temperature": None,
            "max_tokens": None,
            "stream": True,
        }
        return fallback, {"message": exc.message, "hint": exc.hint}
    return {
        "name": card.name,
        "style": card.style,
        "model": card.model,
        "base_url": card.base_url,
        "temperature": card.temperature,
        "max_tokens": card.max_tokens,
        "stream": card.stream,
    }, None


def _messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    system = body.get("instructions") or body.get("system")
    if isinstance(system, str) and system:
        rows.append(_row("system", system))
    elif isinstance(system, list):
        rows.append(_row("system", system))
    items = body.get("messages") if "messages" in body else body.get("input")
    if isinstance(items, str):
        rows.append(_row("user", items))
    elif isinstance(items, list):
        for item in items:
            if isinstance(item, dict):
                rows.append(_row(str(item.get("role", "")), item.get("content")))
    return rows


def _row(role: str, content: Any) -> dict[str, Any]:
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


def _last_turn(history: list[Entry]) -> int:
    for i in range(len(history) - 1, -1, -1):
        entry = history[i]
        if entry.get("role") == "user" and not is_attachment(entry):
            return i
    return -1


def request_preview(
    settings: dict[str, Any], history: list[Entry], draft: str = ""
) -> dict[str, Any]:
    """The preview of the next request (see the module docstring)."""
    card, problem = _card(settings)
    user_entry: Entry = {"role": "user", "content": draft if draft.strip() else PREVIEW_DRAFT}
    common: dict[str, Any] = {
        "system_prompt": system_prompt(settings),
        "model": card["model"] or "model",
        "base_url": card["base_url"],
        "temperature": card["temperature"],
        "max_tokens": card["max_tokens"],
        "stream": card["stream"],
    }
    style = card["style"]
    j = _last_turn(history)
    previous = (
        build_request(style, history[:j], user_entry=history[j], **common) if j >= 0 else None
    )
    request = build_request(style, history, user_entry=user_entry, **common)
    stats = request_stats(request, previous)
    naive = request_stats(BUILDERS[style](history, user_entry=user_entry, **common))
    return {
        "provider": None
        if problem
        else {"name": card["name"], "style": style, "model": card["model"]},
        "problem": problem,
        "style": style,
        "url": request.url,
        "entries": len(history),
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
            "hasPrevious": previous is not None,
            "bytes": stats["prefixBytes"],
            "ratio": stats["prefixRatio"],
            "ofPrevious": stats["prefixOfPrevious"],
        },
        "messages": _messages(request.body),
    }
