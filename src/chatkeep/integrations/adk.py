"""Google ADK on a chatkeep store (extra ``chatkeep[adk]``).

``ChatkeepSessionService(store)`` is an ADK ``BaseSessionService``: ``Runner(…,
session_service=ChatkeepSessionService(store))`` keeps every ADK session as a saved chatkeep
session (listed and searchable in the drawer, named after its first question). Events are
kept whole, in the event's own JSON form (``model_dump_json(exclude_none=True)``), and come
back equal: an event without images as that JSON object under ``adk`` (read by Pydantic's
parser straight from the entry's stored text); an event with images under ``adkEvent``, each
image's bytes (``inline_data``) as the same data URL the drawer's image part holds, so the
store keeps them once. (Entries written before ``adk`` keep the event's JSON text under
``adkEvent``; they read the same.) Appending an event appends one entry: nothing stored is
rewritten.

State follows ADK's scopes: session keys live with the session, ``app:`` keys are shared by the
app's sessions and ``user:`` keys by one user's sessions in that app (``temp:`` keys are never
stored). They are small keys of ``store.local`` (``adkSession_…``, ``adkApp_…``, ``adkUser_…``);
a chatkeep session's id is a hash of the app, user and ADK session ids, so no ADK id ever has to
fit chatkeep's id rules.

ADK is imported when this module is; no other chatkeep module imports it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import time
import uuid
from typing import Annotated, Any

from google.adk.errors.already_exists_error import AlreadyExistsError
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events import Event
from google.adk.sessions import BaseSessionService, Session
from google.adk.sessions.base_session_service import GetSessionConfig, ListSessionsResponse
from google.adk.sessions.state import State
from pydantic import Field, Json, TypeAdapter, ValidationError
from typing_extensions import TypedDict  # Pydantic reads a TypedDict from here before 3.12

import chatkeep

from ._common import Entry, SavedConversation, image_part

__all__ = [
    "EVENT_KEY",
    "OBJECT_KEY",
    "ChatkeepSessionService",
    "entry_to_event",
    "event_to_entry",
]

#: An event showing images, its image bytes as data URLs (or, written before
#: :data:`OBJECT_KEY`, any event as its JSON text).
EVENT_KEY = "adkEvent"
#: An event without images, as its JSON object: validated by Pydantic straight from the entry's
#: stored text, with no JSON text inside it to unescape and parse again.
OBJECT_KEY = "adk"


def _h(*parts: str) -> str:
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()[:16]


def _meta_key(app: str, user: str, sid: str) -> str:
    return f"adkSession_{_h(app)}_{_h(app, user)}_{_h(app, user, sid)}"


def _chatkeep_id(app: str, user: str, sid: str) -> str:
    return "adk" + _meta_key(app, user, sid)[len("adkSession_") :].replace("_", "")


def _blob_urls(value: Any, to_url: bool) -> bool:
    """``inline_data`` images of a dumped event: URL-safe base64 (ADK's JSON form) to the
    drawer's data URL (``to_url``), or back; whether any was turned."""
    turned = False
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, list):
            stack.extend(v)
            continue
        if not isinstance(v, dict):
            continue
        blob = v.get("inline_data")
        if isinstance(blob, dict) and isinstance(blob.get("data"), str):
            mime, data = str(blob.get("mime_type") or ""), blob["data"]
            if to_url and mime.startswith("image/"):
                raw = base64.urlsafe_b64decode(data + "=" * (-len(data) % 4))
                blob["data"] = f"data:{mime};base64,{base64.b64encode(raw).decode('ascii')}"
                turned = True
            elif not to_url and data.startswith("data:") and ";base64," in data:
                raw = base64.b64decode(data.split(";base64,", 1)[1])
                blob["data"] = base64.urlsafe_b64encode(raw).decode("ascii")
                turned = True
        stack.extend(v.values())
    return turned


def _view(event: Event, dumped: dict[str, Any]) -> Entry:
    """The drawer's view of an event: its text and images (tool calls as labels)."""
    parts: list[dict[str, Any]] = []
    content = dumped.get("content") or {}
    for part in content.get("parts") or []:
        if isinstance(part.get("text"), str):
            parts.append({"type": "text", "text": part["text"]})
        elif isinstance((part.get("inline_data") or {}).get("data"), str):
            blob = part["inline_data"]
            if str(blob.get("mime_type", "")).startswith("image/"):
                parts.append(image_part(blob["data"]))
            else:
                parts.append({"type": "text", "text": f"[{blob.get('mime_type', 'file')}]"})
        elif part.get("function_call"):
            call = part["function_call"]
            parts.append({"type": "text", "text": f"[tool call] {call.get('name', '')}"})
        elif part.get("function_response"):
            reply = part["function_response"]
            parts.append({"type": "text", "text": f"[tool result] {reply.get('name', '')}"})
    role = "user" if event.author == "user" else "assistant"
    if all(p["type"] == "text" for p in parts):
        return {"role": role, "content": "\n".join(p["text"] for p in parts)}
    return {"role": role, "content": parts}


def event_to_entry(event: Event) -> Entry:
    """One ADK event as a chatkeep entry keeping the event whole."""
    if not isinstance(event, Event):
        raise chatkeep.InvalidValue(
            f"an ADK event must be a google.adk.events.Event, got {type(event).__name__}",
            hint="append the events the runner gives",
        )
    text = event.model_dump_json(exclude_none=True)
    dumped = json.loads(text)
    # images as the data URLs the view holds: stored once
    turned = _blob_urls(dumped, to_url=True)
    view = _view(event, dumped)
    if not isinstance(view["content"], list):  # shows no image: kept as it reads back
        return {**view, OBJECT_KEY: json.loads(text) if turned else dumped}
    return {**view, EVENT_KEY: dumped}


def _as_text(entry: Entry) -> Entry:
    """An entry keeping its event as ADK's JSON text (under :data:`EVENT_KEY`, its images'
    bytes as ADK dumps them): for an event holding what chatkeep does not store as a value, an
    integer beyond 64 bits say."""
    out = {k: v for k, v in entry.items() if k not in (OBJECT_KEY, EVENT_KEY)}
    kept = entry.get(OBJECT_KEY, entry.get(EVENT_KEY))
    if isinstance(kept, dict):
        if OBJECT_KEY not in entry:  # shows images: their data URLs turned back
            _blob_urls(kept, to_url=False)
        kept = json.dumps(kept, ensure_ascii=False, separators=(",", ":"))
    out[EVENT_KEY] = kept
    return out


def entry_to_event(entry: Entry) -> Event:
    """The event an entry keeps, or a plain text event for entries chatkeep wrote."""
    if isinstance(entry.get(OBJECT_KEY), dict):
        return Event.model_validate_json(json.dumps(entry[OBJECT_KEY]))
    kept = entry.get(EVENT_KEY)
    if isinstance(kept, str):
        return Event.model_validate_json(kept)
    if isinstance(kept, dict):
        content = entry.get("content")
        if isinstance(content, list) and any(chatkeep.is_image_part(p) for p in content):
            _blob_urls(kept, to_url=False)  # only an entry showing images holds data URLs
        return Event.model_validate(kept)
    from google.genai import types  # ADK's own content types (installed with it)

    role = "user" if entry.get("role") == "user" else "model"
    text = chatkeep.entry_text(entry)
    return Event(
        author="user" if role == "user" else "chatkeep",
        invocation_id="",
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


class _Kept(TypedDict, total=False):
    """What a read needs of a stored entry: the event it keeps (validated on the way, in Rust),
    from its JSON object or, written before :data:`OBJECT_KEY`, its JSON text; or the parsed
    form when it shows images (its data URLs still to turn back)."""

    adk: Event
    adkEvent: Annotated[Json[Event] | dict[str, Any], Field(union_mode="left_to_right")]


_KEPT = TypeAdapter(list[_Kept])
_CHUNK = 32  # entries validated per call (as the Pydantic AI adapter reads)


class _NotKept(Exception):
    """An entry keeping no ADK event (one chatkeep itself added)."""


def _events(saved: SavedConversation) -> list[Event]:
    """A session's events from the entries' stored texts, validated by Pydantic's own parser
    (no parse of ours first); entries chatkeep wrote take the decoding read."""
    texts = saved.entries_json()
    out: list[Event] = []
    try:
        for i in range(0, len(texts), _CHUNK):
            for k in _KEPT.validate_json("[" + ",".join(texts[i : i + _CHUNK]) + "]"):
                if "adk" in k:
                    out.append(k["adk"])
                    continue
                if "adkEvent" not in k:  # an entry chatkeep itself added
                    raise _NotKept
                kept = k["adkEvent"]
                if isinstance(kept, dict):  # an event with images: its data URLs turned back
                    _blob_urls(kept, to_url=False)
                    kept = Event.model_validate(kept)
                out.append(kept)
    except (ValidationError, _NotKept):  # an entry chatkeep wrote, or a text that does not read
        return [entry_to_event(e) for e in saved.entries()]
    return out


class ChatkeepSessionService(BaseSessionService):
    """ADK sessions kept as saved chatkeep sessions of ``store``."""

    def __init__(self, store: Any) -> None:
        self.store = store

    # -- state ----------------------------------------------------------------------------------
    def _scoped(self, app: str, user: str) -> tuple[str, str]:
        return f"adkApp_{_h(app)}", f"adkUser_{_h(app)}_{_h(app, user)}"

    def _merged(self, meta: dict[str, Any], events: list[Event]) -> Session:
        app, user = meta["appName"], meta["userId"]
        app_key, user_key = self._scoped(app, user)
        shared = self.store.local.get([app_key, user_key])
        state = dict(meta.get("state") or {})
        for key, value in (shared.get(app_key) or {}).items():
            state[State.APP_PREFIX + key] = value
        for key, value in (shared.get(user_key) or {}).items():
            state[State.USER_PREFIX + key] = value
        return Session(
            app_name=app,
            user_id=user,
            id=meta["id"],
            state=state,
            events=events,
            last_update_time=float(meta.get("lastUpdateTime") or 0.0),
        )

    def _save_deltas(self, meta_key: str, meta: dict[str, Any], delta: dict[str, Any]) -> None:
        """Write the session's row and the app/user state its ``delta`` changes, in one batch."""
        app_key, user_key = self._scoped(meta["appName"], meta["userId"])
        shared = self.store.local.get([app_key, user_key])
        writes: dict[str, Any] = {}
        for key, value in delta.items():
            if key.startswith(State.TEMP_PREFIX):
                continue
            if key.startswith(State.APP_PREFIX):
                scoped = writes.setdefault(app_key, dict(shared.get(app_key) or {}))
                scoped[key[len(State.APP_PREFIX) :]] = value
            elif key.startswith(State.USER_PREFIX):
                scoped = writes.setdefault(user_key, dict(shared.get(user_key) or {}))
                scoped[key[len(State.USER_PREFIX) :]] = value
            else:
                meta["state"][key] = value
        writes[meta_key] = meta
        self.store.local.set(writes)

    # -- the service ----------------------------------------------------------------------------
    async def create_session(
        self,
        *,
        app_name: str,
        user_id: str,
        state: dict[str, Any] | None = None,
        session_id: str | None = None,
    ) -> Session:
        return await asyncio.to_thread(self._create, app_name, user_id, state, session_id)

    def _create(
        self, app: str, user: str, state: dict[str, Any] | None, sid: str | None
    ) -> Session:
        sid = (sid or "").strip() or uuid.uuid4().hex
        key = _meta_key(app, user, sid)
        if self.store.local.get(key) is not None:
            raise AlreadyExistsError(f"Session with id {sid} already exists.")
        meta = {
            "appName": app,
            "userId": user,
            "id": sid,
            "state": {},
            "lastUpdateTime": time.time(),
        }
        self._save_deltas(key, meta, dict(state or {}))
        return self._merged(meta, [])

    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        return await asyncio.to_thread(self._get, app_name, user_id, session_id, config)

    def _get(
        self, app: str, user: str, sid: str, config: GetSessionConfig | None
    ) -> Session | None:
        meta = self.store.local.get(_meta_key(app, user, sid.strip()))
        if not isinstance(meta, dict):
            return None
        events = _events(SavedConversation(self.store, _chatkeep_id(app, user, meta["id"])))
        if config is not None:
            if config.num_recent_events is not None:
                n = config.num_recent_events
                events = events[-n:] if n > 0 else []
            if config.after_timestamp is not None:
                events = [e for e in events if e.timestamp >= config.after_timestamp]
        return self._merged(meta, events)

    async def list_sessions(
        self, *, app_name: str, user_id: str | None = None
    ) -> ListSessionsResponse:
        return await asyncio.to_thread(self._list, app_name, user_id)

    def _list(self, app: str, user: str | None) -> ListSessionsResponse:
        prefix = f"adkSession_{_h(app)}_" + ("" if user is None else f"{_h(app, user)}_")
        metas = self.store.local.get(self.store.local.keys(prefix))
        sessions = [self._merged(m, []) for m in metas.values() if isinstance(m, dict)]
        sessions.sort(key=lambda s: (s.last_update_time, s.user_id, s.id))
        return ListSessionsResponse(sessions=sessions)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:
        await asyncio.to_thread(self._delete, app_name, user_id, session_id.strip())

    def _delete(self, app: str, user: str, sid: str) -> None:
        SavedConversation(self.store, _chatkeep_id(app, user, sid)).clear()
        self.store.local.remove(_meta_key(app, user, sid))

    async def get_user_state(self, *, app_name: str, user_id: str) -> dict[str, Any]:
        _app_key, user_key = self._scoped(app_name, user_id)
        found = await asyncio.to_thread(self.store.local.get, user_key)
        return dict(found or {})

    async def append_event(self, session: Session, event: Event) -> Event:
        if event.partial:
            return event
        key = _meta_key(session.app_name, session.user_id, session.id)
        meta = await asyncio.to_thread(self.store.local.get, key)
        if not isinstance(meta, dict):
            raise SessionNotFoundError(f"Session {session.id} not found.")
        event = await super().append_event(session=session, event=event)
        session.last_update_time = event.timestamp
        entry = event_to_entry(event)
        saved = SavedConversation(
            self.store, _chatkeep_id(session.app_name, session.user_id, session.id)
        )
        meta["lastUpdateTime"] = event.timestamp
        delta = dict(event.actions.state_delta) if event.actions else {}
        await asyncio.to_thread(self._persist, saved, entry, key, meta, delta)
        return event

    def _persist(
        self,
        saved: SavedConversation,
        entry: Entry,
        key: str,
        meta: dict[str, Any],
        delta: dict[str, Any],
    ) -> None:
        for name, value in delta.items():  # a value the store refuses: refused before any write
            if not name.startswith(State.TEMP_PREFIX):
                chatkeep.check_value(value, f"the ADK state value {name!r}")
        saved.extend([entry], as_text=_as_text)
        self._save_deltas(key, meta, delta)
