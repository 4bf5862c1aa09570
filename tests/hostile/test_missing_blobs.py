"""A blob row that is gone costs that one image, never the entry or the session holding it:
every read path shows a placeholder in its place, ``stats`` and ``doctor`` count it, ``doctor
--repair`` leaves the readable rows where they are, and ``--restore-quarantine`` puts back what
an older repair moved out. The damage is done with raw SQL on a separate connection."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import chatkeep
from clirun import run
from factories import assistant, image_entry, png_data_url


def _hash(url: str) -> str:
    """The hash a blob is stored under: the SHA-256 of the URL's UTF-8 text."""
    return hashlib.sha256(url.encode("utf-8")).hexdigest()


def _images(n: int) -> list[str]:
    return [png_data_url(16, 16, noise=True) for _ in range(n)]


def _parts(entries: list[dict[str, Any]]) -> list[Any]:
    return [p for e in entries if isinstance(e["content"], list) for p in e["content"]]


def _drop_blobs(spec: Any, urls: list[str]) -> list[str]:
    """Delete the blob rows of ``urls`` (and only them); returns their hashes."""
    hashes = [_hash(u) for u in urls]
    for h in hashes:
        spec.raw_rows("DELETE FROM ck_blobs WHERE profile=? AND hash=?", (spec.profile, h))
    return hashes


def _three_sessions(store: chatkeep.Store, urls: list[str]) -> list[str]:
    ids = []
    for i in range(3):
        store.history.append(image_entry(f"look {i}", urls[2 * i]))
        store.history.append(image_entry(f"and {i}", urls[2 * i + 1]))
        store.history.append(assistant(f"answer {i}"))
        row = store.sessions.save(f"s{i}")
        assert row is not None
        ids.append(row["id"])
        store.history.clear()
    return ids


def _placeholder(h: str) -> dict[str, str]:
    return {"type": "text", "text": f"[image missing: sha256:{h}]"}


def test_missing_blobs_leave_sessions_whole(spec: Any) -> None:
    """With 3 of 6 blobs deleted every session reads back whole: each lost image is a text
    placeholder naming its hash, the other images and all text are intact."""
    urls = _images(6)
    with spec.open() as store:
        ids = _three_sessions(store, urls)
    gone = _drop_blobs(spec, urls[3:])
    with spec.open() as store:
        bodies = [store.sessions.get(i) for i in ids]
        assert all(b is not None and len(b["history"]) == 3 for b in bodies)
        parts = [p for b in bodies if b is not None for p in _parts(b["history"])]
        assert [p["text"] for p in parts if p["type"] == "text" and "missing" not in p["text"]] == [
            "look 0",
            "and 0",
            "look 1",
            "and 1",
            "look 2",
            "and 2",
        ]
        images = [p["image_url"]["url"] for p in parts if p["type"] == "image_url"]
        assert images == urls[:3]
        assert [p for p in parts if "missing" in p.get("text", "")] == [
            _placeholder(h) for h in gone
        ]
        exported = store.export_data()["local"]
        assert all(len(exported[f"session_{i}"]) == 3 for i in ids)


def test_missing_blob_in_live_history_and_export(spec: Any, tmp_path: Path) -> None:
    """A lost image in the live history reads as a placeholder and the entry stays, through
    the API and the exported profile."""
    urls = _images(2)
    with spec.open() as store:
        store.history.append(image_entry("two pictures", *urls))
        store.history.append(assistant("seen"))
    (h,) = _drop_blobs(spec, urls[:1])
    with spec.open() as store:
        live = store.history.read()
        assert len(live) == 2
        assert live[0]["content"] == [
            {"type": "text", "text": "two pictures"},
            _placeholder(h),
            {"type": "image_url", "image_url": {"url": urls[1]}},
        ]
        assert store.export_data()["history"] == live
        assert store.stats()["entries"] == 2


def test_stats_and_doctor_count_missing_blobs_and_repair_keeps_rows(spec: Any) -> None:
    """`stats` counts missing blobs, `doctor` reports each row that lost one, and `--repair`
    quarantines nothing (twice over): the sessions keep every readable byte."""
    urls = _images(6)
    with spec.open() as store:
        ids = _three_sessions(store, urls)
    _drop_blobs(spec, urls[3:])
    with spec.open() as store:
        assert store.stats()["missingBlobs"] == 3
        before = [store.sessions.get(i) for i in ids]
        for _ in range(2):
            report = store.doctor(repair=True)
            assert report["quarantined"] == []
            missing = [p for p in report["problems"] if p["kind"] == "missing-blob"]
            assert len(missing) == 2 and not any(p["repaired"] for p in missing)
            assert {p["kind"] for p in report["problems"]} == {"missing-blob"}
            assert [store.sessions.get(i) for i in ids] == before


def test_storing_the_same_image_again_brings_it_back(spec: Any) -> None:
    """A row keeps its pointer to a lost image: storing the same bytes again makes it read
    whole, and the store healthy."""
    urls = _images(2)
    with spec.open() as store:
        (sid,) = _three_sessions(store, urls * 3)[:1]
    _drop_blobs(spec, urls[:1])
    with spec.open() as store:
        assert not store.doctor()["healthy"]
        store.history.append(image_entry("again", urls[0]))
        body = store.sessions.get(sid)
        assert body is not None
        assert [p["image_url"]["url"] for p in _parts(body["history"]) if "image_url" in p] == urls
        assert store.doctor()["healthy"]
        assert store.stats()["missingBlobs"] == 0


def _old_quarantine(spec: Any, store: chatkeep.Store, sid: str) -> None:
    """What an older `doctor --repair` left: the whole body (its lost image still a blob
    marker) in a quarantine record, an empty body in its place."""
    key = f"session_{sid}"
    rows = spec.raw_rows(  # the body's stored text: its entries' rows, as one list
        "SELECT value FROM ck_session_items WHERE profile=? AND sid=? ORDER BY pos",
        (spec.profile, sid),
    )
    text = "[" + ",".join(r[0] for r in rows) + "]"
    urls = store.export_data()["local"][key]  # the readable images, resolved
    record_text = text
    for part in _parts(urls):
        if part["type"] == "image_url":
            h = _hash(part["image_url"]["url"])
            record_text = record_text.replace(
                f'"\\u0000b:{h}"', json.dumps(part["image_url"]["url"])
            )
    store.local.set(
        "quarantine_1",
        {"from": "k:" + key, "reason": "unreadable: missing blob", "quarantinedAt": 1,
         "text": record_text},
    )  # fmt: skip
    spec.raw_rows("UPDATE ck_kv SET value='[]' WHERE profile=? AND key=?", (spec.profile, key))
    spec.raw_rows("DELETE FROM ck_session_items WHERE profile=? AND sid=?", (spec.profile, sid))


def test_restore_quarantine_puts_back_what_reads_now(spec: Any) -> None:
    """A session body an older repair moved to quarantine (it pointed at a lost image) is put
    back by `doctor(restore_quarantine=True)`: every readable byte, a placeholder for the rest."""
    urls = _images(2)
    with spec.open() as store:
        sid = _three_sessions(store, urls * 3)[0]
    (h,) = _drop_blobs(spec, urls[1:])
    with spec.open() as store:
        _old_quarantine(spec, store, sid)
        assert store.sessions.get(sid)["history"] == []  # type: ignore[index]
        report = store.doctor(restore_quarantine=True)
        assert report["restored"] == ["quarantine_1"]
        body = store.sessions.get(sid)
        assert body is not None and len(body["history"]) == 3
        assert _parts(body["history"])[1] == {"type": "image_url", "image_url": {"url": urls[0]}}
        assert _parts(body["history"])[3] == _placeholder(h)
        assert store.local.get("quarantine_1") is None


def test_cli_restore_quarantine(sqlite_spec: Any) -> None:
    """`chatkeep doctor --restore-quarantine` restores through the CLI and says so;
    `chatkeep doctor --repair` afterwards moves nothing out of the session."""
    spec = sqlite_spec
    urls = _images(2)
    with spec.open() as store:
        sid = _three_sessions(store, urls * 3)[0]
    _drop_blobs(spec, urls[1:])
    with spec.open() as store:
        _old_quarantine(spec, store, sid)
    out = run(Path(spec.url), "doctor", "--restore-quarantine", ok=False)
    assert "restored the row quarantined under quarantine_1" in out.stdout
    assert out.returncode == 4 and "missing-blob" in out.stdout  # the lost image remains
    again = run(Path(spec.url), "doctor", "--repair", "--json", ok=False)
    assert json.loads(again.stdout)["quarantined"] == []
    with spec.open() as store:
        body = store.sessions.get(sid)
        assert body is not None and len(body["history"]) == 3
