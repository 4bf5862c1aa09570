"""Attachment auto-summary over real HTTP (SPEC §7.5): chunks, merge, write-back, failures."""

from __future__ import annotations

import time

import pytest
from conv_helpers import use_provider

import chatkeep
from chatkeep.conversation import (
    SummaryJob,
    should_summarize,
    summarize_attachment,
    summarize_in_background,
)
from chatkeep.rules.images import image_part, interleave_image_parts
from factories import attachment, png_data_url
from support.provider_server import StyledError, Text, server_error

HEADER = f"{chatkeep.PAGE_CONTEXT_PREFIX}\nURL: https://example.com/doc\nTitle: Big doc\nMode: auto\n---\n\n"
BANNER = "[chatkeep: auto-condensed from {n:,} chars — some detail may be lost]"


def long_body(lines: int = 600, tag: str = "fact") -> str:
    return "".join(
        f"{tag} {k}: the measured value was {k * 3} units on day {k}.\n" for k in range(lines)
    )


def illustrated(images: list[str]) -> dict:
    """An attachment whose images sit at [图1] / [图2] anchors in a long text."""
    text = (
        HEADER + "Intro [图1]\n" + long_body(300) + "Middle part [图2]\n" + long_body(300, "more")
    )
    entry = attachment("x")
    entry["content"] = interleave_image_parts(text, images)
    return entry


def find(store, attach_id):
    return next((e for e in store.history.read() if e.get("attachId") == attach_id), None)


@pytest.fixture
def doc_store(store, provider_server):
    use_provider(store, provider_server)
    return store


def test_summary_writes_back_with_banner_and_images_at_anchors(doc_store, provider_server):
    """Chunks in parallel, one merge, then header + banner + summary with images re-anchored."""
    store = doc_store
    imgs = [png_data_url(20, 20, (200, 0, 0)), png_data_url(20, 20, (0, 200, 0))]
    entry = illustrated(imgs)
    store.history.append(entry)
    # §7.5: N counts the body after the header, not the header itself
    raw_len = sum(len(p["text"]) for p in entry["content"] if p["type"] == "text") - len(HEADER)
    provider_server.queue(
        Text("part summary one"),
        Text("part summary two"),
        Text("part summary three"),
        Text("Merged intro [图1]\nMerged middle [图2]\nMerged end."),
    )
    assert summarize_attachment(store, entry["attachId"]) is True
    requests = provider_server.requests
    assert len(requests) == 4  # 3 chunks of ≤ 12,000 chars, then one merge
    chunk_bodies = [r.body["messages"][-1]["content"] for r in requests[:3]]
    assert all(len(b) < 12_000 + 1000 for b in chunk_bodies)
    merge = requests[3].body["messages"][-1]["content"]
    assert all(f"part summary {w}" in merge for w in ("one", "two", "three"))
    stored = find(store, entry["attachId"])
    expected_text = (
        HEADER
        + BANNER.format(n=raw_len)
        + "\n\nMerged intro [图1]\nMerged middle [图2]\nMerged end."
    )
    assert stored["content"] == interleave_image_parts(expected_text, imgs)
    assert stored["content"][1] == image_part(imgs[0]) and stored["content"][3] == image_part(
        imgs[1]
    )
    assert stored["summarized"] is True and stored["attachId"] == entry["attachId"]
    assert f"{raw_len:,}" in stored["content"][0]["text"] and raw_len > 30_000
    assert store.local.get(f"attachOriginal_{entry['attachId']}") == entry  # nothing lost


def test_summary_without_anchors_appends_images_in_order(lite_chat, provider_server):
    """When the summary lost the anchors, the images follow the text in their old order."""
    store = lite_chat.store
    imgs = [png_data_url(10, 10, (1, 2, 3)), png_data_url(12, 12, (3, 2, 1))]
    entry = illustrated(imgs)
    store.history.append(entry)
    provider_server.script(Text("short summary with no anchors"))
    assert summarize_attachment(store, entry["attachId"])
    content = find(store, entry["attachId"])["content"]
    assert [p["type"] for p in content] == ["text", "image_url", "image_url"]
    assert [p["image_url"]["url"] for p in content[1:]] == imgs


def test_single_chunk_needs_no_merge_and_keeps_figures(lite_chat, provider_server):
    """A one-chunk PDF is condensed by one call; its ## Figures list survives verbatim."""
    store = lite_chat.store
    figures = "\n\n## Figures\nFigures of the paper:\n1. Figure 1: model overview"
    text = (
        HEADER.replace("Mode: auto", "Mode: auto | pdf") + "[Page 1]\n" + long_body(100) + figures
    )
    entry = attachment("x")
    entry["content"] = [{"type": "text", "text": text}, image_part(png_data_url())]
    store.history.append(entry)
    provider_server.queue(Text("## Results\n[Page 1] values 0 to 297."))
    assert summarize_attachment(store, entry["attachId"])
    assert len(provider_server.requests) == 1
    prompt = provider_server.requests[0].body["messages"][-1]["content"]
    assert "[Page 3]" in prompt and "heading" in prompt  # the paper family of prompts
    new_text = find(store, entry["attachId"])["content"][0]["text"]
    assert new_text.endswith("## Results\n[Page 1] values 0 to 297." + figures)
    assert chatkeep.parse_figure_labels(new_text) == ["Figure 1: model overview"]


def test_video_transcripts_use_the_timestamp_prompt(sqlite_store, provider_server):
    """A video attachment is condensed with the [mm:ss] rules, through the active style."""
    use_provider(sqlite_store, provider_server, style="anthropic")
    entry = attachment(
        "".join(f"[{k // 60:02d}:{k % 60:02d}] words said here\n" for k in range(400))
    )
    entry["videoSrc"] = {"platform": "youtube", "url": "https://youtu.be/x"}
    sqlite_store.history.append(entry)
    provider_server.queue(Text("[00:00] intro\n[03:20] the end"))
    assert summarize_attachment(sqlite_store, entry["attachId"])
    request = provider_server.requests[0]
    assert request.path == "/v1/messages"
    prompt = request.body["messages"][0]["content"][0]["text"]
    assert "[01:23]" in prompt and "timestamp" in prompt
    stored = find(sqlite_store, entry["attachId"])
    assert stored["videoSrc"] == entry["videoSrc"] and stored["summarized"] is True


def test_generic_prompt_for_plain_pages(lite_chat, provider_server):
    """A plain web page gets the generic family (facts, names, numbers, dates, quotes)."""
    store = lite_chat.store
    entry = attachment(long_body(50))
    store.history.append(entry)
    provider_server.queue(Text("facts"))
    summarize_attachment(store, entry["attachId"])
    prompt = provider_server.requests[0].body["messages"][-1]["content"]
    assert "quote" in prompt and "timestamp" not in prompt and "[Page" not in prompt


@pytest.mark.parametrize("reply", [server_error(), Text("   \n ")], ids=["error", "blank"])
def test_failed_or_blank_summary_changes_nothing(doc_store, spec, provider_server, reply):
    """An HTTP error or a blank summary writes nothing but the usage of the calls that were
    answered (paid calls are counted, SPEC §7.5): the history and the attachment are untouched."""
    entry = attachment(long_body(200))
    doc_store.history.append(entry)
    before = spec.dump()
    provider_server.script(reply)
    assert summarize_attachment(doc_store, entry["attachId"], sleep=lambda _s: None) is False
    assert provider_server.requests
    after = spec.dump()
    after["ck_kv"] = [row for row in after["ck_kv"] if row[1] != "summaryUsage"]
    assert after == before
    recorded = doc_store.local.get("summaryUsage") or []
    calls = [c for record in recorded for c in record["calls"]]
    assert len(calls) == (0 if isinstance(reply, StyledError) else len(provider_server.requests))


def test_blank_merge_changes_nothing(lite_chat, provider_server):
    """Chunk summaries fine but a blank merge: the raw entry stays."""
    store = lite_chat.store
    entry = attachment(long_body(600))
    store.history.append(entry)
    provider_server.queue(Text("a"), Text("b"), Text("c"), Text(""))
    assert summarize_attachment(store, entry["attachId"]) is False
    assert len(provider_server.requests) == 4
    assert find(store, entry["attachId"]) == entry


def test_attachment_removed_meanwhile_is_not_resurrected(lite_chat, provider_server):
    """Undo during the summary: nothing is written back."""
    store = lite_chat.store
    entry = attachment(long_body(100))
    store.history.append(entry)
    store.history.append({"role": "user", "content": "other"})
    provider_server.queue(Text("slow summary " * 20, delay=0.02))
    job = summarize_in_background(store, entry["attachId"], force=True)
    assert isinstance(job, SummaryJob)
    deadline = time.monotonic() + 10
    while not provider_server.requests and time.monotonic() < deadline:
        time.sleep(0.005)
    assert provider_server.requests  # the job is summarizing when the user undoes the attach
    assert store.history.remove_by_attach_id(entry["attachId"]) == 0
    job.join(20)
    assert job.written is False and job.error is None
    assert store.history.read() == [{"role": "user", "content": "other"}]


def test_no_provider_means_no_summary(sqlite_store, monkeypatch):
    """Without any provider card the job ends quietly and the raw entry stays."""
    for var in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "CHATKEEP_MODEL"):
        monkeypatch.delenv(var, raising=False)
    entry = attachment(long_body(50))
    sqlite_store.history.append(entry)
    assert summarize_attachment(sqlite_store, entry["attachId"]) is False
    assert sqlite_store.history.read() == [entry]


def test_background_callback_follows_the_settings(lite_chat, provider_server):
    """summarize_in_background starts a job only over the threshold and when enabled."""
    store = lite_chat.store
    big = attachment(long_body(2000))  # > 100,000 chars
    small = attachment(long_body(10))
    store.history.append(small)
    store.history.append(big)
    settings = store.get_all()
    assert should_summarize(settings, big) and not should_summarize(settings, small)
    assert summarize_in_background(store, small["attachId"]) is None
    store.local.set("autoSummarizeAttachments", False)
    assert summarize_in_background(store, big["attachId"]) is None
    store.local.set({"autoSummarizeAttachments": True, "summarizeThresholdChars": 500})
    assert should_summarize(store.get_all(), small)
    provider_server.script(Text("condensed"))
    job = summarize_in_background(store, small["attachId"])
    job.join(20)
    assert job.written is True
    assert find(store, small["attachId"])["summarized"] is True
    assert not should_summarize(store.get_all(), find(store, small["attachId"]))
