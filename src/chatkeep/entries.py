"""History entries: shape, validation and small readers (SPEC §3.2).

These are pure functions. Readers are lenient (they accept ``"image_url": str`` and the part
type ``input_text``); :func:`validate_entry` is strict and is what every write calls.
"""

from __future__ import annotations

from typing import Any

from .constants import ATTACHMENT_PREFIXES
from .dataurl import is_image_data_url
from .errors import InvalidEntry, InvalidValue
from .limits import ENTRY_MAX_DEPTH, problem

Entry = dict[str, Any]

ROLES = ("user", "assistant")
TEXT_PART_TYPES = ("text", "input_text")
# Any ``image/*`` type is stored byte for byte (SPEC §3.2); requests convert the types the
# APIs do not take (``chatkeep.rules.sendable``).

#: The normalised token usage an assistant entry may carry (SPEC §6.4), all four, integers ≥ 0.
USAGE_KEYS = ("input", "cachedRead", "cacheWrite", "output")


def part_type(part: Any) -> str:
    return part.get("type", "") if isinstance(part, dict) else ""


def is_text_part(part: Any) -> bool:
    return part_type(part) in TEXT_PART_TYPES


def is_image_part(part: Any) -> bool:
    return part_type(part) == "image_url"


def image_part_url(part: dict[str, Any]) -> str:
    """The URL of an ``image_url`` part in either accepted shape (``""`` for anything else)."""
    if not isinstance(part, dict):
        return ""
    img = part.get("image_url")
    if isinstance(img, str):
        return img
    if isinstance(img, dict):
        url = img.get("url")
        return url if isinstance(url, str) else ""
    return ""


def entry_text(entry: Any) -> str:
    """String content, or the text parts joined with ``\\n``; images ignored."""
    if not isinstance(entry, dict):
        return ""
    content = entry.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            p.get("text", "") for p in content if is_text_part(p) and isinstance(p.get("text"), str)
        )
    return ""


def text_length(entry: Any) -> int:
    """Characters of text an entry holds (string content, or the sum of its text parts)."""
    if not isinstance(entry, dict):
        return 0
    content = entry.get("content")
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):
        return sum(
            len(p["text"]) for p in content if is_text_part(p) and isinstance(p.get("text"), str)
        )
    return 0


def first_text(entry: Any) -> str:
    """String content, or the first text part's text ("" if none)."""
    if not isinstance(entry, dict):
        return ""
    content = entry.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        for p in content:
            if is_text_part(p) and isinstance(p.get("text"), str):
                return p["text"]
    return ""


def has_image_parts(entry: Any) -> bool:
    if not isinstance(entry, dict):
        return False
    content = entry.get("content")
    return isinstance(content, list) and any(is_image_part(p) for p in content)


def is_attachment(entry: Any) -> bool:
    """A ``user`` entry whose (first) text starts with the chatkeep or browsa prefix."""
    if not isinstance(entry, dict) or entry.get("role") != "user":
        return False
    return first_text(entry).startswith(ATTACHMENT_PREFIXES)


def last_question(history: list[Any]) -> int:
    """Index of the newest ``user`` entry that is not an attachment (the last question), or -1."""
    for i in range(len(history) - 1, -1, -1):
        if isinstance(history[i], dict) and history[i].get("role") == "user":
            if not is_attachment(history[i]):
                return i
    return -1


#: The flag on a question that was never answered and that a later, different question left
#: behind (SPEC §3.5): it stays in the history, shown, and no request sends it.
UNANSWERED_KEY = "unanswered"


def is_unanswered(entry: Any) -> bool:
    """A question marked ``unanswered: true`` (left behind after a failed send)."""
    return isinstance(entry, dict) and entry.get(UNANSWERED_KEY) is True


def mark_unanswered(history: list[Any]) -> list[Any]:
    """``history`` with its last question marked ``unanswered: true`` when no reply follows it
    (only attachments, or nothing): what a new, different question leaves behind after a
    failed send. Pure; returns ``history`` itself when there is nothing to mark."""
    i = last_question(history)
    if i < 0 or is_unanswered(history[i]):
        return history
    if any(isinstance(e, dict) and e.get("role") == "assistant" for e in history[i + 1 :]):
        return history
    out = list(history)
    out[i] = {**history[i], UNANSWERED_KEY: True}
    return out


def without_unanswered(history: list[Any]) -> list[Any]:
    """``history`` without the questions marked unanswered — what a request is built from;
    ``history`` itself when none is marked."""
    if not any(is_unanswered(e) for e in history):
        return history
    return [e for e in history if not is_unanswered(e)]


def validate_entry(entry: Any, index: int | None = None) -> None:
    """Raise :class:`InvalidEntry` naming the field when ``entry`` breaks the entry shape."""
    where = "entry" if index is None else f"entry[{index}]"
    if not isinstance(entry, dict):
        raise InvalidEntry(f"{where} must be an object, got {type(entry).__name__}", field=where)
    why = problem(entry, ENTRY_MAX_DEPTH)  # one iterative pass: depth, Unicode, keys, numbers
    if why is not None:
        raise InvalidEntry(
            f"{where} cannot be stored: {why}",
            field=where,
            hint=(
                f"entries nest at most {ENTRY_MAX_DEPTH} levels and hold valid Unicode text, "
                "64-bit integers and finite numbers"
            ),
        )
    role = entry.get("role")
    if role not in ROLES:
        raise InvalidEntry(
            f"{where}.role must be 'user' or 'assistant', got {role!r}", field="role"
        )
    if "content" not in entry:
        raise InvalidEntry(f"{where}.content is missing", field="content")
    content = entry["content"]
    if isinstance(content, list):
        for k, part in enumerate(content):
            pf = f"content[{k}]"
            if not isinstance(part, dict):
                raise InvalidEntry(f"{where}.{pf} must be an object", field=pf)
            ptype = part.get("type")
            if ptype in TEXT_PART_TYPES:
                if not isinstance(part.get("text"), str):
                    raise InvalidEntry(f"{where}.{pf}.text must be a string", field=f"{pf}.text")
            elif ptype == "image_url":
                img = part.get("image_url")
                if isinstance(img, dict):
                    url = img.get("url")
                elif isinstance(img, str):
                    url = img
                else:
                    raise InvalidEntry(
                        f"{where}.{pf}.image_url must be an object with 'url' or a string",
                        field=f"{pf}.image_url",
                    )
                if not is_image_data_url(url):
                    shown = (url[:40] + "…") if isinstance(url, str) and len(url) > 40 else url
                    raise InvalidEntry(
                        f"{where}.{pf}.image_url.url must be a data:image/<type>;base64 URL, got {shown!r}",
                        field=f"{pf}.image_url.url",
                        hint="store the image bytes inline as a data: URL; remote image links are not kept",
                    )
            else:
                raise InvalidEntry(
                    f"{where}.{pf}.type must be 'text' or 'image_url', got {ptype!r}",
                    field=f"{pf}.type",
                )
    elif not isinstance(content, str):
        raise InvalidEntry(
            f"{where}.content must be a string or a list of parts, got {type(content).__name__}",
            field="content",
        )
    if "attachId" in entry and not isinstance(entry["attachId"], str):
        raise InvalidEntry(f"{where}.attachId must be a string", field="attachId")
    vs = entry.get("videoSrc")
    if "videoSrc" in entry and not (
        isinstance(vs, dict)
        and isinstance(vs.get("platform"), str)
        and isinstance(vs.get("url"), str)
    ):
        raise InvalidEntry(
            f"{where}.videoSrc must be {{platform: str, url: str}}", field="videoSrc"
        )
    for flag in ("imagesSeen", "summarized", "interrupted", UNANSWERED_KEY):
        if flag in entry and not isinstance(entry[flag], bool):
            raise InvalidEntry(f"{where}.{flag} must be true or false", field=flag)
    if "createdAt" in entry and not (
        type(entry["createdAt"]) is int and 0 <= entry["createdAt"] < 2**53
    ):
        raise InvalidEntry(
            f"{where}.createdAt must be a time in epoch milliseconds", field="createdAt"
        )
    if "reasoning" in entry and not isinstance(entry["reasoning"], str):
        raise InvalidEntry(f"{where}.reasoning must be a string", field="reasoning")
    for key, text_key in (("toolCalls", "arguments"), ("toolResult", "content")):
        if key in entry and not _tool_records(entry[key], text_key):
            raise InvalidEntry(
                f"{where}.{key} must be a list of {{{'name' if key == 'toolCalls' else 'name?'}"
                f", {text_key}: str, id?}} objects",
                field=key,
            )
    prov = entry.get("provider")
    if "provider" in entry and not (
        isinstance(prov, dict)
        and isinstance(prov.get("name"), str)
        and isinstance(prov.get("model"), str)
    ):
        raise InvalidEntry(f"{where}.provider must be {{name: str, model: str}}", field="provider")
    if "usage" in entry and not is_usage(entry["usage"]):
        raise InvalidEntry(
            f"{where}.usage must be {{input, cachedRead, cacheWrite, output}} (integers ≥ 0)",
            field="usage",
        )


def _tool_records(value: Any, text_key: str) -> bool:
    """``toolCalls`` (``{name, arguments, id?}``) and ``toolResult`` (``{content, name?, id?}``):
    lists of objects whose text is a string; ``name`` and ``id``, when present, are strings."""
    return isinstance(value, list) and all(
        isinstance(r, dict)
        and isinstance(r.get(text_key), str)
        and (text_key != "arguments" or isinstance(r.get("name"), str))
        and all(isinstance(r[k], str) for k in ("name", "id") if k in r)
        for r in value
    )


def require_entry_list(value: Any, what: str = "history") -> list[Any]:
    """The lenient shape every rule reads: a list of entry objects (``InvalidEntry`` else).
    Readers accept any part shapes; this only keeps a wrong type from becoming a raw error."""
    if not isinstance(value, list) or not all(isinstance(e, dict) for e in value):
        raise InvalidEntry(f"{what} must be a list of entry objects", field=what)
    return value


def require_list(value: Any, what: str, item: type | tuple[type, ...]) -> None:
    """A list (or tuple) whose items are all of type ``item`` (``InvalidValue`` else)."""
    if not isinstance(value, list | tuple) or not all(isinstance(v, item) for v in value):
        raise InvalidValue(f"{what} must be a list of {getattr(item, '__name__', 'values')}s")


def is_usage(value: Any) -> bool:
    """True for a normalised usage object: exactly :data:`USAGE_KEYS`, each an int ≥ 0."""
    return (
        isinstance(value, dict)
        and set(value) == set(USAGE_KEYS)
        and all(
            isinstance(value[k], int) and not isinstance(value[k], bool) and value[k] >= 0
            for k in USAGE_KEYS
        )
    )


def validate_entries(entries: Any) -> None:
    if not isinstance(entries, list):
        raise InvalidEntry(f"history must be a list, got {type(entries).__name__}", field="history")
    for i, e in enumerate(entries):
        validate_entry(e, i)
