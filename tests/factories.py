"""Builders for real test data: entries, attachments and images made with Pillow."""

from __future__ import annotations

import base64
import io
import os
import uuid
from typing import Any

import chatkeep


def png_data_url(
    width: int = 64,
    height: int = 48,
    color: tuple[int, int, int] = (200, 30, 30),
    noise: bool = False,
) -> str:
    """A real PNG made with Pillow, as a data URL."""
    from PIL import Image

    if noise:
        img = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        img = Image.new("RGB", (width, height), color)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode()


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, **extra}


def assistant(text: str, **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": text, **extra}


def image_entry(text: str, *urls: str, **extra: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}]
    parts += [{"type": "image_url", "image_url": {"url": u}} for u in urls]
    return {"role": "user", "content": parts, **extra}


def attachment(
    body: str, title: str = "Page", url: str = "https://example.com/a", **extra: Any
) -> dict[str, Any]:
    text = f"{chatkeep.PAGE_CONTEXT_PREFIX}\nURL: {url}\nTitle: {title}\nMode: auto\n---\n\n{body}"
    return {"role": "user", "content": text, "attachId": uuid.uuid4().hex, **extra}
