"""Request accounting (SPEC §6.4): how big a built request is and how much of it is reusable.

:func:`request_stats` reports, for a :class:`~chatkeep.rules.wire.WireRequest` (or a bare body):

- ``chars`` — characters of text sent (system prompt / instructions and every text block);
- ``images`` and ``imageBytes`` — image parts and their data-URL characters (Anthropic base64
  blocks are counted as the equivalent data URL, so styles compare);
- ``estTokens`` — text ``ceil(chars / 4)`` plus every image by its pixel size under the
  request's provider rules (:mod:`chatkeep.rules.tokens`; an estimate, providers' usage is
  exact); a bare body is judged Anthropic when it carries Anthropic ``image``/``system`` blocks;
- ``bytes`` — length of the serialized body;
- ``prefixBytes`` — length of the longest common byte prefix with the previous request of the
  same conversation (0 without one); the previous request may be given as its
  :class:`~chatkeep.rules.request_print.RequestPrint`, the figures the engine keeps of it;
- ``prefixRatio`` — ``prefixBytes / bytes``: the share of this request that repeats the start
  of the previous one byte for byte (what a provider prompt cache can serve);
- ``prefixOfPrevious`` — ``prefixBytes`` over the previous request's size.
"""

from __future__ import annotations

from typing import Any

from ..errors import InvalidValue
from ..limits import DOCUMENT_MAX_DEPTH, check_value
from .request_print import RequestPrint, common_prefix_length, shared_prefix
from .tokens import image_tokens, text_tokens
from .wire.base import WireRequest, serialize

__all__ = ["common_prefix_length", "estimate_tokens", "request_stats"]

_IMAGE_TYPES = ("image_url", "input_image", "image")


def _body(request: WireRequest | dict[str, Any] | bytes) -> dict[str, Any] | None:
    if isinstance(request, WireRequest):
        return request.body
    if isinstance(request, dict):
        return request
    return None


def _raw(request: WireRequest | dict[str, Any] | bytes) -> bytes:
    if isinstance(request, bytes | bytearray):
        return bytes(request)
    body = _body(request)
    return serialize(body if body is not None else {})


def _image_url(part: dict[str, Any]) -> str:
    kind = part.get("type")
    if kind == "image_url":
        img = part.get("image_url")
        url = img.get("url", "") if isinstance(img, dict) else img
        return url if isinstance(url, str) else ""
    if kind == "input_image":
        url = part.get("image_url")
        return url if isinstance(url, str) else ""
    source = part.get("source")
    if not isinstance(source, dict):
        return ""
    data, url = source.get("data"), source.get("url")
    if source.get("type") == "base64" and isinstance(data, str):
        return f"data:{source.get('media_type', '')};base64," + data
    return url if isinstance(url, str) else ""


def _count(node: Any, acc: dict[str, Any]) -> None:
    if isinstance(node, list):
        for item in node:
            _count(item, acc)
        return
    if not isinstance(node, dict):
        return
    if node.get("type") in _IMAGE_TYPES:
        url = _image_url(node)
        acc["images"] += 1
        acc["imageBytes"] += len(url)
        acc["imageTokens"] += image_tokens(url, acc["style"])
        return
    content = node.get("content")
    if isinstance(content, str):
        acc["chars"] += len(content)
    elif isinstance(content, list):
        _count(content, acc)
    text = node.get("text")
    if isinstance(text, str) and node.get("type") in ("text", "input_text", "output_text"):
        acc["chars"] += len(text)


def _guess_style(body: dict[str, Any]) -> str:
    if isinstance(body.get("system"), list):
        return "anthropic"
    for message in body.get("messages") or ():
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list) and any(
            isinstance(b, dict) and b.get("type") == "image" for b in content
        ):
            return "anthropic"
    return "responses" if "input" in body else "chat"


def estimate_tokens(request: WireRequest | dict[str, Any]) -> int:
    """Estimated prompt tokens of a request (``request_stats(request)["estTokens"]``)."""
    return int(request_stats(request)["estTokens"])


def request_stats(
    request: WireRequest | dict[str, Any] | bytes,
    previous: WireRequest | dict[str, Any] | bytes | RequestPrint | None = None,
    *,
    raw: bytes | None = None,
) -> dict[str, Any]:
    """Size and prefix-reuse figures of one request (see the module docstring); ``raw``: the
    request's serialized bytes when the caller has them already."""
    for what, value in (("request", request), ("previous", previous)):
        if (value is None and what == "previous") or isinstance(value, RequestPrint):
            continue
        if not isinstance(value, WireRequest | dict | bytes | bytearray):
            raise InvalidValue(
                f"{what} must be a WireRequest, a request body (dict) or bytes, "
                f"got {type(value).__name__}"
            )
        if not isinstance(value, bytes | bytearray):
            check_value(_body(value), f"the {what} body", DOCUMENT_MAX_DEPTH)
    body = _body(request) or {}
    style = request.style if isinstance(request, WireRequest) else _guess_style(body)
    acc: dict[str, Any] = {"chars": 0, "images": 0, "imageBytes": 0, "imageTokens": 0}
    acc["style"] = style
    for key in ("instructions", "system"):
        value = body.get(key)
        if isinstance(value, str):
            acc["chars"] += len(value)
        elif isinstance(value, list):
            _count(value, acc)
    _count(body.get("messages") or [], acc)
    inp = body.get("input")
    if isinstance(inp, str):
        acc["chars"] += len(inp)
    else:
        _count(inp or [], acc)
    raw = raw if raw is not None else _raw(request)
    prefix = 0
    prev_len = 0
    if isinstance(previous, RequestPrint):
        prev_len = previous.size
        prefix = shared_prefix(raw, previous)
    elif previous is not None:
        prev_raw = _raw(previous)
        prev_len = len(prev_raw)
        prefix = common_prefix_length(raw, prev_raw)
    return {
        "chars": acc["chars"],
        "images": acc["images"],
        "imageBytes": acc["imageBytes"],
        "estTokens": text_tokens(acc["chars"]) + acc["imageTokens"],
        "bytes": len(raw),
        "prefixBytes": prefix,
        "prefixRatio": (prefix / len(raw)) if raw and previous is not None else 0.0,
        "prefixOfPrevious": (prefix / prev_len) if prev_len else 0.0,
    }
