"""The running ``chatkeep serve`` under load, over real HTTP on loopback: concurrent large
uploads stay within a bounded peak memory, a client that leaves mid-upload leaves no traceback
and nothing stored, and connections without the token cannot keep the user out."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import chatkeep
from clirun import chatkeep_exe

MiB = 1024 * 1024


@dataclass
class Served:
    proc: subprocess.Popen[str]
    port: int
    token: str
    db: Path
    tmp: Path
    stderr: str = ""

    def status(self, key: str) -> int:
        """A ``/proc/<pid>/status`` figure of the server process, in MiB."""
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) // 1024
        raise AssertionError(f"no {key} in /proc/{self.proc.pid}/status")

    def request(
        self, method: str, path: str, body: bytes | None = None, **headers: str
    ) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
        try:
            all_headers = {"Host": f"127.0.0.1:{self.port}", "X-Chatkeep-Token": self.token}
            all_headers.update({k.replace("_", "-"): v for k, v in headers.items()})
            conn.request(method, path, body=body, headers=all_headers)
            resp = conn.getresponse()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
        finally:
            conn.close()

    def stop(self) -> str:
        if self.proc.poll() is None:
            self.proc.terminate()
        _, self.stderr = self.proc.communicate(timeout=30)
        return self.stderr


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """``chatkeep --store DB serve --port 0 --no-open`` in a process of its own, with a private
    temporary directory (``TMPDIR``) so leftovers can be seen."""
    db = tmp_path / "load.db"
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    env.update(TMPDIR=str(tmp), PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), "serve", "--port", "0", "--no-open"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    match = re.search(r"http://127\.0\.0\.1:(\d+)/\?token=([\w-]+)", proc.stdout.readline())
    assert match, proc.communicate(timeout=10)
    server = Served(proc, int(match.group(1)), match.group(2), db, tmp)
    try:
        for _ in range(100):  # until it answers
            try:
                if server.request("GET", "/api/stats")[0] == 200:
                    break
            except OSError:
                time.sleep(0.05)
        yield server
    finally:
        server.stop()


def _read_answer(sock: socket.socket) -> bytes:
    """One whole HTTP answer (headers and a Content-Length body) from a raw socket."""
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(65536)
    head, _, body = answer.partition(b"\r\n\r\n")
    length = re.search(rb"content-length: *(\d+)", head, re.I)
    while length and len(body) < int(length.group(1)):
        body += sock.recv(65536)
    return head + b"\r\n\r\n" + body


def _attachments(db: Path) -> list[Any]:
    with chatkeep.open(str(db)) as store:
        return [e for e in store.history.read() if isinstance(e, dict) and e.get("attachId")]


def test_concurrent_large_uploads_stay_within_bounded_memory(served: Served) -> None:
    """30 concurrent 16 MiB uploads keep the server's peak RSS under 300 MiB; each is answered
    with a JSON error body (422 for the junk image, or 503 PanelBusy with Retry-After once the
    in-flight budget is spent), and nothing is left in the temporary directory."""
    body = os.urandom(1024) * (16 * 1024)  # 16 MiB that no image decoder accepts
    answers: list[tuple[int, dict[str, str], bytes]] = []

    def upload(i: int) -> None:
        path = f"/api/attach/file?name=shot{i}.png"
        answers.append(served.request("POST", path, body, Content_Type="image/png"))

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(300)
    peak = served.status("VmHWM")
    assert peak < 300, f"peak RSS {peak} MiB"
    statuses = sorted(status for status, _h, _b in answers)
    assert len(answers) == 30 and set(statuses) <= {422, 503}, statuses
    assert 503 in statuses and 422 in statuses, statuses
    for status, headers, raw in answers:
        assert json.loads(raw)["error"]["message"]
        if status == 503:
            assert json.loads(raw)["error"]["type"] == "PanelBusy"
            assert headers.get("retry-after") == "5"
    status, _h, _b = served.request("POST", "/api/attach/file?name=notes.txt", b"after the storm")
    assert status == 200
    assert list(served.tmp.iterdir()) == []


def test_upload_over_the_limit_is_413_before_it_is_read(served: Served) -> None:
    """An upload declaring more than 50 MiB gets 413 with a JSON error body at once, without
    the server reading (or storing) it."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        head = (
            f"POST /api/attach/file?name=big.txt HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"X-Chatkeep-Token: {served.token}\r\nContent-Length: {51 * MiB}\r\n\r\n"
        )
        sock.sendall(head.encode())
        answer = _read_answer(sock).decode()
    assert answer.startswith("HTTP/1.1 413"), answer[:200]
    assert '"type":"BodyTooLarge"' in answer.replace(" ", "")
    assert _attachments(served.db) == []


def test_disconnect_mid_upload_leaves_no_traceback_and_nothing_stored(served: Served) -> None:
    """A client that sends 2 of 8 MiB and closes the connection leaves no traceback in the
    server's stderr, no attachment in the store and no temporary file; the server still
    answers."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=10) as sock:
        head = (
            f"POST /api/attach/file?name=notes.txt HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"X-Chatkeep-Token: {served.token}\r\nContent-Length: {8 * MiB}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"x" * (2 * MiB))
    time.sleep(1.0)
    assert served.request("GET", "/api/stats")[0] == 200
    assert list(served.tmp.iterdir()) == []
    err = served.stop()
    assert "Traceback" not in err and "ClientDisconnect" not in err, err[-2000:]
    assert _attachments(served.db) == []


def test_half_open_connections_without_token_do_not_block_the_user(served: Served) -> None:
    """150 connections that send half a request and no token do not keep a request with the
    token from being answered within 2 seconds (and again while they stay open)."""
    flood = []
    try:
        for i in range(150):
            sock = socket.create_connection(("127.0.0.1", served.port), timeout=10)
            sock.sendall(b"GET /api/state HTTP/1.1\r\nHost: 127.0.0.1\r\n" if i % 2 else b"")
            flood.append(sock)
        time.sleep(0.3)
        for _ in range(3):
            began = time.monotonic()
            status, _h, raw = served.request("GET", "/api/state")
            took = time.monotonic() - began
            assert status == 200, raw[:300]
            assert took < 2.0, f"answered after {took:.1f} s"
    finally:
        for sock in flood:
            sock.close()


def test_upload_streams_to_a_private_temporary_file(served: Served) -> None:
    """Mid-upload the bytes sit in a 0600 file inside a 0700 directory under TMPDIR (not in
    memory); when the upload ends it is attached and the temporary file is gone."""
    size = 4 * MiB
    with socket.create_connection(("127.0.0.1", served.port), timeout=30) as sock:
        head = (
            f"POST /api/attach/file?name=notes.txt HTTP/1.1\r\nHost: 127.0.0.1:{served.port}\r\n"
            f"X-Chatkeep-Token: {served.token}\r\nContent-Length: {size}\r\n\r\n"
        )
        sock.sendall(head.encode() + b"a line of notes\n" * (MiB // 16))
        files: list[Path] = []
        for _ in range(100):
            files = [p for p in served.tmp.rglob("*") if p.is_file()]
            if files:
                break
            time.sleep(0.05)
        assert [p.name for p in files] == ["notes.txt"]
        assert files[0].stat().st_mode & 0o777 == 0o600
        assert files[0].parent.stat().st_mode & 0o777 == 0o700
        sock.sendall(b"a line of notes\n" * (3 * MiB // 16))
        answer = _read_answer(sock)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    assert len(_attachments(served.db)) == 1
    assert list(served.tmp.iterdir()) == []


def test_json_body_over_its_limit_is_413(client: Any) -> None:
    """A JSON body declaring more than 40 MiB gets 413 BodyTooLarge with a hint."""
    resp = client.post(
        "/api/chat/send",
        content=b"{" + b" " * (40 * MiB) + b"}",
        headers={"content-type": "application/json"},
    )
    assert resp.status_code == 413, resp.text[:300]
    assert resp.json()["error"]["type"] == "BodyTooLarge"
    assert "file picker" in resp.json()["error"]["hint"]
