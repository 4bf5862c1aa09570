"""Image files and pasted images: validated by decoding, kept byte for byte, screenshot entries."""

from __future__ import annotations

import base64
import io

import pytest
from PIL import Image

from chatkeep.attach import extract_file, extract_image_bytes
from chatkeep.entries import validate_entry
from chatkeep.errors import AttachError


def _payload(url: str) -> bytes:
    return base64.b64decode(url.split(",", 1)[1])


def _make(path, fmt: str, size=(640, 480)):
    mode = "P" if fmt == "GIF" else "RGB"
    img = Image.new("RGB", size, (30, 120, 200)).convert(mode)
    img.save(path, format=fmt)
    return path


@pytest.mark.parametrize(
    ("name", "fmt", "mime"),
    [
        ("shot.png", "PNG", "png"),
        ("photo.jpg", "JPEG", "jpeg"),
        ("photo.jpeg", "JPEG", "jpeg"),
        ("frame.webp", "WEBP", "webp"),
        ("anim.gif", "GIF", "gif"),
    ],
)
def test_image_files_kept_byte_for_byte(tmp_path, name, fmt, mime):
    """PNG/JPEG/WebP/GIF keep their original bytes in a data URL of the right type."""
    path = _make(tmp_path / name, fmt)
    ex = extract_file(path)
    assert (ex.kind, ex.fmt, ex.title) == ("image", mime, name)
    assert ex.text == f"Screenshot: {name} (640×480)"
    assert len(ex.images) == 1
    assert ex.images[0].startswith(f"data:image/{mime};base64,")
    assert _payload(ex.images[0]) == path.read_bytes()
    assert ex.url == path.resolve().as_uri()


def test_screenshot_entry_is_valid(tmp_path):
    """[text, image] built from the result passes history entry validation."""
    ex = extract_file(_make(tmp_path / "s.png", "PNG", (32, 20)))
    validate_entry(
        {
            "role": "user",
            "content": [
                {"type": "text", "text": ex.text},
                {"type": "image_url", "image_url": {"url": ex.images[0]}},
            ],
        }
    )


def test_extension_is_not_trusted(tmp_path):
    """A JPEG saved as .png is reported and encoded as JPEG."""
    path = _make(tmp_path / "misnamed.png", "JPEG")
    ex = extract_file(path)
    assert ex.fmt == "jpeg" and ex.images[0].startswith("data:image/jpeg;base64,")


def test_text_with_png_extension_refused(fixtures_dir):
    """A text file named .png raises AttachError."""
    with pytest.raises(AttachError, match="not a readable image") as err:
        extract_file(fixtures_dir / "fake.png")
    assert err.value.hint


def test_truncated_png_refused(tmp_path):
    """A PNG cut in half fails full decoding and raises AttachError."""
    buf = io.BytesIO()
    Image.effect_noise((300, 300), 64).save(buf, format="PNG")
    path = tmp_path / "cut.png"
    path.write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(AttachError, match="damaged or truncated"):
        extract_file(path)


def test_tiff_with_alpha_kept_byte_for_byte(tmp_path):
    """A TIFF with transparency is stored as the file's own bytes, typed image/tiff (§3.2)."""
    img = Image.new("RGBA", (40, 30), (10, 20, 30, 128))
    img.putpixel((3, 4), (255, 0, 0, 255))
    path = tmp_path / "layer.tiff"
    img.save(path)
    ex = extract_file(path)
    assert ex.fmt == "tiff" and ex.images[0].startswith("data:image/tiff;base64,")
    assert _payload(ex.images[0]) == path.read_bytes()


def test_pasted_image_bytes(tmp_path):
    """Pasted bytes become a screenshot entry named by the caller."""
    data = _make(tmp_path / "p.png", "PNG", (100, 50)).read_bytes()
    ex = extract_image_bytes(data)
    assert ex.text == "Screenshot: pasted image (100×50)"
    assert ex.url == "" and _payload(ex.images[0]) == data


def test_empty_pasted_image_refused():
    """Empty bytes raise AttachError."""
    with pytest.raises(AttachError, match="empty"):
        extract_image_bytes(b"")
