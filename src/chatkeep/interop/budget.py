"""What an import file may cost, checked before the memory or the time is spent.

- Only **regular files** are read: :func:`open_regular` opens without blocking (a FIFO would
  wait forever for a writer) and checks the opened file itself (no race with a rename), so a
  FIFO, a device such as ``/dev/zero`` or a symlink to one is refused.
- Every read is **bounded** (:class:`Bounded`): a member's declared size is checked first, and
  its actual bytes are counted while they are read, so a zip member that inflates past what it
  declared, or a file that grows, stops at the cap.
- An image member holds at most :data:`IMAGE_MAX_BYTES` (``maxSourceBytes``) and
  :data:`IMAGE_MAX_PIXELS` (50 megapixels, read from its header before decoding,
  :func:`image_problem`); a JSON member at most :data:`JSON_MEMBER_MAX_BYTES`; a JSON Lines line
  :data:`LINE_MAX_BYTES`; a run of blank space between JSON values :data:`BLANK_MAX`.

The caps are the defaults of SPEC §12; an export that needs more is split or its images scaled
down (the hint says so). Nothing here writes anything.
"""

from __future__ import annotations

import io
import os
import stat
import warnings
from typing import IO, Any

from ..constants import DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_SOURCE_BYTES

IMAGE_MAX_BYTES = DEFAULT_MAX_SOURCE_BYTES
IMAGE_MAX_PIXELS = DEFAULT_MAX_IMAGE_PIXELS
#: A JSON member of an archive or folder (ChatGPT's ``conversations.json`` of a long account
#: is a few hundred MB).
JSON_MEMBER_MAX_BYTES = 2 << 30
#: One JSON Lines line: one conversation with its images as data URLs.
LINE_MAX_BYTES = 128 << 20
#: Blank space in a row between JSON values (or JSON Lines lines): no exporter writes more.
BLANK_MAX = 16 << 20
#: Blank JSON Lines lines in a row (each costs a read, so a file of newlines is cut short).
BLANK_LINES_MAX = 1 << 20

MB = 1 << 20


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


class NotRegular(OSError):
    """The path is not a regular file (its kind in ``args[0]``)."""


def open_regular(path: str) -> IO[bytes]:
    """``path`` opened for binary reading when it is a regular file (symlinks followed to
    one); :class:`NotRegular` naming what it is otherwise. Never blocks on a FIFO."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegular(_kind(mode))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def regular_problem(path: str) -> str | None:
    """Why ``path`` (symlinks followed) is not a regular file or a directory, or ``None``."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # opening it says why
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return f"it is {_kind(mode)}, not a regular file"


class TooLarge(Exception):
    """A bounded read went past its cap (the message says what and how much)."""


class Bounded(io.RawIOBase):
    """A read-only stream that fails with :class:`TooLarge` once more than ``limit`` bytes
    came through it."""

    def __init__(self, raw: IO[bytes], limit: int, what: str) -> None:
        self._raw = raw
        self._left = limit
        self._limit = limit
        self._what = what

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        want = min(len(b), self._left + 1)
        data = self._raw.read(want)
        n = len(data)
        if n > self._left:
            raise TooLarge(over(self._what, self._limit))
        self._left -= n
        b[:n] = data
        return n


def over(what: str, limit: int) -> str:
    return f"{what} is larger than {limit / MB:g} MB"


def read_capped(raw: IO[bytes], limit: int, what: str) -> bytes:
    """All of ``raw``, or :class:`TooLarge` when it holds more than ``limit`` bytes (at most
    ``limit + 1`` bytes are ever held)."""
    data = raw.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(over(what, limit))
    return data


def image_problem(data: bytes, what: str) -> str | None:
    """Why ``data`` cannot be an imported image: its header declares more than
    :data:`IMAGE_MAX_PIXELS` pixels. ``None`` when it is within the limit or not an image
    Pillow knows (the reader then decides by its type). Only the header is read."""
    from PIL import Image  # lazily: Pillow is heavy, and only image members need it

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as probe:
                w, h = probe.size
    except Image.DecompressionBombError:
        return f"{what} declares more than {IMAGE_MAX_PIXELS / 1e6:g} megapixels"
    except Exception:  # not an image Pillow reads: judged by its type elsewhere
        return None
    if w * h > IMAGE_MAX_PIXELS:
        return (
            f"{what} is {w}×{h} = {w * h / 1e6:.1f} megapixels, over the "
            f"{IMAGE_MAX_PIXELS / 1e6:g}-megapixel limit"
        )
    return None
