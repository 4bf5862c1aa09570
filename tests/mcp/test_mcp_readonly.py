"""No tool of `chatkeep mcp` changes the store unless --allow-write; search finds what was said;
one server serves one profile. On SQLite and PostgreSQL, through the SDK's client over stdio."""

from __future__ import annotations

from typing import Any

import anyio
from mcp import Client

import chatkeep
from support.mcp_client import READ_TOOLS, error_text, payload, stdio_server
from support.mcp_store import Filled, fill
from support.stores import StoreSpec


def calls(filled: Filled) -> list[tuple[str, dict[str, Any]]]:
    """Every read-only tool, with arguments that reach each of its paths (errors included)."""
    texts = [chatkeep.entry_text(e) for e in filled.live]
    figures = next(i for i, t in enumerate(texts) if "## Figures" in t)
    harbours = next(i for i, t in enumerate(texts) if "Harbours" in t)
    summary = next(i for i, e in enumerate(filled.live) if e.get("summarized"))
    return [
        ("search", {"query": "lighthouse"}),
        ("search", {"query": "harbours", "where": ["live", "archive"], "mode": "text"}),
        ("search", {"query": "sourdough", "where": ["evicted"], "limit": 3}),
        ("search", {"query": "x", "mode": "nonsense"}),
        ("list_sessions", {}),
        ("list_sessions", {"query": "talk", "limit": 1, "offset": 1}),
        ("list_sessions", {"evicted": True}),
        ("read_session", {"session": "live", "images": True}),
        ("read_session", {"session": "archive", "offset": 3, "limit": 5}),
        ("read_session", {"session": "long0000", "offset": 140}),
        ("read_session", {"session": "old00000notes"}),
        ("read_session", {"session": "missing-id"}),
        ("recent", {"n": 50, "images": True}),
        ("get_attachment", {"session": "live", "index": 0}),
        ("get_attachment", {"session": "live", "index": figures, "image": 1}),
        ("get_attachment", {"session": "live", "index": harbours, "offset": 20_000}),
        ("get_attachment", {"session": "live", "index": summary}),
        ("get_attachment", {"session": "live", "index": 0, "image": 3}),
        ("get_attachment", {"session": "long", "index": 149}),
    ]


def _run(spec: StoreSpec, scenario: Any, *args: str) -> None:
    async def main() -> None:
        with anyio.fail_after(120):
            async with Client(stdio_server(spec, *args)) as client:
                await scenario(client)

    anyio.run(main)


def test_no_tool_changes_the_store(spec: StoreSpec) -> None:
    """Calling every tool, on every path (pages, images, originals, errors), leaves every stored
    row of the profile as it was."""
    with spec.open() as store:
        filled = fill(store)
    before = spec.dump()
    answered: list[str] = []
    every = calls(filled)

    async def scenario(client: Client) -> None:
        assert {t.name for t in (await client.list_tools()).tools} == READ_TOOLS
        for name, args in every:
            result = await client.call_tool(name, args)
            answered.append(f"{name}:{'error' if result.is_error else 'ok'}")
        unknown = await client.call_tool("save_session", {})
        assert unknown.is_error

    _run(spec, scenario)
    assert answered.count("read_session:error") == 1 and answered.count("search:error") == 1
    assert answered.count("get_attachment:error") == 1  # entry 0 has no third image
    assert sum(a.endswith(":ok") for a in answered) == len(every) - 3
    assert spec.dump() == before


def test_allow_write_adds_save_session_only(spec: StoreSpec) -> None:
    """--allow-write lists save_session besides the read tools, and it is the one call that
    changes the store: it saves the live conversation (here as a new copy)."""
    with spec.open() as store:
        fill(store)
        kept = len(store.sessions.list()) + len(store.sessions.evicted())
    before = spec.dump()

    async def scenario(client: Client) -> None:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == READ_TOOLS | {"save_session"}
        saved = payload(await client.call_tool("save_session", {"name": "From agent", "new": True}))
        assert saved["saved"]["name"] == "From agent"

    _run(spec, scenario, "--allow-write")
    assert spec.dump() != before
    with spec.open() as store:
        rows = store.sessions.list()
        assert len(rows) + len(store.sessions.evicted()) == kept + 1  # maxSessions: one left
        assert rows[0]["name"] == "From agent"
        assert store.sessions.get(rows[0]["id"])["history"] == store.history.read()


def test_search_hits_open_where_they_point(spec: StoreSpec) -> None:
    """search finds a word in a saved session, the archive and an evicted session, with marked
    snippets; each hit's index opens the very entry with read_session."""
    with spec.open() as store:
        filled = fill(store)
        archived = chatkeep.entry_text(filled.archive[0])

    async def scenario(client: Client) -> None:
        hits = payload(await client.call_tool("search", {"query": "turn 137", "mode": "text"}))
        top = hits["hits"][0]
        assert (top["where"], top["sessionId"], top["index"]) == ("session", filled.long_id, 137)
        assert "<mark>" in top["snippet"]
        page = payload(
            await client.call_tool(
                "read_session", {"session": top["sessionId"], "offset": top["index"], "limit": 1}
            )
        )
        assert page["entries"][0]["text"].startswith("turn 137 ")

        found = payload(await client.call_tool("search", {"query": archived, "where": ["archive"]}))
        assert [(h["where"], h["index"]) for h in found["hits"]][:1] == [("archive", 0)]
        old = payload(await client.call_tool("search", {"query": "sourdough"}))
        assert [h["where"] for h in old["hits"]] == ["evicted"]
        paged = payload(await client.call_tool("search", {"query": "lighthouse", "limit": 5}))
        assert len(paged["hits"]) == 5 and paged["nextOffset"] == 5

    _run(spec, scenario)


def test_one_profile_per_server(spec: StoreSpec) -> None:
    """A server started with --profile sees only that profile: another profile's sessions,
    live history and words are neither listed, read nor found."""
    other = StoreSpec(spec.kind, spec.url, spec.profile + "_other")
    with spec.open() as store:
        fill(store)
    with other.open() as store:
        store.history.append({"role": "user", "content": "zebra crossing secrets"})
        (row,) = store.sessions.add_many(
            [({"id": "zebra0000", "name": "Zebra plans"}, store.history.read())]
        )

    async def scenario(client: Client) -> None:
        listed = payload(await client.call_tool("list_sessions", {"query": "zebra"}))
        assert listed["sessions"] == []
        refused = await client.call_tool("read_session", {"session": row["id"]})
        assert "no saved session" in error_text(refused)
        hits = payload(await client.call_tool("search", {"query": "zebra"}))
        assert hits["hits"] == []
        tail = payload(await client.call_tool("recent", {"n": 50}))
        assert all("zebra" not in e["text"] for e in tail["entries"])

    _run(spec, scenario)

    async def theirs(client: Client) -> None:
        hits = payload(await client.call_tool("search", {"query": "zebra"}))
        assert {h["where"] for h in hits["hits"]} == {"live", "session"}

    _run(other, theirs)
