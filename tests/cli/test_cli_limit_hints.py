"""The hints of the attachment limits name something a user can actually do: `config set`
refuses maxSourceBytes / maxImagePixels, so the hints must not send the user there."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from clirun import run


def _hint(stderr: str) -> str:
    return next(ln for ln in stderr.splitlines() if ln.startswith("hint:"))


def test_limit_hints_name_actions_that_work(tmp_path: Path) -> None:
    """An over-50 MB file and a 51-megapixel image are refused (exit 8) with hints that say
    what to do instead and how the limit is really raised — not "the setting …", which
    `chatkeep config set` refuses as not a setting."""
    db = tmp_path / "ck.db"
    big = tmp_path / "big.txt"
    with big.open("wb") as f:  # sparse: refused by its size before any read
        f.truncate(51 * 1024 * 1024)
    huge = tmp_path / "huge.png"
    Image.new("L", (10_200, 5_000)).save(huge)
    for path, key in ((big, "maxSourceBytes"), (huge, "maxImagePixels")):
        proc = run(db, "attach", str(path), ok=False)
        assert proc.returncode == 8, proc.stderr
        hint = _hint(proc.stderr)
        assert key in hint and "not a `chatkeep config` setting" in hint
        assert f"chatkeep.open(STORE).local.set('{key}', N)" in hint
        assert "smaller" in hint or "scale the image down" in hint
        refused = run(db, "config", "set", key, "80000000", ok=False)
        assert refused.returncode != 0  # the hint is right not to point there
