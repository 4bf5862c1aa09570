"""Shared output helpers: stable JSON, and human renderings that never print base64."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from .words import plural


@contextmanager
def working(message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (nothing when stderr is not a terminal)."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console  # lazy: only interactive runs draw a spinner
    from rich.text import Text

    # the message may quote a file name: a Text, so brackets in it are never read as markup
    with Console(stderr=True).status(Text(plain(message))):
        yield


#: C0 controls (but tab and newline), DEL and C1 controls: a stored name or text holding them
#: could move the cursor or recolour the terminal, so human output shows them escaped.
_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0))}


def plain(text: Any) -> str:
    """User text for the terminal, read as nothing but text: control characters (escape
    sequences included) are shown as ``\\xNN``; rich markup is never applied to it (tables get
    it as ``rich.text.Text``)."""
    return str(text).translate(_CONTROL)


#: DEL and the C1 controls, which ``json.dumps(ensure_ascii=False)`` leaves raw (C0 it escapes):
#: written as ``\u00NN`` they read back the same and never reach the terminal as controls.
_JSON_CONTROL = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}


def json_text(value: Any, *, indent: int | None = 2) -> str:
    """The stable JSON of every ``--json`` output, with its final newline (no raw controls).

    Strict JSON: the library bounds every number it reports (SPEC §12), and a non-finite float
    that got past that anyway is written as ``null``, never as ``Infinity`` or ``NaN``, which
    strict parsers refuse."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False)
    except ValueError:  # an out-of-range float: the only value allow_nan=False refuses
        text = json.dumps(_finite(value), ensure_ascii=False, indent=indent, allow_nan=False)
    return text.translate(_JSON_CONTROL) + "\n"


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def echo_json(value: Any) -> None:
    sys.stdout.write(json_text(value))


def columns_text(headers: tuple[str, ...], rows: list[list[str]], *, bold: bool) -> str:
    """Rows as left-aligned columns under a header (in bold when ``bold``), two spaces apart,
    each line ending in a newline.

    Plain text on purpose: listing commands start in a few tens of milliseconds, and a table
    library costs more than that to import and lay out a long list."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: list[str] | tuple[str, ...]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()

    head = line(headers)
    if bold:
        head = f"\x1b[1m{head}\x1b[0m"  # what click.style(head, bold=True) gives
    return head + "\n" + "\n".join(line(r) for r in rows) + "\n"


def human_size(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def image_label(info: dict[str, Any]) -> str:
    kind = info["mime"].split("/")[-1]
    size = f"{info['width']}×{info['height']} " if info["width"] else ""
    return f"[image {size}{kind}, {human_size(info['bytes'])}]"


def render_entry(view: dict[str, Any]) -> str:
    """One line (or a few) for people: attachments as chips, images as sizes."""
    head = f"#{view['index']} {view['role']}"
    flags = [k for k in ("imagesSeen", "summarized", "interrupted", "unanswered") if view.get(k)]
    if flags:
        head += " (" + ", ".join(flags) + ")"
    reasoning = view.get("reasoning")
    if isinstance(reasoning, str) and reasoning:  # folded: `--json` has it whole
        head += f" [reasoning: {len(reasoning):,} chars]"
    if "attachment" in view:
        a = view["attachment"]
        images = [image_label(p) for p in view["content"] if p["type"] == "image"]
        chip = f"[attached: {a['title'] or a['url'] or 'page'}"
        if a["url"]:
            chip += f" — {a['url']}"
        chip += (
            f", {a['chars']:,} chars"
            + (f", {plural(len(images), 'image')}" if images else "")
            + "]"
        )
        return f"{head}: {chip}"
    pieces = []
    for p in view["content"]:
        pieces.append(p["text"] if p["type"] == "text" else image_label(p))
    return f"{head}: " + " ".join(pieces)
