"""The one result type of the extraction layer, its limits, and small shared helpers.

Every extractor (web page, local file, PDF, image, video transcript) returns an
:class:`Extracted`. Extraction never writes to the store: turning an ``Extracted`` into a history
entry (header, ``attachId``, change note) is the caller's job.

Contract of ``Extracted``:

- ``kind`` is ``"page"`` (fetched web page or text), ``"file"`` (local HTML/Markdown/text),
  ``"pdf"``, ``"image"`` or ``"video"``.
- ``text`` is at most ``max_chars`` long; when the source held more, it was cut and
  ``truncated`` is ``True``. A PDF keeps its ``## Figures`` section whole: the body is cut first.
- ``images`` are ``data:image/<type>;base64,…`` URLs in document order (each image under its
  own type: :mod:`chatkeep.attach.images`);
  ``captions[k]`` labels ``images[k]`` when captions are given (PDF figures).
- ``fmt`` names the source format (``"html"``, ``"markdown"``, ``"text"``, ``"pdf"``, ``"png"``,
  ``"vtt"``, …); ``video_src`` is ``{"platform": str, "url": str}`` for video transcripts only.

This module imports only the standard library.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from ..constants import DEFAULT_MAX_SOURCE_BYTES, DEFAULT_MAX_TEXT_CHARS

__all__ = [
    "DEFAULT_MAX_CHARS",
    "DEFAULT_MAX_FETCH_BYTES",
    "DEFAULT_MAX_FILE_BYTES",
    "DEFAULT_TIMEOUT",
    "Extracted",
    "cap_text",
    "data_url",
    "decode_text",
    "looks_binary",
    "markdown_title",
]

DEFAULT_MAX_CHARS = DEFAULT_MAX_TEXT_CHARS
DEFAULT_MAX_FETCH_BYTES = 20 * 1024 * 1024
DEFAULT_MAX_FILE_BYTES = DEFAULT_MAX_SOURCE_BYTES
DEFAULT_TIMEOUT = 15.0

KINDS = ("page", "file", "pdf", "image", "video")


@dataclass(frozen=True)
class Extracted:
    """What one source yielded: text for the model, pixels to keep, and where it came from."""

    kind: str
    title: str
    url: str
    text: str
    images: tuple[str, ...]
    fmt: str | None
    video_src: dict | None
    captions: tuple[str, ...] = ()
    truncated: bool = False

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")


def cap_text(text: str, max_chars: int) -> tuple[str, bool]:
    """``(text, False)`` when it fits in ``max_chars``, else the first ``max_chars`` and ``True``.

    ``max_chars <= 0`` means the built-in cap (1,000,000), like ``maxTextChars: 0`` in settings.
    """
    limit = max_chars if max_chars > 0 else DEFAULT_MAX_CHARS
    if len(text) <= limit:
        return text, False
    return text[:limit], True


def data_url(data: bytes, mime: str) -> str:
    """``data:<mime>;base64,<data>``."""
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


#: Bytes that never occur in text (C0 controls but tab, newline, form feed, carriage return and
#: escape); a sample where more than 1 in 100 bytes is one of them is binary.
_BINARY_BYTES = bytes(set(range(32)) - {9, 10, 12, 13, 27})


def looks_binary(data: bytes) -> bool:
    """True for data that is not text in any encoding: a NUL or many control bytes in the
    first 8 KiB (a byte-order mark says text: UTF-16 holds NUL bytes)."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return False
    sample = data[:8192]
    if b"\x00" in sample:
        return True
    controls = len(sample) - len(sample.translate(None, _BINARY_BYTES))
    return controls * 100 > len(sample)


_BOMS = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe", "utf-16"),
    (b"\xfe\xff", "utf-16"),
)


def decode_text(data: bytes, declared: str | None = None) -> str:
    """Decode bytes of a text document: BOM, then the declared charset, then UTF-8, then a guess.

    Never raises: the last resort replaces undecodable bytes.
    """
    for bom, codec in _BOMS:
        if data.startswith(bom):
            return data.decode(codec, errors="replace")
    if declared:
        try:
            return data.decode(declared)
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    guess = _guess_encoding(data)
    if guess:
        return data.decode(guess, errors="replace")
    return data.decode("utf-8", errors="replace")


_CJK_CODECS = (
    "gb18030",
    "gbk",
    "gb2312",
    "big5",
    "big5hkscs",
    "shift_jis",
    "cp932",
    "euc_jp",
    "euc_kr",
    "cp949",
)
_LATIN_CODECS = (
    "cp1250",
    "cp1257",
    "cp775",
    "cp852",
    "iso8859_2",
    "iso8859_10",
    "iso8859_13",
    "iso8859_15",
    "latin_1",
    "mac_latin2",
    "mac_roman",
)


def _guess_encoding(data: bytes) -> str | None:
    """charset_normalizer's guess, nudged towards the codecs an ambiguous short text most likely uses.

    Short samples are ambiguous between single-byte code pages; a CJK codec that decodes the
    bytes is preferred over a single-byte guess, and Windows-1252 over other Latin code pages.
    """
    from charset_normalizer import from_bytes  # lazy: only text of an unknown encoding needs it

    matches = [m.encoding for m in from_bytes(data)]
    if not matches:
        return None
    best = matches[0]
    if best not in _CJK_CODECS:
        cjk = next((c for c in matches[:6] if c in _CJK_CODECS), None)
        if cjk:
            return cjk
    if best in _LATIN_CODECS and "cp1252" in matches[:6]:
        return "cp1252"
    return best


_ATX_RE = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_SETEXT_RE = re.compile(r"^\s{0,3}(=+|-+)\s*$")
_FRONT_TITLE_RE = re.compile(r"^title:\s*(.+?)\s*$", re.IGNORECASE)


def markdown_title(text: str) -> str:
    """The first heading of a Markdown/text document (front-matter ``title:``, ATX or setext).

    ``""`` when there is none.
    """
    lines = text.splitlines()
    start = 0
    if lines and lines[0].strip() == "---":
        for i in range(1, min(len(lines), 200)):
            if lines[i].strip() in ("---", "..."):
                for line in lines[1:i]:
                    m = _FRONT_TITLE_RE.match(line)
                    if m:
                        return m.group(1).strip("'\"").strip()
                start = i + 1
                break
    in_fence = False
    for i in range(start, len(lines)):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        m = _ATX_RE.match(line)
        if m:
            return m.group(1).strip()
        if (
            line.strip()
            and i + 1 < len(lines)
            and _SETEXT_RE.match(lines[i + 1])
            and not _SETEXT_RE.match(line)
        ):
            return line.strip()
    return ""


def name_title(path_or_url: str) -> str:
    """A readable title from a file name or the last segment of a URL path."""
    if "://" in path_or_url:
        parts = urlsplit(path_or_url)
        segment = unquote(parts.path.rstrip("/").rsplit("/", 1)[-1])
        return segment or parts.hostname or path_or_url
    return Path(path_or_url).name
