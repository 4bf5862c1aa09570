"""Extraction layer: web pages, local files, PDFs, images and video transcripts → ``Extracted``.

Every function returns one frozen :class:`Extracted` (see :mod:`chatkeep.attach.sources` for
its contract) and raises :class:`chatkeep.errors.AttachError` (with a ``hint``) for sources it
cannot read. Only the ``attach_*`` functions write to a store.

- :func:`extract_url` — a web page, plain text, Markdown or PDF served over http(s).
- :func:`extract_file` — a local HTML, Markdown, text, PDF or image file.
- :func:`extract_pdf_bytes` — PDF bytes (``[Page N]`` text + figures + ``## Figures``).
- :func:`extract_image_bytes` — image bytes, e.g. a pasted screenshot.
- :func:`extract_video` — a video URL plus its WebVTT/SRT transcript.
- :func:`attach_url`, :func:`attach_file`, :func:`attach_video`, :func:`attach_image`,
  :func:`attach_source` and :func:`undo_attach` — the same, stored into a store's history as
  attachment entries (see :mod:`chatkeep.attach.store_ops`).

Importing this package loads no HTTP, PDF, imaging or HTML library; each extractor imports
what it needs when it runs.
"""

from __future__ import annotations

from .files import extract_file
from .images import extract_image_bytes
from .pdf import extract_pdf_bytes
from .sources import Extracted
from .store_ops import (
    AttachResult,
    attach_file,
    attach_image,
    attach_source,
    attach_url,
    attach_video,
    undo_attach,
)
from .video import extract_video
from .web import extract_url

__all__ = [
    "AttachResult",
    "Extracted",
    "attach_file",
    "attach_image",
    "attach_source",
    "attach_url",
    "attach_video",
    "extract_file",
    "extract_image_bytes",
    "extract_pdf_bytes",
    "extract_url",
    "extract_video",
    "undo_attach",
]
