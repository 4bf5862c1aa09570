"""Labels, seen stamp, prepare_history_for_model, per-request cap rule, interleaving (SPEC §5)."""

from __future__ import annotations

import copy

from rules_helpers import assistant, attachment, img_part, png_url, txt, user

from chatkeep.rules.images import (
    cap_turn_images,
    compact_entry_image_parts,
    image_parts_bytes,
    interleave_image_parts,
    parse_figure_labels,
    prepare_history_for_model,
    stamp_images_seen,
)

IMG = png_url((8, 8))
IMG2 = png_url((9, 9))

FIG_TEXT = (
    "[Page context attached by chatkeep]\nTitle: Paper\n---\n\n1. not a label (before heading)\n"
    "## Figures\nThe figures of this paper, in order:\n1. Figure 1: overview\n"
    "2.   Figure 2: training pipeline  \nnot a label\n3. Figure on page 7\n"
)


def test_parse_figure_labels_after_first_heading():
    """Only numbered lines after the first `## Figures` are labels, stripped, in order."""
    assert parse_figure_labels(FIG_TEXT) == [
        "Figure 1: overview",
        "Figure 2: training pipeline",
        "Figure on page 7",
    ]


def test_parse_figure_labels_without_heading():
    """Text without a `## Figures` heading has no labels."""
    assert parse_figure_labels("1. one\n2. two") == []


def test_parse_figure_labels_second_heading_is_just_text():
    """Lines after a second `## Figures` still count: parsing starts at the first heading."""
    text = "## Figures\n1. a\n## Figures\n1. b"
    assert parse_figure_labels(text) == ["a", "b"]


def test_compact_uses_labels_in_order():
    """The k-th image becomes `[label k]`."""
    entry = {"role": "user", "content": [txt(FIG_TEXT), img_part(IMG), img_part(IMG2)]}
    out = compact_entry_image_parts(entry)
    assert out["content"][1:] == [txt("[Figure 1: overview]"), txt("[Figure 2: training pipeline]")]


def test_compact_more_images_than_captions():
    """Images past the last caption fall back to `[image k]`."""
    text = "## Figures\n1. Figure 3: training pipeline"
    entry = {"role": "user", "content": [txt(text), img_part(IMG), img_part(IMG), img_part(IMG)]}
    out = compact_entry_image_parts(entry)
    assert [p["text"] for p in out["content"][1:]] == [
        "[Figure 3: training pipeline]",
        "[image 2]",
        "[image 3]",
    ]


def test_compact_without_text_labels_numbers_images():
    """A screenshot without captions is labelled `[image 1]`."""
    entry = {"role": "user", "content": [txt("look"), img_part(IMG)]}
    assert compact_entry_image_parts(entry)["content"] == [txt("look"), txt("[image 1]")]


def test_compact_keeps_positions_of_interleaved_parts():
    """Interleaved text and image parts keep their positions."""
    entry = {
        "role": "user",
        "content": [txt("a"), img_part(IMG), txt("b"), img_part(IMG2), txt("c")],
        "attachId": "x",
    }
    out = compact_entry_image_parts(entry)
    assert [p["text"] for p in out["content"]] == ["a", "[image 1]", "b", "[image 2]", "c"]
    assert out["attachId"] == "x"


def test_compact_is_idempotent_and_identity_without_images():
    """Compacting twice equals compacting once; an imageless entry is the same object."""
    entry = {"role": "user", "content": [txt(FIG_TEXT), img_part(IMG)]}
    once = compact_entry_image_parts(entry)
    assert compact_entry_image_parts(once) is once
    plain = user("hello")
    assert compact_entry_image_parts(plain) is plain


def test_compact_accepts_string_image_url_shape():
    """Readers accept `"image_url": str`; such parts are labelled too."""
    entry = {"role": "user", "content": [{"type": "image_url", "image_url": IMG}]}
    assert compact_entry_image_parts(entry)["content"] == [txt("[image 1]")]


def test_compact_does_not_mutate_input():
    """The input entry is untouched."""
    entry = {"role": "user", "content": [txt("x"), img_part(IMG)], "imagesSeen": True}
    before = copy.deepcopy(entry)
    compact_entry_image_parts(entry)
    assert entry == before


def test_prepare_returns_same_list_when_nothing_changes():
    """No `imagesSeen` anywhere → the very same list and entries."""
    history = [user("q"), assistant("a"), user("look", [IMG])]
    assert prepare_history_for_model(history) is history


def test_prepare_labels_seen_images_and_strips_flag():
    """A seen entry's images become labels and the flag is not sent."""
    seen = {**user("look", [IMG]), "imagesSeen": True}
    history = [seen, assistant("nice")]
    out = prepare_history_for_model(history)
    assert out is not history
    assert out[0] == {"role": "user", "content": [txt("look"), txt("[image 1]")]}
    assert out[1] is history[1]
    assert history[0] is seen and seen["imagesSeen"] is True


def test_prepare_strips_flag_from_text_only_entries():
    """An entry with the flag but no images loses the key and keeps its content."""
    entry = {"role": "user", "content": "plain", "imagesSeen": True}
    out = prepare_history_for_model([entry])
    assert out == [{"role": "user", "content": "plain"}]


def test_prepare_keeps_unseen_pixels_and_false_flag_removed():
    """Unseen images pass with their pixels; an explicit `imagesSeen: false` is dropped."""
    unseen = user("look", [IMG])
    flagged_false = {**user("also", [IMG2]), "imagesSeen": False}
    out = prepare_history_for_model([unseen, flagged_false])
    assert out[0] is unseen
    assert out[1]["content"][1] == img_part(IMG2)
    assert "imagesSeen" not in out[1]


def test_prepare_keeps_video_src():
    """`videoSrc` and other fields survive preparation."""
    entry = {
        **attachment("transcript", images=[IMG]),
        "videoSrc": {"platform": "youtube", "url": "https://youtu.be/x"},
        "imagesSeen": True,
    }
    out = prepare_history_for_model([entry])[0]
    assert out["videoSrc"] == entry["videoSrc"] and out["attachId"] == "a1"


def test_stamp_images_seen():
    """Image-bearing entries get the flag; others stay the same objects; idempotent."""
    history = [user("q", [IMG]), assistant("a"), user("plain")]
    out = stamp_images_seen(history)
    assert out is not None
    assert out[0]["imagesSeen"] is True and "imagesSeen" not in history[0]
    assert out[1] is history[1] and out[2] is history[2]
    assert stamp_images_seen(out) is None


def test_stamp_images_seen_no_images_is_none():
    """Nothing to stamp → None (the store writes nothing)."""
    assert stamp_images_seen([user("q"), assistant("a")]) is None


def test_image_parts_bytes_counts_data_url_chars():
    """Sizes are data-URL characters of image parts, for one entry or a list."""
    e = user("q", [IMG, IMG2])
    assert image_parts_bytes(e) == len(IMG) + len(IMG2)
    assert image_parts_bytes([e, assistant("a"), user("x", [IMG])]) == 2 * len(IMG) + len(IMG2)


def test_cap_turn_images_count():
    """At most 8 images per request; the rest are counted as not fitting."""
    kept, dropped = cap_turn_images([IMG] * 10)
    assert len(kept) == 8 and dropped == 2


def test_cap_turn_images_chars_first_fit():
    """First fit in order by size: a big image is skipped, a later small one still fits."""
    big, small = "x" * 70, "y" * 20
    kept, dropped = cap_turn_images([small, big, small, small], max_chars=60)
    assert kept == [small, small, small] and dropped == 1


def test_interleave_places_images_at_anchors():
    """Image k follows the first line containing `[图k]`; text between anchors is kept."""
    text = "intro\nsee [图2] here\nmore [图1]\n[图2] again\nend"
    out = interleave_image_parts(text, ["I1", "I2", "I3"])
    assert out == [
        txt("intro\nsee [图2] here\n"),
        img_part("I2"),
        txt("more [图1]\n"),
        img_part("I1"),
        txt("[图2] again\nend"),
        img_part("I3"),
    ]
    assert "".join(p["text"] for p in out if p["type"] == "text") == text


def test_interleave_no_images_returns_string():
    """Without images the text comes back unchanged."""
    text = "a [图1] b"
    assert interleave_image_parts(text, []) is text


def test_interleave_anchor_numbers_are_exact():
    """`[图1]` is not found inside `[图10]`; unplaced images go to the end."""
    out = interleave_image_parts("x [图10]", ["I1"])
    assert out == [txt("x [图10]"), img_part("I1")]
