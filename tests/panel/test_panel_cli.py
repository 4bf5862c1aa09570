"""``chatkeep serve``: prints the tokened URL, serves it on loopback, loads nothing heavy early."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
import urllib.error
import urllib.request

import chatkeep

RUN_SERVE = "import sys; from chatkeep.cli.main import main; main(sys.argv[1:])"


def _start(args: list[str]) -> subprocess.Popen:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("CHATKEEP_STORE", None)
    return subprocess.Popen(
        [sys.executable, "-c", RUN_SERVE, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _url_from(proc: subprocess.Popen, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=[\w-]+)", line or "")
        if m:
            return m.group(1)
        if proc.poll() is not None:
            break
    raise AssertionError(f"no URL printed; stderr: {proc.stderr.read()}")


def _get(url: str) -> tuple[int, dict]:
    for _ in range(50):
        try:
            with urllib.request.urlopen(url, timeout=5) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())
        except (ConnectionError, urllib.error.URLError):
            time.sleep(0.1)
    raise AssertionError(f"{url} never answered")


def test_serve_prints_token_url_and_serves_the_store(tmp_path):
    """`chatkeep serve --port 0 --no-open` prints a loopback URL with a token and serves it."""
    db = str(tmp_path / "cli.db")
    with chatkeep.open(db) as s:
        s.history.append({"role": "user", "content": "from the CLI store"})
    proc = _start(["--store", db, "serve", "--port", "0", "--no-open"])
    try:
        url = _url_from(proc)
        base, token = url.split("/?token=")
        status, body = _get(f"{base}/api/history?token={token}")
        assert status == 200
        assert body["history"][0]["text"] == "from the CLI store"
        status, body = _get(f"{base}/api/history")
        assert status == 401 and body["error"]["type"] == "TokenRequired"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_serve_warns_when_not_loopback(tmp_path):
    """Listening on a non-loopback address prints a warning on stderr."""
    proc = _start(
        [
            "--store",
            str(tmp_path / "w.db"),
            "serve",
            "--host",
            "0.0.0.0",
            "--port",
            "0",
            "--no-open",
        ]
    )
    try:
        url = _url_from(proc)
        assert url.startswith("http://127.0.0.1:")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    assert "warning: listening on 0.0.0.0" in err


def test_serve_module_imports_no_web_stack():
    """Importing the serve command (as `chatkeep --help` does) loads no Starlette or uvicorn."""
    code = (
        "import sys, chatkeep.cli.serve_cmd as m; "
        "assert m.serve_cmd.name == 'serve'; "
        "bad = [n for n in ('starlette', 'uvicorn', 'jinja2', 'markdown_it') if n in sys.modules]; "
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
