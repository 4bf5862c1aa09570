"""Request bodies under budgets: uploads streamed to disk, JSON bodies read within a limit.

Memory and disk the panel spends on request bodies are bounded however many arrive at once:

* **Uploads** (``POST /api/attach/file``) are streamed to a private temporary file (a fresh
  directory of mode 0700, the file 0600, named like the upload so the extractors see its
  extension) and removed when the request ends, whatever happens. One upload may be at most
  :data:`MAX_UPLOAD_BYTES` (more: 413 :class:`BodyTooLarge`, checked against ``Content-Length``
  before a byte is read, and again while reading); all uploads being received or waiting their
  turn together at most :data:`UPLOAD_BUDGET_BYTES` (more: 503 :class:`PanelBusy` with
  ``Retry-After``). Only :data:`ATTACH_SLOTS` uploads are read and attached at once; the others
  wait on disk, not in memory.
* **JSON bodies** are read in memory up to :data:`MAX_JSON_BYTES` each (413) and
  :data:`JSON_BUDGET_BYTES` for all requests being read at once (503).
* A client that goes away mid-body raises Starlette's ``ClientDisconnect`` here after the partial
  file is deleted and the budget given back; :mod:`chatkeep.panel.http` answers it quietly
  (no traceback), and nothing is stored.

Everything here runs on the server's one event loop, so the budgets need no lock.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from starlette.requests import Request

from .. import BadRequest, ChatkeepError

__all__ = [
    "ATTACH_SLOTS",
    "JSON_BUDGET_BYTES",
    "MAX_JSON_BYTES",
    "MAX_UPLOAD_BYTES",
    "RETRY_AFTER_S",
    "UPLOAD_BUDGET_BYTES",
    "BodyBudgets",
    "BodyTooLarge",
    "PanelBusy",
    "json_bytes",
    "upload_to_disk",
]

MiB = 1024 * 1024
#: One uploaded file (the library's own default ``maxSourceBytes``).
MAX_UPLOAD_BYTES = 50 * MiB
#: All uploads being received or waiting to be attached at once (temporary disk space): a
#: browser opens at most 6 connections to one host, so the page alone never runs out of it.
UPLOAD_BUDGET_BYTES = 6 * MAX_UPLOAD_BYTES
#: Uploads read and attached at the same time (each holds its file's bytes in memory).
ATTACH_SLOTS = 2
#: One JSON request body (pasted images travel in it as data URLs).
MAX_JSON_BYTES = 40 * MiB
#: All JSON bodies being read at once (they are held in memory).
JSON_BUDGET_BYTES = 128 * MiB
#: Seconds a refused client is told to wait before trying again.
RETRY_AFTER_S = 5


class BodyTooLarge(BadRequest):
    """A request body over its per-request limit (HTTP 413)."""


class PanelBusy(ChatkeepError):
    """The panel's in-flight budget is spent by other requests (HTTP 503, ``Retry-After``)."""


class Budget:
    """Bytes reserved by requests in flight, out of ``total``."""

    def __init__(self, total: int) -> None:
        self.total = total
        self.used = 0

    def take(self, size: int, what: str) -> None:
        if self.used + size > self.total:
            raise PanelBusy(
                f"the panel is busy: {self.used:,} bytes of {what} are in flight "
                f"(limit {self.total:,}); this one ({size:,} bytes) was not accepted",
                hint=f"try again in a few seconds (the page can retry after {RETRY_AFTER_S} s)",
            )
        self.used += size

    def give(self, size: int) -> None:
        self.used = max(0, self.used - size)


@dataclass
class BodyBudgets:
    """The panel's budgets (one per app; see the module docstring)."""

    uploads: Budget = field(default_factory=lambda: Budget(UPLOAD_BUDGET_BYTES))
    json: Budget = field(default_factory=lambda: Budget(JSON_BUDGET_BYTES))
    attach_slots: asyncio.Semaphore = field(default_factory=lambda: asyncio.Semaphore(ATTACH_SLOTS))


def _declared_length(request: Request) -> int | None:
    raw = request.headers.get("content-length")
    return int(raw) if raw is not None and raw.strip().isdigit() else None


def _too_large(what: str, size: int, limit: int, hint: str) -> BodyTooLarge:
    return BodyTooLarge(f"{what} is {size:,} bytes, over the {limit:,}-byte limit", hint=hint)


class _Reservation:
    """What one request holds of a budget; grows with a body of unknown length."""

    def __init__(self, budget: Budget, what: str) -> None:
        self.budget, self.what, self.held = budget, what, 0

    def cover(self, size: int) -> None:
        if size > self.held:
            self.budget.take(size - self.held, self.what)
            self.held = size

    def release(self) -> None:
        self.budget.give(self.held)
        self.held = 0


@asynccontextmanager
async def upload_to_disk(
    request: Request, budget: Budget, name: str, *, limit: int = MAX_UPLOAD_BYTES
) -> AsyncIterator[tuple[Path, int]]:
    """Stream the request body to ``<private temp dir>/<name>``; yields ``(path, size)``. The
    file and its budget are released when the block ends, also on error or disconnect."""
    hint = "attach it from the command line: chatkeep attach FILE"
    declared = _declared_length(request)
    if declared is not None and declared > limit:
        raise _too_large(name, declared, limit, hint)
    held = _Reservation(budget, "uploads")
    held.cover(declared or 0)
    folder = tempfile.mkdtemp(prefix="chatkeep-upload-")  # mode 0700
    try:
        path = Path(folder) / name
        size = 0
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise _too_large(name, size, limit, hint)
                held.cover(size)
                out.write(chunk)
        yield path, size
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        held.release()


@asynccontextmanager
async def json_bytes(
    request: Request, budget: Budget, *, limit: int = MAX_JSON_BYTES
) -> AsyncIterator[bytes]:
    """The raw request body, within ``limit``; its bytes count against ``budget`` until the
    block (where the caller parses them) ends."""
    hint = "attach big files with the file picker, not pasted"
    declared = _declared_length(request)
    if declared is not None and declared > limit:
        raise _too_large("the request body", declared, limit, hint)
    held = _Reservation(budget, "request bodies")
    held.cover(declared or 0)
    try:
        parts: list[bytes] = []
        size = 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large("the request body", size, limit, hint)
            held.cover(size)
            parts.append(chunk)
        yield b"".join(parts)
    finally:
        held.release()
