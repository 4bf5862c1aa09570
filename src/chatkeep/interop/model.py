"""The common shape every reader produces: one foreign conversation, ready to be saved.

A :class:`Conversation` is a title, an original time (epoch ms) and a list of chatkeep entries
(§3.2). Its saved-session id is derived from where it came from — the source format and the
source's own conversation id, or, when the source has none, the digest of its entries and its
ordinal among the conversations of equal content in the same file — so importing the same file
twice finds the same ids and adds nothing, and distinct conversations with equal text are never
merged.
"""

from __future__ import annotations

import datetime as _dt
import math
import mimetypes
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import dataurl
from ..constants import AUTO_NAME_MAX
from ..digest import digest_json, hex_of
from ..entries import first_text, is_attachment, validate_entry
from ..errors import InvalidEntry

Entry = dict[str, Any]
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass
class Conversation:
    source: str
    source_id: str | None
    title: str
    created_ms: int | None
    entries: list[Entry] = field(default_factory=list)
    fixed_id: str | None = None  # chatkeep's own exports keep their session id
    pinned: bool = False

    def session_id(self, ordinal: int = 0) -> str:
        """The saved-session id; ``ordinal`` tells apart conversations of one file that have
        no source id and equal content (the first keeps the plain content id)."""
        if self.fixed_id:
            return self.fixed_id
        key: Any = self.source_id if self.source_id else digest_json(self.entries)
        if ordinal:
            return hex_of(digest_json({"source": self.source, "id": key, "n": ordinal}))[:32]
        return hex_of(digest_json({"source": self.source, "id": key}))[:32]

    @property
    def keyed_by_content(self) -> bool:
        """Whether the id comes from the content (the source gave no id of its own)."""
        return not self.fixed_id and not self.source_id

    def name(self) -> str:
        """The title, else the first words the user wrote (the drawer's auto-name rule, which
        sees only plain-string entries, would fall back to today's date for image turns). A
        lone surrogate, which no store can write, becomes U+FFFD: the rest of the title stays."""
        title = " ".join(_SURROGATE.sub("\ufffd", self.title).split())
        if title:
            return title
        for e in self.entries:
            if isinstance(e, dict) and e.get("role") == "user" and not is_attachment(e):
                text = " ".join(first_text(e).split())
                if text:
                    return text[:AUTO_NAME_MAX] + ("…" if len(text) > AUTO_NAME_MAX else "")
        return ""

    def row(self, ordinal: int = 0) -> dict[str, Any]:
        return {
            "id": self.session_id(ordinal),
            "name": self.name(),
            "createdAt": self.created_ms,
            "pinned": self.pinned,
        }


@dataclass
class Skipped:
    """A conversation of the file that could not be read: where it is and why (SPEC §14: a
    partly broken file imports what it can and reports the rest)."""

    where: str  # "conversation 3", "line 7", "conversations-001.json: conversation 2"
    reason: str
    title: str = ""

    def report(self) -> dict[str, str]:
        out = {"where": self.where, "reason": self.reason}
        if self.title:
            out["title"] = self.title
        return out


def title_of(item: Any) -> str:
    """The title a raw conversation object carries, if any (for reporting a skipped one),
    whole."""
    if isinstance(item, dict):
        for key in ("title", "name"):
            if isinstance(item.get(key), str):
                return " ".join(item[key].split())
    return ""


@dataclass
class Extras:
    """What a reply carries besides its text (SPEC §14): reasoning, tool calls and the tool
    results that answer them, met while reading a turn and put on the assistant entry of that
    turn (``reasoning``; ``toolCalls`` in call order; ``toolResult`` in result order)."""

    reasoning: list[str] = field(default_factory=list)
    calls: list[dict[str, str]] = field(default_factory=list)
    results: list[dict[str, str]] = field(default_factory=list)
    created_ms: int | None = None  # the time of the first of them

    def __bool__(self) -> bool:
        return bool(self.reasoning or self.calls or self.results)

    def think(self, text: str, when: int | None = None) -> None:
        if text.strip():
            self.reasoning.append(text.strip("\n"))
            self._seen(when)

    def call(self, name: str, arguments: str, call_id: str = "", when: int | None = None) -> None:
        self.calls.append(_with_id({"name": name, "arguments": arguments}, call_id))
        self._seen(when)

    def result(
        self, content: str, name: str = "", call_id: str = "", when: int | None = None
    ) -> None:
        record = {"content": content, **({"name": name} if name else {})}
        self.results.append(_with_id(record, call_id))
        self._seen(when)

    def _seen(self, when: int | None) -> None:
        if self.created_ms is None:
            self.created_ms = when

    def put_on(self, entry: Entry) -> Entry:
        """Add these to ``entry`` (after what it already carries) and forget them."""
        if not (self.reasoning or self.calls or self.results):  # most replies: nothing to add
            return entry
        if self.reasoning:
            entry["reasoning"] = "\n\n".join(
                filter(None, [entry.get("reasoning"), *self.reasoning])
            )
        if self.calls:
            entry["toolCalls"] = [*entry.get("toolCalls", []), *self.calls]
        if self.results:
            entry["toolResult"] = [*entry.get("toolResult", []), *self.results]
        self.reasoning, self.calls, self.results, self.created_ms = [], [], [], None
        return entry

    def close_turn(self, entries: list[Entry], turn_start: int) -> None:
        """At the end of a turn: what is left goes on the turn's last assistant entry, or on a
        new assistant entry with no text when the turn has none (it ended on a tool call)."""
        if not self:
            return
        for entry in reversed(entries[turn_start:]):
            if entry.get("role") == "assistant" and not is_attachment(entry):
                self.put_on(entry)
                return
        when = self.created_ms
        entries.append(self.put_on(timed(text_entry("assistant", ""), when)))


def _with_id(record: dict[str, str], record_id: str) -> dict[str, str]:
    return {**record, "id": record_id} if record_id else record


def timed(entry: Entry, when: int | None) -> Entry:
    """``entry`` with ``createdAt`` (epoch ms) when the source gave the message a time."""
    if when is not None and 0 <= when < 2**53:
        entry["createdAt"] = when
    return entry


def as_dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def walk_up(
    node: Any,
    parent_of: Callable[[dict[str, Any]], Any],
    key_of: Callable[[dict[str, Any]], Any] = id,
) -> list[dict[str, Any]]:
    """The message-tree branch that ends at ``node``, root first: follow ``parent_of`` until
    it gives something that is not a node, or a node whose ``key_of`` was seen (a cycle)."""
    path: list[dict[str, Any]] = []
    seen: set[Any] = set()
    while isinstance(node, dict) and key_of(node) not in seen:
        seen.add(key_of(node))
        path.append(node)
        node = parent_of(node)
    path.reverse()
    return path


def node_at(nodes: dict[str, Any], key: Any) -> Any:
    """The node stored under ``key`` (``None`` when ``key`` is not a string key of ``nodes``)."""
    return nodes.get(key) if isinstance(key, str) else None


def to_ms(value: Any) -> int | None:
    """Epoch seconds (int/float, or a numeric string), epoch ms, or an ISO-8601 string → ms.
    An integer of any size reads (one too large for a float is past any time: ``timed``
    leaves it out), never raising."""
    if type(value) is float or type(value) is int:  # what exports hold: checked in line
        if not 0 < value < math.inf:  # not positive, infinite or NaN
            return None
        return int(value * 1000) if value < 1e11 else int(value)
    if isinstance(value, str):
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            try:
                when = _dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                return None
            if when.tzinfo is None:
                when = when.replace(tzinfo=_dt.UTC)
            return int(when.timestamp() * 1000)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if value <= 0:
        return None
    # below 1e11 the number is seconds (1e11 s is the year 5138; 1e11 ms is 1973)
    return int(value * 1000) if value < 1e11 else int(value)


def text_entry(role: str, text: str, **extra: Any) -> Entry:
    return {"role": role, "content": text, **extra}


def parts_entry(role: str, texts: list[str], images: list[str], **extra: Any) -> Entry:
    """An entry from its text pieces and image data URLs: plain text when there are no
    images, else a text part (when any text) followed by the image parts."""
    if not images:  # text alone (most entries)
        return {"role": role, "content": "\n".join(t for t in texts if t), **extra}
    kept = [u for u in images if storable_image(u)]
    texts = [
        *texts,
        *(
            f"[image not kept: {dataurl.mime_of(u) or 'unknown type'}]"
            for u in images
            if u not in kept
        ),
    ]
    images = kept
    text = "\n".join(t for t in texts if t)
    if not images:
        return {"role": role, "content": text, **extra}
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts.extend({"type": "image_url", "image_url": {"url": u}} for u in images)
    return {"role": role, "content": parts, **extra}


def storable_image(url: str) -> bool:
    """Whether the store accepts this image (the entry validator decides, so every type it
    learns to keep is kept here too); one the store refuses is named in the text instead of
    failing the whole import."""
    try:
        validate_entry(
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}
        )
    except InvalidEntry:
        return False
    return True


def image_url_of(raw: bytes, name: str = "") -> str | None:
    """A data URL for image bytes (type sniffed from the bytes, else from the file name)."""
    mime = sniff_image(raw) or _mime_from_name(name)
    return dataurl.encode(raw, mime) if mime else None


_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
    (b"BM", "image/bmp"),
)


def sniff_image(raw: bytes) -> str | None:
    for magic, mime in _MAGIC:
        if raw.startswith(magic):
            return mime
    if raw[:4] == b"RIFF" and raw[8:12] == b"WEBP":
        return "image/webp"
    return None


def _mime_from_name(name: str) -> str | None:
    mime, _ = mimetypes.guess_type(name)
    return mime if mime and mime.startswith("image/") else None


def clean_role(role: Any) -> str | None:
    """chatkeep's role for a foreign one (``None``: not a conversation turn)."""
    if not isinstance(role, str):
        return None
    role = role.lower()
    if role in ("user", "human"):
        return "user"
    if role in ("assistant", "gpt", "bot", "model", "chatgpt", "ai"):
        return "assistant"
    return None
