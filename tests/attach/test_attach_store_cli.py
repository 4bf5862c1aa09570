"""`chatkeep attach` and `chatkeep undo-attach` through the real CLI group, on both backends."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from chatkeep.cli.main import cli, main


def _invoke(spec, *args: str):
    runner = CliRunner()
    return runner.invoke(
        cli, ["--store", spec.url, "--profile", spec.profile, *args], catch_exceptions=False
    )


def _main(spec, capsys, *args: str) -> tuple[int, str, str]:
    """Run the real entry point; (exit code, stdout, stderr). Success returns without exiting."""
    code = 0
    try:
        main(["--store", spec.url, "--profile", spec.profile, *args])
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_attach_file_json(spec, fixtures_dir):
    """attach FILE --json prints the result object and the entry is in the store."""
    result = _invoke(spec, "attach", str(fixtures_dir / "guide.md"), "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert set(data) == {
        "attachId",
        "kind",
        "title",
        "url",
        "chars",
        "images",
        "truncated",
        "changed",
        "summarizing",
        "index",
        "summaryError",
        "summaryCalls",
        "summaryWritten",
    }
    assert (data["kind"], data["title"], data["index"]) == ("file", "Composting at home", 0)
    with spec.open() as s:
        assert [e["attachId"] for e in s.history.read()] == [data["attachId"]]


def test_attach_url_human_output_with_title_and_mode(spec, http_server):
    """attach URL --title --mode prints one line and the header carries both."""
    url = http_server.url("/notes.txt")
    result = _invoke(spec, "attach", url, "--title", "Shop notes", "--mode", "full")
    assert result.exit_code == 0, result.output
    assert result.output.startswith("attached ")
    assert f"  Shop notes — {url} (" in result.output
    with spec.open() as s:
        text = s.history.read()[0]["content"]
    assert "\nTitle: Shop notes\nMode: full | text\n" in text


def test_attach_image_reports_images(spec, tmp_path):
    """An image file attach reports one image in the human output."""
    from PIL import Image

    path = tmp_path / "shot.png"
    Image.new("RGB", (20, 10), (9, 9, 9)).save(path)
    result = _invoke(spec, "attach", str(path))
    assert result.exit_code == 0, result.output
    assert "1 image)" in result.output


def test_attach_video(spec, fixtures_dir):
    """attach --video URL --transcript FILE stores a videoSrc-stamped entry."""
    url = "https://vimeo.com/76979871"
    result = _invoke(
        spec, "attach", "--video", url, "--transcript", str(fixtures_dir / "talk.vtt"), "--json"
    )
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["kind"] == "video"
    with spec.open() as s:
        assert s.history.read()[0]["videoSrc"] == {"platform": "vimeo", "url": url}


@pytest.mark.parametrize(
    "args",
    [
        ("attach",),
        ("attach", "--video", "https://youtu.be/x"),
        ("attach", "--transcript", "talk.vtt"),
        ("attach", "https://a.example/", "--video", "https://youtu.be/x", "--transcript", "t.vtt"),
    ],
)
def test_usage_errors_exit_2_and_store_nothing(spec, args):
    """Missing or conflicting sources are usage errors (exit 2) and store nothing."""
    with spec.open() as s:
        s.local.set("fontSize", 15)
    before = spec.dump()
    result = CliRunner().invoke(cli, ["--store", spec.url, "--profile", spec.profile, *args])
    assert result.exit_code == 2
    assert spec.dump() == before


def test_bad_source_exits_8_with_hint_and_stores_nothing(spec, capsys, fixtures_dir):
    """A bad source prints error and hint on stderr, exits 8, and changes no stored row."""
    _main(spec, capsys, "attach", str(fixtures_dir / "guide.md"))
    before = spec.dump()
    code, out, err = _main(spec, capsys, "attach", str(fixtures_dir / "fake.png"))
    assert code == 8 and out == ""
    assert err.startswith("error: ") and "\nhint: " in err
    assert spec.dump() == before


def test_undo_attach(spec, capsys, fixtures_dir):
    """undo-attach removes the entry; an unknown id exits 1 with a hint and writes nothing."""
    _main(spec, capsys, "attach", str(fixtures_dir / "notes.txt"), "--json")
    with spec.open() as s:
        attach_id = s.history.read()[0]["attachId"]
    code, out, _ = _main(spec, capsys, "undo-attach", attach_id)
    assert code == 0 and out == f"removed attachment {attach_id}\n"
    with spec.open() as s:
        assert s.history.read() == []
    before = spec.dump()
    code, _, err = _main(spec, capsys, "undo-attach", attach_id)
    assert code == 9 and "no attachment with id" in err and "hint: " in err
    assert spec.dump() == before


def test_importing_the_commands_stays_light():
    """Importing the attach commands loads no HTTP, PDF, imaging or HTML library."""
    heavy = ["httpx", "trafilatura", "pypdf", "PIL", "lxml", "charset_normalizer", "rich"]
    probe = (
        "import sys, json\n"
        "import chatkeep.cli.attach_cmds, chatkeep.attach.store_ops\n"
        f"print(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r}))))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []
