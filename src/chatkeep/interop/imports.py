"""``import_file``: detect a file's format, read it, save what it holds (SPEC §14).

- ``chatkeep`` whole-profile exports and ``browsa`` dumps go to the profile importer (the
  profile replaced, one transaction, ``replace`` needed when the profile is not empty; the
  profile it replaces is first written to a backup export, named in the report's ``backup``).
- Detection never guesses a profile dump: a JSON object is a chatkeep export only with its
  ``format``, a browsa dump only with browsa's signature
  (:func:`chatkeep.storage.transfer.browsa_problem`); any other object is "not a known format"
  (``InvalidValue``, a hint naming ``--from``). ``--from browsa`` needs the signature too. An
  export in the one-value-per-line layout ``chatkeep export`` writes is read line by line
  (``Profile.import_from``: memory holds one entry or one session, not the file); any other
  layout is read whole (``Profile.import_data``).
- A chatkeep export is recognised from the first bytes of the file (its ``format`` key comes
  first), so detecting it never reads the file.
- A one-session chatkeep export (``format: "chatkeep-session"``) and chatkeep's Markdown
  export (detected, or ``--from md``) become saved sessions with their own ids.
- A SillyTavern chat is told by its header line (``chat_metadata``, or ``user_name`` with
  ``character_name``); the ``[{"messages": [...]}]`` array of fine-tuning sets by its first
  element, and read as JSON Lines are.
- chatkeep's own ``md``/``jsonl``/``sharegpt`` export of an empty profile carries a mark
  (:data:`.simple.EMPTY_MARK`, :data:`.markdown.EMPTY_MARK`) and imports as nothing without an
  error (``empty`` in the report); any other file with no conversation is an error.
- Every foreign format becomes one saved session per conversation through
  ``store.sessions.add_many``: one write transaction for the whole file, so a file that turns
  out to be bad half-way imports nothing; the live history is never touched; ids are derived
  from the source's ids (or, without one, from the content and the ordinal among equal-content
  conversations of the file), so importing the same file again adds nothing and distinct
  conversations with equal text are never merged.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..entries import is_attachment, is_image_part
from ..errors import InvalidEntry, InvalidValue
from ..storage.stream import HEAD as STREAM_HEAD
from ..storage.transfer import browsa_problem
from . import chatgpt, claude, librechat, llmdb, markdown, openwebui, sillytavern, simple
from .model import Conversation, Skipped
from .source import Input, Progress, bad_file, checked_path

if TYPE_CHECKING:
    from ..storage.profile import Profile

SESSION_FORMAT = "chatkeep-session"
SESSION_VERSION = 1
#: The start of a chatkeep export (whole profile or one session) whose first key is ``format``.
CHATKEEP_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"format"\s*:\s*"(?:chatkeep-export|chatkeep-session)"'
)
SOURCES = (
    "auto",
    "chatkeep",
    "browsa",
    "chatgpt",
    "claude",
    "openwebui",
    "librechat",
    "llm",
    "sharegpt",
    "jsonl",
    "sillytavern",
    "md",
)

Reader = Callable[[Input], Iterator[Conversation | Skipped]]
READERS: dict[str, Reader] = {
    "chatgpt": chatgpt.read,
    "claude": claude.read,
    "openwebui": openwebui.read,
    "librechat": librechat.read,
    "llm": llmdb.read,
    "sharegpt": simple.read_sharegpt,
    "jsonl": simple.read_jsonl,
    "sillytavern": sillytavern.read,
    "markdown": markdown.read,
}


def _detect_item(item: Any) -> str | None:
    for name, test in (
        ("chatgpt", chatgpt.looks_like),
        ("claude", claude.looks_like),
        ("openwebui", openwebui.looks_like),
        ("librechat", librechat.looks_like),
        ("sharegpt", simple.sharegpt_looks_like),
        ("jsonl", simple.messages_looks_like),  # the [{"messages": [...]}] of fine-tuning sets
    ):
        if test(item):
            return name
    return None


def _message_line(item: Any) -> bool:
    """A JSON Lines file whose lines are bare lists of messages starts with one of them."""
    return isinstance(item, dict) and isinstance(item.get("role"), str) and "content" in item


def detect(inp: Input) -> str:
    """The format of an import file (``markdown`` for chatkeep's Markdown export)."""
    if inp.is_sqlite:
        return "llm"
    if inp.is_zip or inp.is_dir:
        members = chatgpt.json_members(inp)
        if not members:
            raise bad_file(inp.path, "no conversations.json in this archive or folder")
        first = inp.first_item(members[0])
        if first is None or chatgpt.looks_like(first):
            return "chatgpt"
        if claude.looks_like(first):
            return "claude"
        raise bad_file(inp.path, f"{members[0]} holds conversations of an unknown format")
    if markdown.looks_like(inp.head):
        return "markdown"
    if CHATKEEP_START.match(inp.head):
        return "chatkeep"
    first_char = inp.first_char()
    if first_char == "[":
        item = inp.first_item()
        if item is None:
            raise bad_file(inp.path, "the file is an empty list", "there is nothing to import")
        found = _detect_item(item)
        if found:
            return found
        if _message_line(item):
            return "jsonl"
        raise bad_file(inp.path, "the first element is not a conversation of a known format")
    if first_char != "{":
        raise bad_file(inp.path, "not JSON, JSON Lines, a zip, a SQLite file or chatkeep Markdown")
    line = inp.first_line()
    if isinstance(line, dict):
        if line.get("format") in ("chatkeep-export", SESSION_FORMAT):
            return "chatkeep"
        if simple.jsonl_looks_like(line) or simple.is_empty_export(line):
            return "jsonl"
        if sillytavern.looks_like(line) and (
            isinstance(line.get("chat_metadata"), dict)
            or ("user_name" in line and "character_name" in line)
        ):
            return "sillytavern"
        if simple.sharegpt_looks_like(line) and inp.has_second_line():
            return "jsonl"
    doc = inp.load()
    if isinstance(doc, dict) and doc.get("format") in ("chatkeep-export", SESSION_FORMAT):
        return "chatkeep"
    found = _detect_item(doc)
    if found:
        return found
    why = browsa_problem(doc)
    if why is None:
        return "browsa"
    raise bad_file(
        inp.path,
        f"not a known format (not a chatkeep export, and not a browsa dump: {why})",
        f"if it is an export of a format chatkeep reads, name it with --from "
        f"({', '.join(s for s in SOURCES if s != 'auto')}); see docs/import-export.md",
    )


def _session_doc(doc: dict[str, Any]) -> Conversation:
    if doc.get("version") != SESSION_VERSION:
        raise InvalidValue(f"unsupported chatkeep session export version {doc.get('version')!r}")
    s = doc.get("session")
    if not isinstance(s, dict) or not isinstance(s.get("history"), list):
        raise InvalidValue(
            "a chatkeep session export needs a `session` object with a `history` list",
            hint="export it again with `chatkeep export --session ID`",
        )
    created = s.get("createdAt")
    return Conversation(
        source="chatkeep",
        source_id=None,
        title=str(s.get("name") or ""),
        created_ms=created if isinstance(created, int) and not isinstance(created, bool) else None,
        entries=s["history"],
        fixed_id=s.get("id") if isinstance(s.get("id"), str) and s.get("id") else None,
        pinned=bool(s.get("pinned")),
    )


def _images_in(entry: dict[str, Any]) -> int:
    content = entry.get("content") if isinstance(entry, dict) else None  # not yet validated
    return sum(1 for p in content if is_image_part(p)) if isinstance(content, list) else 0


def save_conversations(
    profile: Profile, convs: Iterator[Conversation | Skipped], source: str
) -> dict[str, Any]:
    """Add each readable conversation as a saved session (one transaction); the import report
    (with ``messages`` and ``images``: how many the readable conversations hold, attachment
    entries not counted as messages).

    A conversation the reader could not read (a :class:`Skipped`) or whose entries are not
    valid is left out and reported in ``skipped`` (``{where, reason, title?}``); the rest
    import. When no conversation of the file could be read, nothing is written and
    ``InvalidValue`` says why."""
    seen = readable = messages = pictures = 0
    skipped: list[dict[str, str]] = []
    equal: dict[str, int] = {}  # content id → conversations of that content so far

    last = (0, 0, "")  # messages, images and title of the conversation just handed over

    def rows() -> Iterator[tuple[dict[str, Any], list[dict[str, Any]]]]:
        nonlocal seen, readable, messages, pictures, last
        for conv in convs:
            seen += 1
            if isinstance(conv, Skipped):
                skipped.append(conv.report())
                continue
            n = k = 0
            for e in conv.entries:  # one pass: messages (attachments apart) and images
                n += not is_attachment(e)
                k += _images_in(e)
            last = (n, k, conv.title)
            readable, messages, pictures = readable + 1, messages + n, pictures + k
            ordinal = 0
            if conv.keyed_by_content:  # equal text, no source id: told apart by their order
                base = conv.session_id()
                ordinal = equal.get(base, 0)
                equal[base] = ordinal + 1
            yield conv.row(ordinal), conv.entries

    def invalid(_row: dict[str, Any], exc: InvalidEntry) -> None:
        """The conversation just handed over is left out (validated once, where it is added)."""
        nonlocal readable, messages, pictures
        readable, messages, pictures = readable - 1, messages - last[0], pictures - last[1]
        why = f"an entry is not valid: {exc.message}"
        title = " ".join(last[2].split())  # not name(): it reads the invalid entries
        skipped.append(Skipped(f"conversation {seen}", why, title).report())

    added = profile.sessions.add_many(rows(), skip_invalid=invalid)
    if not readable:
        reasons = "; ".join(f"{s['where']}: {s['reason']}" for s in skipped[:3])
        more = f" (and {len(skipped) - 3} more)" if len(skipped) > 3 else ""
        raise InvalidValue(
            f"no conversation in the file could be imported"
            f"{': ' + reasons + more if reasons else ' (it holds none)'}; nothing was imported",
            hint="check that the file is the export you meant, or name its format with --from",
        )
    return {
        "source": source,
        "conversations": seen,
        "added": len(added),
        "already": readable - len(added),
        "skipped": skipped,
        "sessions": [r["id"] for r in added],
        "messages": messages,
        "images": pictures,
    }


def _stream_profile(profile: Profile, inp: Input, replace: bool) -> dict[str, Any]:
    """A whole-profile export in the line layout, read line by line in one transaction."""
    with inp.open() as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8", newline="\n")
        try:
            return profile.import_from(text, replace=replace)
        except UnicodeDecodeError as exc:
            raise bad_file(inp.path, f"the file is not valid UTF-8 ({exc.reason})") from None
        except InvalidValue as exc:
            if type(exc) is not InvalidValue:
                raise
            raise bad_file(inp.path, exc.message, exc.hint or None) from None


def _declared_empty(inp: Input, fmt: str) -> bool:
    """Whether the file is chatkeep's own export of a profile that held nothing (its ``md``,
    ``jsonl`` or ``sharegpt`` form): it imports as nothing, without an error — any other file
    that holds no conversation is an error."""
    if fmt == "markdown":
        return markdown.is_empty(inp.head)
    if fmt not in ("jsonl", "sharegpt") or inp.is_zip or inp.is_dir or inp.is_sqlite:
        return False
    if inp.first_char() == "[":
        found = []
        for item in inp.items(count=False):
            found.append(item)
            if len(found) > 1:
                return False
        return len(found) == 1 and simple.is_empty_export(found[0])
    return simple.is_empty_export(inp.first_line()) and not inp.has_second_line()


def import_file(
    profile: Profile,
    path: str,
    *,
    source: str = "auto",
    replace: bool = False,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Import ``path`` into ``profile``; returns a report: ``source``, and for session imports
    ``conversations``/``added``/``already``/``skipped`` (a list of ``{where, reason, title?}``)/
    ``sessions``; for a whole-profile import the profile importer's counts and ``backup`` (the
    backup export of the profile it replaced, or ``None``). Raises ``InvalidValue``/
    ``InvalidEntry``/``StoreError`` with nothing imported."""
    path = checked_path(path)
    if source not in SOURCES:
        raise InvalidValue(
            f"unknown import format {source!r}", hint=f"use one of {', '.join(SOURCES)}"
        )
    inp = Input(path, progress)
    try:
        fmt = detect(inp) if source == "auto" else source
        if fmt == "md" or (fmt == "chatkeep" and markdown.looks_like(inp.head)):
            fmt = "markdown"
        if _declared_empty(inp, fmt):
            return {
                "source": "chatkeep" if fmt == "markdown" else fmt,
                "conversations": 0,
                "added": 0,
                "already": 0,
                "skipped": [],
                "sessions": [],
                "messages": 0,
                "images": 0,
                "empty": True,
            }
        if fmt == "markdown":
            return save_conversations(profile, markdown.read(inp), "chatkeep")
        if fmt == "chatkeep" and inp.head.startswith(STREAM_HEAD.encode()):
            return {**_stream_profile(profile, inp, replace), "whole": True}
        if fmt in ("chatkeep", "browsa"):
            doc = inp.load()
            if fmt == "chatkeep" and isinstance(doc, dict) and doc.get("format") == SESSION_FORMAT:
                return save_conversations(profile, iter([_session_doc(doc)]), "chatkeep")
            report = profile.import_data(doc, source=fmt, replace=replace)
            return {**report, "whole": True}
        return save_conversations(profile, READERS[fmt](inp), fmt)
    finally:
        inp.close()
