"""A whole user journey through the real console script, against the loopback provider server.

Add a provider, attach a web page and a PDF, chat five turns, edit & resend, regenerate, use the
drawer (save, search, load, rename, pin, delete), export, import into a new store and compare —
checking the ``--json`` outputs field by field. Then the §12 error paths and their exit codes.
"""

from __future__ import annotations

import functools
import json
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

import chatkeep
from attach.attach_pdfgen import figures_pdf
from clirun import run_process as run
from support.provider_server import HttpError, Text, overflow, provider_server  # noqa: F401

FIXTURES = Path(__file__).parents[1] / "fixtures"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def site():
    """The fixture pages served over real HTTP on 127.0.0.1."""
    httpd = ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(_Quiet, directory=str(FIXTURES))
    )
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def jrun(db: Path, *args: str, env: dict | None = None):
    return json.loads(run(db, *args, "--json", env=env).stdout)


def test_user_journey(tmp_path: Path, provider_server, site) -> None:  # noqa: F811
    """Provider, attachments, five turns, edit, regenerate, drawer, export/import — all through the CLI."""
    db = tmp_path / "journey.db"
    env = {"LOOP_KEY": "sk-loop"}
    run(
        db,
        "provider",
        "add",
        "loop",
        "--style",
        "chat",
        "--base-url",
        provider_server.url("/v1"),
        "--model",
        "loop-model",
        "--api-key-env",
        "LOOP_KEY",
    )
    page = jrun(db, "attach", f"{site}/article_news.html")
    assert page["kind"] == "page" and page["chars"] > 500 and page["images"] == 0
    pdf_bytes, _figs = figures_pdf(tmp_path)
    (tmp_path / "report.pdf").write_bytes(pdf_bytes)
    pdf = jrun(db, "attach", str(tmp_path / "report.pdf"))
    assert pdf["kind"] == "pdf" and pdf["images"] == 4 and pdf["title"]

    replies = []
    for k in range(5):
        provider_server.queue(Text(f"answer {k}"))
        replies.append(jrun(db, "chat", f"question {k}", env=env))
    assert [r["text"] for r in replies] == [f"answer {k}" for k in range(5)]
    assert replies[0]["provider"] == "loop" and replies[0]["model"] == "loop-model"
    assert replies[0]["landed"] == "live" and replies[0]["interrupted"] is False
    first, second = provider_server.requests[0].body, provider_server.requests[1].body
    assert provider_server.requests[0].headers["authorization"] == "Bearer sk-loop"
    assert "data:image" in json.dumps(first) and "data:image" not in json.dumps(second)  # labels
    assert replies[1]["stats"]["prefixBytes"] > 0

    history = jrun(db, "history")
    assert [v["role"] for v in history] == ["user", "user"] + ["user", "assistant"] * 5
    assert history[1]["imagesSeen"] is True and history[1]["attachment"]["chars"] > 0

    provider_server.queue(Text("edited answer"))
    edited = jrun(db, "edit", "4", "question 1, rephrased", env=env)
    assert edited["text"] == "edited answer"
    history = jrun(db, "history")
    assert len(history) == 6 and history[4]["content"][0]["text"] == "question 1, rephrased"
    provider_server.queue(Text("regenerated answer"))
    assert jrun(db, "regenerate", env=env)["text"] == "regenerated answer"
    history = jrun(db, "history")
    assert len(history) == 6 and history[-1]["content"][0]["text"] == "regenerated answer"
    assert [v["role"] for v in history].count("user") == 4  # one bubble per send

    saved = jrun(db, "sessions", "save", "Training report")
    assert saved["name"] == "Training report" and saved["pinned"] is False
    found = jrun(db, "sessions", "list", "REGENERATED")
    assert found == [{**saved, "contentMatch": True}]
    assert jrun(db, "sessions", "list", "training")[0]["contentMatch"] is False
    run(db, "sessions", "new")
    assert jrun(db, "history") == []
    assert "6 entries" in run(db, "sessions", "load", saved["id"]).stdout
    run(db, "sessions", "rename", saved["id"], "Report review")
    run(db, "sessions", "pin", saved["id"])
    listed = jrun(db, "sessions", "list")
    assert listed[0]["name"] == "Report review" and listed[0]["pinned"] is True
    shown = jrun(db, "sessions", "show", saved["id"])
    assert [v["role"] for v in shown["history"]] == [v["role"] for v in history]

    out = tmp_path / "export.json"
    run(db, "export", "-o", str(out))
    other = tmp_path / "restored.db"
    report = jrun(other, "import", str(out))
    assert report["sessions"] == 1 and report["history"] == 6
    assert json.loads(run(other, "export").stdout) == json.loads(out.read_text())
    run(db, "sessions", "delete", saved["id"])
    assert jrun(db, "sessions", "list") == []
    assert jrun(other, "sessions", "list")[0]["name"] == "Report review"
    stats = jrun(other, "stats")
    assert stats["entries"] == 6 and stats["sessions"] == 1 and stats["blobs"] >= 4


def test_error_paths_and_exit_codes(tmp_path: Path, provider_server) -> None:  # noqa: F811
    """Every §12 error reachable from the CLI prints its message and hint and exits with its code."""
    db = tmp_path / "errors.db"
    with chatkeep.open(str(db)) as s:
        s.local.set("x", 1)
    no_provider = run(
        db,
        "chat",
        "hi",
        ok=False,
        env={"OPENAI_API_KEY": "", "OPENAI_BASE_URL": "", "CHATKEEP_MODEL": ""},
    )
    assert no_provider.returncode == 7 and "chatkeep provider add" in no_provider.stderr
    assert jrun(db, "history") == [], "a refused send stores nothing"

    run(
        db,
        "provider",
        "add",
        "loop",
        "--style",
        "chat",
        "--base-url",
        provider_server.url("/v1"),
        "--model",
        "m",
    )
    provider_server.queue(
        HttpError(
            401,
            {
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )
    denied = run(db, "chat", "hi", ok=False)
    assert denied.returncode == 5 and "hint:" in denied.stderr and "key" in denied.stderr.lower()
    assert "Traceback" not in denied.stderr
    assert [v["role"] for v in jrun(db, "history")] == ["user"]  # the question stays for a retry

    with chatkeep.open(str(db)) as s:
        s.history.append(
            {
                "role": "user",
                "content": "[Page context attached by chatkeep]\nTitle: Big\n---\n\n"
                + "x" * 20_000,
            }
        )
    provider_server.queue(overflow("openai_chat"), overflow("openai_chat"))
    too_big = run(db, "chat", "summarise it", ok=False)
    assert too_big.returncode == 6 and "hint:" in too_big.stderr

    bad_attach = run(db, "attach", str(tmp_path / "missing.pdf"), ok=False)
    assert bad_attach.returncode == 10 and "hint:" in bad_attach.stderr  # a missing file
    bad_index = run(db, "edit", "99", "x", ok=False)
    assert bad_index.returncode == 3 and "hint:" in bad_index.stderr
    locked_store = run(tmp_path, "stats", ok=False)
    assert locked_store.returncode == 4
    debug = run(db, "--debug", "edit", "99", "x", ok=False)
    assert "Traceback" in debug.stderr
