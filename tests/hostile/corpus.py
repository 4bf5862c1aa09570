"""The hostile-file corpus: every case is generated here (nothing big is committed).

``CASES`` maps a case name to ``(action, make)``: ``make(dir)`` writes the case's file (or
returns a path/value) and ``action`` says what is done with it — ``attach`` (attach_file),
``image`` (attach_image with the bytes), ``import`` (parse_json, then import_data with
replace), ``importfile`` (``import_file``, what ``chatkeep import FILE`` runs; those cases are
in :mod:`hostile.corpus_imports`). ``expect`` lists cases that must succeed; every other case may
succeed or fail, but only with a chatkeep error and with the store unchanged.
"""

from __future__ import annotations

import io
import json
import os
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

Maker = Callable[[Path], Any]
CASES: dict[str, tuple[str, Maker]] = {}
MUST_SUCCEED: set[str] = set()
FIXTURES = Path(__file__).parents[1] / "fixtures"


def case(name: str, action: str, *, ok: bool = False) -> Callable[[Maker], Maker]:
    def register(make: Maker) -> Maker:
        CASES[name] = (action, make)
        if ok:
            MUST_SUCCEED.add(name)
        return make

    return register


def _write(d: Path, name: str, data: bytes | str) -> Path:
    p = d / name
    p.write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)
    return p


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def png_bytes(w: int, h: int, *, depth: int = 8, color: int = 2, idat: bytes = b"") -> bytes:
    """A PNG with any declared size and any IDAT payload (CRCs right, content as given)."""
    ihdr = struct.pack(">IIBBBBB", w, h, depth, color, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", idat) + _chunk(b"IEND", b"")
    )


def _zeros_z(n: int) -> bytes:
    z = zlib.compressobj(9)
    out = b"".join(z.compress(b"\x00" * (1 << 20)) for _ in range(n >> 20))
    return out + z.flush()


def _pil(mode: str, size: tuple[int, int], fmt: str, **kw: Any) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new(mode, size).save(buf, format=fmt, **kw)
    return buf.getvalue()


# ----------------------------------------------------------------------------- images
for _name, _w, _h in (
    ("png_144mp_1bit", 12_000, 12_000),
    ("png_300mp_1bit", 20_000, 15_000),
    ("png_51mp_1bit", 7_150, 7_150),
):
    case(_name, "attach")(
        lambda d, n=_name, w=_w, h=_h: _write(d, n + ".png", _pil("1", (w, h), "PNG"))
    )

case("png_49mp_1bit", "attach", ok=True)(
    lambda d: _write(d, "ok49.png", _pil("1", (7_000, 7_000), "PNG"))
)
case("png_declared_4g_pixels", "attach")(
    lambda d: _write(d, "huge.png", png_bytes(65_535, 65_535, idat=zlib.compress(b"\x00" * 100)))
)
case("png_zlib_bomb_49mp_rgba", "image")(
    lambda d: png_bytes(7_000, 7_000, color=6, idat=_zeros_z(7_000 * (7_000 * 4 + 1)))
)
case("png_zlib_bomb_tiny_declared", "image")(lambda d: png_bytes(1, 1, idat=_zeros_z(64 << 20)))
case("png_zero_size", "attach")(lambda d: _write(d, "zero.png", png_bytes(0, 0)))
case("png_truncated", "attach")(
    lambda d: _write(d, "cut.png", _pil("RGB", (300, 300), "PNG")[:200])
)
case("png_bad_crc", "attach")(
    lambda d: _write(d, "crc.png", png_bytes(10, 10, idat=b"junk")[:-5] + b"XXXXX")
)
case("png_random_bytes", "attach")(lambda d: _write(d, "rand.png", os.urandom(5000)))
case("png_empty_file", "attach")(lambda d: _write(d, "empty.png", b""))
case("jpg_that_is_text", "attach")(lambda d: _write(d, "text.jpg", "hello, not a jpeg\n"))
case("jpeg_huge_declared_sof", "attach")(
    lambda d: _write(
        d,
        "sof.jpg",
        b"\xff\xd8\xff\xc0\x00\x11\x08"
        + struct.pack(">HH", 60_000, 60_000)
        + b"\x03\x01\x22\x00\x02\x11\x01\x03\x11\x01\xff\xd9",
    )
)
case("bmp_huge_declared", "attach")(
    lambda d: _write(
        d,
        "big.bmp",
        b"BM"
        + struct.pack("<IHHI", 54, 0, 0, 54)
        + struct.pack("<IiiHHIIiiII", 40, 50_000, 50_000, 1, 24, 0, 0, 0, 0, 0, 0),
    )
)
case("gif_huge_declared", "image")(
    lambda d: b"GIF89a" + struct.pack("<HH", 65_000, 65_000) + b"\x00\x00\x00" + b";"
)
case("gif_2000_frames", "image", ok=True)(lambda d: _gif_frames(2_000))
case("tiff_huge_declared", "image")(lambda d: _tiff(60_000, 60_000))
case("ico_bogus", "attach")(
    lambda d: _write(d, "x.ico", b"\x00\x00\x01\x00\x01\x00" + b"\xff" * 40)
)
case("webp_truncated", "image")(lambda d: _pil("RGB", (200, 200), "WEBP")[:40])
case("data_url_bad_base64", "image")(lambda d: "data:image/png;base64,!!!not base64!!!")
case("data_url_huge_png", "image")(
    lambda d: (
        "data:image/png;base64,"
        + __import__("base64").b64encode(png_bytes(40_000, 40_000, idat=b"")).decode()
    )
)
case("svg_billion_laughs", "attach")(
    lambda d: _write(
        d,
        "lol.svg",
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
        + "".join(
            f'<!ENTITY {c} "{("&" + p + ";") * 10}">'
            for p, c in zip("abcdefgh", "bcdefghi", strict=True)
        )
        + ']><svg xmlns="http://www.w3.org/2000/svg"><text>&i;</text></svg>',
    )
)


def _gif_frames(n: int) -> bytes:
    from PIL import Image

    frames = [Image.new("P", (8, 8), i % 256) for i in range(n)]
    buf = io.BytesIO()
    frames[0].save(buf, format="GIF", save_all=True, append_images=frames[1:])
    return buf.getvalue()


def _tiff(w: int, h: int) -> bytes:
    entries = [(256, 4, 1, w), (257, 4, 1, h), (258, 3, 1, 8), (262, 3, 1, 1), (273, 4, 1, 8)]
    ifd = (
        struct.pack("<H", len(entries))
        + b"".join(struct.pack("<HHII", *e) for e in entries)
        + b"\x00\x00\x00\x00"
    )
    return b"II*\x00" + struct.pack("<I", 8) + ifd


# ----------------------------------------------------------------------------- PDFs
def _pdf(pages: int = 1, *, text: str = "", encrypt: bool = False) -> bytes:
    from pypdf import PdfWriter

    w = PdfWriter()
    for _ in range(pages):
        w.add_blank_page(width=200, height=200)
    if encrypt:
        w.encrypt("secret")
    buf = io.BytesIO()
    w.write(buf)
    return buf.getvalue()


def _raw_pdf(objects: list[bytes]) -> bytes:
    """A PDF from raw object bodies (object 1 the catalog), with a correct xref table."""
    out = io.BytesIO()
    out.write(b"%PDF-1.7\n")
    offsets = []
    for i, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % i + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for off in offsets:
        out.write(b"%010d 00000 n \n" % off)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def _stream(data: bytes, extra: bytes = b"") -> bytes:
    return b"<< /Length %d %s >>\nstream\n" % (len(data), extra) + data + b"\nendstream"


case("pdf_random_bytes", "attach")(lambda d: _write(d, "rand.pdf", os.urandom(4000)))
case("pdf_empty", "attach")(lambda d: _write(d, "empty.pdf", b""))
case("pdf_header_only", "attach")(lambda d: _write(d, "head.pdf", b"%PDF-1.7\n"))
case("pdf_truncated_real", "attach")(
    lambda d: _write(
        d, "cut.pdf", (FIXTURES / "real_shared-mime-info-spec.pdf").read_bytes()[:30_000]
    )
)
case("pdf_broken_xref", "attach")(
    lambda d: _write(d, "xref.pdf", _pdf(2).replace(b"xref", b"xXef"))
)
case("pdf_3000_pages", "attach")(lambda d: _write(d, "many.pdf", _pdf(3_000)))
case("pdf_encrypted", "attach")(lambda d: _write(d, "enc.pdf", _pdf(1, encrypt=True)))
case("pdf_page_count_lies", "attach")(
    lambda d: _write(
        d,
        "count.pdf",
        _raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 100000000 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] >>",
            ]
        ),
    )
)
case("pdf_circular_kids", "attach")(
    lambda d: _write(
        d,
        "loop.pdf",
        _raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>",
                b"<< /Type /Pages /Kids [2 0 R] /Count 1 /Parent 2 0 R >>",
            ]
        ),
    )
)
case("pdf_flate_bomb_content", "attach")(
    lambda d: _write(
        d,
        "bomb.pdf",
        _raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R >>",
                _stream(_zeros_z(256 << 20), b"/Filter /FlateDecode"),
            ]
        ),
    )
)
case("pdf_image_declared_huge", "attach")(
    lambda d: _write(
        d,
        "img.pdf",
        _raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R"
                b" /Resources << /XObject << /Im1 5 0 R >> >> >>",
                _stream(b"q 100 0 0 100 0 0 cm /Im1 Do Q"),
                _stream(
                    _zeros_z(8 << 20),
                    b"/Type /XObject /Subtype /Image /Width 100000 /Height 100000"
                    b" /ColorSpace /DeviceRGB /BitsPerComponent 8 /Filter /FlateDecode",
                ),
            ]
        ),
    )
)
case("pdf_nested_forms", "attach")(
    lambda d: _write(
        d,
        "forms.pdf",
        _raw_pdf(
            [
                b"<< /Type /Catalog /Pages 2 0 R >>",
                b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
                b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 100 100] /Contents 4 0 R"
                b" /Resources << /XObject << /F 5 0 R >> >> >>",
                _stream(b"/F Do"),
                _stream(
                    b"/F Do",
                    b"/Type /XObject /Subtype /Form /BBox [0 0 1 1]"
                    b" /Resources << /XObject << /F 5 0 R >> >>",
                ),
            ]
        ),
    )
)
case("pdf_real_fixture", "attach", ok=True)(
    lambda d: _write(d, "real.pdf", (FIXTURES / "real_shared-mime-info-spec.pdf").read_bytes())
)


# ----------------------------------------------------------------------------- HTML and text
def _html(n_bytes: int) -> bytes:
    para = b"<p>" + b"lorem ipsum dolor sit amet " * 20 + b"</p>\n"
    body = para * (n_bytes // len(para) + 1)
    return b"<html><head><title>big</title></head><body>" + body + b"</body></html>"


def _sparse(d: Path, name: str, size: int) -> Path:
    p = d / name
    with p.open("wb") as fh:
        fh.truncate(size)
    return p


case("html_60mb_sparse", "attach")(lambda d: _sparse(d, "huge.html", 60 << 20))
case("html_6mb", "attach")(lambda d: _write(d, "six.html", _html(6 << 20)))
case("html_3mb", "attach", ok=True)(lambda d: _write(d, "three.html", _html(3 << 20)))
case("html_nested_100k_divs", "attach")(
    lambda d: _write(
        d, "deep.html", b"<html><body>" + b"<div>" * 100_000 + b"x" + b"</div>" * 100_000
    )
)
case("html_bad_utf8", "attach")(
    lambda d: _write(d, "bad.html", b'<meta charset="utf-8"><p>caf\xe9 \xff\xfe \xc3\x28</p>' * 50)
)
case("html_bogus_charset", "attach")(
    lambda d: _write(d, "cs.html", b'<meta charset="x-no-such-thing"><p>hello world text</p>' * 20)
)
case("html_utf16_claim", "attach")(
    lambda d: _write(d, "u16.html", b'<meta charset="utf-16"><p>plain ascii really</p>' * 20)
)
case("html_gbk_fixture", "attach", ok=True)(
    lambda d: _write(d, "gbk.html", (FIXTURES / "article_zh_gbk.html").read_bytes())
)
case("text_with_nuls", "attach")(lambda d: _write(d, "nul.txt", b"abc\x00def\x00" * 1000))
case("text_cesu_surrogates", "attach")(
    lambda d: _write(d, "sur.txt", b"text \xed\xa0\x80 lone surrogate bytes \xed\xbf\xbf")
)
case("text_utf16_bom", "attach")(
    lambda d: _write(d, "bom.txt", "\ufeffhello utf-16".encode("utf-16"))
)
case("markdown_40mb_one_line", "attach", ok=True)(
    lambda d: _write(d, "long.md", b"# t\n" + b"a" * (40 << 20))
)
case("binary_as_txt", "attach")(lambda d: _write(d, "bin.txt", os.urandom(20_000)))
case("dev_zero", "attach")(lambda d: Path("/dev/zero"))
case("fifo", "attach")(lambda d: (os.mkfifo(d / "pipe.txt"), d / "pipe.txt")[1])
case("directory", "attach")(lambda d: (d / "adir").mkdir() or d / "adir")
case("path_with_nul", "attach")(lambda d: str(d / "a\x00b.txt"))
case("path_traversal_dir", "attach")(lambda d: str(d / ".." / d.name / ".." / ".."))
case("name_with_escapes", "attach", ok=True)(
    lambda d: _write(d, "evil\n\x1b[31mred\x1b[0m\r.txt", "a file with a terminal-escape name\n")
)
case("name_255_chars", "attach", ok=True)(lambda d: _write(d, "n" * 251 + ".txt", "long name\n"))
case("symlink_loop", "attach")(
    lambda d: (
        os.symlink(d / "b.txt", d / "a.txt"),
        os.symlink(d / "a.txt", d / "b.txt"),
        d / "a.txt",
    )[2]
)
case("missing_file", "attach")(lambda d: d / "no-such-file.txt")


# ----------------------------------------------------------------------------- JSON imports
def _json(d: Path, name: str, value: Any) -> Path:
    return _write(d, name, json.dumps(value, ensure_ascii=False))


def _nest(n: int, leaf: Any = 1) -> Any:
    for _ in range(n):
        leaf = [leaf]
    return leaf


def _legacy(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"savedSessions": rows, "history": [{"role": "user", "content": "live"}]}


_H = [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]

case("json_deep_100k", "import")(lambda d: _write(d, "d.json", "[" * 100_000 + "]" * 100_000))
case("json_deep_150", "import")(lambda d: _write(d, "d.json", json.dumps({"k": _nest(150)})))
case("json_deep_99_value", "import", ok=True)(lambda d: _json(d, "d.json", {"k": _nest(99)}))
case("json_int_5000_digits", "import")(lambda d: _write(d, "i.json", '{"k": ' + "9" * 5000 + "}"))
case("json_int_over_64_bits", "import")(
    lambda d: _write(d, "i.json", '{"k": 18446744073709551616}')
)
case("json_float_1e999", "import")(lambda d: _write(d, "f.json", '{"k": 1e999}'))
case("json_nan", "import")(lambda d: _write(d, "n.json", '{"k": NaN}'))
case("json_surrogate_key", "import")(lambda d: _write(d, "s.json", '{"\\ud800": 1}'))
case("json_surrogate_in_history", "import")(
    lambda d: _write(d, "s.json", '{"history": [{"role": "user", "content": "\\udfff"}]}')
)
case("json_invalid_utf8", "import")(lambda d: _write(d, "u.json", b'{"k": "\xff\xfe"}'))
case("json_utf8_bom", "import", ok=True)(lambda d: _write(d, "b.json", b'\xef\xbb\xbf{"k": 1}'))
case("json_top_level_array", "import")(lambda d: _write(d, "a.json", "[1, 2, 3]"))
case("json_truncated", "import")(lambda d: _write(d, "t.json", '{"k": [1, 2, {"a": '))
case("json_40mb_string", "import", ok=True)(
    lambda d: _json(d, "big.json", {"notes": "n" * (40 << 20)})
)
case("json_million_ints", "import", ok=True)(
    lambda d: _json(d, "m.json", {"k": list(range(1_000_000))})
)
case("json_key_201_chars", "import")(lambda d: _json(d, "k.json", {"k" * 201: 1}))
case("json_empty_key", "import")(lambda d: _json(d, "k.json", {"": 1}))
case("json_poisoned_deep_image", "import")(
    lambda d: _json(d, "p.json", {"k": _nest(600, "data:image/png;base64," + "A" * 400)})
)
case("json_duplicate_object_keys", "import", ok=True)(
    lambda d: _write(d, "dk.json", '{"k": 1, "k": 2}')
)
case("json_bad_history_entry", "import")(
    lambda d: _json(d, "h.json", {"history": [{"role": "robot", "content": 5}]})
)
case("json_wrong_export_version", "import")(
    lambda d: _json(d, "v.json", {"format": "chatkeep-export", "version": 99, "local": {}})
)
case("legacy_duplicate_ids", "import", ok=True)(
    lambda d: _json(
        d,
        "dup.json",
        _legacy(
            [
                {"id": "same", "name": "A", "history": _H},
                {"id": "same", "name": "B", "history": _H[:1]},
            ]
        ),
    )
)
case("legacy_nul_id", "import", ok=True)(
    lambda d: _json(d, "nul.json", _legacy([{"id": "a\x00b", "name": "N", "history": _H}]))
)
case("legacy_300_char_id", "import", ok=True)(
    lambda d: _json(d, "long.json", _legacy([{"id": "x" * 300, "name": "L", "history": _H}]))
)
case("legacy_non_string_ids", "import", ok=True)(
    lambda d: _json(
        d,
        "ids.json",
        _legacy([{"id": 7, "name": "I", "history": _H}, {"name": "no id", "history": _H}]),
    )
)
case("legacy_history_not_a_list", "import", ok=True)(
    lambda d: _json(d, "hl.json", _legacy([{"id": "h", "name": "H", "history": "oops"}]))
)


# ----------------------------------------------------------------------------- foreign imports
from hostile.corpus_imports import register  # noqa: E402

register(case)
