"""The ``html`` export: one self-contained page, safe to share.

No script, no external resource: a Content-Security-Policy allows nothing but inline styles
and ``data:`` images; every stored text (names, entries, attachments, model names) is escaped;
images are embedded as ``<img>`` only when they are base64 image data URLs. Attachments are
folded under ``<details>`` with their full text, and so are an answer's reasoning, tool calls
and tool results; each message shows its time. An export of an empty profile is a page that
says it holds no conversations.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Iterator
from html import escape
from typing import Any

from .. import dataurl
from ..entries import first_text, image_part_url, is_attachment, is_image_part

CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
STYLE = """
body{font:15px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;
color:#1b1b1b;background:#fff}
h1{font-size:1.4rem;margin-top:2.5rem}.meta{color:#555;font-size:.85rem}
.e{border-radius:.6rem;padding:.6rem .9rem;margin:.7rem 0;white-space:pre-wrap;
overflow-wrap:anywhere}.user{background:#e8f0fe}.assistant{background:#f3f3f3}
.who{font-weight:600;font-size:.8rem;color:#444;white-space:normal}
details{margin:.7rem 0;border:1px solid #ccc;border-radius:.6rem;padding:.4rem .9rem}
details pre{white-space:pre-wrap;overflow-wrap:anywhere}img{max-width:100%;height:auto;
display:block;margin:.4rem 0}
@media (prefers-color-scheme:dark){body{background:#121212;color:#e6e6e6}.meta,.who{color:#bbb}
.user{background:#1f2a3d}.assistant{background:#262626}details{border-color:#444}}
"""


def _when(ms: Any) -> str:
    if not isinstance(ms, int | float) or isinstance(ms, bool) or ms <= 0:
        return ""
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, _dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return ""


def _pieces(entry: dict[str, Any]) -> Iterator[str]:
    content = entry.get("content")
    if isinstance(content, str):
        yield escape(content)
        return
    n = 0
    for part in content if isinstance(content, list) else []:
        if is_image_part(part):
            n += 1
            url = image_part_url(part)
            if dataurl.is_image_data_url(url):
                yield f'<img src="{escape(url, quote=True)}" alt="image {n}">'
            else:
                yield f"[image {n}]"
        elif isinstance(part, dict):
            yield escape(str(part.get("text", "")))


def _entry(entry: dict[str, Any]) -> str:
    body = "".join(_pieces(entry))
    if is_attachment(entry):
        first = first_text(entry)
        title = next((ln[7:] for ln in first.split("\n") if ln.startswith("Title: ")), "")
        label = escape(f"Attachment: {title}" if title else "Attachment")
        return f"<details><summary>{label}</summary><pre>{body}</pre></details>"
    role = "user" if entry.get("role") == "user" else "assistant"
    who = "You" if role == "user" else "Assistant"
    prov = entry.get("provider")
    if role == "assistant" and isinstance(prov, dict) and prov.get("model"):
        who += f" · {prov['model']}"
    if entry.get("interrupted"):
        who += " (interrupted)"
    when = _when(entry.get("createdAt"))
    if when:
        who += f" · {when}"
    folds = "".join(_folds(entry))
    return f'<div class="e {role}"><div class="who">{escape(who)}</div>{body}{folds}</div>'


def _folds(entry: dict[str, Any]) -> Iterator[str]:
    """An answer's reasoning, tool calls and tool results, folded under its text."""
    if isinstance(entry.get("reasoning"), str):
        yield f"<details><summary>Reasoning</summary><pre>{escape(entry['reasoning'])}</pre></details>"
    for label, key, text_key in (
        ("Tool call", "toolCalls", "arguments"),
        ("Tool result", "toolResult", "content"),
    ):
        for rec in entry.get(key) or []:
            if not isinstance(rec, dict):
                continue
            name = rec.get("name")
            summary = escape(f"{label}: {name}" if isinstance(name, str) else label)
            text = escape(str(rec.get(text_key, "")))
            yield f"<details><summary>{summary}</summary><pre>{text}</pre></details>"


def write(sessions: Iterable[dict[str, Any]], title: str) -> Iterator[str]:
    yield "<!DOCTYPE html>"
    yield '<html lang="en"><head><meta charset="utf-8">'
    yield f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
    yield '<meta name="viewport" content="width=device-width, initial-scale=1">'
    yield '<meta name="referrer" content="no-referrer">'
    yield f"<title>{escape(title)}</title><style>{STYLE}</style></head><body>"
    wrote = False
    for s in sessions:
        wrote = True
        history = s.get("history") or []
        when = _when(s.get("createdAt"))
        yield f"<section><h1>{escape(str(s.get('name') or 'Untitled'))}</h1>"
        meta = f"{when} · " if when else ""
        yield f'<p class="meta">{escape(meta)}{len(history)} entries</p>'
        for entry in history:
            yield _entry(entry)
        yield "</section>"
    if not wrote:
        yield '<p class="meta">This export holds no conversations: the profile was empty.</p>'
    yield "</body></html>"
