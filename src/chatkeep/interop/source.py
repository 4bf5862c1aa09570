"""Reading an import file: what kind of file it is, streaming its JSON, counting progress.

An :class:`Input` is one path — a JSON or JSON Lines file, a zip archive, a directory of an
unpacked export, a SQLite database or a Markdown file. JSON arrays are streamed item by item
(``ijson``), so a 1 GB export is read with the memory of its largest conversation; bytes read
are reported to the ``progress`` callback as ``(done, total)``.

Every failure to read or parse is raised as :class:`chatkeep.errors.InvalidValue` with a hint;
nothing here writes anything.
"""

from __future__ import annotations

import io
import json
import os
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO, Any

from ..errors import InvalidValue
from ..limits import DOCUMENT_MAX_DEPTH, MAX_DEPTH

Progress = Callable[[int, int], None]

#: How deep an import file may nest: values of ``MAX_DEPTH`` (§12) inside a document and its
#: sections (a whole-profile export: the document, ``local``, a key's value).
FILE_MAX_DEPTH = DOCUMENT_MAX_DEPTH
CHUNK = 1 << 20
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


def bad_file(path: str, why: str, hint: str | None = None) -> InvalidValue:
    return InvalidValue(
        f"cannot read {os.path.basename(path) or path}: {why}; nothing was imported",
        hint=hint
        or "pass an export file named in docs/import-export.md, or name its format with --from",
    )


def too_deep(path: str, member: str | None = None) -> InvalidValue:
    where = f"{member} " if member else "the file "
    return bad_file(
        path,
        f"{where}nests deeper than {FILE_MAX_DEPTH} levels (a document and its sections around "
        f"values of at most {MAX_DEPTH} levels, SPEC §12)",
        "this is not an export chatkeep can read; check where the file came from",
    )


def nests_deeper(value: Any, limit: int) -> bool:
    """Whether the parsed JSON ``value`` nests deeper than ``limit`` levels (a scalar is 0,
    ``[1]`` is 1): an iterative walk, one level of containers at a time."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        if depth >= limit:
            return True
        depth += 1
        below = []
        for v in level:
            for child in v.values() if type(v) is dict else v:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level = below
    return False


def _array_items(fh: IO[bytes], path: str, name: str | None) -> Iterator[Any]:
    """Each element of the JSON array in ``fh``, parsed one at a time with the interpreter's
    JSON decoder from a text buffer refilled chunk by chunk (nothing when the document is not
    an array). Memory holds the element being read, never the file; an element that nests
    past :data:`FILE_MAX_DEPTH` levels is refused as soon as the parser meets it (the decoder
    refuses the deep ones by its recursion guard, the walk below the rest), so a file of
    nothing but brackets costs one chunk of memory."""
    reader = _Buffer(fh, path, name)
    if not reader.skip_space() or reader.peek() != "[":
        return
    reader.pos += 1
    decoder = json.JSONDecoder()
    first = True
    while True:
        if not reader.skip_space():
            raise reader.invalid("it ends inside its top-level list (the file is truncated)")
        if reader.peek() == "]" and first:
            reader.pos += 1
            break
        value = reader.decode(decoder)
        if nests_deeper(value, FILE_MAX_DEPTH - 1):
            raise too_deep(path, name)
        yield value
        first = False
        if not reader.skip_space():
            raise reader.invalid("it ends inside its top-level list (the file is truncated)")
        sep = reader.peek()
        reader.pos += 1
        if sep == "]":
            break
        if sep != ",":
            raise reader.invalid(f"{sep!r} where ',' or ']' belongs after element {reader.count}")
    if reader.skip_space():
        raise reader.invalid("it goes on after its top-level list")


class _Buffer:
    """The decoded text of a binary stream, read a chunk at a time as the parser needs it."""

    def __init__(self, fh: IO[bytes], path: str, name: str | None) -> None:
        import codecs

        self._fh = fh
        self._path = path
        self._name = name
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self.count = 0  # elements decoded

    def invalid(self, why: str) -> InvalidValue:
        return bad_file(self._path, f"{self._name or 'the file'} is not valid JSON: {why}")

    def more(self, size: int = CHUNK) -> bool:
        """Append at least one more chunk (``False`` at the end of the stream)."""
        if self.eof:
            return False
        raw = self._fh.read(size)
        try:
            added = self._utf8.decode(raw, final=not raw)
        except UnicodeDecodeError as exc:
            raise self.invalid(f"not UTF-8 text ({exc.reason})") from None
        if not raw:
            self.eof = True
        self.text = self.text[self.pos :] + added
        self.pos = 0
        return bool(raw) or bool(added)

    def skip_space(self) -> bool:
        """Move past blanks; ``False`` when the stream ends first."""
        while True:
            n = len(self.text)
            while self.pos < n and self.text[self.pos] in " \t\r\n":
                self.pos += 1
            if self.pos < n:
                return True
            if not self.more():
                return False

    def peek(self) -> str:
        return self.text[self.pos]

    def decode(self, decoder: json.JSONDecoder) -> Any:
        """The next JSON value; more text is read while the buffer ends inside it."""
        want = CHUNK
        while True:
            try:
                value, end = decoder.raw_decode(self.text, self.pos)
            except RecursionError:
                raise too_deep(self._path, self._name) from None
            except json.JSONDecodeError as exc:
                cut = exc.pos >= len(self.text) - 6 or exc.msg.startswith("Unterminated string")
                if cut and self.more(want):
                    want *= 2  # a large element: reading in growing steps keeps this linear
                    continue
                raise self.invalid(f"{exc.msg} (element {self.count + 1})") from None
            except ValueError as exc:  # an integer of more digits than Python converts
                raise self.invalid(f"{exc} (element {self.count + 1})") from None
            # a number at the very end of the buffer may go on in the next chunk
            if end == len(self.text) and isinstance(value, int | float) and self.more(want):
                continue
            self.pos = end
            self.count += 1
            return value


def not_this(inp: Input, member: str | None, k: int, label: str) -> InvalidValue:
    where = f"{member}: " if member else ""
    return bad_file(
        inp.path,
        f"{where}element {k} is not a {label} conversation",
        "check the file, or let --from auto detect its format",
    )


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
            raise bad_file(path, "no such file", "check the path")
        self.is_dir = os.path.isdir(path)
        self.head = b""
        if not self.is_dir:
            try:
                with open(path, "rb") as fh:
                    self.head = fh.read(4096)
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

    @contextmanager
    def open(self, name: str | None = None, *, count: bool = True) -> Iterator[IO[bytes]]:
        """A binary stream of one member (``None``: the file itself)."""
        try:
            if self._zip is not None and name is not None:
                raw: IO[bytes] = self._zip.open(name)
            elif self.is_dir and name is not None:
                raw = open(os.path.join(self.path, name), "rb")  # noqa: SIM115
            else:
                raw = open(self.path, "rb")  # noqa: SIM115
        except (OSError, KeyError, zipfile.BadZipFile) as exc:
            raise bad_file(self.path, f"cannot open {name or 'the file'} ({exc})") from None
        try:
            if count:
                yield io.BufferedReader(_Counting(raw, self._tick), 1 << 16)
            else:
                yield raw
        finally:
            raw.close()

    def read_bytes(self, name: str) -> bytes:
        with self.open(name, count=False) as fh:
            return fh.read()

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
            yield from _array_items(fh, self.path, name)

    def load(self, name: str | None = None) -> Any:
        """A whole JSON member (used for single-object documents)."""
        with self.open(name) as fh:
            try:
                value = json.load(fh)
            except RecursionError:
                raise too_deep(self.path, name) from None
            except (UnicodeDecodeError, ValueError) as exc:
                raise bad_file(
                    self.path, f"{name or 'the file'} is not valid JSON ({exc})"
                ) from None
        if nests_deeper(value, FILE_MAX_DEPTH):
            raise too_deep(self.path, name)
        return value

    def lines(self) -> Iterator[tuple[int, Any]]:
        """``(line number, parsed JSON)`` of each non-blank line (JSON Lines)."""
        with self.open() as fh:
            for no, raw in enumerate(fh, 1):
                text = raw.strip()
                if not text:
                    continue
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
            for raw in fh:
                if raw.strip():
                    try:
                        return json.loads(raw)
                    except (UnicodeDecodeError, ValueError, RecursionError):
                        return None
        return None

    def has_second_line(self) -> bool:
        with self.open(count=False) as fh:
            seen = 0
            for raw in fh:
                if raw.strip():
                    seen += 1
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


def read_conversations(
    inp: Input,
    convert: Callable[[Any], Any],
    label: str,
    members: list[str | None] | None = None,
) -> Iterator[Any]:
    """Each conversation ``convert`` makes of the items of ``members`` (default: the file's
    one document, or the items of its top-level array). An item it cannot read (it returns
    ``None`` or fails on a field), or one that holds no message, is yielded as a
    :class:`~.model.Skipped` with the reason; the file itself failing to parse is an error."""
    from .model import Skipped, title_of

    for name in members if members is not None else [None]:
        for k, item in enumerate(_documents(inp, name)):
            where = f"{name}: conversation {k + 1}" if name else f"conversation {k + 1}"
            try:
                conv = convert(item)
            except InvalidValue:
                raise  # the file, not this conversation (an archive member that cannot be read)
            except UNREADABLE as exc:
                yield Skipped(where, f"it cannot be read ({exc})", title_of(item))
                continue
            if conv is None:
                yield Skipped(where, f"it is not a {label} conversation", title_of(item))
            elif not conv.entries:
                yield Skipped(where, "it holds no message", conv.title)
            else:
                yield conv
