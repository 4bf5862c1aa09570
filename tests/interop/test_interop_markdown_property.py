"""The Markdown export reads back exactly, whatever the text holds (headings, markers, blank
lines, comment closers, fences in folded reasoning and tool output) — a bounded property test
over the pure writer and reader."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from chatkeep.interop import markdown
from factories import png_data_url

IMG = png_data_url(4, 4)
NASTY = st.sampled_from(
    [
        "",
        "\n",
        "## User",
        "<!-- chatkeep-entry {} -->",
        "<!-- chatkeep-session {} -->",
        "-->",
        "```",
        "</details>",
        "<details><summary>x</summary>",
        "![image 1](x)",
        "# title",
        "`code`",
        "\r",
        " ",
    ]
)
TEXT = st.lists(st.one_of(NASTY, st.text(max_size=30)), max_size=6).map("\n".join)
PART = st.one_of(
    TEXT.map(lambda t: {"type": "text", "text": t}),
    st.just({"type": "image_url", "image_url": {"url": IMG}}),
    st.just({"type": "image_url", "image_url": IMG}),
)
CALL = st.builds(
    lambda name, args, cid: {"name": name, "arguments": args, **({"id": cid} if cid else {})},
    TEXT,
    TEXT,
    st.one_of(st.none(), TEXT),
)
RESULT = st.builds(
    lambda content, name: {"content": content, **({"name": name} if name is not None else {})},
    TEXT,
    st.one_of(st.none(), TEXT),
)
EXTRA = st.fixed_dictionaries(
    {},
    optional={
        "reasoning": TEXT,
        "toolCalls": st.lists(CALL, max_size=2),
        "toolResult": st.lists(RESULT, max_size=2),
        "createdAt": st.integers(min_value=0, max_value=2**53 - 1),
    },
)
ENTRY = st.builds(
    lambda role, content, seen, extra: {
        "role": role,
        "content": content,
        **({"imagesSeen": True} if seen else {}),
        **extra,
    },
    st.sampled_from(["user", "assistant"]),
    st.one_of(TEXT, st.lists(PART, min_size=1, max_size=4)),
    st.booleans(),
    EXTRA,
)
SESSION = st.builds(
    lambda name, created, pinned, history: {
        "id": "a" * 32,
        "name": name,
        "createdAt": created,
        "pinned": pinned,
        "history": history,
    },
    TEXT,
    st.integers(min_value=1, max_value=2**41),
    st.booleans(),
    st.lists(ENTRY, min_size=1, max_size=5),
)


@settings(max_examples=80, deadline=None)
@given(SESSION)
def test_markdown_round_trip_is_exact(session: dict) -> None:
    """write → parse gives back the same id, name, time, pin and entries."""
    (conv,) = markdown.parse("\n".join(markdown.write([session])) + "\n")
    assert conv.fixed_id == session["id"]
    assert conv.title == session["name"] and conv.created_ms == session["createdAt"]
    assert conv.pinned == session["pinned"]
    assert conv.entries == session["history"]
