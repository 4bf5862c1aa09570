"""Reading an import file: what kind of file it is, streaming its JSON, counting progress.

An :class:`Input` is one path — a JSON or JSON Lines file, a zip archive, a directory of an
unpacked export, a SQLite database or a Markdown file. JSON arrays are streamed item by item
(:func:`.jsonread.array_items`), so a 1 GB export is read with the memory of its largest
conversation, and no file nests deeper than :data:`.jsonread.FILE_MAX_DEPTH` levels; bytes
read are reported to the ``progress`` callback as ``(done, total)``. A conversation that cannot
be read is a :class:`~.model.Skipped` with its reason (:func:`read_conversations`).

Budgets are checked before memory is spent (:mod:`.budget`): only regular files are opened (a
FIFO, a device or a symlink to one is refused without blocking), every member is read with a
cap on its declared and its actual size (an image at most ``maxSourceBytes`` and 50 megapixels,
a JSON member :data:`.budget.JSON_MEMBER_MAX_BYTES`), a JSON Lines line at most
:data:`.budget.LINE_MAX_BYTES`, and runs of blank space at most :data:`.budget.BLANK_MAX`.

Every failure to read or parse is raised as :class:`chatkeep.errors.InvalidValue` with a hint;
nothing here writes anything.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import zipfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from ..errors import InvalidValue, MissingFile
from .budget import (
    BLANK_LINES_MAX,
    BLANK_MAX,
    IMAGE_MAX_BYTES,
    JSON_MEMBER_MAX_BYTES,
    LINE_MAX_BYTES,
    MB,
    Bounded,
    NotRegular,
    TooLarge,
    image_problem,
    open_regular,
    over,
    read_capped,
    regular_problem,
)
from .jsonread import FILE_MAX_DEPTH, array_items, bad_file, document, nests_deeper, too_deep
from .model import Skipped, title_of

Progress = Callable[[int, int], None]
_REGULAR_HINT = "import a regular file (not a FIFO, a device or a link to one)"
_SIZE_HINT = (
    "this is not an export chatkeep can read whole; if it is yours, split it or scale its images "
    "down (see docs/import-export.md)"
)
_LINE_HINT = "JSON Lines holds one conversation per line; check where the file came from"

SQLITE_MAGIC = b"SQLite format 3\x00"
ZIP_MAGIC = b"PK\x03\x04"


class _Counting(io.RawIOBase):
    """A read-only stream that reports how many bytes went through it."""

    def __init__(self, raw: IO[bytes], tick: Callable[[int], None]) -> None:
        self._raw = raw
        self._tick = tick

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        data = self._raw.read(len(b))
        n = len(data)
        b[:n] = data
        if n:
            self._tick(n)
        return n


def checked_path(path: Any) -> str:
    """``path`` as a usable file-system path string, or ``InvalidValue`` saying why not."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str) or not path:
        raise InvalidValue(
            f"a file path is a non-empty string, got {type(path).__name__}",
            hint="pass the path of the file",
        )
    if "\x00" in path:
        raise InvalidValue("a file path cannot contain NUL", hint="check the path")
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidValue("the file path is not valid Unicode", hint="check the path") from None
    return path


class Input:
    """One import path and the members (JSON documents) it is made of."""

    def __init__(self, path: str, progress: Progress | None = None) -> None:
        self.path = path
        self._progress = progress
        self._done = 0
        self._zip: zipfile.ZipFile | None = None
        if not os.path.exists(path):
            raise MissingFile(f"cannot import {path}: no such file", path=path)
        why = regular_problem(path)
        if why:
            raise bad_file(path, why, _REGULAR_HINT)
        self.is_dir = os.path.isdir(path)
        self.head = b""
        if not self.is_dir:
            try:
                with open_regular(path) as fh:
                    self.head = fh.read(4096)
            except NotRegular as exc:
                raise bad_file(path, f"it is {exc}, not a regular file", _REGULAR_HINT) from None
            except OSError as exc:
                raise bad_file(
                    path, exc.strerror or str(exc), "check the file's permissions"
                ) from None
        self.is_sqlite = self.head.startswith(SQLITE_MAGIC)
        self.is_zip = self.head.startswith(ZIP_MAGIC)
        if self.is_zip:
            try:
                self._zip = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError) as exc:
                raise bad_file(path, f"not a readable zip archive ({exc})") from None
        self.total = self._total()

    def close(self) -> None:
        if self._zip is not None:
            self._zip.close()

    # -- members ----------------------------------------------------------------------------
    def names(self) -> list[str]:
        """Member names: zip entries, files of a directory (relative), or the file itself."""
        if self._zip is not None:
            return [n for n in self._zip.namelist() if not n.endswith("/")]
        if self.is_dir:
            out = []
            for root, _dirs, files in os.walk(self.path):
                for f in files:
                    out.append(os.path.relpath(os.path.join(root, f), self.path))
            return sorted(out)
        return [os.path.basename(self.path)]

    def _size(self, name: str) -> int:
        if self._zip is not None:
            return self._zip.getinfo(name).file_size
        if self.is_dir:
            return os.path.getsize(os.path.join(self.path, name))
        return os.path.getsize(self.path)

    def _total(self) -> int:
        try:
            if self._zip is not None or self.is_dir:
                return sum(self._size(n) for n in self.names() if n.lower().endswith(".json"))
            return os.path.getsize(self.path)
        except OSError:
            return 0

    def _tick(self, n: int) -> None:
        self._done += n
        if self._progress is not None:
            self._progress(min(self._done, self.total), self.total)

    def _raw(self, name: str | None, limit: int) -> IO[bytes]:
        """One member opened (a regular file, its declared size within ``limit``) and bounded
        to ``limit`` bytes (the file itself is not bounded: its size is what it holds)."""
        what = name or "the file"
        try:
            if self._zip is not None and name is not None:
                declared = self._zip.getinfo(name).file_size
                raw: IO[bytes] = self._zip.open(name)
            else:
                raw = open_regular(
                    os.path.join(self.path, name) if self.is_dir and name else self.path
                )
                declared = os.fstat(raw.fileno()).st_size
                if name is None or not self.is_dir:
                    return raw
        except NotRegular as exc:
            raise bad_file(
                self.path, f"{what} is {exc}, not a regular file", _REGULAR_HINT
            ) from None
        except (OSError, KeyError, zipfile.BadZipFile, RuntimeError, NotImplementedError) as exc:
            raise bad_file(self.path, f"cannot open {what} ({exc})") from None
        if declared > limit:
            raw.close()
            raise bad_file(self.path, over(what, limit), _SIZE_HINT)
        return io.BufferedReader(Bounded(raw, limit, what), 1 << 16)

    @contextmanager
    def open(
        self, name: str | None = None, *, count: bool = True, limit: int = JSON_MEMBER_MAX_BYTES
    ) -> Iterator[IO[bytes]]:
        """A binary stream of one member (``None``: the file itself), at most ``limit`` bytes
        of a member."""
        raw = self._raw(name, limit)
        try:
            if count:
                yield io.BufferedReader(_Counting(raw, self._tick), 1 << 16)
            else:
                yield raw
        except TooLarge as exc:
            raise bad_file(self.path, str(exc), _SIZE_HINT) from None
        except (zipfile.BadZipFile, EOFError, zlib.error) as exc:
            raise bad_file(self.path, f"{name or 'the file'} is damaged ({exc})") from None
        finally:
            raw.close()

    def read_bytes(self, name: str) -> bytes:
        """The bytes of an image member: at most ``maxSourceBytes`` (declared and actual) and,
        when it is an image, at most 50 megapixels by its header."""
        with self.open(name, count=False, limit=IMAGE_MAX_BYTES) as fh:
            try:
                data = read_capped(fh, IMAGE_MAX_BYTES, name)
            except OSError as exc:
                raise bad_file(self.path, f"cannot read {name} ({exc})") from None
        why = image_problem(data, name)
        if why:
            raise bad_file(self.path, why, _SIZE_HINT)
        return data

    # -- JSON -------------------------------------------------------------------------------
    def first_char(self, name: str | None = None) -> str:
        """The first non-blank character of a member (``""`` when empty)."""
        with self.open(name, count=False) as fh:
            chunk = fh.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
        return chr(chunk[0]) if chunk else ""

    def first_item(self, name: str | None = None) -> Any:
        """The first element of a JSON array member (``None`` for an empty array)."""
        for item in self.items(name, count=False):
            return item
        return None

    def items(self, name: str | None = None, *, count: bool = True) -> Iterator[Any]:
        """The elements of a JSON array member, one at a time (none when it is not an array)."""
        with self.open(name, count=count) as fh:
            yield from array_items(fh, self.path, name)

    def load(self, name: str | None = None) -> Any:
        """A whole JSON member (used for single-object documents)."""
        with self.open(name) as fh:
            value = document(fh, self.path, name)
        if nests_deeper(value, FILE_MAX_DEPTH):
            raise too_deep(self.path, name)
        return value

    def _raw_lines(self, fh: IO[bytes]) -> Iterator[tuple[int, bytes]]:
        """``(line number, stripped bytes)`` of each non-blank line: a line of more than
        :data:`LINE_MAX_BYTES`, or more than :data:`BLANK_MAX` blank bytes (or
        :data:`BLANK_LINES_MAX` blank lines) in a row, is an error before it is held in
        memory."""
        blank = blank_lines = 0
        for no in itertools.count(1):
            raw = fh.readline(LINE_MAX_BYTES + 1)
            if not raw:
                return
            if len(raw) > LINE_MAX_BYTES:
                raise bad_file(self.path, over(f"line {no}", LINE_MAX_BYTES), _LINE_HINT)
            text = raw.strip()
            if not text:
                blank += len(raw)
                blank_lines += 1
                if blank > BLANK_MAX or blank_lines > BLANK_LINES_MAX:
                    raise bad_file(
                        self.path,
                        f"it holds more than {BLANK_MAX // MB} MB or {BLANK_LINES_MAX:,} blank lines in a row",
                        _LINE_HINT,
                    )
                continue
            blank = blank_lines = 0
            yield no, text

    def lines(self) -> Iterator[tuple[int, Any]]:
        """``(line number, parsed JSON)`` of each non-blank line (JSON Lines)."""
        with self.open() as fh:
            for no, text in self._raw_lines(fh):
                try:
                    value = json.loads(text)
                except RecursionError:
                    raise too_deep(self.path, f"line {no}") from None
                except (UnicodeDecodeError, ValueError) as exc:
                    raise bad_file(self.path, f"line {no} is not valid JSON ({exc})") from None
                if nests_deeper(value, FILE_MAX_DEPTH):
                    raise too_deep(self.path, f"line {no}")
                yield no, value

    def first_line(self) -> Any:
        """The first non-blank line parsed as JSON, or ``None`` when it does not parse."""
        with self.open(count=False) as fh:
            for _no, text in self._raw_lines(fh):
                try:
                    return json.loads(text)
                except (UnicodeDecodeError, ValueError, RecursionError):
                    return None
        return None

    def has_second_line(self) -> bool:
        with self.open(count=False) as fh:
            for seen, _line in enumerate(self._raw_lines(fh), 1):
                if seen == 2:
                    return True
        return False


def _documents(inp: Input, name: str | None) -> Iterator[Any]:
    """The elements of a member that is a JSON array, else the member as one document."""
    if inp.first_char(name) == "[":
        yield from inp.items(name)
    else:
        yield inp.load(name)


#: What a reader's conversion of one conversation may raise on a wrong-typed or missing field:
#: that conversation is skipped with the reason, the rest of the file imports.
UNREADABLE = (TypeError, ValueError, KeyError, IndexError, AttributeError, RecursionError)


def unreadable(exc: BaseException) -> str:
    """The reason a conversation is skipped, from what reading it raised."""
    return f"a field of it has an unexpected shape ({type(exc).__name__}: {str(exc)[:200]})"


def read_conversations(
    inp: Input,
    convert: Callable[[Any], Any],
    label: str,
    members: list[str | None] | None = None,
) -> Iterator[Any]:
    """Each conversation ``convert`` makes of the items of ``members`` (default: the file's
    one document, or the items of its top-level array). An item it cannot read (it returns
    ``None``, or a :class:`~.model.Skipped` saying why, or fails on a field), or one that holds
    no message, is yielded as a
    :class:`~.model.Skipped` with the reason; the file itself failing to parse is an error."""
    for name in members if members is not None else [None]:
        for k, item in enumerate(_documents(inp, name)):
            where = f"{name}: conversation {k + 1}" if name else f"conversation {k + 1}"
            try:
                conv = convert(item)
            except InvalidValue:
                raise  # the file, not this conversation (an archive member that cannot be read)
            except UNREADABLE as exc:
                yield Skipped(where, unreadable(exc), title_of(item))
                continue
            if conv is None:
                yield Skipped(where, f"it is not a {label} conversation", title_of(item))
            elif isinstance(conv, Skipped):  # the reader knows why it cannot read this one
                yield Skipped(where, conv.reason, conv.title or title_of(item))
            elif not conv.entries:
                yield Skipped(where, "it holds no message", conv.title)
            else:
                yield conv
