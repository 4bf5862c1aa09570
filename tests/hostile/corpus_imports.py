"""Hostile import files for the corpus (action ``importfile``: ``chatkeep.import_file``, what
``chatkeep import FILE`` runs): zip members that inflate past their budget or lie about their
size, export folders whose members are FIFOs or links to devices, crafted llm ``logs.db`` files
(in :mod:`hostile.corpus_llm`: recursive views, FIFO and device attachment paths, oversized
blobs), huge JSON Lines lines,
runs of blank space, huge numbers. Every file is generated when its case runs, as small as the
point allows (sparse files and deflate for the big ones): nothing here is committed.
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

Register = Callable[..., Callable[[Callable[[Path], Any]], Callable[[Path], Any]]]
PNG_SIG = b"\x89PNG\r\n\x1a\n"
MB = 1 << 20


def chatgpt_conv(pointer: str | None = "file-service://file-Img123") -> dict[str, Any]:
    """One ChatGPT conversation, its user turn pointing at an image file of the export."""
    parts: list[Any] = ["look at this"]
    if pointer:
        parts.append({"content_type": "image_asset_pointer", "asset_pointer": pointer})

    def node(i: str, parent: str | None, child: str | None, role: str, content: Any) -> Any:
        msg = {"id": i, "author": {"role": role}, "create_time": 1733000000.0, "content": content}
        return {"id": i, "parent": parent, "children": [child] if child else [], "message": msg}

    return {
        "title": "hostile",
        "create_time": 1733000000.0,
        "id": "c0ffee00-hostile",
        "current_node": "a",
        "mapping": {
            "u": node("u", None, "a", "user", {"content_type": "multimodal_text", "parts": parts}),
            "a": node("a", "u", None, "assistant", {"content_type": "text", "parts": ["ok"]}),
        },
    }


def deflated(head: bytes, fill: bytes, size: int, tail: bytes = b"") -> tuple[bytes, int]:
    """``head + fill * … + tail`` of ``size`` bytes, deflated a megabyte at a time; (raw
    deflate stream, CRC-32)."""
    z = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = [z.compress(head)]
    crc = zlib.crc32(head)
    block = fill * (MB // len(fill))
    left = size - len(head) - len(tail)
    while left > 0:
        piece = block[: min(left, len(block))]
        out.append(z.compress(piece))
        crc = zlib.crc32(piece, crc)
        left -= len(piece)
    out.append(z.compress(tail))
    crc = zlib.crc32(tail, crc)
    out.append(z.flush())
    return b"".join(out), crc


def zip_with(path: Path, members: list[tuple[str, bytes | tuple[bytes, int, int]]]) -> Path:
    """A zip whose members are bytes (stored deflated by zipfile) or ``(deflate stream, crc,
    declared size)`` written by hand, so a member can declare any size and inflate to any."""
    buf = io.BytesIO()
    central = []
    for name, body in members:
        if isinstance(body, bytes):
            data, crc, size = zlib.compress(body, 9)[2:-4], zlib.crc32(body), len(body)
        else:
            data, crc, size = body
        off = buf.tell()
        n = name.encode()
        fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0, crc, len(data), size & 0xFFFFFFFF)
        buf.write(b"PK\x03\x04" + fields + struct.pack("<HH", len(n), 0) + n + data)
        central.append(
            b"PK\x01\x02"
            + struct.pack("<H", 20)
            + fields
            + struct.pack("<HHHHHI", len(n), 0, 0, 0, 0, 0o644 << 16)
            + struct.pack("<I", off)
            + n
        )
    cd_off = buf.tell()
    cd = b"".join(central)
    buf.write(cd)
    buf.write(
        b"PK\x05\x06"
        + struct.pack("<HHHHIIH", 0, 0, len(central), len(central), len(cd), cd_off, 0)
    )
    path.write_bytes(buf.getvalue())
    return path


def chatgpt_zip(d: Path, image: bytes | tuple[bytes, int, int], name: str = "x.zip") -> Path:
    convs = json.dumps([chatgpt_conv()]).encode()
    return zip_with(d / name, [("conversations.json", convs), ("file-Img123-photo.png", image)])


def big_png(w: int, h: int) -> bytes:
    """A real 1-bit PNG of ``w``×``h`` (small on disk, many pixels)."""
    from PIL import Image

    buf = io.BytesIO()
    Image.new("1", (w, h)).save(buf, format="PNG")
    return buf.getvalue()


def export_dir(d: Path, image: Callable[[Path], Any] | None = None, convs: Any = None) -> Path:
    """An unpacked ChatGPT export folder; ``image(path)`` makes its image member."""
    root = d / "export"
    root.mkdir()
    if convs is None:
        (root / "conversations.json").write_text(json.dumps([chatgpt_conv()]))
    else:
        convs(root / "conversations.json")
    if image is not None:
        image(root / "file-Img123-photo.png")
    return root


def sparse(p: Path, size: int, head: bytes = b"") -> Path:
    with p.open("wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return p


def fifo(p: Path) -> Path:
    os.mkfifo(p)
    return p


def link(target: str) -> Callable[[Path], Path]:
    def make(p: Path) -> Path:
        os.symlink(target, p)
        return p

    return make


def register(case: Register) -> None:
    """Add the import cases to the corpus through its ``case`` decorator."""

    def imp(
        name: str, ok: bool = False
    ) -> Callable[[Callable[[Path], Any]], Callable[[Path], Any]]:
        return case(name, "importfile", ok=ok)

    # -- zip members: declared and actual size, pixels, damage
    zeros_png = lambda n: deflated(PNG_SIG, b"\x00", n)  # noqa: E731
    imp("zip_image_member_inflates_300mb")(
        lambda d: chatgpt_zip(d, (*zeros_png(300 * MB), 300 * MB))
    )
    imp("zip_image_member_inflates_60mb")(lambda d: chatgpt_zip(d, (*zeros_png(60 * MB), 60 * MB)))
    imp("zip_image_member_declares_1kb_inflates_300mb")(
        lambda d: chatgpt_zip(d, (*zeros_png(300 * MB), 1024))
    )
    imp("zip_image_member_declares_4gb")(lambda d: chatgpt_zip(d, (*zeros_png(1024), 0xFFFFFFFE)))
    imp("zip_image_member_png_100mp")(lambda d: chatgpt_zip(d, big_png(10_000, 10_000)))
    imp("zip_image_member_png_51mp")(lambda d: chatgpt_zip(d, big_png(7_150, 7_150)))
    imp("zip_image_member_bad_crc")(
        lambda d: chatgpt_zip(d, (zlib.compress(PNG_SIG + b"x" * 100)[2:-4], 1234, 108))
    )
    imp("zip_json_member_declares_3gb")(
        lambda d: zip_with(
            d / "x.zip",
            [("conversations.json", (zlib.compress(b"[]")[2:-4], zlib.crc32(b"[]"), 3 << 30))],
        )
    )
    imp("zip_json_member_256mb_of_spaces")(
        lambda d: zip_with(
            d / "x.zip",
            [("conversations.json", (*deflated(b"[]", b" ", 256 * MB), 256 * MB))],
        )
    )
    imp("zip_json_member_spaces_inside_element")(
        lambda d: zip_with(
            d / "x.zip",
            [
                (
                    "conversations.json",
                    (*deflated(b'[{"mapping": {}', b" ", 300 * MB, b"}]"), 300 * MB),
                )
            ],
        )
    )
    imp("zip_json_member_300mb_string")(
        lambda d: zip_with(
            d / "x.zip",
            [
                (
                    "conversations.json",
                    (*deflated(b'[{"title": "', b"a", 300 * MB, b'", "mapping": {}}]'), 300 * MB),
                )
            ],
        )
    )
    imp("zip_json_member_deep_brackets")(
        lambda d: zip_with(
            d / "x.zip", [("conversations.json", (*deflated(b"[", b"[", 64 * MB), 64 * MB))]
        )
    )
    imp("zip_json_member_truncated_stream")(
        lambda d: zip_with(
            d / "x.zip",
            [("conversations.json", (zlib.compress(b"[" * 5000)[2:200], 0, 5000))],
        )
    )
    imp("zip_image_ok", ok=True)(lambda d: chatgpt_zip(d, big_png(64, 64)))

    # -- export folders: regular files only, bounded
    imp("dir_image_symlink_dev_zero")(lambda d: export_dir(d, link("/dev/zero")))
    imp("dir_image_symlink_dev_urandom")(lambda d: export_dir(d, link("/dev/urandom")))
    imp("dir_image_fifo")(lambda d: export_dir(d, fifo))
    imp("dir_image_symlink_to_fifo")(
        lambda d: export_dir(d, lambda p: link(str(fifo(d / "pipe")))(p))
    )
    imp("dir_image_symlink_loop")(
        lambda d: export_dir(d, lambda p: (os.symlink(p, d / "loop"), link(str(d / "loop"))(p))[1])
    )
    imp("dir_image_sparse_60mb")(lambda d: export_dir(d, lambda p: sparse(p, 60 * MB, PNG_SIG)))
    imp("dir_image_png_100mp")(
        lambda d: export_dir(d, lambda p: p.write_bytes(big_png(10_000, 10_000)))
    )
    imp("dir_conversations_json_fifo")(lambda d: export_dir(d, None, fifo))
    imp("dir_conversations_json_dev_zero")(lambda d: export_dir(d, None, link("/dev/zero")))
    imp("dir_conversations_json_dev_urandom")(lambda d: export_dir(d, None, link("/dev/urandom")))
    imp("dir_image_ok", ok=True)(lambda d: export_dir(d, lambda p: p.write_bytes(big_png(64, 64))))

    # -- the import path itself
    imp("file_fifo_json")(lambda d: fifo(d / "in.json"))
    imp("file_symlink_dev_zero")(lambda d: link("/dev/zero")(d / "in.json"))
    imp("file_dev_urandom")(lambda d: Path("/dev/urandom"))
    imp("file_dev_null")(lambda d: Path("/dev/null"))

    # -- JSON Lines and JSON: line, token and blank budgets, numbers
    good = json.dumps({"messages": [{"role": "user", "content": "hi"}]}).encode() + b"\n"
    open_line = b'{"messages": [{"role": "user", "content": "'
    imp("jsonl_second_line_500mb")(lambda d: sparse(d / "x.jsonl", 500 * MB, good + open_line))
    imp("jsonl_first_line_500mb")(lambda d: sparse(d / "x.jsonl", 500 * MB, open_line))
    imp("jsonl_64mb_of_blank_lines")(
        lambda d: write_file(d / "x.jsonl", good + b"\n" * (64 * MB) + good)
    )
    imp("jsonl_line_of_40mb_spaces")(
        lambda d: write_file(d / "x.jsonl", good + b" " * (40 * MB) + b"\n" + good)
    )
    imp("jsonl_int_5000_digits")(
        lambda d: write_file(d / "x.jsonl", good + b'{"messages": [], "n": ' + b"9" * 5000 + b"}\n")
    )
    imp("jsonl_created_at_1e999")(
        lambda d: write_file(
            d / "x.jsonl",
            b'{"messages": [{"role": "user", "content": "x"}], "metadata": {"createdAt": 1e999}}\n',
        )
    )
    imp("jsonl_created_at_nan")(
        lambda d: write_file(
            d / "x.jsonl",
            b'{"messages": [{"role": "user", "content": "x"}], "metadata": {"createdAt": NaN}}\n',
        )
    )
    imp("jsonl_deep_line")(
        lambda d: write_file(
            d / "x.jsonl", good + b'{"messages": ' + b"[" * 50_000 + b"]" * 50_000 + b"}\n"
        )
    )
    imp("json_object_then_64mb_spaces")(
        lambda d: write_file(d / "x.json", b'{"k": 1}' + b" " * (64 * MB))
    )
    imp("json_object_then_spaces_then_junk")(
        lambda d: write_file(d / "x.json", b'{"k": 1}' + b" " * MB + b"junk")
    )
    imp("json_array_then_64mb_spaces")(
        lambda d: write_file(
            d / "x.json", json.dumps([chatgpt_conv(None)]).encode() + b" " * (64 * MB)
        )
    )
    imp("json_64mb_leading_spaces")(
        lambda d: write_file(
            d / "x.json", b" " * (64 * MB) + json.dumps([chatgpt_conv(None)]).encode()
        )
    )
    imp("json_chatgpt_create_time_1e308")(
        lambda d: write_file(
            d / "x.json",
            json.dumps([{**chatgpt_conv(None), "create_time": 1e308}]).encode(),
        )
    )
    imp("json_chatgpt_int_100k_digits")(
        lambda d: write_file(
            d / "x.json",
            b'[{"mapping": {}, "n": ' + b"7" * 100_000 + b"}]",
        )
    )
    imp("json_two_objects")(lambda d: write_file(d / "x.json", b'{"k": 1} {"k": 2}'))

    from hostile.corpus_llm import register_llm

    register_llm(imp)


def write_file(p: Path, data: bytes) -> Path:
    p.write_bytes(data)
    return p
