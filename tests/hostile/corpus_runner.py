"""Run hostile-corpus cases, each in its own forked child, and print one JSON line per case.

``python corpus_runner.py WORKDIR NAME...``: the heavy libraries are imported once, then each
case forks; the child builds the case, opens a store holding a little content, runs the
action, and reports ``outcome`` (``ok``, ``error`` with the chatkeep error type, or
``crash`` for anything else) and whether the store's rows are unchanged after an error. The
parent reads the child's peak RSS from ``os.wait4`` (it includes what the child inherited, so
the figure is an upper bound), its CPU time (``cpu_s``, user + system, what the case costs
whatever else the machine runs) and its wall time (``wall_s``, from fork to exit), and kills a
child still running after ``TIMEOUT_S`` (a hang: its outcome is then ``timeout``).
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1]))

import chatkeep
from hostile.corpus import CASES

TIMEOUT_S = 30


def _rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        out = []
        for (table,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name LIKE 'ck_%'"
            " AND name NOT LIKE 'ck_session_fts_%' AND name NOT LIKE '%trgm%'"
            " AND name NOT LIKE 'ck_search_fts%'"  # the message index's own FTS5 tables
            " AND name != 'ck_migrations'"
        ):
            out += [(table, *r) for r in conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")]
        return sorted(out, key=repr)
    finally:
        conn.close()


def _make(name: str, work: Path) -> None:
    """Build the case and a store holding a little content (in its own child, so what the
    generator uses does not count against the case)."""
    _action, make = CASES[name]
    d = work / name
    d.mkdir(parents=True, exist_ok=True)
    store = chatkeep.open(str(d / "store.db"))
    store.history.append({"role": "user", "content": "kept before the case"})
    store.sessions.save("baseline")
    store.close()
    target = make(d)
    if isinstance(target, bytes):
        (d / "payload.bin").write_bytes(target)
        ref = {"kind": "bytes", "value": str(d / "payload.bin")}
    elif isinstance(target, str) and target.startswith("data:"):
        (d / "payload.txt").write_text(target)
        ref = {"kind": "text", "value": str(d / "payload.txt")}
    else:
        ref = {"kind": "path", "value": str(target)}
    (d / "target.json").write_text(json.dumps(ref))


def _run(name: str, work: Path) -> dict:
    action, _make_it = CASES[name]
    d = work / name
    db = d / "store.db"
    ref = json.loads((d / "target.json").read_text())
    target: object = ref["value"]
    if ref["kind"] == "bytes":
        target = Path(ref["value"]).read_bytes()
    elif ref["kind"] == "text":
        target = Path(ref["value"]).read_text()
    before = _rows(db)
    store = chatkeep.open(str(db))
    started = time.monotonic()
    result: dict = {"name": name, "action": action}
    try:
        if action == "attach":
            chatkeep.attach_file(store, target)
        elif action == "image":
            chatkeep.attach_image(store, target)
        elif action == "importfile":
            chatkeep.import_file(store, str(target))
        else:
            raw = Path(target).read_bytes()
            store.import_data(chatkeep.parse_json(raw, str(target)), replace=True)
            again = chatkeep.open(":memory:")  # what was accepted exports and re-imports
            again.import_data(chatkeep.parse_json(json.dumps(store.export_data())))
            again.close()
        result["outcome"] = "ok"
    except chatkeep.ChatkeepError as exc:
        result.update(outcome="error", error=type(exc).__name__, message=exc.message[:200])
    except BaseException as exc:  # reported, and fails the test
        result.update(outcome="crash", error=type(exc).__name__, message=str(exc)[:300])
    result["seconds"] = round(time.monotonic() - started, 2)
    store.close()
    if result["outcome"] != "ok":
        result["unchanged"] = _rows(db) == before
    return result


def _in_child(fn, *args) -> tuple[bytes, object, float]:  # type: ignore[no-untyped-def]
    """Run ``fn(*args)`` in a forked child; (its JSON output, its rusage, its wall seconds).
    Killed after :data:`TIMEOUT_S`."""
    read_fd, write_fd = os.pipe()
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        try:
            out = json.dumps(fn(*args))
        except BaseException as exc:
            out = json.dumps({"outcome": "crash", "error": repr(exc)[:300]})
        os.write(write_fd, out.encode())
        os._exit(0)
    os.close(write_fd)
    deadline = time.monotonic() + TIMEOUT_S
    while True:
        done, _status, usage = os.wait4(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            _done, _status, usage = os.wait4(pid, 0)
            break
        time.sleep(0.02)
    wall = time.monotonic() - started
    with os.fdopen(read_fd, "rb") as fh:
        return fh.read(), usage, wall


def main() -> None:
    work = Path(sys.argv[1])
    for name in sys.argv[2:]:
        made, _, _ = _in_child(_make, name, work)
        data, usage, wall = _in_child(_run, name, work)
        result = json.loads(data) if data else {"outcome": "timeout"}
        if not made or json.loads(made) is not None:  # no output: killed while building
            result = {"outcome": "crash", "error": f"the case could not be built: {made!r}"}
        result["name"] = name
        result["wall_s"] = round(wall, 2)
        result["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 2)  # type: ignore[attr-defined]
        result["peak_rss_mb"] = round(usage.ru_maxrss / 1024, 1)  # type: ignore[attr-defined]
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
