"""What both integrations share: a framework conversation as a saved chatkeep session, and
chatkeep's request rules applied to a framework's model input.

A framework message is stored as one chatkeep entry: ``role`` and ``content`` for the drawer
(search, the panel, ``sessions show``), plus the framework's own object, verbatim, under one
key (``agentsItem`` / ``langchainMessage``), which is what the framework gets back. Image data
URLs inside both are the same string, so the store keeps their bytes once (content-addressed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import chatkeep

Entry = dict[str, Any]


def check_session_id(session_id: Any) -> str:
    """A framework's session id: chatkeep's one id rule (:func:`chatkeep.check_id`),
    checked when the adapter is made, so no adapter can write what cannot be read back."""
    return chatkeep.check_id(session_id, "the framework session id")


class SavedConversation:
    """One saved session of a store: read whole, appended to, its newest entry popped."""

    def __init__(self, store: Any, session_id: str) -> None:
        self.store = store
        self.session_id = check_session_id(session_id)

    def entries(self) -> list[Entry]:
        found = self.store.sessions.get(self.session_id)
        return list(found["history"]) if found else []

    def entries_json(self) -> list[str]:
        """The entries as their JSON texts (:meth:`chatkeep.Store.sessions.entries_json`: one
        read, nothing parsed), for an adapter whose framework parses its own objects."""
        texts: list[str] | None = self.store.sessions.entries_json(self.session_id)
        return texts or []

    def extend(self, new: list[Entry], as_text: Callable[[Entry], Entry] | None = None) -> None:
        """Append ``new``. An entry keeping its framework object as a JSON object that chatkeep
        does not store as a value (an integer beyond 64 bits, nesting deeper than 99 levels)
        is given to ``as_text``, which keeps the object as its JSON text instead: the adapter
        reads both forms, so nothing the framework gave is refused or lost."""
        try:
            self._extend(new)
        except chatkeep.InvalidEntry:
            if as_text is None:
                raise
            self._extend([_storable(e, as_text) for e in new])

    def _extend(self, new: list[Entry]) -> None:
        if not new:
            return
        # what is saved is not rewritten; a session not saved yet is created with the entries
        if self.store.sessions.extend(self.session_id, new) is not None:
            return
        row = {"id": self.session_id, "name": ""}
        if not self.store.sessions.add_many([(row, new)]):  # another writer created it since
            self.store.sessions.extend(self.session_id, new)

    def pop(self) -> Entry | None:
        # one row deleted: the rest of the body is not read
        entry: Entry | None = self.store.sessions.pop(self.session_id)
        return entry

    def clear(self) -> None:
        self.store.sessions.delete(self.session_id)


def kept_as_text(key: str) -> Callable[[Entry], Entry]:
    """An ``as_text`` for :meth:`SavedConversation.extend`: the object under ``key`` as its
    JSON text (an adapter whose object keeps its images verbatim, so nothing to turn back)."""

    def as_text(entry: Entry) -> Entry:
        return {**entry, key: json.dumps(entry[key], ensure_ascii=False)}

    return as_text


def _storable(entry: Entry, as_text: Callable[[Entry], Entry]) -> Entry:
    try:
        chatkeep.validate_entry(entry)
        return entry
    except chatkeep.InvalidEntry:
        return as_text(entry)


def image_part(url: Any) -> dict[str, Any]:
    """The drawer's part for an image URL: the image when the store keeps its type (the
    framework's own object keeps it verbatim either way), else a text label."""
    if isinstance(url, str) and url.startswith("data:image/"):
        part = {"type": "image_url", "image_url": {"url": url}}
        try:
            chatkeep.validate_entry({"role": "user", "content": [part]})
            return part
        except chatkeep.InvalidEntry:
            return {"type": "text", "text": f"[image {url[5 : url.find(';')]}]"}
    return {"type": "text", "text": f"[image {url}]"}


def has_images(entry: Entry) -> bool:
    content = entry.get("content")
    return isinstance(content, list) and any(chatkeep.is_image_part(p) for p in content)


def apply_request_rules(entries: list[Entry | None]) -> list[Any]:
    """chatkeep's request rules over a framework's input, given as entries (``None`` for items
    that are not messages). Images in turns the model has answered since are marked seen and
    become labels; cold attachments become stubs. Returns, per position, the new ``content``
    when the rules changed it, else ``None``."""
    positions = [i for i, e in enumerate(entries) if e is not None]
    history: list[Entry] = [e for e in entries if e is not None]
    last_answer = max((k for k, e in enumerate(history) if e["role"] == "assistant"), default=-1)
    history = [
        {**e, "imagesSeen": True} if k < last_answer and has_images(e) else e
        for k, e in enumerate(history)
    ]
    steps: tuple[Callable[[list[Entry]], list[Entry]], ...] = (
        chatkeep.age_stale_attachments,
        chatkeep.prepare_history_for_model,
    )
    ruled = history
    for step in steps:
        ruled = step(ruled)
    out: list[Any] = [None] * len(entries)
    for k, i in enumerate(positions):
        before = entries[i]
        assert before is not None
        if ruled[k].get("content") != before.get("content"):
            out[i] = ruled[k]["content"]
    return out
