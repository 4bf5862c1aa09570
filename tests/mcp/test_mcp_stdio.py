"""`chatkeep mcp` over stdio, driven by the MCP SDK's own client: the tools it lists, each tool's
answer, paging through a long session within the budget, images as labels or as blocks."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import anyio
from mcp import Client
from PIL import Image

import chatkeep
from support.mcp_client import READ_TOOLS, error_text, image_blocks, payload, stdio_server
from support.mcp_store import Filled, fill
from support.stores import StoreSpec

CALL_CHARS = 24_000


def _run(spec: StoreSpec, scenario: Any, *args: str) -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(stdio_server(spec, *args)) as client:
                await scenario(client)

    anyio.run(main)


def test_lists_the_read_only_tools_with_their_bounds(sqlite_spec: StoreSpec) -> None:
    """Without --allow-write the server lists exactly the five read-only tools, each marked
    read-only and stating its character budget in its description."""
    with sqlite_spec.open() as store:
        fill(store)

    async def scenario(client: Client) -> None:
        tools = (await client.list_tools()).tools
        assert {t.name for t in tools} == READ_TOOLS
        for tool in tools:
            assert tool.annotations is not None and tool.annotations.read_only_hint, tool.name
            assert "24,000 characters" in (tool.description or ""), tool.name

    _run(sqlite_spec, scenario)


def test_pages_through_a_long_session_within_the_budget(sqlite_spec: StoreSpec) -> None:
    """read_session pages a 150-turn session by nextOffset: every page's text stays within the
    budget (so a page asks for 100 entries and gets fewer), and the pages together are the whole
    session in order, entry for entry."""
    with sqlite_spec.open() as store:
        filled = fill(store)

    async def scenario(client: Client) -> None:
        seen: list[dict[str, Any]] = []
        offset: int | None = 0
        pages = 0
        while offset is not None:
            result = await client.call_tool(
                "read_session", {"session": "long", "offset": offset, "limit": 100}
            )
            page = payload(result)
            assert len(result.content[0].text) <= CALL_CHARS  # type: ignore[union-attr]
            assert page["session"] == filled.long_id and page["total"] == 150
            assert page["offset"] == offset
            seen += page["entries"]
            offset = page["nextOffset"]
            pages += 1
        assert pages >= 5  # 150 entries of 900 characters: the budget, not the limit, cut them
        assert [e["index"] for e in seen] == list(range(150))
        assert [e["text"] for e in seen] == [e["content"] for e in filled.long_body]
        assert [e["role"] for e in seen] == [e["role"] for e in filled.long_body]

    _run(sqlite_spec, scenario)


def test_each_tool_answers(sqlite_spec: StoreSpec) -> None:
    """recent is the live tail with its indexes; list_sessions pages the drawer and its
    evicted list; read_session reads the archive and an evicted session; a long attachment is
    cut in a page and read whole with get_attachment; a summarized one gives its original."""
    with sqlite_spec.open() as store:
        filled = fill(store)
    live, archive = filled.live, filled.archive

    async def scenario(client: Client) -> None:
        tail = payload(await client.call_tool("recent", {"n": 3}))
        assert tail["total"] == len(live)
        assert [e["index"] for e in tail["entries"]] == [len(live) - 3 + i for i in range(3)]
        assert tail["entries"][-1]["text"] == "It said the harbours are busy."

        first = payload(await client.call_tool("list_sessions", {"limit": 1}))
        assert [r["name"] for r in first["sessions"]] == ["Live talk"]
        second = payload(
            await client.call_tool("list_sessions", {"limit": 1, "offset": first["nextOffset"]})
        )
        assert [r["name"] for r in second["sessions"]] == ["Long talk"]
        assert second["nextOffset"] is None
        found = payload(await client.call_tool("list_sessions", {"query": "lighthouse"}))
        assert [r["id"] for r in found["sessions"]] == [filled.long_id]
        gone = payload(await client.call_tool("list_sessions", {"evicted": True}))
        assert [r["id"] for r in gone["sessions"]] == [filled.evicted_id]

        old = payload(await client.call_tool("read_session", {"session": filled.evicted_id}))
        assert old["where"] == "evicted"
        assert [e["text"] for e in old["entries"]][0] == "an old note about sourdough"
        arch = payload(await client.call_tool("read_session", {"session": "archive"}))
        assert arch["total"] == len(archive) > 0
        assert [e["text"] for e in arch["entries"]] == [
            chatkeep.entry_text(e) for e in archive[:20]
        ]

        at = next(i for i, e in enumerate(live) if "Harbours" in chatkeep.entry_text(e))
        row = payload(await client.call_tool("read_session", {"session": "live", "offset": at}))
        big = row["entries"][0]
        assert big["attachment"]["title"] == "Harbours"
        assert big["cut"] == {"shownChars": 4000, "totalChars": len(chatkeep.entry_text(live[at]))}
        text, offset = "", 0
        while offset is not None:
            chunk = payload(
                await client.call_tool(
                    "get_attachment", {"session": "live", "index": at, "offset": offset}
                )
            )
            text += chunk["text"]
            offset = chunk["nextOffset"]
        assert text == chatkeep.entry_text(live[at])
        assert filled.big_text in text

        summ = next(i for i, e in enumerate(live) if e.get("summarized"))
        whole = payload(
            await client.call_tool("get_attachment", {"session": "live", "index": summ})
        )
        assert whole["original"] is True and filled.original_text in whole["text"]

        missing = await client.call_tool("read_session", {"session": "nosuchsession"})
        assert "list_sessions" in error_text(missing)
        beyond = await client.call_tool("get_attachment", {"session": "live", "index": 10_000})
        assert "no entry at index 10000" in error_text(beyond)

    _run(sqlite_spec, scenario)


def _pixels(data: str) -> Image.Image:
    img = Image.open(io.BytesIO(base64.b64decode(data)))
    img.load()
    return img


def test_images_are_labels_unless_asked(sqlite_spec: StoreSpec) -> None:
    """By default an image is its label ([Revenue by quarter]) and its size, with no image
    block; images=true adds blocks (the small PNG byte for byte, the wide and the noisy one
    resized for the result), and get_attachment gives one image; the store keeps them whole."""
    with sqlite_spec.open() as store:
        filled: Filled = fill(store)
    live = filled.live
    at = next(i for i, e in enumerate(live) if "## Figures" in chatkeep.entry_text(e))
    stored = chatkeep.decode_data_url(filled.small_png)[1]

    async def scenario(client: Client) -> None:
        args = {"session": "live", "offset": at, "limit": 2}
        plain = await client.call_tool("read_session", args)
        entry = payload(plain)["entries"][0]
        assert "[Revenue by quarter]" in entry["text"] and "[Churn by cohort]" in entry["text"]
        assert image_blocks(plain) == []
        assert "base64" not in json.dumps(payload(plain))
        first = entry["images"][0]
        assert (first["label"], first["seen"], first["width"], first["height"]) == (
            "[Revenue by quarter]",
            True,
            40,
            30,
        )

        rich = await client.call_tool("read_session", {**args, "images": True})
        blocks = image_blocks(rich)
        assert len(blocks) == 3
        assert base64.b64decode(blocks[0].data) == stored
        assert blocks[0].mime_type == "image/png"
        for block in blocks[1:]:
            img = _pixels(block.data)
            assert max(img.size) <= 1568 and len(base64.b64decode(block.data)) <= 1_000_000
        captions = [getattr(c, "text", "") for c in rich.content[1:] if c.type == "text"]
        assert captions[0] == f"entry {at}, image 1: [Revenue by quarter]"

        one = await client.call_tool("get_attachment", {"session": "live", "index": at, "image": 2})
        (block,) = image_blocks(one)
        assert _pixels(block.data).size == (1568, 1176)
        assert payload(one)["image"]["width"] == 2000  # the stored image, whole

        tail = await client.call_tool("recent", {"n": 10, "images": True})
        assert len(image_blocks(tail)) == 3

    _run(sqlite_spec, scenario)
    with sqlite_spec.open() as store:
        again = store.history.read()[at]
    assert [p["image_url"]["url"] for p in again["content"][1:]] == [
        filled.small_png,
        filled.wide_png,
    ]
