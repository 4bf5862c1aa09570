"""Extraction layer: web pages, local files, PDFs, images and video transcripts → ``Extracted``.

Every function returns one frozen :class:`Extracted` (see :mod:`chatkeep.attach.sources` for
its contract) and raises :class:`chatkeep.errors.AttachError` (with a ``hint``) for sources it
cannot read. Nothing here writes to the store.

- :func:`extract_url` — a web page, plain text, Markdown or PDF served over http(s).
- :func:`extract_file` — a local HTML, Markdown, text, PDF or image file.
- :func:`extract_pdf_bytes` — PDF bytes (``[Page N]`` text + figures + ``## Figures``).
- :func:`extract_image_bytes` — image bytes, e.g. a pasted screenshot.
- :func:`extract_video` — a video URL plus its WebVTT/SRT transcript.

Importing this package loads no HTTP, PDF, imaging or HTML library; each extractor imports
what it needs when it runs.
"""

from __future__ import annotations

from .files import extract_file
from .images import extract_image_bytes
from .pdf import extract_pdf_bytes
from .sources import Extracted
from .video import extract_video
from .web import extract_url

__all__ = [
    "Extracted",
    "extract_file",
    "extract_image_bytes",
    "extract_pdf_bytes",
    "extract_url",
    "extract_video",
]
