"""The chat engine behind ``store.chat`` (SPEC §3.5, §6.1, §7.2–7.4), shared by the CLI and the
web panel.

``Chat(store, *, retries=2, retry_delay=1.0, sleep=time.sleep, env=None)``

* ``send(text, images=(), provider=None, model=None, *, on_delta=None, on_notice=None,
  cancel=None, discard_partial=False) -> Reply`` — one turn:

  1. the provider card is resolved from ``store.get_all()`` (``provider``/``model`` override
     ``activeProvider``/``activeModel``) and the user entry is built (image cap, §5.5); bad input
     or configuration raises before anything is written;
  2. ``history.read()`` → the wire request of the card's style (aging and seen-image labels are
     applied by the builder, storage untouched) with ``systemPrompt`` + ``replyLanguage``;
  3. exactly **one** user entry is appended, then the reply streams (``on_delta(text)`` per
     piece); network errors and HTTP 429 are retried ``retries`` times (delay × attempt, only
     while no text arrived; ``on_notice`` hears "retrying");
  4. on ``ContextOverflow`` before any text, once per turn: the request is rebuilt from
     ``stub_oversized_attachments(history)`` and sent again at once (``on_notice`` hears
     "attachment trimmed to fit, retrying"); a second failure reaches the caller;
  5. success → in one history-lock write: the assistant entry (with ``provider``) right after the
     turn's user entry, the rescue stubs by ``attachId`` (text only, image parts kept — only now,
     after the rescued turn succeeded), and ``imagesSeen`` on the image-bearing entries up to the
     user entry (§5.1).

  A failure raises the typed error (``ProviderError`` & co., with ``hint``) and leaves the user
  entry alone: no assistant entry, storage otherwise untouched. A stop (``cancel`` set, or
  :meth:`Chat.stop`) keeps the partial answer with ``interrupted: true`` unless
  ``discard_partial``; an interrupted turn does not stamp images seen. An empty reply stores
  nothing (warning). When the user switched session while the reply streamed (the live history
  no longer holds the turn's user entry, or ``activeSessionId`` changed from a non-empty id),
  the reply goes to the session the turn started in through ``sessions.modify`` — the same
  placement (user entry too when that body lacks it, stubs, seen stamp) — never into the new
  conversation.
* ``edit_and_resend(i, text, images=None, ...)`` and ``regenerate(...)`` (SPEC §3.5): the card and
  the new entry are checked first, then ``truncate_from(i)`` removes entry ``i`` and everything
  after it, then the turn runs as ``send`` — a single new user entry at ``i`` on every path,
  failures included. ``images=None`` keeps the edited entry's images. ``regenerate`` re-sends the
  last user entry that is not an attachment (text and images); attachments added after it were
  never sent and are kept, before the new question.
* ``stop() -> int`` sets the cancel event of every turn in flight.

``Reply.stats`` compares the request with the previous request sent from this profile (kept under
``lastRequest``, so `chatkeep request` in another process sees it too; §6.4).

A ``responses`` card with ``serverTranscript`` lets the server keep the conversation (§6.3): after
a reply lands, its response id is kept under ``responseChain`` with a hash of the stored history
up to that reply; while that history is unchanged and only attachments follow it, the next
request carries ``previous_response_id`` and only :func:`~chatkeep.build_agent_turn`'s turn (the
new attachments and question). Any edit, regenerate, load or rewrite sends the full transcript.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..digest import digest_json
from ..entries import Entry, entry_text, is_attachment
from ..errors import ContextOverflow, InvalidValue
from ..preview import LAST_REQUEST_KEY, remember_request
from ..providers import (
    Card,
    Done,
    TextDelta,
    resolve_provider,
    stream_with_retries,
    truncation_warning,
)
from ..rules.accounting import request_stats
from ..rules.context import stub_oversized_attachments
from ..rules.images import stamp_images_seen
from ..rules.wire import WireRequest, build_request
from .turn import (
    Reply,
    apply_stubs,
    build_user_entry,
    entry_images,
    find_entry,
    stamp_up_to,
    system_prompt,
)

#: Where a Responses card with ``serverTranscript`` keeps the id of the last stored reply.
RESPONSE_CHAIN_KEY = "responseChain"


def _digest(entries: list[Entry]) -> str:
    """A content hash of stored entries (canonical JSON), to notice any change to them."""
    return digest_json(entries)


if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["RESCUE_NOTICE", "Chat"]

RESCUE_NOTICE = "attachment trimmed to fit, retrying"
EMPTY_REPLY_WARNING = "the model returned an empty reply; nothing was stored (regenerate to retry)"
LOST_WARNING = (
    "the conversation this reply belongs to was cleared while it streamed; the reply was not stored"
)
_SESSION_SCAN = 20

Callback = Callable[[str], object] | None


@dataclass
class _Turn:
    card: Card
    user_entry: Entry
    system: str
    warnings: list[str] = field(default_factory=list)
    dropped: int = 0


@dataclass
class _Outcome:
    done: Done
    request: WireRequest
    changed: list[dict[str, Any]]


class _Produced:
    """Whether any text reached the caller during the current stream."""

    def __init__(self) -> None:
        self.value = False


class Chat:
    """The conversation engine bound to one store (see the module docstring)."""

    def __init__(
        self,
        store: Profile,
        *,
        retries: int = 2,
        retry_delay: float = 1.0,
        sleep: Callable[[float], object] = time.sleep,
        env: dict[str, str] | None = None,
    ) -> None:
        self.store = store
        self.retries = retries
        self.retry_delay = retry_delay
        self.sleep = sleep
        self.env = env
        self._lock = threading.Lock()
        self._cancels: set[threading.Event] = set()

    # -- public -----------------------------------------------------------------------------
    def send(
        self,
        text: str,
        images: Iterable[Any] = (),
        provider: str | None = None,
        model: str | None = None,
        *,
        on_delta: Callback = None,
        on_notice: Callback = None,
        cancel: threading.Event | None = None,
        discard_partial: bool = False,
    ) -> Reply:
        """One turn: one user entry, the streamed reply, one assistant entry (module docstring)."""
        turn = self._prepare(text, images, provider, model)
        return self._run(turn, on_delta, on_notice, cancel, discard_partial)

    def edit_and_resend(
        self,
        i: int,
        text: str,
        images: Iterable[Any] | None = None,
        provider: str | None = None,
        model: str | None = None,
        *,
        on_delta: Callback = None,
        on_notice: Callback = None,
        cancel: threading.Event | None = None,
        discard_partial: bool = False,
    ) -> Reply:
        """Replace user entry ``i`` and everything after it by a new turn with ``text``."""
        original = self._user_entry_at(i)
        pics = entry_images(original) if images is None else images
        turn = self._prepare(text, pics, provider, model)
        self._truncate(i, original)
        return self._run(turn, on_delta, on_notice, cancel, discard_partial)

    def regenerate(
        self,
        provider: str | None = None,
        model: str | None = None,
        *,
        on_delta: Callback = None,
        on_notice: Callback = None,
        cancel: threading.Event | None = None,
        discard_partial: bool = False,
    ) -> Reply:
        """Send the last question again in place of its answer (SPEC §3.5)."""
        history = self.store.history.read()
        i = next(
            (
                k
                for k in range(len(history) - 1, -1, -1)
                if history[k].get("role") == "user" and not is_attachment(history[k])
            ),
            -1,
        )
        if i < 0:
            raise InvalidValue("there is no question to regenerate", hint="send a message first")
        original = history[i]
        # attachments added after the question were never sent: they stay, before the new question
        pending = [e for e in history[i + 1 :] if is_attachment(e)]
        turn = self._prepare(entry_text(original), entry_images(original), provider, model)
        self._truncate(i, original, keep=pending)
        return self._run(turn, on_delta, on_notice, cancel, discard_partial)

    def stop(self) -> int:
        """Stop every turn in flight; returns how many were signalled."""
        with self._lock:
            events = list(self._cancels)
        for event in events:
            event.set()
        return len(events)

    # -- preparation ------------------------------------------------------------------------
    def _prepare(
        self, text: str, images: Iterable[Any], provider: str | None, model: str | None
    ) -> _Turn:
        settings = self.store.get_all()
        card = resolve_provider(settings, provider, model, env=self.env)
        entry, dropped, note = build_user_entry(text, images)
        return _Turn(
            card=card,
            user_entry=entry,
            system=system_prompt(settings),
            warnings=[note] if note else [],
            dropped=dropped,
        )

    def _user_entry_at(self, i: int) -> Entry:
        history = self.store.history.read()
        if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(history):
            raise InvalidValue(
                f"no history entry at index {i!r} (the live history has {len(history)})",
                hint="see `chatkeep history` for the indexes",
            )
        entry = history[i]
        if entry.get("role") != "user" or is_attachment(entry):
            raise InvalidValue(
                f"entry {i} is not a message you wrote", hint="only your own messages can be edited"
            )
        return entry

    def _truncate(self, i: int, original: Entry, keep: list[Entry] | None = None) -> None:
        def fn(entries: list[Entry]) -> list[Entry] | None:
            if i >= len(entries) or entries[i] != original:
                raise InvalidValue(
                    f"entry {i} changed before it could be replaced; nothing was sent",
                    hint="look at the history again and retry",
                )
            return entries[:i] + list(keep or [])

        self.store.history.mutate(fn)

    def _build(
        self, turn: _Turn, history: list[Entry], previous_response_id: str | None = None
    ) -> WireRequest:
        card = turn.card
        return build_request(
            card.style,
            history,
            user_entry=turn.user_entry,
            system_prompt=turn.system,
            model=card.model,
            base_url=card.base_url,
            temperature=card.temperature,
            max_tokens=card.max_tokens,
            stream=card.stream,
            previous_response_id=previous_response_id,
        )

    # -- the turn ---------------------------------------------------------------------------
    def _run(
        self,
        turn: _Turn,
        on_delta: Callback,
        on_notice: Callback,
        cancel: threading.Event | None,
        discard_partial: bool,
    ) -> Reply:
        cancel = cancel if cancel is not None else threading.Event()
        warnings = list(turn.warnings)

        def notify(message: str) -> None:
            warnings.append(message)
            if on_notice is not None:
                on_notice(message)

        for note in turn.warnings:
            if on_notice is not None:
                on_notice(note)
        with self._lock:
            self._cancels.add(cancel)
        try:
            start_session = self.store.sessions.active_id()
            history = self.store.history.read()
            request = self._build(turn, history, self._chained_response(turn.card, history))
            self.store.history.append(turn.user_entry)
            outcome = self._call(turn, history, request, cancel, on_delta, notify)
        finally:
            with self._lock:
                self._cancels.discard(cancel)
        done = outcome.done
        previous = self.store.local.get(LAST_REQUEST_KEY)
        stats = request_stats(
            outcome.request, previous.get("body") if isinstance(previous, dict) else None
        )
        remember_request(self.store, outcome.request.style, outcome.request.body)
        warning = truncation_warning(stats["estTokens"], done.usage)
        if warning:
            notify(warning)
        if done.finish_reason in ("length", "max_tokens", "max_output_tokens"):
            notify("the reply hit the model's output limit and may be cut short")
        card = turn.card
        reply = Reply(
            text=done.text,
            provider=card.name,
            model=card.model,
            usage=done.usage,
            interrupted=done.interrupted,
            warnings=warnings,
            stats=stats,
            response_id=done.response_id,
            finish_reason=done.finish_reason,
            rescued=bool(outcome.changed),
            dropped_images=turn.dropped,
            landed="none",
        )
        if done.interrupted and (discard_partial or not done.text):
            return reply
        if not done.text:
            notify(EMPTY_REPLY_WARNING)
            return reply
        assistant: Entry = {
            "role": "assistant",
            "content": done.text,
            "provider": {"name": card.name, "model": card.model},
        }
        if done.interrupted:
            assistant["interrupted"] = True
        reply.landed, reply.session_id = self._land(
            turn.user_entry, assistant, start_session, outcome.changed, not done.interrupted
        )
        if reply.landed == "none":
            notify(LOST_WARNING)
        elif reply.landed == "live" and not done.interrupted:
            self._remember_response(card, assistant, done.response_id)
        return reply

    # -- server-side transcript (OpenAI Responses, SPEC §6.3) ---------------------------------
    def _chained_response(self, card: Card, history: list[Entry]) -> str | None:
        """The response id to continue from, when the server already holds this conversation:
        the stored history up to that reply is unchanged and only attachments came after it."""
        if card.style != "responses" or not card.server_transcript:
            return None
        chain = self.store.local.get(RESPONSE_CHAIN_KEY)
        if not isinstance(chain, dict) or chain.get("provider") != [card.name, card.model]:
            return None
        upto = chain.get("upTo")
        if not isinstance(upto, int) or not 0 < upto <= len(history):
            return None
        if _digest(history[:upto]) != chain.get("digest"):
            return None
        if not all(is_attachment(e) for e in history[upto:]):
            return None
        response_id = chain.get("responseId")
        return response_id if isinstance(response_id, str) and response_id else None

    def _remember_response(self, card: Card, assistant: Entry, response_id: str | None) -> None:
        if card.style != "responses" or not card.server_transcript or not response_id:
            return
        history = self.store.history.read()
        j = find_entry(history, assistant)
        if j < 0:
            return
        self.store.local.set(
            RESPONSE_CHAIN_KEY,
            {
                "provider": [card.name, card.model],
                "responseId": response_id,
                "upTo": j + 1,
                "digest": _digest(history[: j + 1]),
            },
        )

    def _stream(
        self,
        card: Card,
        request: WireRequest,
        cancel: threading.Event,
        on_delta: Callback,
        notify: Callable[[str], None],
        produced: _Produced,
    ) -> Done:
        def on_retry(attempt: int, error: BaseException) -> None:
            reason = getattr(error, "message", None) or str(
                error
            )  # the hint comes with the final error
            notify(f"the provider did not answer ({reason}); retrying ({attempt}/{self.retries})")

        for event in stream_with_retries(
            card,
            request.body,
            cancel=cancel,
            retries=self.retries,
            delay=self.retry_delay,
            sleep=self.sleep,
            on_retry=on_retry,
        ):
            if isinstance(event, TextDelta):
                produced.value = True
                if on_delta is not None:
                    on_delta(event.text)
            else:
                return event
        return Done("", interrupted=cancel.is_set())  # pragma: no cover - adapters end with Done

    def _call(
        self,
        turn: _Turn,
        history: list[Entry],
        request: WireRequest,
        cancel: threading.Event,
        on_delta: Callback,
        notify: Callable[[str], None],
    ) -> _Outcome:
        produced = _Produced()
        try:
            done = self._stream(turn.card, request, cancel, on_delta, notify, produced)
            return _Outcome(done, request, [])
        except ContextOverflow:
            if produced.value:
                raise
            stubbed, changed = stub_oversized_attachments(history)
            if not changed:
                raise
        notify(RESCUE_NOTICE)
        rescued = self._build(turn, stubbed)
        done = self._stream(turn.card, rescued, cancel, on_delta, notify, _Produced())
        # A stopped rescue keeps its partial answer but does not persist the stubs.
        return _Outcome(done, rescued, [] if done.interrupted else changed)

    # -- landing ----------------------------------------------------------------------------
    def _land(
        self,
        user_entry: Entry,
        assistant: Entry,
        start_session: str,
        changed: list[dict[str, Any]],
        stamp: bool,
    ) -> tuple[str, str | None]:
        sessions = self.store.sessions
        end_session = sessions.active_id()
        same = end_session == start_session or not start_session
        stubbed = {c.get("attachId") for c in changed}

        def keep_originals(entries: list[Entry]) -> None:
            for entry in entries:
                if entry.get("attachId") in stubbed:
                    self.store.keep_original(entry)

        def place(entries: list[Entry], add_missing: bool) -> list[Entry] | None:
            """``entries`` with the reply after its question, stubs applied, images stamped."""
            j = find_entry(entries, user_entry)
            if j < 0:
                if not add_missing:
                    return None
                entries, j = [*entries, user_entry], len(entries)
            new = [*entries[: j + 1], assistant, *entries[j + 1 :]]
            if changed:
                new = apply_stubs(new, changed)
            if stamp:
                new = stamp_up_to(new, j + 1)
            return new

        landed = False
        if same:
            if changed:
                keep_originals(self.store.history.read())

            def fn(entries: list[Entry]) -> list[Entry] | None:
                nonlocal landed
                new = place(entries, add_missing=False)
                landed = new is not None
                return new

            history = self.store.history
            with history.locked():
                if not changed and history.tail(1) == [user_entry]:
                    # the usual turn: its question is the newest entry, so the reply is
                    # appended and only the rows with unseen images are stamped
                    if stamp:
                        history.modify_unseen(stamp_images_seen)
                    history.append(assistant)
                    landed = True
                else:
                    history.mutate(fn)
        if landed:
            return "live", end_session or None
        target = self._origin_session(start_session, user_entry)
        if target is None:
            return "none", None
        session_id = target
        if changed:
            row = sessions.get(session_id)
            keep_originals(row["history"] if row else [])
        # the same placement as in the live history: question (if missing), reply, stubs, stamp
        sessions.modify(session_id, lambda body: place(body, add_missing=True))
        return "session", session_id

    def _origin_session(self, start_session: str, user_entry: Entry) -> str | None:
        """The saved session the turn started in (``None`` when it no longer exists)."""
        sessions = self.store.sessions
        if start_session:
            return start_session if sessions.get(start_session) is not None else None
        # The turn started in an unsaved conversation that was saved (``new()``) meanwhile.
        rows = sorted(sessions.list(), key=lambda r: r.get("createdAt") or 0, reverse=True)
        for row in rows[:_SESSION_SCAN]:
            body = sessions.get(row["id"])
            if body is not None and find_entry(body["history"], user_entry) >= 0:
                return str(row["id"])
        return None
