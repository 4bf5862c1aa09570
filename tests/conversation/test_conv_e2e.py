"""End to end over real HTTP: a six-turn conversation, and the overflow rescue (SPEC §6, §7.4)."""

from __future__ import annotations

import pytest
from conv_helpers import untimed, use_provider

from chatkeep.conversation import RESCUE_NOTICE
from chatkeep.errors import ContextOverflow
from chatkeep.rules.context import AGED_STUB_HEADER, OVERSIZED_STUB_NOTE, oversized_stub
from chatkeep.rules.images import image_part
from factories import attachment, png_data_url
from support.provider_server import Text, overflow


def page_body(tag: str, lines: int = 400) -> str:
    return "\n".join(
        f"{tag} line {k}: some extracted page text to make it long." for k in range(lines)
    )


def pdf_attachment(tag: str, figure: str) -> dict:
    entry = attachment(
        page_body(tag) + "\n\n## Figures\nFigures of the paper:\n1. Figure 1: training pipeline",
        title=f"{tag} paper",
        url=f"https://example.com/{tag}.pdf",
    )
    entry["content"] = [{"type": "text", "text": entry["content"]}, image_part(figure)]
    return entry


def test_six_turn_conversation_labels_stubs_and_stable_prefix(chat, provider_server):
    """Seen images go as labels, the cold page as its stub from turn 4, and the prefix holds."""
    store = chat.store
    img1 = png_data_url(40, 30, (10, 200, 10))
    img2 = png_data_url(30, 40, (10, 10, 200))
    b64 = [img1.split(",", 1)[1].encode(), img2.split(",", 1)[1].encode()]
    store.history.append(attachment(page_body("ALPHA"), title="Alpha", url="https://example.com/a"))
    replies = [chat.send("q1", images=[img1]), chat.send("q2"), chat.send("q3", images=[img2])]
    store.history.append(attachment(page_body("BETA"), title="Beta", url="https://example.com/b"))
    replies += [chat.send("q4"), chat.send("q5"), chat.send("q6")]

    raws = [r.raw for r in provider_server.requests]
    bodies = [r.body for r in provider_server.requests]
    assert len(raws) == 6
    # Pixels travel once; afterwards the entries carry labels.
    assert [b64[0] in raw for raw in raws] == [True, False, False, False, False, False]
    assert [b64[1] in raw for raw in raws] == [False, False, True, False, False, False]
    q1 = bodies[1]["messages"][2]
    assert q1 == {
        "role": "user",
        "content": [{"type": "text", "text": "q1"}, {"type": "text", "text": "[image 1]"}],
    }
    # The cold attachment is sent in full for three turns, then as one stable stub.
    alpha = [bodies[k]["messages"][1]["content"] for k in range(6)]
    assert all("ALPHA line 399" in a for a in alpha[:3])
    assert all(a.startswith(AGED_STUB_HEADER) and "ALPHA line" not in a for a in alpha[3:])
    assert "Title: Alpha" in alpha[3] and "URL: https://example.com/a" in alpha[3]
    assert alpha[3] == alpha[4] == alpha[5]
    # The newest attachment never ages.
    assert all(b"BETA line 399" in raw for raw in raws[3:])
    # Stable prefix: every request starts with the whole previous one, except at the two
    # planned breaks (image → label on turn 2, page → stub on turn 4).
    for k in range(1, 6):
        prev = bodies[k - 1]["messages"]
        is_prefix = bodies[k]["messages"][: len(prev)] == prev
        assert is_prefix == (k not in (1, 3)), k
    assert replies[4].stats["prefixOfPrevious"] > 0.95
    assert replies[3].stats["prefixOfPrevious"] < 0.5
    # Storage kept everything: raw pages, pixels (stamped seen), one bubble per send.
    history = store.history.read()
    assert "ALPHA line 399" in history[0]["content"]
    stored_images = [
        p["image_url"]["url"]
        for e in history
        if isinstance(e["content"], list)
        for p in e["content"]
        if p["type"] == "image_url"
    ]
    assert stored_images == [img1, img2]
    assert all(e.get("imagesSeen") for e in history if isinstance(e["content"], list))
    questions = [e for e in history if e["role"] == "user" and not e.get("attachId")]
    assert len(questions) == 6 and sum(e["role"] == "assistant" for e in history) == 6


def test_overflow_is_rescued_once_and_stubs_are_written_after_success(chat, provider_server):
    """Overflow → one immediate retry with stubs and no image bytes; storage stubbed after it."""
    store = chat.store
    chat.send("q1", images=[png_data_url()])
    figure = png_data_url(50, 50, (90, 90, 250))
    page = pdf_attachment("GAMMA", figure)
    store.history.append(page)
    provider_server.queue(overflow("openai_chat"), Text("rescued answer", delay=0.01))
    seen_during: list[dict] = []

    def snapshot(_msg: str = "") -> None:
        seen_during.append(
            next(e for e in store.history.read() if e.get("attachId") == page["attachId"])
        )

    notices: list[str] = []
    reply = chat.send("q2", on_notice=lambda m: (notices.append(m), snapshot()), on_delta=snapshot)
    assert reply.text == "rescued answer" and reply.rescued
    assert notices == [RESCUE_NOTICE] and RESCUE_NOTICE in reply.warnings
    assert len(seen_during) > 1 and all(e == page for e in seen_during)  # raw until success
    first, retry = provider_server.requests[1], provider_server.requests[2]
    assert figure.split(",", 1)[1].encode() in first.raw
    assert b"data:image" not in retry.raw and OVERSIZED_STUB_NOTE.encode() in retry.raw
    assert b"GAMMA line 1:" not in retry.raw
    assert len(provider_server.requests) == 3
    # Storage: the text became the stub, the pixels stayed.
    stored = next(e for e in store.history.read() if e.get("attachId") == page["attachId"])
    assert stored["content"] == [{"type": "text", "text": oversized_stub(page)}, image_part(figure)]
    roles = [e["role"] for e in store.history.read()]
    assert roles == ["user", "assistant", "user", "user", "assistant"]
    # The full text the user attached is kept too, outside the live history.
    assert store.local.get(f"attachOriginal_{page['attachId']}") == page
    # The next turn sends the stored stub directly: no overflow, no rescue.
    provider_server.queue(Text("fine"))
    assert not chat.send("q3").rescued
    assert OVERSIZED_STUB_NOTE.encode() in provider_server.requests[3].raw


def test_failing_retry_leaves_storage_raw(chat, provider_server):
    """A second overflow reaches the caller; the attachment stays raw and no reply is stored."""
    store = chat.store
    page = pdf_attachment("DELTA", png_data_url())
    store.history.append(page)
    before = store.history.read()
    provider_server.queue(overflow("openai_chat"), overflow("openai_chat"))
    with pytest.raises(ContextOverflow) as info:
        chat.send("q1")
    assert info.value.hint
    assert len(provider_server.requests) == 2  # rescued once, never twice
    assert untimed(store.history.read()) == [*before, {"role": "user", "content": "q1"}]
    assert store.local.get(f"attachOriginal_{page['attachId']}") is None


@pytest.mark.parametrize(
    ("style", "flavor"),
    [("responses", "openai_responses"), ("anthropic", "anthropic"), ("chat", "llamacpp")],
)
def test_rescue_works_for_every_style(sqlite_store, provider_server, style, flavor):
    """Each style's own overflow error triggers the rescue and the stub lands in storage."""
    use_provider(sqlite_store, provider_server, style=style)
    page = attachment(page_body("EPS"))
    sqlite_store.history.append(page)
    provider_server.queue(overflow(flavor), Text("ok"))
    reply = sqlite_store.chat.send("question")
    assert reply.rescued and reply.text == "ok"
    assert b"EPS line 5:" in provider_server.requests[0].raw
    assert b"EPS line 5:" not in provider_server.requests[1].raw
    assert sqlite_store.history.read()[0]["content"] == oversized_stub(page)


def test_overflow_without_large_attachments_is_not_retried(lite_chat, provider_server):
    """With nothing to trim the overflow reaches the caller after one request."""
    lite_chat.store.history.append(attachment("short page"))
    provider_server.queue(overflow("openai_chat"))
    with pytest.raises(ContextOverflow):
        lite_chat.send("q")
    assert len(provider_server.requests) == 1
