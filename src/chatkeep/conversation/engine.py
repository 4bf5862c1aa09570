"""The chat engine behind ``store.chat`` (SPEC §3.5, §6.1, §7.2–7.4), shared by every face.

``Chat(store, *, retries=2, retry_delay=1.0, sleep=time.sleep, env=None)`` — **prepare, then
run**:

* ``prepare_send(text, images=(), provider=None, model=None) -> Turn``,
  ``prepare_edit(i, text, images=None, provider=None, model=None) -> Turn`` and
  ``prepare_regenerate(provider=None, model=None) -> Turn`` check everything a turn needs — the
  provider card (``provider``/``model`` override ``activeProvider``/``activeModel``), the new
  user entry (every pasted image whole, §5.5), the index and role of the entry to edit, that there is a
  question to regenerate — and raise a typed error **before anything is written**. Faces call
  them and never re-check indexes or roles themselves.
* ``run(turn, *, on_delta=None, on_notice=None, cancel=None, discard_partial=False,
  on_reasoning=None) -> Reply`` performs the turn:

  1. edit/regenerate: ``entries[i:]`` are removed (attachments added after a regenerated
     question were never sent: they stay, before the new question); if entry ``i`` changed since
     the prepare, nothing is written and ``InvalidValue`` says so;
  2. the new user entry is stamped ``createdAt`` (epoch ms, the time of the send: the pause
     before it is part of the pace the cache lifetime is chosen from) and the request is
     planned (:func:`~.planner.plan_request`: card, system prompt, history steps,
     server-transcript chain, the profile's pace record) — exactly what ``chatkeep request``
     previews;
  3. exactly **one** user entry is appended (none when a send repeats the text of the
     unanswered last question after a failure: that entry is reused, §3.5) and its time added
     to the pace record (:data:`~chatkeep.rules.cache.PACE_KEY`) — a send of a *different*
     question after a failure first marks the unanswered one ``unanswered: true`` in the same
     transaction: it stays in the history (the faces show it) and no request sends it
     (:func:`~chatkeep.entries.mark_unanswered`) —, then the reply streams: ``on_delta(text)``
     per piece of the answer and ``on_reasoning(text)`` per piece of the model's reasoning
     ("thinking": Anthropic thinking blocks, Responses reasoning summaries, a chat reply's
     leading ``<think>`` section or ``reasoning_content``; its own event, never mixed into the
     answer); network errors and HTTP 429 are retried ``retries`` times (delay × attempt, only
     while nothing arrived; ``on_notice`` hears it);
  4. on ``ContextOverflow`` before any text, once per turn: the request is re-planned from
     ``stub_oversized_attachments(history)`` and sent again at once (``on_notice`` hears
     "attachment trimmed to fit, retrying"); a second failure reaches the caller;
  5. success → :func:`~.landing.land`: the assistant entry (with ``provider``, ``createdAt``
     — the time it landed —, ``usage``, and ``reasoning`` when the model sent any: the
     answer alone is its ``content``, and no request ever sends ``reasoning`` or
     ``createdAt``) after the turn's user entry, the rescue stubs (only now), ``imagesSeen``
     up to the user entry (§5.1); in the session the turn started in when the user switched
     away; in the archive, with a notice, when that session was deleted meanwhile (§7.2).

  A stream that drops after part of the reply (answer or reasoning) arrived keeps that part
  (``interrupted: true``, no seen stamp) and then raises the provider's error, rewritten by
  :func:`~chatkeep.providers.dropped_mid_reply` (the connection dropped mid-reply, the partial
  answer was kept, the retry command). A stream that ends cleanly without its end marker after
  some text or reasoning (``Done.cut_short``, SPEC §7.2) is no error: the partial reply is kept
  ``interrupted: true`` and ``Reply.warnings`` holds :data:`CUT_SHORT_WARNING`. A failure before
  any text raises the typed error (``ProviderError`` & co.) with a hint that names the retry
  and leaves the user entry, unanswered: ``regenerate`` (or the same text sent again) answers
  it without a second bubble. A stop (``cancel`` set, or :meth:`Chat.stop`) keeps the partial
  answer (and its reasoning) with ``interrupted: true`` unless ``discard_partial``; an
  interrupted turn does not stamp images seen. An empty reply stores nothing (warning); a
  reply with reasoning but no answer is kept (its ``content`` is ``""``, which no request
  sends) with :data:`NO_ANSWER_WARNING`.
* ``send`` / ``edit_and_resend`` / ``regenerate`` are prepare + run in one call.
* ``stop() -> int`` sets the cancel event of every turn in flight.

``Reply.stats`` compares the request with the previous request sent from this profile (kept under
``lastRequest``, so ``chatkeep request`` in another process sees it too; §6.4).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from ..entries import mark_unanswered
from ..errors import ChatkeepError, ContextOverflow, InvalidValue, ProviderError, StoreError
from ..providers import Card, Done, dropped_mid_reply
from ..rules.cache import PACE_KEY, remember_question
from ..rules.cache_hits import recent_hits
from ..rules.context import stub_oversized_attachments
from ..rules.request_images import held_back_note
from . import prepare
from .finish import CUT_SHORT_WARNING, EMPTY_REPLY_WARNING, NO_ANSWER_WARNING, finish_turn
from .planner import RequestPlan, plan_request
from .prepare import Turn
from .state import read_state
from .streaming import Callback, CutOff, Outcome, Produced, stream_reply
from .turn import Reply, now_ms
from .unsaved import finish_or_keep

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = [
    "CUT_SHORT_WARNING",
    "EMPTY_REPLY_WARNING",
    "NO_ANSWER_WARNING",
    "RESCUE_NOTICE",
    "RETRY_HINT",
    "Chat",
    "Turn",
]

#: How often a turn is planned again when other writers keep moving the history.
SETTLE_TRIES = 3
RESCUE_NOTICE = "attachment trimmed to fit, retrying"
RETRY_HINT = "your question is kept: retry with `chatkeep regenerate` (the panel's Retry)"


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

    # -- phase 1: prepare (checks everything, writes nothing; see .prepare) -----------------
    def prepare_send(
        self,
        text: str,
        images: Iterable[Any] = (),
        provider: str | None = None,
        model: str | None = None,
    ) -> Turn:
        """Check one new turn (the unanswered last question with this text is reused)."""
        return prepare.prepare_send(self.store, self.env, text, images, provider, model)

    def prepare_edit(
        self,
        i: int,
        text: str,
        images: Iterable[Any] | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> Turn:
        """Check replacing user entry ``i`` and everything after it by ``text``."""
        return prepare.prepare_edit(self.store, self.env, i, text, images, provider, model)

    def prepare_regenerate(self, provider: str | None = None, model: str | None = None) -> Turn:
        """Check answering the last question again (or for the first time, after a failure)."""
        return prepare.prepare_regenerate(self.store, self.env, provider, model)

    # -- one-call forms ----------------------------------------------------------------------
    def send(
        self,
        text: str,
        images: Iterable[Any] = (),
        provider: str | None = None,
        model: str | None = None,
        **run: Any,
    ) -> Reply:
        """One turn: one user entry, the streamed reply, one assistant entry."""
        return self.run(self.prepare_send(text, images, provider, model), **run)

    def edit_and_resend(
        self,
        i: int,
        text: str,
        images: Iterable[Any] | None = None,
        provider: str | None = None,
        model: str | None = None,
        **run: Any,
    ) -> Reply:
        """Replace user entry ``i`` and everything after it by a new turn with ``text``."""
        return self.run(self.prepare_edit(i, text, images, provider, model), **run)

    def regenerate(
        self, provider: str | None = None, model: str | None = None, **run: Any
    ) -> Reply:
        """Send the last question again in place of its answer (SPEC §3.5)."""
        return self.run(self.prepare_regenerate(provider, model), **run)

    def stop(self) -> int:
        """Stop every turn in flight; returns how many were signalled."""
        with self._lock:
            events = list(self._cancels)
        for event in events:
            event.set()
        return len(events)

    # -- phase 2: run ------------------------------------------------------------------------
    def _settle(self, turn: Turn) -> RequestPlan:
        """Plan the turn from the history its prepare read, then store its question — one
        write transaction, taken only while the history is still the one planned from (its
        write counter unchanged); when another writer moved it meanwhile, read it again and
        plan again. An edit or regenerate first replaces ``entries[replace_at:]`` (keeping
        ``turn.keep``, checking the entry is the one the prepare saw; the replaced turns go to
        the archive as an earlier version)."""
        history = self.store.history
        for _attempt in range(SETTLE_TRIES):
            state = turn.state
            base, version = state.history, state.version
            if turn.reuse:
                j = turn.replace_at
                if j is None or j != len(base) - 1 or base[j] != turn.original:
                    turn.reuse = False  # the history moved on: an ordinary new turn
                else:
                    base = base[:j]
                    turn.user_entry = turn.original or turn.user_entry
            elif turn.replace_at is not None and not turn.replaced:
                base, version = history.replace_from(turn.replace_at, turn.original, turn.keep)
                turn.replaced = True
            rewrite = None
            if not turn.reuse and turn.kind == "send":
                # a different question after a failed send: the unanswered one stays, marked,
                # and is left out of this request and every later one (SPEC §3.5)
                marked = mark_unanswered(base)
                if marked is not base:
                    i = next(k for k, e in enumerate(marked) if e is not base[k])
                    rewrite, base = (i, marked[i]), marked
            # stamped before planning: the time of the send is part of the pace
            entry = turn.user_entry if turn.reuse else {**turn.user_entry, "createdAt": now_ms()}
            plan = plan_request(self.store, turn.card, turn.system, base, entry, state=state)
            turn.dropped = plan.request.held_back  # images the per-request cap sent as labels
            turn.hits_before = recent_hits(base, entry, turn.card.cache_rule, state.pace)
            if turn.reuse:
                if history.version() == version:
                    turn.stored_at = version
                    return plan
            else:
                after = history.append_at(entry, version, rewrite)
                if after is not None:
                    turn.user_entry, turn.stored_at = entry, after
                    self.store.local.modify(
                        PACE_KEY, partial(remember_question, at=entry["createdAt"]), []
                    )
                    return plan
            turn.state = read_state(self.store)
        raise StoreError(
            "the conversation kept changing while this turn was prepared; nothing was sent",
            hint="another window or process is writing to it: retry when it is done",
        )

    def run(
        self,
        turn: Turn,
        *,
        on_delta: Callback = None,
        on_notice: Callback = None,
        cancel: threading.Event | None = None,
        discard_partial: bool = False,
        on_reasoning: Callback = None,
    ) -> Reply:
        """Perform a prepared turn (see the module docstring)."""
        if not isinstance(turn, Turn):
            raise InvalidValue(
                "run() takes the Turn returned by prepare_send/prepare_edit/prepare_regenerate"
            )
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
        appended = False
        try:
            plan = self._settle(turn)
            start_session = turn.state.session_id
            if turn.dropped:
                notify(held_back_note(turn.dropped))
            appended = True
            try:
                outcome = self._call(turn, plan, cancel, (on_delta, on_reasoning), notify)
            except CutOff as cut:
                # the stream dropped mid-reply: keep what arrived (interrupted), then report
                finish_turn(
                    self.store,
                    turn,
                    Outcome(
                        Done(cut.text, interrupted=True, reasoning=cut.reasoning), cut.plan, []
                    ),
                    start_session,
                    warnings,
                    notify,
                    discard_partial,
                )
                raise dropped_mid_reply(cut.error, turn.card) from None
        except ChatkeepError as exc:
            if appended and RETRY_HINT not in exc.hint:
                exc.hint = f"{exc.hint}; {RETRY_HINT}" if exc.hint else RETRY_HINT
            raise
        finally:
            with self._lock:
                self._cancels.discard(cancel)
        args = (turn, outcome, start_session, warnings, notify, discard_partial)
        # a failed landing keeps the reply
        return finish_or_keep(self, partial(finish_turn, self.store), args)

    def _stream(
        self,
        card: Card,
        plan: RequestPlan,
        cancel: threading.Event,
        listeners: tuple[Callback, Callback],
        notify: Callable[[str], None],
        produced: Produced,
    ) -> Done:
        return stream_reply(
            card,
            plan,
            cancel,
            listeners,
            produced,
            retries=self.retries,
            delay=self.retry_delay,
            sleep=self.sleep,
            notify=notify,
        )

    def _call(
        self,
        turn: Turn,
        plan: RequestPlan,
        cancel: threading.Event,
        callbacks: tuple[Callback, Callback],
        notify: Callable[[str], None],
    ) -> Outcome:
        produced = Produced()
        try:
            done = self._stream(turn.card, plan, cancel, callbacks, notify, produced)
            return Outcome(done, plan, [])
        except ContextOverflow as exc:
            if produced.value:
                raise CutOff(exc, produced, plan) from exc
            stubbed, changed = stub_oversized_attachments(plan.history)
            if not changed:
                raise
        except ProviderError as exc:
            if produced.value:
                raise CutOff(exc, produced, plan) from exc
            raise
        notify(RESCUE_NOTICE)
        rescued = plan_request(
            self.store,
            turn.card,
            turn.system,
            stubbed,
            turn.user_entry,
            chain=False,
            state=turn.state,
        )
        again = Produced()
        try:
            done = self._stream(turn.card, rescued, cancel, callbacks, notify, again)
        except ProviderError as exc:
            if again.value:
                raise CutOff(exc, again, rescued) from exc
            raise
        # A stopped rescue keeps its partial answer but does not persist the stubs.
        return Outcome(done, rescued, [] if done.interrupted else changed)
