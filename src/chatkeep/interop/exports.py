"""``export_text`` / ``export_file``: a profile or one saved session in every export format.

- ``json``: the whole profile is chatkeep's profile export (``format: "chatkeep-export"``,
  exact round trip through ``import``), written one value per line as ``Profile.export_to``
  writes it (``Profile.export_lines``), so memory holds one entry or one session at a time and
  ``import`` reads it back the same way; one session is ``{"format": "chatkeep-session",
  "version": 1, "session": {id, name, createdAt, pinned, history}}`` and imports back as that
  one saved session.
- ``md``, ``jsonl``, ``sharegpt``, ``html``: the live conversation (when not empty) and every
  saved session, newest first — or the one session asked for.

Sessions are named by id or by a unique prefix of at least 4 characters. Files are written
with mode 0600 (the store's own mode) through a temporary file renamed into place, so a failed
export never leaves half a file.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..errors import InvalidValue, NotFound
from . import datasets, html, markdown
from .imports import SESSION_FORMAT, SESSION_VERSION
from .source import checked_path

if TYPE_CHECKING:
    from ..storage.profile import Profile

FORMATS = ("json", "md", "jsonl", "sharegpt", "html")
PREFIX_MIN = 4


def find_session(profile: Profile, key: str) -> dict[str, Any]:
    """The saved session with id ``key``, or the only one whose id starts with it (≥ 4 chars)."""
    if not isinstance(key, str):
        raise InvalidValue(f"a session id is a string, got {type(key).__name__}")
    found = profile.sessions.get(key) if key else None
    if found is not None:
        return found
    if len(key) >= PREFIX_MIN:
        ids = [r["id"] for r in profile.sessions.list() if str(r["id"]).startswith(key)]
        if len(ids) == 1:
            one = profile.sessions.get(ids[0])
            if one is not None:
                return one
        if len(ids) > 1:
            raise InvalidValue(
                f"session id prefix {key!r} matches {len(ids)} sessions",
                hint="give more characters of the id (`chatkeep sessions list`)",
            )
    raise NotFound(
        f"no saved session with id {key!r}",
        hint="list ids with `chatkeep sessions list` (a unique prefix of 4+ characters works)",
    )


def _sessions(profile: Profile, session_id: str | None) -> Iterator[dict[str, Any]]:
    if session_id is not None:
        yield find_session(profile, session_id)
        return
    live = profile.history.read()
    if live:
        yield {
            "id": None,  # imported back as a session of its own, by content
            "name": "Live conversation",
            "createdAt": None,
            "pinned": False,
            "live": True,
            "history": live,
        }
    for row in profile.sessions.list():
        s = profile.sessions.get(row["id"])
        if s is not None:
            yield s


def export_lines(
    profile: Profile, fmt: str = "json", session_id: str | None = None
) -> Iterator[str]:
    """The export as lines without their newlines (big profiles are written piece by piece)."""
    if fmt not in FORMATS:
        raise InvalidValue(
            f"unknown export format {fmt!r}", hint=f"use one of {', '.join(FORMATS)}"
        )
    if session_id is not None:
        find_session(profile, session_id)  # fail before the first line is written
    if fmt == "json":
        if session_id is None:
            yield from profile.export_lines()
        else:
            s = find_session(profile, session_id)
            doc = {"format": SESSION_FORMAT, "version": SESSION_VERSION, "session": s}
            yield json.dumps(doc, ensure_ascii=False)
    elif fmt == "md":
        yield from markdown.write(_sessions(profile, session_id))
    elif fmt == "jsonl":
        yield from datasets.write_jsonl(_sessions(profile, session_id))
    elif fmt == "sharegpt":
        yield from datasets.write_sharegpt(_sessions(profile, session_id))
    else:
        title = f"chatkeep · {profile.profile}"
        yield from html.write(_sessions(profile, session_id), title)


def export_text(profile: Profile, fmt: str = "json", session_id: str | None = None) -> str:
    return "".join(line + "\n" for line in export_lines(profile, fmt, session_id))


def export_file(
    profile: Profile, path: str, fmt: str = "json", session_id: str | None = None
) -> int:
    """Write the export to ``path`` (mode 0600, replaced atomically); returns the number of
    characters written."""
    path = checked_path(path)
    lines = export_lines(profile, fmt, session_id)
    folder = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".chatkeep-export-", dir=folder)  # created 0600
    except OSError as exc:
        raise InvalidValue(
            f"cannot write {path}: {exc.strerror or exc}", hint="check that the folder exists"
        ) from None
    size = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            for line in lines:
                size += fh.write(line + "\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return size
