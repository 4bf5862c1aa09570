"""Page-context text, aging, overflow stubs and the agent turn (SPEC §3.2, §6.2, §6.3, §7.4)."""

from __future__ import annotations

import copy

from rules_helpers import assistant, attachment, img_part, png_url, txt, user

from chatkeep.constants import BROWSA_PAGE_CONTEXT_PREFIX, PAGE_CONTEXT_PREFIX
from chatkeep.entries import is_attachment
from chatkeep.rules.context import (
    age_stale_attachments,
    build_agent_turn,
    build_page_context_text,
    stub_oversized_attachments,
    trimmed_original_chars,
)

BIG_BODY = "x" * 9000
IMG = png_url((8, 8))
IMG2 = png_url((9, 9))


def test_page_context_text_layout():
    """Header lines, `---`, blank line, then the body."""
    text = build_page_context_text(
        {"url": "https://example.com/a", "title": "A title"}, "Body", "full"
    )
    assert text == (
        f"{PAGE_CONTEXT_PREFIX}\nURL: https://example.com/a\nTitle: A title\nMode: full\n---\n\nBody"
    )


def test_page_context_mode_line_variants():
    """Format, fallback marker and change note are appended to the Mode line in order."""
    note = "\nNote: this page's content has changed since it was last attached (previously attached 2025-01-02)."
    text = build_page_context_text(
        {"url": "https://e.com", "title": "T"}, "b", "selection", "markdown", True, note
    )
    assert f"Mode: selection | markdown (fallback to full){note}\n---\n\nb" in text


def test_page_context_redacts_header_and_body_urls():
    """Credentials leave the header URL and every URL in the body."""
    text = build_page_context_text(
        {"url": "https://bob:pw@e.com/p?token=abc", "title": "T"},
        "see https://e.com/x?api_key=SECRET and http://ok.com/y",
        "full",
    )
    assert "URL: https://e.com/p?token=…\n" in text
    assert "SECRET" not in text and "bob" not in text and "http://ok.com/y" in text


def _conversation(attach_body: str = BIG_BODY, turns_after: int = 3) -> list[dict]:
    history = [attachment(attach_body, title='A <b> & "q"', attach_id="old")]
    for i in range(turns_after):
        history += [user(f"q{i}"), assistant(f"a{i}")]
    history.append(attachment("newest", attach_id="new"))
    return history


def test_aging_cold_attachment_becomes_stub():
    """Not newest, ≥3 user entries after, ≥8000 chars → the exact stub string."""
    history = _conversation()
    out = age_stale_attachments(history)
    n = len(history[0]["content"])
    assert out[0]["content"] == (
        "[Attached page context trimmed to keep replies fast — sent in full in an earlier turn]\n"
        'Title: A <b> & "q"\n'
        "URL: https://example.com/page\n"
        f"Original size: ~{n} chars. If you need exact details from this page, ask the user to re-attach it."
    )
    assert out[0]["attachId"] == "old"
    assert out[1:] == history[1:] and all(a is b for a, b in zip(out[1:], history[1:], strict=True))


def test_aging_too_few_user_turns_after():
    """Two user entries after it (the newest attachment counts) are not enough; three are."""
    history = [attachment(BIG_BODY), user("q"), assistant("a"), attachment("n", attach_id="n")]
    assert age_stale_attachments(history) is history
    history.insert(3, user("q2"))
    assert age_stale_attachments(history) is not history


def test_aging_short_attachment_kept():
    """An attachment under 8000 chars never ages."""
    history = _conversation("short")
    assert age_stale_attachments(history) is history


def test_aging_newest_attachment_kept():
    """The newest attachment never ages, however old and large."""
    history = [attachment(BIG_BODY)] + [user("q"), assistant("a")] * 5
    assert age_stale_attachments(history) is history


def test_aging_custom_thresholds():
    """Custom thresholds move the boundary both ways."""
    history = _conversation("y" * 500, turns_after=1)
    assert age_stale_attachments(history) is history
    out = age_stale_attachments(history, min_user_turns_after=2, min_chars=400)
    assert out[0]["content"].startswith("[Attached page context trimmed")
    assert age_stale_attachments(history, min_user_turns_after=3, min_chars=400) is history


def test_aging_stub_is_deterministic():
    """The stub is a pure function of the entry's text: later turns give identical bytes."""
    history = _conversation()
    first = age_stale_attachments(history)[0]["content"]
    later = age_stale_attachments(history + [user("more"), assistant("x")] * 3)[0]["content"]
    assert first == later


def test_aging_multimodal_attachment_to_string():
    """A cold attachment with images ages to a string stub (its images are not sent)."""
    history = _conversation()
    history[0] = attachment(BIG_BODY, images=[IMG, IMG2], attach_id="old")
    out = age_stale_attachments(history)
    assert isinstance(out[0]["content"], str)
    assert isinstance(history[0]["content"], list)


def test_aging_assistant_entries_never_aged():
    """A huge assistant entry that looks like an attachment is never aged."""
    fake = {"role": "assistant", "content": PAGE_CONTEXT_PREFIX + "\n" + BIG_BODY}
    history = [fake] + _conversation()[1:]
    history.insert(0, attachment("z" * 100))
    assert age_stale_attachments(history)[1] is fake


def test_aging_keeps_video_src_and_does_not_mutate():
    """Other fields (videoSrc) survive aging; the stored history is untouched."""
    history = _conversation()
    history[0]["videoSrc"] = {"platform": "youtube", "url": "https://youtu.be/x"}
    before = copy.deepcopy(history)
    out = age_stale_attachments(history)
    assert out[0]["videoSrc"] == {"platform": "youtube", "url": "https://youtu.be/x"}
    assert history == before


def test_aging_stub_without_title_or_url_lines():
    """Title/URL lines appear only when the text has them."""
    entry = {"role": "user", "content": PAGE_CONTEXT_PREFIX + "\n" + BIG_BODY, "attachId": "o"}
    history = [entry] + _conversation()[1:]
    stub = age_stale_attachments(history)[0]["content"]
    assert "Title:" not in stub and "URL:" not in stub and stub.count("\n") == 1


def test_aging_recognises_browsa_prefix():
    """Attachments imported from browsa age too."""
    history = _conversation()
    history[0] = {"role": "user", "content": BROWSA_PAGE_CONTEXT_PREFIX + "\n" + BIG_BODY}
    assert age_stale_attachments(history)[0]["content"].startswith("[Attached page context")


def test_stub_oversized_every_large_attachment():
    """Every attachment ≥ 8000 chars, newest included, becomes the rescue stub."""
    history = [
        attachment(BIG_BODY, title='T<&>"', attach_id="a"),
        user("q"),
        attachment(BIG_BODY, images=[IMG], attach_id="b"),
        attachment("small", attach_id="c"),
    ]
    before = copy.deepcopy(history)
    out, changed = stub_oversized_attachments(history)
    assert history == before
    assert [c["index"] for c in changed] == [0, 2]
    assert [c["attachId"] for c in changed] == ["a", "b"]
    n = len(history[0]["content"])
    assert out[0]["content"] == (
        f"{PAGE_CONTEXT_PREFIX}\n"
        "[chatkeep: this attachment was too large for the model's context window and was omitted so the conversation could continue]\n"
        'Title: T<&>"\n'
        "URL: https://example.com/page\n"
        f"Original size: ~{n} chars. If you need exact details from this page, ask the user to re-attach it."
    )
    assert isinstance(out[2]["content"], str) and changed[1]["content"] == out[2]["content"]
    assert is_attachment(out[0]) and out[3] is history[3]


def test_stub_oversized_nothing_to_do_is_identity():
    """No large attachment → same list, empty change list."""
    history = [attachment("small"), user("q")]
    out, changed = stub_oversized_attachments(history)
    assert out is history and changed == []


def test_stub_oversized_custom_min_and_deterministic():
    """`min_chars` is honoured and the stub is deterministic."""
    history = [attachment("y" * 100)]
    a, _ = stub_oversized_attachments(history, min_chars=50)
    b, _ = stub_oversized_attachments(copy.deepcopy(history), min_chars=50)
    assert a[0]["content"] == b[0]["content"]
    assert stub_oversized_attachments(history)[0] is history


def test_agent_turn_trailing_run_and_image_order():
    """Trailing attachments (oldest first) + user text; pasted images first, then the run's."""
    history = [
        attachment("answered", images=["OLD"], attach_id="o"),
        user("q"),
        assistant("a"),
        attachment("first", images=["R1", "R2"], attach_id="r1"),
        attachment("second", images=["R3"], attach_id="r2"),
    ]
    turn = build_agent_turn(history, "what now?", ["P1", img_part("P2")])
    assert turn["images"] == ["P1", "P2", "R1", "R2", "R3"]
    assert (
        turn["text"].index("first") < turn["text"].index("second") < turn["text"].index("what now?")
    )
    assert "answered" not in turn["text"]


def test_agent_turn_without_run():
    """After a reply with no new attachments the turn is just the text and pasted images."""
    turn = build_agent_turn([user("q"), assistant("a")], "hi", [])
    assert turn == {"text": "hi", "images": []}


def test_agent_turn_run_stops_at_non_attachment():
    """Only the consecutive run at the end counts."""
    history = [assistant("a"), attachment("early"), user("plain"), attachment("late")]
    turn = build_agent_turn(history, "q", [])
    assert "late" in turn["text"] and "early" not in turn["text"]


def test_agent_turn_text_only_attachment_parts():
    """Text parts of a multimodal run entry are joined into the turn text."""
    entry = {"role": "user", "content": [txt(PAGE_CONTEXT_PREFIX + "\nA"), img_part("I"), txt("B")]}
    turn = build_agent_turn([entry], "", [])
    assert turn == {"text": PAGE_CONTEXT_PREFIX + "\nA\nB", "images": ["I"]}


def test_trimmed_original_chars_reads_the_size_a_rescue_stub_records():
    """A rescue stub gives back the original size it records; anything else gives None (an
    aged stub, a plain attachment, a message quoting the size line)."""
    history = [attachment(BIG_BODY, attach_id="a"), attachment("small", attach_id="c")]
    out, _ = stub_oversized_attachments(history)
    assert trimmed_original_chars(out[0]) == len(history[0]["content"])
    assert trimmed_original_chars(out[1]) is None
    assert trimmed_original_chars(user("Original size: ~5 chars. quoted")) is None
    aged = age_stale_attachments(_conversation())
    assert all(trimmed_original_chars(e) is None for e in aged)


def test_stale_attachments_names_exactly_the_entries_aging_stubs() -> None:
    """The aging rule alone (what the cache planner asks) names the very entries
    age_stale_attachments rewrites, over random conversations."""
    import random

    from chatkeep.rules.context import stale_attachments

    rng = random.Random(3)
    for _ in range(60):
        history = []
        for _k in range(rng.randrange(1, 14)):
            pick = rng.random()
            if pick < 0.3:
                history.append(attachment("w " * rng.choice((100, 5000))))
            elif pick < 0.7:
                history.append(user("q"))
            else:
                history.append(assistant("a"))
        aged = age_stale_attachments(history)
        rewritten = [i for i, e in enumerate(history) if aged[i] is not e]
        assert stale_attachments(history) == rewritten
