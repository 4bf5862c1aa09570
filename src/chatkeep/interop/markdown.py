"""chatkeep's Markdown export, readable by people and read back exactly by :func:`read`.

Layout (one block per session; the whole-profile export starts with the live conversation)::

    # <session name>
    <!-- chatkeep-session {"id": …, "createdAt": …, "pinned": false} -->
    _saved 2026-12-01 10:00 UTC · 4 entries_

    ## User
    <!-- chatkeep-entry {"role": "user", "layout": [["text", 3], ["image"]], …} -->
    three lines
    of the entry's
    text
    ![image 1](data:image/png;base64,…)

Every entry's text is written whole — attachments' full text included — and images are
embedded as data URLs. The comment before each entry carries what a reader needs to rebuild
the entry exactly: its other fields (``attachId``, ``imagesSeen``, ``provider``, …) and the
layout of its content (how many lines each text part has, where the images are), so no text
can be mistaken for structure. Reading back gives the same sessions (ids, names, times, entries).
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..entries import image_part_url, is_attachment, is_image_part
from .jsonread import too_deep
from .model import Conversation
from .source import Input, bad_file

SESSION_MARK = "<!-- chatkeep-session "
ENTRY_MARK = "<!-- chatkeep-entry "
END = " -->"


def _meta(value: dict[str, Any]) -> str:
    # ">" escaped so no value can close the comment early; still valid JSON
    return json.dumps(value, ensure_ascii=False, sort_keys=True).replace(">", "\\u003e")


def _when(ms: Any) -> str:
    if not isinstance(ms, int | float) or isinstance(ms, bool) or ms <= 0:
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def _heading(entry: dict[str, Any]) -> str:
    if is_attachment(entry):
        return "## Attachment"
    role = "User" if entry.get("role") == "user" else "Assistant"
    prov = entry.get("provider")
    if role == "Assistant" and isinstance(prov, dict) and prov.get("model"):
        role += f" · {' '.join(str(prov['model']).split())}"
    return f"## {role}"


def _entry_lines(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    meta = {k: v for k, v in entry.items() if k != "content"}
    body: list[str] = []
    if isinstance(content, str):
        meta["layout"] = [["str", content.count("\n") + 1]]
        body.extend(content.split("\n"))
    else:
        layout: list[list[Any]] = []
        n = 0
        for part in content if isinstance(content, list) else []:
            if is_image_part(part):
                n += 1
                layout.append(["image", int(isinstance(part.get("image_url"), str))])
                body.append(f"![image {n}]({image_part_url(part)})")
            else:
                text = str(part.get("text", "")) if isinstance(part, dict) else ""
                kind = part.get("type", "text") if isinstance(part, dict) else "text"
                layout.append([kind, text.count("\n") + 1])
                body.extend(text.split("\n"))
        meta["layout"] = layout
    return [_heading(entry), ENTRY_MARK + _meta(meta) + END, *body, ""]


def write_session(session: dict[str, Any]) -> Iterator[str]:
    history = session.get("history") or []
    head = {k: session.get(k) for k in ("id", "createdAt", "pinned")}
    if session.get("live"):
        head["live"] = True
    name = " ".join(str(session.get("name") or "").split()) or "Untitled"
    yield f"# {name}"
    yield SESSION_MARK + _meta({**head, "name": session.get("name")}) + END
    when = _when(session.get("createdAt"))
    yield f"_{'saved ' + when + ' · ' if when else ''}{len(history)} entries_"
    yield ""
    for entry in history:
        yield from _entry_lines(entry)


def write(sessions: Iterable[dict[str, Any]]) -> Iterator[str]:
    """The Markdown document of ``sessions``, one line at a time (no trailing newlines)."""
    for k, s in enumerate(sessions):
        if k:
            yield ""
        yield from write_session(s)


# -- reading -----------------------------------------------------------------------------------
def _json_after(line: str, mark: str, where: str) -> dict[str, Any]:
    text = line[len(mark) :]
    if not text.endswith(END):
        raise ValueError(f"{where}: unterminated chatkeep comment")
    value = json.loads(text[: -len(END)])
    if not isinstance(value, dict):
        raise ValueError(f"{where}: chatkeep comment is not an object")
    return value


def _entry(
    meta: dict[str, Any], lines: list[str], k: int, where: str
) -> tuple[dict[str, Any], int]:
    layout = meta.pop("layout", None)
    if not isinstance(layout, list) or not layout:
        raise ValueError(f"{where}: entry without a layout")
    if not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in layout):
        raise ValueError(f"{where}: an entry's layout is not a list of [kind, size] pairs")

    def take(n: Any) -> str:
        nonlocal k
        if not isinstance(n, int) or n < 1 or k + n > len(lines):
            raise ValueError(f"{where}: entry text is shorter than its layout says")
        out = "\n".join(lines[k : k + n])
        k += n
        return out

    if layout[0][0] == "str":
        return {**meta, "content": take(layout[0][1])}, k
    parts: list[dict[str, Any]] = []
    for kind, arg in layout:
        if kind == "image":
            line = lines[k] if k < len(lines) else ""
            start, end = line.find("]("), line.rfind(")")
            if not line.startswith("![image ") or start < 0 or end <= start:
                raise ValueError(f"{where}: image line expected")
            url = line[start + 2 : end]
            k += 1
            parts.append({"type": "image_url", "image_url": url if arg else {"url": url}})
        else:
            parts.append({"type": kind, "text": take(arg)})
    return {**meta, "content": parts}, k


def parse(text: str) -> list[Conversation]:
    lines = text.split("\n")
    out: list[Conversation] = []
    k = 0
    while k < len(lines):
        line = lines[k]
        where = f"line {k + 1}"
        if line.startswith(SESSION_MARK):
            head = _json_after(line, SESSION_MARK, where)
            out.append(
                Conversation(
                    source="chatkeep",
                    source_id=None,
                    title=str(head.get("name") or ""),
                    created_ms=head.get("createdAt")
                    if isinstance(head.get("createdAt"), int)
                    else None,
                    fixed_id=head.get("id") if isinstance(head.get("id"), str) else None,
                    pinned=bool(head.get("pinned")),
                )
            )
            k += 1
        elif line.startswith(ENTRY_MARK):
            if not out:
                raise ValueError(f"{where}: entry before any session")
            entry, k = _entry(_json_after(line, ENTRY_MARK, where), lines, k + 1, where)
            out[-1].entries.append(entry)
        else:
            k += 1
    return out


def read(inp: Input) -> Iterator[Conversation]:
    with inp.open() as fh:
        try:
            text = fh.read().decode("utf-8")
            convs = parse(text)
        except RecursionError:
            raise too_deep(inp.path) from None
        except (UnicodeDecodeError, ValueError, TypeError, IndexError, KeyError) as exc:
            raise bad_file(inp.path, f"not a chatkeep Markdown export ({exc})") from None
    if not convs:
        raise bad_file(inp.path, "no chatkeep session blocks in this Markdown file")
    for c in convs:
        if c.entries:
            yield c


def looks_like(head: bytes) -> bool:
    return SESSION_MARK.encode() in head
