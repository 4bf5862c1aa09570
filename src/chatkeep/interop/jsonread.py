"""Reading JSON from an import file within the limits of SPEC §12.

- :func:`bad_file` is the one error of an unreadable file (``InvalidValue``, "nothing was
  imported", a hint).
- An import file nests at most :data:`FILE_MAX_DEPTH` levels: values of ``MAX_DEPTH`` inside a
  document and its sections. :func:`nests_deeper` checks a parsed value iteratively.
- :func:`array_items` streams the elements of a JSON array with the interpreter's own decoder
  (no private API) from a text buffer refilled a chunk at a time: memory holds one element, and
  a file of nothing but brackets is refused in the memory of one chunk (the streaming parser
  used before kept a path string per level: memory grew with the depth squared). An element
  whose text opens fewer brackets than the limit cannot nest past it and is not walked.
- :func:`document` reads one whole JSON value the same way (the file need not fit twice in
  memory). Both refuse a run of more than :data:`.budget.BLANK_MAX` blanks between values (a
  value followed by a gigabyte of spaces) and :func:`array_items` an element of more than
  :data:`ELEMENT_MAX_CHARS` characters, each in the memory of what the cap allows.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Iterator
from typing import IO, Any

from ..errors import InvalidValue
from ..limits import DOCUMENT_MAX_DEPTH, MAX_DEPTH
from .budget import BLANK_MAX, LINE_MAX_BYTES, MB

#: How deep an import file may nest: values of ``MAX_DEPTH`` (§12) inside a document and its
#: sections (a whole-profile export: the document, ``local``, a key's value).
FILE_MAX_DEPTH = DOCUMENT_MAX_DEPTH
CHUNK = 1 << 20
#: One element of a streamed top-level array (one conversation, its images as data URLs).
ELEMENT_MAX_CHARS = LINE_MAX_BYTES
_BLANKS = re.compile(r"[ \t\r\n]*")


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


def array_items(fh: IO[bytes], path: str, name: str | None) -> Iterator[Any]:
    """Each element of the JSON array in ``fh``, parsed one at a time with the interpreter's
    JSON decoder from a text buffer refilled chunk by chunk (nothing when the document is not
    an array). Memory holds the element being read, never the file; an element that nests
    past :data:`FILE_MAX_DEPTH` levels is refused as soon as the parser meets it (the decoder
    refuses the deep ones by its recursion guard, the walk below the rest), so a file of
    nothing but brackets costs one chunk of memory."""
    reader = _Buffer(fh, path, name, ELEMENT_MAX_CHARS)
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
        # an element cannot nest deeper than the brackets its text opens: most are not walked
        if reader.opened > FILE_MAX_DEPTH - 1 and nests_deeper(value, FILE_MAX_DEPTH - 1):
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


def document(fh: IO[bytes], path: str, name: str | None) -> Any:
    """The one JSON value of ``fh`` (blanks around it allowed, up to the blank budget);
    ``InvalidValue`` when it is missing, invalid, or followed by anything else."""
    reader = _Buffer(fh, path, name, None)
    if not reader.skip_space():
        raise reader.invalid("it is empty")
    value = reader.decode(json.JSONDecoder())
    if reader.skip_space():
        raise reader.invalid("it goes on after its JSON value")
    return value


class _Buffer:
    """The decoded text of a binary stream, read a chunk at a time as the parser needs it;
    one value holds at most ``cap`` characters (``None``: no cap)."""

    def __init__(self, fh: IO[bytes], path: str, name: str | None, cap: int | None) -> None:
        self._cap = cap
        self._fh = fh
        self._path = path
        self._name = name
        self._utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.text = ""
        self.pos = 0
        self.eof = False
        self.count = 0  # elements decoded
        self.opened = 0  # '[' and '{' in the text of the last element (strings included)

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
        """Move past blanks (at most :data:`BLANK_MAX` in a row); ``False`` when the stream
        ends first."""
        skipped = 0
        while True:
            end = _BLANKS.match(self.text, self.pos).end()  # type: ignore[union-attr]
            skipped += end - self.pos
            self.pos = end
            if skipped > BLANK_MAX:
                raise self.invalid(
                    f"it holds more than {BLANK_MAX // MB} MB of blank space in a row"
                )
            if self.pos < len(self.text):
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
                held = len(self.text) - self.pos
                if cut and self._cap is not None:
                    if held > self._cap:
                        raise self.invalid(
                            f"element {self.count + 1} is larger than {self._cap // MB} MB"
                        ) from None
                    want = max(CHUNK, min(want, self._cap + 1 - held))
                if cut and self.more(want):
                    want *= 2  # a large element: reading in growing steps keeps this linear
                    continue
                raise self.invalid(f"{exc.msg} (element {self.count + 1})") from None
            except ValueError as exc:  # an integer of more digits than Python converts
                raise self.invalid(f"{exc} (element {self.count + 1})") from None
            # a number at the very end of the buffer may go on in the next chunk
            if end == len(self.text) and isinstance(value, int | float) and self.more(want):
                continue
            self.opened = self.text.count("[", self.pos, end) + self.text.count("{", self.pos, end)
            self.pos = end
            self.count += 1
            return value
