"""Where a finished reply is stored (SPEC §7.2, §7.4, §5.1).

:func:`land` places the assistant entry right after its question — in the live history when
the user is still in the conversation the turn started in, else in the saved session it started
in (``sessions.modify``, adding the question when that body lacks it) — applies the overflow
rescue's stubs by ``attachId`` (text only, image parts kept; the full text is kept first under
``attachOriginal_<attachId>``) and stamps ``imagesSeen`` on the image-bearing entries up to the
question. When that session was deleted meanwhile, the question and the reply go to the archive
(``history.archive_append``) and the caller tells the user: a reply is never dropped and never
mixed into another conversation.

Returns where it landed: ``"live"``, ``"session"`` (with its id) or ``"archive"``.

:func:`append_question` stores the question of a new turn, marking the question a failed send
left unanswered before it (SPEC §3.5) in the same transaction.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..entries import Entry
from .turn import apply_stubs, find_entry, stamp_up_to

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["ARCHIVED_NOTICE", "land"]

ARCHIVED_NOTICE = (
    "the session this reply belongs to was deleted while it streamed; the question and the "
    "reply were kept in the archive (`chatkeep history --archived`)"
)
#: How many recent sessions to scan for a turn that started in an unsaved conversation.
SESSION_SCAN = 20


def land(
    profile: Profile,
    user_entry: Entry,
    assistant: Entry,
    start_session: str,
    changed: list[dict[str, Any]],
    stamp: bool,
    *,
    expect: int | None = None,
) -> tuple[str, str | None]:
    """Store ``assistant`` after ``user_entry`` (see the module docstring). ``expect``: the
    history write counter right after the question was stored; while it has not moved the
    question is the newest entry and the reply is appended without reading the history."""
    sessions = profile.sessions
    end_session = sessions.active_id()
    same = end_session == start_session or not start_session
    stubbed = {c.get("attachId") for c in changed}

    def keep_originals(entries: list[Entry]) -> None:
        for entry in entries:
            if entry.get("attachId") in stubbed:
                profile.keep_original(entry)

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
            keep_originals(profile.history.read())

        def fn(entries: list[Entry]) -> list[Entry] | None:
            nonlocal landed
            new = place(entries, add_missing=False)
            landed = new is not None
            return new

        history = profile.history
        with history.locked():
            if not changed and expect is not None and history.version() == expect:
                # the usual turn: its question is the newest entry, so the reply is appended
                # and the rows still flagged unseen are stamped on their stored text (no pixel
                # is decoded or hashed again)
                if stamp:
                    history.stamp_seen()
                history.append(assistant)
                landed = True
            else:
                history.mutate(fn)
    if landed:
        return "live", end_session or None
    target = _origin_session(profile, start_session, user_entry)
    if target is not None:
        if changed:
            row = sessions.get(target)
            keep_originals(row["history"] if row else [])
        # the same placement as in the live history: question (if missing), reply, stubs, stamp
        if sessions.modify(target, lambda body: place(body, add_missing=True)) is not None:
            return "session", target
    profile.history.archive_append([user_entry, assistant])
    return "archive", None


def _origin_session(profile: Profile, start_session: str, user_entry: Entry) -> str | None:
    """The saved session the turn started in (``None`` when it no longer exists)."""
    sessions = profile.sessions
    if start_session:
        return start_session if sessions.get(start_session) is not None else None
    # The turn started in an unsaved conversation that was saved (``new()``) meanwhile.
    rows = sorted(sessions.list(), key=lambda r: r.get("createdAt") or 0, reverse=True)
    for row in rows[:SESSION_SCAN]:
        body = sessions.get(row["id"])
        if body is not None and find_entry(body["history"], user_entry) >= 0:
            return str(row["id"])
    return None
