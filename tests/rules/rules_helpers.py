"""Shared helpers for the rules tests: real images made with Pillow, entries, SDK shape checks."""

from __future__ import annotations

import base64
import io
import random
from typing import Any

from PIL import Image
from pydantic import TypeAdapter

from chatkeep.constants import PAGE_CONTEXT_PREFIX


def image_bytes(
    size: tuple[int, int] = (64, 48),
    fmt: str = "PNG",
    mode: str = "RGB",
    noise: bool = False,
    seed: int = 0,
    quality: int = 90,
) -> bytes:
    """Encoded bytes of a real image: a gradient, or random noise when ``noise``."""
    w, h = size
    if noise:
        rnd = random.Random(seed)
        img = Image.frombytes("RGB", size, rnd.randbytes(w * h * 3))
    else:
        img = Image.linear_gradient("L").resize(size).convert("RGB")
    if mode != "RGB":
        img = img.convert(mode)
    if mode == "RGBA":
        alpha = Image.linear_gradient("L").resize(size)
        img.putalpha(alpha)
    out = io.BytesIO()
    kwargs: dict[str, Any] = {"quality": quality} if fmt == "JPEG" else {}
    img.save(out, format=fmt, **kwargs)
    return out.getvalue()


def data_url(raw: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64," + base64.b64encode(raw).decode("ascii")


def png_url(size: tuple[int, int] = (64, 48), **kw: Any) -> str:
    return data_url(image_bytes(size, "PNG", **kw), "image/png")


def jpeg_url(size: tuple[int, int] = (64, 48), **kw: Any) -> str:
    return data_url(image_bytes(size, "JPEG", **kw), "image/jpeg")


def decode(url: str) -> Image.Image:
    raw = base64.b64decode(url.split(",", 1)[1])
    img = Image.open(io.BytesIO(raw))
    img.load()
    return img


def img_part(url: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": url}}


def txt(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def attachment(
    body: str = "body",
    *,
    title: str = "A page",
    url: str = "https://example.com/page",
    images: list[str] | None = None,
    attach_id: str = "a1",
) -> dict[str, Any]:
    """An attachment entry as the store holds it."""
    text = f"{PAGE_CONTEXT_PREFIX}\nURL: {url}\nTitle: {title}\nMode: full\n---\n\n{body}"
    content: Any = text
    if images:
        content = [txt(text), *(img_part(u) for u in images)]
    return {"role": "user", "content": content, "attachId": attach_id}


def user(text: str = "hi", images: list[str] | None = None) -> dict[str, Any]:
    if images:
        return {"role": "user", "content": [txt(text), *(img_part(u) for u in images)]}
    return {"role": "user", "content": text}


def assistant(text: str = "ok") -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def _materialize(value: Any) -> Any:
    """Turn pydantic's lazy Iterable validators into lists so results compare with ==."""
    if isinstance(value, dict):
        return {k: _materialize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_materialize(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "__iter__"):
        return [_materialize(v) for v in value]
    return value


def check_shape(adapter: TypeAdapter[Any], value: Any) -> None:
    """Validate against an SDK TypedDict and insist nothing was dropped (no unknown keys)."""
    validated = _materialize(adapter.validate_python(value))
    assert validated == value, "value has keys or shapes the SDK type does not define"
