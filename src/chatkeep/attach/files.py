"""Local files → :class:`Extracted`, dispatched by extension and checked against the content.

Contract of :func:`extract_file`:

- ``.html``/``.htm``/``.xhtml`` → the same main-text extraction as web pages (``kind="file"``,
  ``fmt="html"``).
- ``.md``/``.markdown`` (``fmt="markdown"``) and ``.txt`` (``fmt="text"``) → the text as it is;
  title = the first heading, else the file name. Binary bytes under such a name (a NUL, or
  more than 1 % control bytes in the first 8 KiB) are a PDF or image when their bytes say so,
  else an :class:`~chatkeep.errors.AttachError` — never text.
- ``.pdf`` → the PDF path (``kind="pdf"``).
- ``.png .jpg .jpeg .webp .gif`` and any other file Pillow can decode → a screenshot-style
  image (``kind="image"``); bytes that do not decode as an image raise, whatever the extension.
- ``.vtt``/``.srt`` → refused here: transcripts need their video URL (:func:`extract_video`).
- Other extensions: a PDF or image recognised by its bytes is handled as such; UTF-8 text
  without NUL bytes (source code, CSV, logs, …) is attached as text; anything else raises.
- A missing path, a directory, an unreadable file, or a file over ``max_bytes`` (checked
  before reading it) raises :class:`~chatkeep.errors.AttachError`.
- ``url`` of the result is the file's absolute ``file://`` URI.

Heavy libraries are imported only by the extractor a file needs.
"""

from __future__ import annotations

import io
import stat
from pathlib import Path

from ..constants import DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_PDF_PAGES, MAX_SOURCE_BYTES_KEY
from ..errors import AttachError, MissingFile, NotAFile
from .images import extract_image_bytes
from .pdf import extract_pdf_bytes
from .sources import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_FILE_BYTES,
    Extracted,
    decode_text,
    looks_binary,
)
from .web import page_from_html, page_from_text

__all__ = ["IMAGE_EXTENSIONS", "extract_file"]

HTML_EXTENSIONS = (".html", ".htm", ".xhtml")
TEXT_EXTENSIONS = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}
IMAGE_EXTENSIONS = (".png", ".jpg", ".jpeg", ".webp", ".gif")
TRANSCRIPT_EXTENSIONS = (".vtt", ".srt")


SIZE_HINT = (
    "attach a smaller file (split it, or save only the part you need); the limit is not a "
    "`chatkeep config` setting: raise it from Python with "
    f"chatkeep.open(STORE).local.set('{MAX_SOURCE_BYTES_KEY}', N)"
)


def _read_limited(path: Path, max_bytes: int) -> bytes:
    """The file's bytes, refused by size before reading and never read past ``max_bytes``."""
    try:
        st = path.stat()
    except FileNotFoundError:
        raise MissingFile(
            f"no such file: {path}", path=str(path), hint="check the path and try again"
        ) from None
    except ValueError as exc:  # a NUL in the path
        raise AttachError(
            f"unusable file name {str(path)!r}: {exc}", hint="check the path"
        ) from None
    except OSError as exc:
        raise AttachError(
            f"cannot open {path}: {exc.strerror or exc}", hint="check the path"
        ) from None
    if path.is_dir():
        raise NotAFile(
            f"{path} is a directory", path=str(path), hint="attach the files inside it one by one"
        )
    if not stat.S_ISREG(st.st_mode):  # a FIFO, socket or device would block or never end
        raise AttachError(
            f"{path} is not a regular file", hint="attach a saved file, not a device or pipe"
        )
    if st.st_size > max_bytes:
        raise AttachError(
            f"{path.name} is {st.st_size:,} bytes, over the {max_bytes:,}-byte limit",
            hint=SIZE_HINT,
        )
    try:
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except PermissionError:
        raise AttachError(
            f"permission denied: {path}", hint="check the file's permissions"
        ) from None
    except OSError as exc:
        raise AttachError(
            f"cannot read {path}: {exc.strerror or exc}", hint="check the file"
        ) from None
    if len(data) > max_bytes:  # the file grew after stat()
        raise AttachError(
            f"{path.name} is over the {max_bytes:,}-byte limit",
            hint=SIZE_HINT,
        )
    return data


def _looks_like_image(data: bytes) -> bool:
    # Pillow is imported lazily: importing chatkeep must not load imaging libraries.
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)):
            return True
    except Image.DecompressionBombError:
        return True  # an image, too big: the image path refuses it with the pixel limit
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return False


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data[:8192]:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def extract_file(
    path: str | Path,
    *,
    max_bytes: int = DEFAULT_MAX_FILE_BYTES,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
    max_pages: int = DEFAULT_MAX_PDF_PAGES,
) -> Extracted:
    """Extract one local file (HTML, Markdown, text, PDF or image)."""
    if not isinstance(path, str | Path):
        raise AttachError(f"a file path must be a string, got {type(path).__name__}")
    path = Path(path).expanduser()
    ext = path.suffix.lower()
    if ext in TRANSCRIPT_EXTENSIONS:
        raise AttachError(
            f"{path.name} is a video transcript",
            hint="attach it together with its video URL (extract_video / `chatkeep attach --video URL --transcript FILE`)",
        )
    data = _read_limited(path, max_bytes)
    resolved = path.resolve()
    uri = resolved.as_uri()
    name = path.name
    if ext in HTML_EXTENSIONS:
        return page_from_html(data, url=uri, charset=None, kind="file", max_chars=max_chars)
    is_pdf = data[:1024].lstrip().startswith(b"%PDF-")
    if ext in TEXT_EXTENSIONS and not is_pdf and not looks_binary(data):
        return page_from_text(
            decode_text(data), url=uri, fmt=TEXT_EXTENSIONS[ext], kind="file", max_chars=max_chars
        )
    if ext == ".pdf" or is_pdf:
        return extract_pdf_bytes(
            data,
            name=name,
            url=uri,
            title=name,
            max_chars=max_chars,
            max_pixels=max_pixels,
            max_pages=max_pages,
        )
    if ext in IMAGE_EXTENSIONS or _looks_like_image(data):
        return extract_image_bytes(data, name=name, url=uri, max_pixels=max_pixels)
    if ext in TEXT_EXTENSIONS:
        raise AttachError(
            f"{name} is named like a text file but holds binary data",
            hint="check the file (it may be an archive, a program or a damaged download); "
            "attach text, HTML, Markdown, PDF or image files",
        )
    text = _as_text(data)
    if text is not None:
        return page_from_text(text, url=uri, fmt="text", kind="file", max_chars=max_chars)
    raise AttachError(
        f"unsupported file type: {name}",
        hint="attach HTML, Markdown, text, PDF or image files",
    )
