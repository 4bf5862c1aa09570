"""PDF bytes → text with ``[Page N]`` markers plus embedded figures as images.

Contract of :func:`extract_pdf_bytes`:

- Text: one ``[Page N]`` line per page (N 1-based) followed by that page's text; pages are
  separated by a blank line. A page whose text cannot be extracted keeps its marker alone.
- Figures: the image XObjects each page draws, pages in order and, on a page, in the order the
  content stream draws them (forms are followed), each image once per document. Images smaller
  than :data:`MIN_FIGURE_EDGE` pixels on a side are decorations and skipped; images that cannot
  be decoded are skipped. A plain RGB/grey JPEG stream is kept byte for byte (CMYK or masked
  JPEGs are re-encoded as RGB JPEG); everything else is re-encoded as PNG. At most
  ``max_figures`` are kept.
- Captions: on each page, lines like ``Figure 3: …``, ``Fig. 3. …`` or ``图 3：…`` label that
  page's figures in order; captions without punctuation after the number (``Figure 3 …``) are
  used only when the punctuated ones do not cover every figure of the page, and only for
  numbers no punctuated caption has. A figure without a caption is labelled
  ``Figure on page N``.
- When there are figures, the text ends with (SPEC §3.2)::

      \\n\\n## Figures
      The figures below are attached as images in this order:
      1. <caption>
      2. …

  The ``max_chars`` cap cuts the body, never this section, so labels stay parseable.
- Encrypted (password-protected) and unreadable PDFs raise :class:`~chatkeep.errors.AttachError`.

pypdf and Pillow are imported lazily inside the functions so ``import chatkeep`` stays fast.
"""

from __future__ import annotations

import hashlib
import io
import logging
import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

from ..constants import DEFAULT_MAX_IMAGE_PIXELS, DEFAULT_MAX_PDF_PAGES, MAX_PDF_PAGES_KEY
from ..errors import AttachError
from .images import pil_to_data_url
from .sources import DEFAULT_MAX_CHARS, Extracted, cap_text, data_url

__all__ = ["FIGURES_INTRO", "MIN_FIGURE_EDGE", "extract_pdf_bytes", "figures_section"]

FIGURES_INTRO = "The figures below are attached as images in this order:"
MIN_FIGURE_EDGE = 32
DEFAULT_MAX_FIGURES = 50
_CAPTION_MAX = 200

_STRONG_CAPTION_RE = re.compile(
    r"^\s*(?:(?:figure|fig\.?)\s*(\d+[a-z]?)\s*[:.：|—–-]|图\s*(\d+)\s*[:：.、]?)\s*\S",
    re.IGNORECASE,
)
_WEAK_CAPTION_RE = re.compile(r"^\s*(?:figure|fig\.)\s+(\d+[a-z]?)\s+\S", re.IGNORECASE)
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
_WS_RE = re.compile(r"\s+")

#: Metadata titles that producers write when the author gave none.
_PLACEHOLDER_TITLES = {"untitled", "untitled document", "title", "document", "none", "(anonymous)"}

_UNREADABLE_HINT = "the file may be truncated or damaged; re-download or re-export the PDF"


def figures_section(captions: list[str] | tuple[str, ...]) -> str:
    """The ``## Figures`` tail appended to a PDF's text ("" when there are no figures)."""
    if not captions:
        return ""
    lines = [f"{k}. {c}" for k, c in enumerate(captions, 1)]
    return "\n\n## Figures\n" + FIGURES_INTRO + "\n" + "\n".join(lines)


def _open_reader(data: bytes, name: str):
    # pypdf is imported lazily: importing chatkeep must not load PDF libraries.
    from pypdf import PdfReader

    if b"%PDF-" not in data[:1024]:
        raise AttachError(f"{name} is not a PDF (no %PDF header)", hint="attach a .pdf file")
    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
    except Exception as exc:  # pypdf raises many types for damaged files
        raise AttachError(f"{name} is not a readable PDF: {exc}", hint=_UNREADABLE_HINT) from None
    if reader.is_encrypted:
        from pypdf.errors import DependencyError  # lazy: pypdf loads only for PDFs

        try:
            opened = bool(reader.decrypt(""))
        except DependencyError:
            raise AttachError(
                f"{name} is encrypted with a cipher this installation cannot read",
                hint="install the 'cryptography' package, or save an unencrypted copy and attach that",
            ) from None
        except Exception:
            opened = False
        if not opened:
            raise AttachError(
                f"{name} is password-protected",
                hint="remove the password (e.g. print it to a new PDF) and attach that copy",
            )
    try:
        count = len(reader.pages)
    except Exception as exc:
        raise AttachError(f"{name} is not a readable PDF: {exc}", hint=_UNREADABLE_HINT) from None
    if count == 0:
        raise AttachError(f"{name} has no readable pages", hint=_UNREADABLE_HINT)
    return reader


def _clean(text: str) -> str:
    text = _CONTROL_RE.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return "\n".join(line.rstrip() for line in text.split("\n")).strip("\n")


def _draw_order(page, reader) -> dict[str, object]:
    """Image XObjects by name, in the order the page's content stream (and its forms) draws them."""
    from pypdf.generic import ContentStream  # lazy: as above

    order: dict[str, object] = {}

    def walk(contents, resources, depth: int) -> None:
        if contents is None or depth > 8:
            return
        try:
            xobjects = resources.get("/XObject") if resources is not None else None
            xobjects = xobjects.get_object() if xobjects is not None else {}
            ops = ContentStream(contents, reader).operations
        except Exception:
            return
        for operands, op in ops:
            if op != b"Do" or not operands:
                continue
            name = str(operands[0])
            try:
                xobj = xobjects[name].get_object()
            except Exception:
                continue
            subtype = xobj.get("/Subtype")
            if subtype == "/Image":
                order.setdefault(name, xobj)
            elif subtype == "/Form":
                inner = xobj.get("/Resources")
                walk(xobj, inner.get_object() if inner is not None else resources, depth + 1)

    resources = page.get("/Resources")
    walk(page.get_contents(), resources.get_object() if resources is not None else None, 0)
    return order


def _page_images(
    page, reader, max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS
) -> list[tuple[object, object]]:
    """``(ImageFile, XObject or None)`` of the page's decodable images, in draw order; images
    declaring more than ``max_pixels`` are skipped before pypdf decodes them."""
    try:
        images = page.images
        keys = list(images.keys())
    except Exception:
        return []
    by_name: dict[str, object] = {}
    for key in keys:
        last = key[-1] if isinstance(key, list | tuple) else key
        by_name.setdefault(str(last), key)
    drawn = _draw_order(page, reader)
    ordered = [n for n in drawn if n in by_name] + [n for n in by_name if n not in drawn]
    out = []
    for name in ordered:
        if _declared_pixels(drawn.get(name)) > max_pixels:
            continue
        try:
            out.append((images[by_name[name]], drawn.get(name)))
        except Exception:  # unsupported filter / undecodable stream: skip the figure
            continue
    return out


def _raw_jpeg(xobj) -> bytes | None:
    """The embedded JPEG stream as it is, when it can be shown without any PDF-side processing."""
    if xobj is None:
        return None
    try:
        filters = xobj.get("/Filter")
        last = filters[-1] if isinstance(filters, list) else filters
        if last != "/DCTDecode" or "/SMask" in xobj or "/Mask" in xobj or "/Decode" in xobj:
            return None
        data = xobj.get_data()
    except Exception:
        return None
    return bytes(data) if data[:2] == b"\xff\xd8" else None


def _declared_pixels(xobj) -> int:
    """Width × height an image XObject declares (0 when it does not say)."""
    try:
        w, h = int(xobj.get("/Width", 0)), int(xobj.get("/Height", 0))
    except (TypeError, ValueError, AttributeError):
        return 0
    return max(0, w) * max(0, h)


def _figure_data_url(image_file, xobj) -> str | None:
    """A PNG or JPEG data URL of one embedded image; ``None`` when it is a decoration or broken."""
    try:
        img = image_file.image
        if img is None:
            return None
        w, h = img.size
        if w < MIN_FIGURE_EDGE or h < MIN_FIGURE_EDGE:
            return None
        if str(image_file.name).lower().endswith((".jpg", ".jpeg")):
            raw = _raw_jpeg(xobj) if img.mode in ("RGB", "L") else None
            if raw is not None:
                return data_url(raw, "image/jpeg")  # the original JPEG, never re-compressed
            buf = io.BytesIO()
            img.convert("RGB").save(buf, format="JPEG", quality=92)
            return data_url(buf.getvalue(), "image/jpeg")
        return pil_to_data_url(img)
    except Exception:
        return None


def _page_captions(text: str, count: int) -> list[str]:
    """Up to ``count`` captions for a page's figures, in text order."""
    if count <= 0:
        return []
    strong: list[tuple[int, str, str]] = []
    weak: list[tuple[int, str, str]] = []
    for i, line in enumerate(text.split("\n")):
        m = _STRONG_CAPTION_RE.match(line)
        if m:
            strong.append((i, m.group(1) or m.group(2), line))
            continue
        m = _WEAK_CAPTION_RE.match(line)
        if m:
            weak.append((i, m.group(1), line))
    if len(strong) >= count:
        pool = strong
    else:  # unpunctuated ones fill in, but never for a number a punctuated caption already has
        covered = {number.lower() for _, number, _ in strong}
        pool = sorted(strong + [w for w in weak if w[1].lower() not in covered])
    seen: set[str] = set()
    out: list[str] = []
    for _, number, line in pool:
        if number.lower() in seen:
            continue
        seen.add(number.lower())
        caption = _WS_RE.sub(" ", line).strip()
        if len(caption) > _CAPTION_MAX:
            caption = caption[: _CAPTION_MAX - 1].rstrip() + "…"
        out.append(caption)
    return out[:count]


def _metadata_title(reader) -> str:
    try:
        meta = reader.metadata
        title = meta.title if meta is not None else None
    except Exception:
        return ""
    title = _WS_RE.sub(" ", str(title)).strip() if title else ""
    return "" if title.lower() in _PLACEHOLDER_TITLES else title


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf reports damaged files through its logger and ``warnings``; what matters reaches
    the user as an :class:`AttachError` or as missing text, never as raw library noise."""
    logger = logging.getLogger("pypdf")
    saved = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(saved)


def extract_pdf_bytes(
    data: bytes,
    *,
    name: str = "document.pdf",
    url: str = "",
    title: str = "",
    max_chars: int = DEFAULT_MAX_CHARS,
    max_figures: int = DEFAULT_MAX_FIGURES,
    max_pixels: int = DEFAULT_MAX_IMAGE_PIXELS,
    max_pages: int = DEFAULT_MAX_PDF_PAGES,
) -> Extracted:
    """Extract one PDF. ``title`` is used when the PDF's metadata has none (default ``name``).

    A PDF of more than ``max_pages`` pages raises :class:`AttachError` before any page is
    read; embedded images whose declared size is over ``max_pixels`` are skipped undecoded.
    pypdf's warnings and log records stay quiet (:func:`_quiet_pypdf`)."""
    with _quiet_pypdf():
        return _extract_pdf(data, name, url, title, max_chars, max_figures, max_pixels, max_pages)


def _extract_pdf(
    data: bytes,
    name: str,
    url: str,
    title: str,
    max_chars: int,
    max_figures: int,
    max_pixels: int,
    max_pages: int,
) -> Extracted:
    reader = _open_reader(data, name)
    if len(reader.pages) > max_pages:
        raise AttachError(
            f"{name} has {len(reader.pages):,} pages, over the {max_pages:,}-page limit",
            hint=(
                f"attach the pages you need as a smaller PDF, or raise the limit with the setting "
                f"{MAX_PDF_PAGES_KEY} (store.local.set('{MAX_PDF_PAGES_KEY}', N))"
            ),
        )
    pages: list[str] = []
    images: list[str] = []
    captions: list[str] = []
    seen_hashes: set[str] = set()
    for n, page in enumerate(reader.pages, 1):
        try:
            text = _clean(page.extract_text() or "")
        except Exception:
            text = ""
        pages.append(f"[Page {n}]\n{text}" if text else f"[Page {n}]")
        if len(images) >= max_figures:
            continue
        found: list[str] = []
        for image_file, xobj in _page_images(page, reader, max_pixels):
            url_ = _figure_data_url(image_file, xobj)
            if url_ is None:
                continue
            digest = hashlib.sha256(url_.encode("ascii")).hexdigest()
            if digest in seen_hashes:
                continue
            seen_hashes.add(digest)
            found.append(url_)
        found = found[: max_figures - len(images)]
        page_caps = _page_captions(text, len(found))
        page_caps += [f"Figure on page {n}"] * (len(found) - len(page_caps))
        images.extend(found)
        captions.extend(page_caps)
    section = figures_section(captions)
    body = "\n\n".join(pages)
    limit = max_chars if max_chars > 0 else DEFAULT_MAX_CHARS
    if len(body) + len(section) > limit and len(section) < limit:
        body, _ = cap_text(body, limit - len(section))
        text, truncated = body + section, True
    else:
        text, truncated = cap_text(body + section, limit)
    return Extracted(
        kind="pdf",
        title=_metadata_title(reader) or title or name,
        url=url,
        text=text,
        images=tuple(images),
        fmt="pdf",
        video_src=None,
        captions=tuple(captions),
        truncated=truncated,
    )
