"""Video transcripts (WebVTT or SubRip) → a timestamped :class:`Extracted`.

Contract of :func:`extract_video`:

- The format is detected from the content (a ``WEBVTT`` header, else SRT-style numbered cues);
  the file extension is not trusted.
- Each cue becomes one line ``[mm:ss] text`` (``[h:mm:ss]`` from one hour on), the time being the
  cue start rounded down to the second. Markup is stripped (``<i>``, ``<c.color>``, inline
  ``<00:00:01.000>`` stamps, ``{\\an8}``), entities are unescaped, a voice tag ``<v Ann>`` becomes
  ``Ann: ``. Repeated text is dropped: a cue equal to the previous one, and the rolling lines of
  auto-generated captions that repeat what the previous cue already said.
- ``video_src = {"platform": <youtube|vimeo|bilibili|…, else "web">, "url": url}``.
- A transcript without a single timed cue raises :class:`~chatkeep.errors.AttachError`, as do a
  missing file and a non-http(s) video URL.

Standard library only.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from urllib.parse import urlsplit

from ..errors import AttachError, MissingFile, NotAFile
from .sources import DEFAULT_MAX_CHARS, DEFAULT_MAX_FILE_BYTES, Extracted, cap_text, decode_text

__all__ = ["extract_video", "format_timestamp", "parse_transcript", "video_platform"]

_TIME = r"(?:(\d+):)?([0-5]?\d):([0-5]\d)(?:[.,](\d{1,3}))?"
_TIMING_RE = re.compile(rf"^\s*{_TIME}\s*-->\s*{_TIME}(?:\s+.*)?$")
_TAG_RE = re.compile(r"<[^<>]*>")
_VOICE_RE = re.compile(r"<v(?:\.[\w.-]+)?\s+([^>]+)>")
_ASS_RE = re.compile(r"\{\\[^{}]*\}")
_WS_RE = re.compile(r"\s+")

#: host suffix → platform name for ``video_src``.
_PLATFORMS = (
    (("youtube.com", "youtu.be", "youtube-nocookie.com"), "youtube"),
    (("vimeo.com",), "vimeo"),
    (("bilibili.com", "b23.tv"), "bilibili"),
    (("twitch.tv",), "twitch"),
    (("dailymotion.com", "dai.ly"), "dailymotion"),
    (("tiktok.com",), "tiktok"),
    (("ted.com",), "ted"),
    (("loom.com",), "loom"),
    (("x.com", "twitter.com"), "x"),
    (("facebook.com", "fb.watch"), "facebook"),
    (("instagram.com",), "instagram"),
    (("rumble.com",), "rumble"),
    (("nicovideo.jp", "nico.ms"), "niconico"),
    (("ixigua.com",), "ixigua"),
    (("douyin.com",), "douyin"),
    (("youku.com",), "youku"),
)


def video_platform(url: str) -> str:
    """``youtube``, ``vimeo``, ``bilibili``, … from the URL's host; ``"web"`` for other hosts."""
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    for suffixes, name in _PLATFORMS:
        if any(host == s or host.endswith("." + s) for s in suffixes):
            return name
    return "web"


def format_timestamp(seconds: int) -> str:
    """``[mm:ss]`` below one hour, ``[h:mm:ss]`` from one hour on."""
    h, rest = divmod(max(0, int(seconds)), 3600)
    m, s = divmod(rest, 60)
    return f"[{h}:{m:02d}:{s:02d}]" if h else f"[{m:02d}:{s:02d}]"


def _seconds(groups: tuple[str | None, ...]) -> int:
    h, m, s = groups[0], groups[1], groups[2]
    return int(h or 0) * 3600 + int(m or 0) * 60 + int(s or 0)


def _clean_cue_line(line: str) -> str:
    line = _VOICE_RE.sub(lambda m: m.group(1).strip() + ": ", line)
    line = _TAG_RE.sub("", line)
    line = _ASS_RE.sub("", line)
    line = html.unescape(line).replace("\u200b", "")
    return _WS_RE.sub(" ", line).strip()


def _raw_cues(text: str) -> list[tuple[int, list[str]]]:
    """``[(start_seconds, raw_lines)]``: a timing line opens a cue, an empty line closes it.

    Only truly empty lines end a cue (auto-generated VTT has whitespace-only cue lines); an SRT
    index left over before the next timing line is dropped.
    """
    cues: list[tuple[int, list[str]]] = []
    current: list[str] | None = None
    for line in text.split("\n"):
        m = _TIMING_RE.match(line)
        if m:
            if current and current[-1].strip().isdigit():
                current.pop()
            current = []
            cues.append((_seconds(m.groups()[:3]), current))
        elif line == "":
            current = None
        elif current is not None:
            current.append(line)
    return cues


def parse_transcript(text: str) -> tuple[str, list[tuple[int, str]], str]:
    """``(fmt, [(start_seconds, text), ...], header_title)`` of a VTT or SRT transcript.

    Cues are cleaned and de-duplicated; ``fmt`` is ``"vtt"`` or ``"srt"``. An empty cue list
    means the text held no timed cue.
    """
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    first = text.lstrip().split("\n", 1)[0]
    fmt = "vtt" if first.startswith("WEBVTT") else "srt"
    header_title = ""
    if fmt == "vtt":
        rest = first[len("WEBVTT") :].strip(" \t-")
        header_title = "" if rest.upper() == "FILE" else rest
    cues: list[tuple[int, str]] = []
    previous: list[str] = []  # lines of the previous cue: rolling captions repeat them
    for start, raw in _raw_cues(text):
        lines = [ln for ln in (_clean_cue_line(r) for r in raw) if ln]
        fresh = [ln for ln in lines if ln not in previous]
        if lines:
            previous = lines
        if fresh:
            cues.append((start, " ".join(fresh)))
    return fmt, cues, header_title


def _read_transcript(path: Path, max_bytes: int) -> bytes:
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise MissingFile(
            f"transcript file not found: {path}",
            path=str(path),
            hint="check the path of the .vtt/.srt file",
        ) from None
    except OSError as exc:
        raise AttachError(
            f"cannot read transcript {path}: {exc.strerror or exc}",
            hint="check the path and its permissions",
        ) from None
    if not path.is_file():
        raise NotAFile(
            f"{path} is not a file", path=str(path), hint="pass the path of a .vtt or .srt file"
        )
    if size > max_bytes:
        raise AttachError(
            f"transcript {path.name} is {size:,} bytes, over the {max_bytes:,}-byte limit",
            hint="split the transcript or attach a shorter one",
        )
    try:
        with path.open("rb") as fh:
            return fh.read(max_bytes + 1)[:max_bytes]
    except OSError as exc:
        raise AttachError(
            f"cannot read transcript {path}: {exc.strerror or exc}",
            hint="check the file's permissions",
        ) from None


def extract_video(
    url: str,
    transcript_path: str | Path,
    *,
    title: str | None = None,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
) -> Extracted:
    """A video attachment: the transcript as ``[mm:ss] text`` lines, stamped with ``video_src``.

    ``title`` defaults to the title in a ``WEBVTT - <title>`` header, else the transcript's file
    name without its extension.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AttachError(
            f"not a video URL: {url!r}",
            hint="pass the http(s) address of the video the transcript belongs to",
        )
    url = url.strip()
    path = Path(transcript_path).expanduser()
    raw = _read_transcript(path, max_bytes)
    if b"\x00" in raw[:4096] and not raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise AttachError(
            f"{path.name} is not a text transcript",
            hint="attach a WebVTT (.vtt) or SubRip (.srt) file",
        )
    fmt, cues, header_title = parse_transcript(decode_text(raw))
    if not cues:
        raise AttachError(
            f"{path.name} holds no timed captions (not a WebVTT or SRT transcript)",
            hint="export the transcript as .vtt or .srt with 'HH:MM:SS.mmm --> HH:MM:SS.mmm' cue times",
        )
    body = "\n".join(f"{format_timestamp(t)} {line}" for t, line in cues)
    text, truncated = cap_text(body, max_chars)
    return Extracted(
        kind="video",
        title=(title or "").strip() or header_title or path.stem,
        url=url,
        text=text,
        images=(),
        fmt=fmt,
        video_src={"platform": video_platform(url), "url": url},
        truncated=truncated,
    )
