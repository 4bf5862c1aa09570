"""The promise, as a property: nothing the user gives is ever lost.

Hypothesis drives random sequences of what a user does — chat with text and images of any size
(the library and the console script), paste, attach a file, import good and junk files (with
and without ``--replace``), change settings (the window, the session cap), save (update or a
copy), load, new, restore evicted sessions, ``doctor --repair``, export — and after every step
checks that every character and every image byte the user ever gave is still retrievable from
the store: the live history, the archive, the saved and evicted sessions, the originals kept
before a rewrite, and the backups an import with ``--replace`` writes beside the store. Only
what the user deleted by name may go. Sequences: ``budget(10)`` below: 10 in ``make test``, 500 in ``make fuzz`` (×50).
"""

from __future__ import annotations

import base64
import io
import json
import os
import random
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

import chatkeep
from clirun import chatkeep_exe
from hostile.strategies import SCALE, budget
from support.provider_server import ProviderServer, Text

_IMAGES: dict[tuple[str, int], bytes] = {}
#: kinds of pasted images: a small screenshot, a photo, and one past the per-request cap
_SIZES = {"small": (64, 48), "photo": (800, 600), "large": (1800, 1400)}


def _image(kind: str, seed: int) -> bytes:
    """JPEG noise (it does not compress, so "large" is over 3 MiB), made once per kind/seed."""
    key = (kind, seed)
    if key not in _IMAGES:
        from PIL import Image

        w, h = _SIZES[kind]
        img = Image.frombytes("RGB", (w, h), random.Random(seed).randbytes(w * h * 3))
        buf = io.BytesIO()
        img.save(buf, "JPEG", quality=95)
        _IMAGES[key] = buf.getvalue()
    return _IMAGES[key]


def _url(data: bytes) -> str:
    return "data:image/jpeg;base64," + base64.b64encode(data).decode("ascii")


@pytest.fixture(scope="module")
def server() -> Iterator[ProviderServer]:
    with ProviderServer() as s:
        s.script(Text("Noted."))
        yield s


class Promise(RuleBasedStateMachine):
    """One user's store, driven step by step; ``given`` is what they gave."""

    server: ProviderServer

    def __init__(self) -> None:
        super().__init__()
        self.root = Path(tempfile.mkdtemp(prefix="ck-promise-"))
        (self.root / "store").mkdir()
        (self.root / "in").mkdir()
        self.db = self.root / "store" / "chatkeep.db"
        self.store = chatkeep.open(str(self.db))
        self.store.cards.put(
            "loop",
            {"style": "chat", "baseUrl": self.server.url("/v1"), "model": "m", "apiKey": "k"},
            activate=True,
        )
        self.counter = 0
        self.given: set[str] = set()  # tokens and image data URLs
        self.released: set[str] = set()  # what the user deleted by name
        self.exports: list[Path] = []

    def teardown(self) -> None:
        self.store.close()
        shutil.rmtree(self.root, ignore_errors=True)

    # -- helpers --------------------------------------------------------------------------
    def token(self) -> str:
        self.counter += 1
        return f"tok{self.counter:04d}x{random.Random(self.counter).randrange(10**6):06d}"

    def cli(self, *args: str, ok: tuple[int, ...] = (0,)) -> subprocess.CompletedProcess[str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
        proc = subprocess.run(
            [chatkeep_exe(), "--store", str(self.db), *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode in ok, (args, proc.returncode, proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def session_ids(self, evicted: bool = False) -> list[str]:
        rows = self.store.sessions.evicted() if evicted else self.store.sessions.list()
        return [r["id"] for r in rows]

    # -- what a user does ---------------------------------------------------------------------
    @rule(
        kinds=st.lists(st.sampled_from(sorted(_SIZES)), max_size=3),
        seed=st.integers(0, 2),
        via_cli=st.booleans(),
    )
    def chat(self, kinds: list[str], seed: int, via_cli: bool) -> None:
        tok = self.token()
        images = [_image(kind, seed + i) for i, kind in enumerate(kinds)]
        if via_cli:
            args = ["chat", f"about {tok}"]
            for i, data in enumerate(images):
                path = self.root / "in" / f"{tok}-{i}.jpg"
                path.write_bytes(data)
                args += ["--image", str(path)]
            self.cli(*args)
        else:
            self.store.chat.send(f"about {tok}", images=[_url(d) for d in images])
        self.given.add(tok)
        self.given.update(_url(d) for d in images)

    @rule(size=st.sampled_from([10, 5_000, 400_000]))
    def paste(self, size: int) -> None:
        tok = self.token()
        text = (tok + " ") * (size // (len(tok) + 1) or 1)
        self.store.history.append({"role": "user", "content": text})
        self.given.add(tok)

    @rule(via_cli=st.booleans())
    def attach_file(self, via_cli: bool) -> None:
        tok = self.token()
        path = self.root / "in" / f"{tok}.txt"
        path.write_text(f"Notes\n\n{tok} is in this file.\n", encoding="utf-8")
        if via_cli:
            self.cli("attach", str(path))
        else:
            chatkeep.attach_file(self.store, path)
        self.given.add(tok)

    @rule()
    def import_good(self) -> None:
        tok = self.token()
        path = self.root / "in" / f"{tok}.jsonl"
        line = {"messages": [{"role": "user", "content": f"imported {tok}"},
                             {"role": "assistant", "content": "ok"}]}  # fmt: skip
        path.write_text(json.dumps(line) + "\n", encoding="utf-8")
        self.cli("import", str(path))
        self.given.add(tok)

    @rule(replace=st.booleans())
    def import_junk(self, replace: bool) -> None:
        tok = self.token()
        path = self.root / "in" / f"{tok}.json"
        path.write_text(json.dumps({"user": tok, "plan": "free", "visits": 3}), encoding="utf-8")
        args = ["import", str(path)] + (["--replace"] if replace else [])
        proc = self.cli(*args, ok=(1, 2, 3))
        assert proc.stderr.strip()

    @rule()
    def export_now(self) -> None:
        path = self.root / "in" / f"export-{len(self.exports)}.json"
        self.cli("export", "-o", str(path))
        self.exports.append(path)

    @precondition(lambda self: self.exports)
    @rule(pick=st.integers(0, 100))
    def replace_with_an_old_export(self, pick: int) -> None:
        path = self.exports[pick % len(self.exports)]
        self.cli("import", str(path), "--replace")

    @rule(
        key=st.sampled_from(["maxSessions", "maxHistoryEntries", "maxHistoryChars"]),
        pick=st.integers(0, 2),
        via_cli=st.booleans(),
    )
    def config(self, key: str, pick: int, via_cli: bool) -> None:
        value = {
            "maxSessions": [0, 1, 2],
            "maxHistoryEntries": [2, 5, 60],
            "maxHistoryChars": [3_000, 50_000, 300_000],
        }[key][pick]
        if via_cli:
            self.cli("config", "set", key, str(value))
        else:
            self.store.local.set(key, value)

    @rule(copy=st.booleans(), via_cli=st.booleans())
    def save(self, copy: bool, via_cli: bool) -> None:
        if via_cli:
            # an empty live history has nothing to save: exit 3, nothing written
            self.cli("sessions", "save", *(["--new"] if copy else []), ok=(0, 3))
        elif copy or not self.store.local.get("activeSessionId"):
            self.store.sessions.save()
        else:
            self.store.sessions.update(self.store.local.get("activeSessionId"))

    @precondition(lambda self: self.session_ids())
    @rule(pick=st.integers(0, 100), via_cli=st.booleans())
    def load(self, pick: int, via_cli: bool) -> None:
        ids = self.session_ids()
        sid = ids[pick % len(ids)]
        if via_cli:
            self.cli("sessions", "load", sid)
        else:
            assert self.store.sessions.load(sid) >= 0

    @rule(via_cli=st.booleans())
    def new(self, via_cli: bool) -> None:
        if via_cli:
            self.cli("sessions", "new")
        else:
            self.store.sessions.new()

    @precondition(lambda self: self.session_ids(evicted=True))
    @rule(pick=st.integers(0, 100), via_cli=st.booleans())
    def restore(self, pick: int, via_cli: bool) -> None:
        ids = self.session_ids(evicted=True)
        sid = ids[pick % len(ids)]
        if via_cli:
            self.cli("sessions", "restore", sid)
        else:
            assert self.store.sessions.restore(sid) is not None

    @precondition(lambda self: self.session_ids())
    @rule(pick=st.integers(0, 100))
    def delete_by_name(self, pick: int) -> None:
        ids = self.session_ids()
        sid = ids[pick % len(ids)]
        body = json.dumps(self.store.sessions.get(sid), ensure_ascii=False)
        self.released.update(g for g in self.given if g in body)
        self.cli("sessions", "delete", sid)

    @rule()
    def doctor(self) -> None:
        self.cli("doctor", "--repair", ok=(0, 4))

    # -- the promise ------------------------------------------------------------------------
    def retrievable(self) -> str:
        s = self.store
        parts = [s.history.read(), s.history.archived()]
        for sid in self.session_ids() + self.session_ids(evicted=True):
            parts.append(s.sessions.get(sid))
        parts.append(s.local.get(s.local.keys("attachOriginal_")))
        text = json.dumps(parts, ensure_ascii=False)
        for path in sorted((self.root / "store").iterdir()):
            if path.name.startswith("chatkeep.db"):
                continue
            text += path.read_text(encoding="utf-8", errors="replace")
        return text

    @invariant()
    def nothing_given_is_lost(self) -> None:
        kept = self.retrievable()
        lost = sorted(g[:60] for g in self.given - self.released if g not in kept)
        assert not lost, f"lost {len(lost)} of {len(self.given)} given: {lost}"


@pytest.mark.timeout(int(900 * max(1.0, SCALE)))  # many sequences of real processes
def test_nothing_given_is_lost(server: ProviderServer) -> None:
    """Random sequences of user operations never lose a character or an image byte given."""
    Promise.server = server
    run = Promise.TestCase
    run.settings = budget(10)
    run.settings = type(run.settings)(
        run.settings, stateful_step_count=max(8, int(14 * min(SCALE, 2)))
    )
    run().runTest()
