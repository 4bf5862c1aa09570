"""Video transcripts: VTT/SRT parsing, timestamps, de-duplication, platforms and bad input."""

from __future__ import annotations

import shutil

import pytest

from chatkeep.attach import extract_video
from chatkeep.attach.video import format_timestamp, video_platform
from chatkeep.entries import validate_entry
from chatkeep.errors import AttachError

YT = "https://www.youtube.com/watch?v=dQw4w9WgXcQ"


def test_vtt_lines_tags_voices_and_duplicates(fixtures_dir):
    """VTT cues become [mm:ss] lines; tags stripped, voices named, repeated cues merged."""
    ex = extract_video(YT, fixtures_dir / "talk.vtt")
    assert ex.text == (
        "[00:00] Narrator: Welcome back to the workshop.\n"
        "[00:03] Today we are building a simple birdhouse from a single pine board.\n"
        "[00:08] First, mark the six pieces & cut them to length.\n"
        "[01:05] Drill a 32 mm entrance hole for blue tits.\n"
        "[09:58] That's it — hang it two metres up, facing away from the wind."
    )
    assert (ex.kind, ex.fmt, ex.url, ex.images) == ("video", "vtt", YT, ())
    assert ex.title == "Building a birdhouse in ten minutes"
    assert ex.video_src == {"platform": "youtube", "url": YT}


def test_srt_with_hours_and_markup(fixtures_dir):
    """SRT cues (CRLF, <i>, <font>, {\\an8}) become lines; from one hour on the stamp is [h:mm:ss]."""
    ex = extract_video("https://vimeo.com/76979871", fixtures_dir / "lecture.srt")
    assert ex.text == (
        "[00:01] [Orchestra tuning]\n"
        "[00:04] Good evening, and welcome to the second half of the lecture.\n"
        "[12:30] Entropy always increases in a closed system.\n"
        "[59:59] Almost an hour in.\n"
        "[1:02:03] Thank you & good night."
    )
    assert (ex.fmt, ex.title) == ("srt", "lecture")
    assert ex.video_src == {"platform": "vimeo", "url": "https://vimeo.com/76979871"}


def test_rolling_auto_captions_not_repeated(fixtures_dir):
    """Auto-generated captions that repeat the previous line are said once."""
    ex = extract_video(YT, fixtures_dir / "youtube_auto.vtt")
    assert ex.text == (
        "[00:00] so today we're looking at\n"
        "[00:02] sourdough starters and why\n"
        "[00:06] they fail in winter"
    )


def test_format_detected_by_content(fixtures_dir, tmp_path):
    """An SRT named .vtt is parsed as SRT and a VTT named .txt as VTT."""
    srt_as_vtt = tmp_path / "x.vtt"
    shutil.copy(fixtures_dir / "lecture.srt", srt_as_vtt)
    vtt_as_txt = tmp_path / "y.txt"
    shutil.copy(fixtures_dir / "talk.vtt", vtt_as_txt)
    assert extract_video(YT, srt_as_vtt).fmt == "srt"
    assert extract_video(YT, vtt_as_txt).fmt == "vtt"


def test_explicit_title_wins(fixtures_dir):
    """A given title replaces the header title."""
    assert extract_video(YT, fixtures_dir / "talk.vtt", title="  My title ").title == "My title"


def test_video_entry_is_valid(fixtures_dir):
    """An entry carrying the result's videoSrc passes validation."""
    ex = extract_video(YT, fixtures_dir / "talk.vtt")
    validate_entry({"role": "user", "content": ex.text, "videoSrc": ex.video_src})


@pytest.mark.parametrize(
    ("url", "platform"),
    [
        ("https://youtu.be/abc", "youtube"),
        ("https://m.youtube.com/watch?v=abc", "youtube"),
        ("https://www.youtube-nocookie.com/embed/abc", "youtube"),
        ("https://player.vimeo.com/video/1", "vimeo"),
        ("https://www.bilibili.com/video/BV1xx411c7mD", "bilibili"),
        ("https://b23.tv/abc", "bilibili"),
        ("https://www.twitch.tv/videos/1", "twitch"),
        ("https://notyoutube.com/watch?v=abc", "web"),
        ("https://media.example.org/talk.mp4", "web"),
    ],
)
def test_platform_from_host(url, platform):
    """The platform comes from the URL's host, matching whole domain labels only."""
    assert video_platform(url) == platform


@pytest.mark.parametrize(
    ("seconds", "stamp"),
    [
        (0, "[00:00]"),
        (59, "[00:59]"),
        (61, "[01:01]"),
        (3599, "[59:59]"),
        (3600, "[1:00:00]"),
        (36125, "[10:02:05]"),
    ],
)
def test_format_timestamp(seconds, stamp):
    """Below an hour [mm:ss], from an hour on [h:mm:ss]."""
    assert format_timestamp(seconds) == stamp


def test_broken_transcript_refused(fixtures_dir):
    """A file without any timed cue raises AttachError with a hint."""
    with pytest.raises(AttachError, match="no timed captions") as err:
        extract_video(YT, fixtures_dir / "broken_transcript.vtt")
    assert "-->" in err.value.hint


def test_binary_transcript_refused(tmp_path):
    """Binary bytes are not a transcript."""
    path = tmp_path / "v.srt"
    path.write_bytes(b"\x00\x01\x02" * 100)
    with pytest.raises(AttachError, match="not a text transcript"):
        extract_video(YT, path)


def test_missing_transcript(tmp_path):
    """A missing transcript file raises AttachError."""
    with pytest.raises(AttachError, match="transcript file not found"):
        extract_video(YT, tmp_path / "nope.vtt")


@pytest.mark.parametrize("url", ["not a url", "ftp://host/video", "/local/video.mp4"])
def test_video_url_must_be_http(fixtures_dir, url):
    """The video URL must be http(s)."""
    with pytest.raises(AttachError, match="not a video URL"):
        extract_video(url, fixtures_dir / "talk.vtt")


def test_transcript_truncated(fixtures_dir):
    """max_chars caps the transcript text and marks it truncated."""
    ex = extract_video(YT, fixtures_dir / "talk.vtt", max_chars=40)
    assert len(ex.text) == 40 and ex.truncated is True
