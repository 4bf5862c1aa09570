"""Make a ``logs.db`` with the real ``llm`` command line, and read one back with plain SQL.

:func:`make_logs` runs the ``llm`` console script given (any release with a local model plugin:
``llm-echo`` answers with a JSON echo of what it was sent, ``llm-markov`` with text made from
the prompt) with ``LLM_USER_PATH`` set to a folder of its own, so every call logs to
``<folder>/logs.db``. What is asked depends on what the release can do; the committed
databases under ``tests/fixtures/interop/real/llm/`` were made by running this file as a
script with an older release's ``llm`` (see ``SOURCES.md`` there)::

    python tests/interop/llm_logs.py /tmp/llmenv-0.19/bin/llm OUT_DIR --model echo

:func:`expected` is the test's own reading of such a database with sqlite3 queries — written
from llm's migrations, not from chatkeep's reader — for comparing what an import kept.
"""

from __future__ import annotations

import base64
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

TOOL_PROMPT = json.dumps(
    {"prompt": "Which llm version is this?", "tool_calls": [{"name": "llm_version"}]}
)


def _version(llm: str) -> tuple[int, ...]:
    out = subprocess.run([llm, "--version"], capture_output=True, text=True, check=True).stdout
    return tuple(int(x) for x in out.split()[-1].split(".") if x.isdigit())


@contextlib.contextmanager
def openai_echo() -> Iterator[str]:
    """An OpenAI-style chat completions endpoint on loopback (``/v1``) that answers "You said:
    " and the last message, streamed or whole: the model for releases before plugins (0.4)."""

    class Echo(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            answer = f"You said: {body['messages'][-1]['content']}"
            head = {"id": "chatcmpl-1", "created": 0, "model": body["model"]}
            if body.get("stream"):
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for piece in (answer[:9], answer[9:]):
                    chunk = {
                        **head,
                        "object": "chat.completion.chunk",
                        "choices": [
                            {"index": 0, "delta": {"content": piece}, "finish_reason": None}
                        ],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
                return
            data = json.dumps(
                {
                    **head,
                    "object": "chat.completion",
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": answer},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
                }
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def make_early_logs(llm: str, folder: Path) -> Path:
    """llm 0.4 (June 2023, before plugins and the ``responses`` table): its ``log`` table,
    written through OpenAI's chat API as :func:`openai_echo` serves it."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "logs.db"
    with openai_echo() as base:
        env = {
            **os.environ,
            "LLM_LOG_PATH": str(path),
            "OPENAI_API_BASE": base,
            "OPENAI_API_KEY": "sk-loopback",
            "PYTHONUTF8": "1",
        }

        def run(*args: str) -> None:
            subprocess.run([llm, *args], env=env, check=True, capture_output=True, timeout=120)

        run("init-db")
        run("Hello there")
        run(
            "--system", "You are terse. Answer in one line.", "First question: why is the sky blue?"
        )
        run("-c", "Second question — and the sea? 🌊")
        run("--no-stream", "A question answered whole")
    return path


def make_logs(llm: str, folder: Path, pngs: tuple[bytes, bytes], model: str = "echo") -> Path:
    """Run ``llm`` to log: a one-off prompt, a conversation with a system prompt continued
    once, a conversation with two images (one given as a file, which llm logs by its path,
    and one on standard input, whose bytes llm keeps), a tool call and reasoning where the
    release and plugin can make them."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "LLM_USER_PATH": str(folder), "PYTHONUTF8": "1"}
    env.pop("OPENAI_API_KEY", None)
    version = _version(llm)

    def run(*args: str, stdin: bytes | None = None) -> None:
        subprocess.run(
            [llm, *args], input=stdin, env=env, check=True, capture_output=True, timeout=120
        )

    if not (folder / "logs.db").exists():  # releases before 0.13 log only when the file exists
        subprocess.run([llm, "logs", "on"], env=env, capture_output=True, timeout=60)
        sqlite3.connect(folder / "logs.db").close()
    run("-m", model, "Hello there")
    run(
        "-m",
        model,
        "-s",
        "You are terse. Answer in one line.",
        "First question: why is the sky blue?",
    )
    run("-c", "Second question — and the sea? 🌊")
    if version >= (0, 17):  # attachments
        picture = folder / "red-square.png"
        picture.write_bytes(pngs[0])
        run("-m", model, "Describe this picture", "-a", str(picture))
        run("-c", "And this one, from standard input", "-a", "-", stdin=pngs[1])
    if version >= (0, 24):  # fragments: a prompt's and a system prompt's text from files
        (folder / "notes.txt").write_text("Notes: the tide comes in twice a day.")
        (folder / "rules.txt").write_text("Rules: answer in French.")
        run(
            "-m",
            model,
            "-f",
            str(folder / "notes.txt"),
            "--sf",
            str(folder / "rules.txt"),
            "Summarise the notes",
        )
    if version >= (0, 26) and model == "echo":  # tools
        run("-m", model, "-T", "llm_version", TOOL_PROMPT)
    if version >= (0, 36) and model == "echo":  # llm-echo 0.5 emits reasoning on request
        run("-m", model, "-o", "thinking", "1", "Think before you answer")
    return folder / "logs.db"


def pictures() -> tuple[bytes, bytes]:
    """Two small real PNGs (red, blue), made with Pillow."""
    from PIL import Image

    out = []
    for colour in ((200, 30, 30), (30, 60, 200)):
        buf = io.BytesIO()
        Image.new("RGB", (8, 6), colour).save(buf, "PNG")
        out.append(buf.getvalue())
    return out[0], out[1]


# -- the test's own reading ------------------------------------------------------------------
#
# Written from llm's migrations (llm/migrations.py of each release) and chatkeep's documented
# conventions (docs/import-export.md, "llm"): a system prompt is a user entry starting with
# "[System prompt]" (again only where it changes); tool results go on the assistant entry
# that made the calls; an image whose bytes are gone is named in the text.

SYSTEM_MARK = "[System prompt]"


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _attachment(conn: sqlite3.Connection, att_id: str) -> tuple[str | None, str | None]:
    """``(base64 image bytes, None)`` or ``(None, the note naming it)``."""
    mime, path, url, content = conn.execute(
        "SELECT type, path, url, content FROM attachments WHERE id = ?", (att_id,)
    ).fetchone()
    data = content
    if data is None and path and os.path.isfile(path):
        data = Path(path).read_bytes()
    if data is not None and str(mime or "").startswith("image/"):
        return base64.b64encode(data).decode(), None
    return None, f"[attachment not in the export: {path or url or att_id} ({mime})]"


class _Conv:
    def __init__(self, cid: str, name: str | None) -> None:
        self.id, self.name = cid, name
        self.entries: list[dict[str, Any]] = []
        self.system: str | None = None

    def system_prompt(self, text: str) -> None:
        if text.strip() and text != self.system:
            self.entries.append(_entry("user", [f"{SYSTEM_MARK}\n{text}"]))
        self.system = text

    def add(self, entry: dict[str, Any]) -> None:
        if entry["text"].strip() or entry["images"] or entry["tools"] or entry["reasoning"]:
            self.entries.append(entry)

    def results(self, outputs: list[str]) -> None:
        if not outputs:
            return
        if (
            not self.entries
            or self.entries[-1]["role"] != "assistant"
            or self.entries[-1]["results"]
        ):
            self.entries.append(_entry("assistant", []))
        self.entries[-1]["results"] = outputs


def _entry(
    role: str, texts: list[str], images: list[str] | None = None, **more: Any
) -> dict[str, Any]:
    return {
        "role": role,
        "text": "\n".join(t for t in texts if t),
        "images": images or [],
        "tools": more.get("tools", []),
        "results": more.get("results", []),
        "reasoning": "\n\n".join(r for r in more.get("reasoning", []) if r.strip()),
    }


def _fragment(conn: sqlite3.Connection, fid: int) -> str:
    (content,) = conn.execute("SELECT content FROM fragments WHERE id = ?", (fid,)).fetchone()
    return content


def _text(conn: sqlite3.Connection, text: str | None, body: dict[str, Any]) -> str:
    if text is not None:
        return text
    return "".join(
        p["literal"] if "literal" in p else _fragment(conn, p["fragment"])
        for p in body.get("text_ref", [])
    )


def _thread(conn: sqlite3.Connection, conv: _Conv, tip: str | None) -> None:
    chain = []
    while tip:
        role, parent = conn.execute(
            "SELECT role, parent_hash FROM messages WHERE hash = ?", (tip,)
        ).fetchone()
        chain.append((tip, role))
        tip = parent
    for mhash, role in reversed(chain):
        texts, images, tools, results, reasoning = [], [], [], [], []
        for pid, ptype, text, payload in conn.execute(
            "SELECT id, type, text, payload FROM parts WHERE message_hash = ? ORDER BY position",
            (mhash,),
        ).fetchall():
            body = json.loads(payload) if payload else {}
            if ptype == "text":
                texts.append(_text(conn, text, body))
            elif ptype == "reasoning":
                reasoning.append(_text(conn, text, body))
            elif ptype == "tool_call":
                tools.append(body["name"])
            elif ptype == "tool_result":
                results.append(body["output"])
            elif ptype == "attachment":
                for (aid,) in conn.execute(
                    'SELECT attachment_id FROM part_attachments WHERE part_id = ? ORDER BY "order"',
                    (pid,),
                ).fetchall():
                    image, note = _attachment(conn, aid)
                    images += [image] if image else []
                    texts += [note] if note else []
        if role == "system":
            conv.system_prompt("\n".join(texts))
        elif role == "tool":
            conv.results(results)
        else:
            conv.add(_entry(role, texts, images, tools=tools, reasoning=reasoning))


def _response(
    conn: sqlite3.Connection, conv: _Conv, tables: set[str], row: tuple[Any, ...]
) -> None:
    rid, system, prompt, response, reasoning = row

    def linked(table: str, column: str) -> list[Any]:
        if table not in tables:
            return []
        return [
            r[0]
            for r in conn.execute(
                f'SELECT {column} FROM {table} WHERE response_id = ? ORDER BY "order"', (rid,)
            ).fetchall()
        ]

    sys_frags = [_fragment(conn, f) for f in linked("system_fragments", "fragment_id")]
    conv.system_prompt("\n\n".join(b.strip() for b in [*sys_frags, system or ""] if b.strip()))
    if "tool_results" in tables:
        conv.results(
            [
                r[0]
                for r in conn.execute(
                    "SELECT output FROM tool_results WHERE response_id = ? ORDER BY id", (rid,)
                ).fetchall()
            ]
        )
    frags = [_fragment(conn, f) for f in linked("prompt_fragments", "fragment_id")]
    texts, images = ["\n".join([*frags, *([prompt] if prompt else [])])], []
    for aid in linked("prompt_attachments", "attachment_id"):
        image, note = _attachment(conn, aid)
        images += [image] if image else []
        texts += [note] if note else []
    conv.add(_entry("user", texts, images))
    tools = []
    if "tool_calls" in tables:
        tools = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM tool_calls WHERE response_id = ? ORDER BY id", (rid,)
            ).fetchall()
        ]
    conv.add(_entry("assistant", [response or ""], tools=tools, reasoning=[reasoning or ""]))


def expected(path: Path) -> list[dict[str, Any]]:
    """Each conversation of the database: ``{id, name, entries}``, an entry being
    ``{role, text, images (base64), tools (call names), results (outputs), reasoning}``."""
    conn = sqlite3.connect(path)
    tables = _tables(conn)
    out: list[dict[str, Any]] = []
    names: dict[str, str] = {}
    if "conversations" in tables:
        names = dict(conn.execute("SELECT id, name FROM conversations").fetchall())
    threads: set[str] = set()
    if "threads" in tables:
        for tid, name, tip in conn.execute(
            "SELECT id, name, tip_message_hash FROM threads"
        ).fetchall():
            threads.add(tid)
            conv = _Conv(tid, names.get(tid, name))  # a continued old conversation keeps its name
            _thread(conn, conv, tip)
            out.append(conv.__dict__)
    if "responses" in tables:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
        in_turns = set()
        if "turns" in tables:
            in_turns = {r[0] for r in conn.execute("SELECT id FROM turns")}
        reasoning = "reasoning" if "reasoning" in cols else "NULL"
        convs: dict[str, _Conv] = {}
        for rid, cid, *row in conn.execute(
            f"SELECT id, conversation_id, system, prompt, response, {reasoning} FROM responses"
            " ORDER BY datetime_utc, id"
        ).fetchall():
            cid = cid or rid
            if rid in in_turns or cid in threads:
                continue
            conv = convs.setdefault(cid, _Conv(cid, names.get(cid)))
            _response(conn, conv, tables, (rid, *row))
        out.extend(c.__dict__ for c in convs.values())
    for table in ("logs", "log"):  # llm 0.4's table, renamed `logs` by later releases
        if table not in tables:
            continue
        cols = {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}
        when = next(c for c in ("datetime_utc", "timestamp_utc", "timestamp") if c in cols)
        chats: dict[int, _Conv] = {}
        for rid, chat, system, prompt, response in conn.execute(
            f"SELECT id, chat_id, system, prompt, response FROM {table} ORDER BY {when}, id"
        ).fetchall():
            conv = chats.setdefault(chat or rid, _Conv(f"log-{chat or rid}", prompt))
            _response(conn, conv, set(), (rid, system, prompt, response, None))
        out.extend(c.__dict__ for c in chats.values())
        break
    conn.close()
    for conv in out:
        del conv["system"]
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    model = args[args.index("--model") + 1] if "--model" in args else "echo"
    if model == "openai":
        print(make_early_logs(args[0], Path(args[1])))
    else:
        print(make_logs(args[0], Path(args[1]), pictures(), model))
