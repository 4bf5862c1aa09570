"""The change tracker (attachSnapshots) and the auto-summary trigger, on SQLite and PostgreSQL."""

from __future__ import annotations

import threading
import time
import uuid

import pytest
from attach_pdfgen import text_pdf

from chatkeep.attach.store_ops import attach_file, attach_url
from chatkeep.attach.tracker import (
    MAX_SNAPSHOTS,
    content_hash,
    format_attached_at,
    snapshot_key,
)

NOTE = "\nNote: this page's content has changed since it was last attached (previously attached {date})."


def _page(http_server, body: str):
    """A fresh text route on the loopback server; change ``route.body`` to change the page."""
    route_cls = type(http_server.routes["/notes.txt"])  # the server's own Route type
    route = route_cls(200, {"Content-Type": "text/plain; charset=utf-8"}, body.encode())
    path = f"/tracked/{uuid.uuid4().hex}.txt"
    http_server.add(path, route)
    return http_server.url(path), route


def _mode_line(entry) -> str:
    text = entry["content"] if isinstance(entry["content"], str) else entry["content"][0]["text"]
    head = text.split("\n---\n\n", 1)[0]
    return head[head.index("Mode: ") :]


def test_first_attach_records_a_snapshot(store, http_server):
    """A first attach has no note and stores {hash, length, attachedAt} under mode::url."""
    url, _ = _page(http_server, "Opening hours: 9 to 5.")
    before = int(time.time() * 1000)
    res = attach_url(store, url)
    snaps = store.local.get("attachSnapshots")
    snap = snaps[snapshot_key("auto", url)]
    assert snap["hash"] == content_hash("Opening hours: 9 to 5.")
    assert snap["hash"].startswith("sha256:") and snap["length"] == 22
    assert before <= snap["attachedAt"] <= int(time.time() * 1000)
    assert res.changed is False
    assert _mode_line(store.history.read()[0]) == "Mode: auto | text"


def test_unchanged_page_gets_no_note(store, http_server):
    """Re-attaching identical content adds no note and refreshes attachedAt."""
    url, _ = _page(http_server, "Same words.")
    attach_url(store, url)
    first = store.local.get("attachSnapshots")[snapshot_key("auto", url)]["attachedAt"]
    time.sleep(0.01)
    res = attach_url(store, url)
    assert res.changed is False
    assert _mode_line(store.history.read()[1]) == "Mode: auto | text"
    assert store.local.get("attachSnapshots")[snapshot_key("auto", url)]["attachedAt"] > first


def test_changed_page_gets_the_exact_note(store, http_server):
    """Changed content adds the exact note with the previous attach date to the Mode line."""
    url, route = _page(http_server, "Version one.")
    attach_url(store, url)
    previous = store.local.get("attachSnapshots")[snapshot_key("auto", url)]
    route.body = b"Version two, longer."
    res = attach_url(store, url)
    date = format_attached_at(previous["attachedAt"])
    assert _mode_line(store.history.read()[1]) == "Mode: auto | text" + NOTE.format(date=date)
    assert res.changed is True
    snap = store.local.get("attachSnapshots")[snapshot_key("auto", url)]
    assert snap["hash"] == content_hash("Version two, longer.") and snap["length"] == 20


def test_date_format_is_utc_minutes():
    """attachedAt is shown as YYYY-MM-DD HH:MM UTC."""
    assert format_attached_at(1_700_000_000_000) == "2023-11-14 22:13 UTC"
    assert format_attached_at("x") == "an unknown date"


def test_mode_is_part_of_the_key(store, http_server):
    """The same URL in another mode is tracked separately: no note across modes."""
    url, route = _page(http_server, "Alpha.")
    attach_url(store, url, mode="auto")
    route.body = b"Beta."
    res = attach_url(store, url, mode="full")
    assert res.changed is False
    assert set(store.local.get("attachSnapshots")) == {f"auto::{url}", f"full::{url}"}


def test_changed_images_count_as_a_change(store, tmp_path):
    """A file whose pixels change but whose text does not is reported as changed."""
    from PIL import Image

    path = tmp_path / "chart.png"
    Image.new("RGB", (40, 40), (255, 0, 0)).save(path)
    attach_file(store, path)
    Image.new("RGB", (40, 40), (0, 0, 255)).save(path)
    assert attach_file(store, path).changed is True


def test_at_most_fifty_snapshots_oldest_evicted(store, http_server):
    """With 50 stored snapshots a new one evicts the oldest and keeps the rest."""
    old = {
        f"auto::https://example.org/p{i}": {"hash": "sha256:x", "length": 1, "attachedAt": 1000 + i}
        for i in range(MAX_SNAPSHOTS)
    }
    old["auto::https://example.org/p7"]["attachedAt"] = 5  # the oldest, not the first key
    store.local.set("attachSnapshots", old)
    url, _ = _page(http_server, "Fresh page.")
    attach_url(store, url)
    snaps = store.local.get("attachSnapshots")
    assert len(snaps) == MAX_SNAPSHOTS
    assert "auto::https://example.org/p7" not in snaps
    assert f"auto::{url}" in snaps and "auto::https://example.org/p0" in snaps


def test_corrupt_snapshots_value_is_replaced(store, http_server):
    """A non-object attachSnapshots reads as empty and is rewritten as a proper map."""
    store.local.set("attachSnapshots", ["not", "a", "map"])
    url, _ = _page(http_server, "Text.")
    assert attach_url(store, url).changed is False
    assert list(store.local.get("attachSnapshots")) == [f"auto::{url}"]


def test_concurrent_attaches_lose_no_snapshot(spec, tmp_path):
    """Eight threads attaching different files on their own connections keep all eight snapshots."""
    paths = []
    for i in range(8):
        p = tmp_path / f"doc{i}.md"
        p.write_text(f"# Doc {i}\n\nbody {i}\n", encoding="utf-8")
        paths.append(p)
    errors: list[BaseException] = []
    # a thread that fails before the barrier breaks it (timeout) instead of leaving the others
    # waiting for ever, and daemon threads never keep the test run alive
    start = threading.Barrier(len(paths), timeout=60)

    def work(path) -> None:
        try:
            with spec.open() as s:
                start.wait()
                attach_file(s, path)
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(p,), daemon=True) for p in paths]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    with spec.open() as s:
        snaps = s.local.get("attachSnapshots")
        assert set(snaps) == {f"auto::{p.resolve().as_uri()}" for p in paths}
        assert len(s.history.read()) == 8


# --------------------------------------------------------------------------- summary trigger


class Recorder:
    """A summarize hook that records what the store held when it was called."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[tuple[str, bool]] = []
        self.fail = fail

    def __call__(self, store, attach_id: str) -> None:
        stored = any(e.get("attachId") == attach_id for e in store.history.read())
        self.calls.append((attach_id, stored))
        if self.fail:
            raise RuntimeError("no provider configured")


def _long_pdf(tmp_path, pages: int = 3):
    path = tmp_path / "long.pdf"
    lines = "\n".join(f"line {k} of a long report about night trains" for k in range(40))
    path.write_bytes(text_pdf([lines] * pages, title="Long report"))
    return path


def test_summary_hook_called_after_the_entry_is_stored(store, tmp_path):
    """Over the threshold, the hook gets (store, attachId) once the raw entry is stored."""
    store.local.set("summarizeThresholdChars", 500)
    hook = Recorder()
    res = attach_file(store, _long_pdf(tmp_path), summarize=hook)
    assert res.chars > 500
    assert hook.calls == [(res.attach_id, True)]
    assert res.summarizing is True and res.summary_error is None


@pytest.mark.parametrize(
    ("settings", "expect_call"),
    [
        ({"summarizeThresholdChars": 500, "autoSummarizeAttachments": False}, False),
        ({"summarizeThresholdChars": 1_000_000}, False),
        ({"summarizeThresholdChars": 0}, False),  # 0 → 100,000, the PDF is far shorter
        ({"summarizeThresholdChars": 10}, True),
    ],
)
def test_summary_hook_respects_settings(store, tmp_path, settings, expect_call):
    """The switch and the threshold (0 meaning 100,000) decide whether the hook runs."""
    store.local.set(settings)
    hook = Recorder()
    res = attach_file(store, _long_pdf(tmp_path), summarize=hook)
    assert bool(hook.calls) is expect_call
    assert res.summarizing is expect_call


def test_threshold_is_strictly_greater(store, tmp_path):
    """Text exactly as long as the threshold is not summarized; one char over is."""
    path = tmp_path / "exact.txt"
    path.write_text("x" * 800, encoding="utf-8")
    store.local.set("summarizeThresholdChars", 800)
    hook = Recorder()
    assert attach_file(store, path, summarize=hook).summarizing is False
    store.local.set("summarizeThresholdChars", 799)
    assert attach_file(store, path, summarize=hook).summarizing is True
    assert len(hook.calls) == 1


def test_failing_hook_keeps_the_attachment(store, tmp_path):
    """A hook that raises leaves the raw entry stored and reports the error, not summarizing."""
    store.local.set("summarizeThresholdChars", 100)
    res = attach_file(store, _long_pdf(tmp_path), summarize=Recorder(fail=True))
    assert res.summarizing is False and res.summary_error == "no provider configured"
    assert [e["attachId"] for e in store.history.read()] == [res.attach_id]


def test_no_hook_means_no_summary(store, tmp_path):
    """Without a hook nothing is summarized even over the threshold."""
    store.local.set("summarizeThresholdChars", 100)
    assert attach_file(store, _long_pdf(tmp_path)).summarizing is False
