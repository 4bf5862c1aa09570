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

An entry's reasoning, tool calls and tool results are written after its text as folded
sections (``<details>``, the text fenced), and its time in its heading::

    ## Assistant · gpt-4o · 2026-12-01 10:00 UTC
    <!-- chatkeep-entry {"role": "assistant", "layout": [["str", 1]], "folds": [["reasoning", 2], …]} -->
    The answer.
    <details><summary>Reasoning</summary>

    ```text
    two lines
    of thought
    ```
    </details>

An export of a profile that holds nothing is a heading, the mark ``<!-- chatkeep-empty
{"sessions": 0} -->`` and a sentence saying so: it imports back as nothing, without an error.
"""

from __future__ import annotations

import datetime as _dt
import html
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..entries import image_part_url, is_attachment, is_image_part
from .jsonread import too_deep
from .model import Conversation
from .source import Input, bad_file

SESSION_MARK = "<!-- chatkeep-session "
ENTRY_MARK = "<!-- chatkeep-entry "
EMPTY_MARK = "<!-- chatkeep-empty "
END = " -->"
#: The fields written as folded sections after an entry's text, in this order.
FOLDED = ("reasoning", "toolCalls", "toolResult")
_TICKS = re.compile("`+")


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
    when = _when(entry.get("createdAt"))
    return f"## {role}{' · ' + when if when else ''}"


def _fold(summary: str, text: str) -> tuple[list[str], int]:
    """A folded section: its lines, and how many lines its text has."""
    longest = max((len(m) for m in _TICKS.findall(text)), default=0)
    fence = "`" * max(3, longest + 1)
    body = text.split("\n")
    label = html.escape(" ".join(summary.split()))
    lines = [f"<details><summary>{label}</summary>", "", fence + "text", *body, fence]
    return [*lines, "</details>"], len(body)


def _folded(key: str, value: Any) -> bool:
    """Whether a field is written as folded sections (else it stays in the entry's comment)."""
    if key == "reasoning":
        return isinstance(value, str)
    return (
        key in FOLDED
        and isinstance(value, list)
        and bool(value)
        and all(isinstance(r, dict) for r in value)
    )


def _folds(entry: dict[str, Any]) -> tuple[list[list[Any]], list[str]]:
    """The folds of an entry's reasoning, tool calls and results: layout and lines."""
    layout: list[list[Any]] = []
    lines: list[str] = []
    reasoning = entry.get("reasoning")
    if isinstance(reasoning, str):
        more, n = _fold("Reasoning", reasoning)
        layout.append(["reasoning", n])
        lines += more
    for kind, key, text_key, label in (
        ("call", "toolCalls", "arguments", "Tool call"),
        ("result", "toolResult", "content", "Tool result"),
    ):
        records: list[dict[str, Any]] = entry[key] if _folded(key, entry.get(key)) else []
        for rec in records:
            rest = {k: v for k, v in rec.items() if k != text_key}
            name = rec.get("name")
            more, n = _fold(f"{label}: {name}" if name else label, str(rec.get(text_key, "")))
            layout.append([kind, n, rest])
            lines += more
    return layout, lines


def _entry_lines(entry: dict[str, Any]) -> list[str]:
    content = entry.get("content")
    meta = {k: v for k, v in entry.items() if k != "content" and not _folded(k, v)}
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
    folds, folded = _folds(entry)
    if folds:
        meta["folds"] = folds
    return [_heading(entry), ENTRY_MARK + _meta(meta) + END, *body, *folded, ""]


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
    k = -1
    for k, s in enumerate(sessions):
        if k:
            yield ""
        yield from write_session(s)
    if k < 0:  # nothing to export: a document that says so, and imports back as nothing
        yield "# chatkeep export"
        yield EMPTY_MARK + _meta({"sessions": 0}) + END
        yield "_This export holds no conversations: the profile was empty._"


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
    folds = meta.pop("folds", [])
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
        entry: dict[str, Any] = {**meta, "content": take(layout[0][1])}
        return _read_folds(entry, folds, lines, k, where)
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
    return _read_folds({**meta, "content": parts}, folds, lines, k, where)


def _read_folds(
    entry: dict[str, Any], folds: Any, lines: list[str], k: int, where: str
) -> tuple[dict[str, Any], int]:
    """The folded sections after an entry's text, back into its fields."""
    if not isinstance(folds, list):
        raise ValueError(f"{where}: an entry's folds are not a list")
    for fold in folds:
        if not (isinstance(fold, list) and len(fold) >= 2 and isinstance(fold[1], int)):
            raise ValueError(f"{where}: a fold is not [kind, lines, …]")
        kind, n = fold[0], fold[1]
        if n < 1 or k + n + 5 > len(lines) or not lines[k].startswith("<details>"):
            raise ValueError(f"{where}: a folded section is shorter than its layout says")
        text = "\n".join(lines[k + 3 : k + 3 + n])
        k += n + 5
        if kind == "reasoning":
            entry["reasoning"] = text
        elif kind in ("call", "result") and len(fold) == 3 and isinstance(fold[2], dict):
            key, text_key = (
                ("toolCalls", "arguments") if kind == "call" else ("toolResult", "content")
            )
            entry.setdefault(key, []).append({**fold[2], text_key: text})
        else:
            raise ValueError(f"{where}: unknown fold {kind!r}")
    return entry, k


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
        if is_empty(inp.head):
            return
        raise bad_file(inp.path, "no chatkeep session blocks in this Markdown file")
    for c in convs:
        if c.entries:
            yield c


def looks_like(head: bytes) -> bool:
    return SESSION_MARK.encode() in head or is_empty(head)


def is_empty(head: bytes) -> bool:
    """chatkeep's Markdown export of a profile that held nothing."""
    return EMPTY_MARK.encode() in head and SESSION_MARK.encode() not in head
