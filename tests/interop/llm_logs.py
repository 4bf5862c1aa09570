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
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

TOOL_PROMPT = json.dumps({"prompt": "Which llm version is this?", "tool_calls": [{"name": "llm_version"}]})


def _version(llm: str) -> tuple[int, ...]:
    out = subprocess.run([llm, "--version"], capture_output=True, text=True, check=True).stdout
    return tuple(int(x) for x in out.split()[-1].split(".") if x.isdigit())


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
    run("-m", model, "-s", "You are terse. Answer in one line.", "First question: why is the sky blue?")
    run("-c", "Second question — and the sea? 🌊")
    if version >= (0, 17):  # attachments
        picture = folder / "red-square.png"
        picture.write_bytes(pngs[0])
        run("-m", model, "Describe this picture", "-a", str(picture))
        run("-c", "And this one, from standard input", "-a", "-", stdin=pngs[1])
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


def _tables(conn: sqlite3.Connection) -> set[str]:
    return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}


def _image(conn: sqlite3.Connection, att_id: str) -> str | None:
    """The image bytes of an attachment as base64 (``None``: not an image with bytes here)."""
    mime, path, content = conn.execute(
        "SELECT type, path, content FROM attachments WHERE id = ?", (att_id,)
    ).fetchone()
    data = content
    if data is None and path and os.path.isfile(path):
        data = Path(path).read_bytes()
    if data is None or not str(mime or "").startswith("image/"):
        return None
    return base64.b64encode(data).decode()


def expected(path: Path) -> list[dict[str, Any]]:
    """Each conversation of the database, oldest first: ``{id, name, messages}`` where a
    message is ``{role, text, images, system?, tools?, results?, reasoning?}``."""
    conn = sqlite3.connect(path)
    tables = _tables(conn)
    out: list[dict[str, Any]] = []
    threads: set[str] = set()
    if "threads" in tables:
        for tid, name, tip in conn.execute(
            "SELECT id, name, tip_message_hash FROM threads ORDER BY datetime_utc, id"
        ):
            threads.add(tid)
            chain = []
            node = tip
            while node:
                role, parent = conn.execute(
                    "SELECT role, parent_hash FROM messages WHERE hash = ?", (node,)
                ).fetchone()
                chain.append((node, role))
                node = parent
            messages = []
            for mhash, role in reversed(chain):
                msg: dict[str, Any] = {"role": role, "text": [], "images": [], "tools": [], "results": [], "reasoning": []}
                for pid, ptype, text, payload in conn.execute(
                    "SELECT id, type, text, payload FROM parts WHERE message_hash = ?"
                    " ORDER BY position",
                    (mhash,),
                ):
                    body = json.loads(payload) if payload else {}
                    if ptype == "text":
                        msg["text"].append(text)
                    elif ptype == "reasoning":
                        msg["reasoning"].append(text)
                    elif ptype == "tool_call":
                        msg["tools"].append(body["name"])
                    elif ptype == "tool_result":
                        msg["results"].append(body["output"])
                    elif ptype == "attachment":
                        for (aid,) in conn.execute(
                            "SELECT attachment_id FROM part_attachments WHERE part_id = ?"
                            ' ORDER BY "order"',
                            (pid,),
                        ):
                            msg["images"].append(_image(conn, aid))
                messages.append(msg)
            out.append({"id": tid, "name": name, "messages": messages})
    if "responses" in tables:
        cols = {r[1] for r in conn.execute("PRAGMA table_info(responses)")}
        names = dict(conn.execute("SELECT id, name FROM conversations"))
        skip = set()
        if "turns" in tables:
            skip = {r[0] for r in conn.execute("SELECT id FROM turns")}
        convs: dict[str, dict[str, Any]] = {}
        for rid, cid, system, prompt, response in conn.execute(
            "SELECT id, conversation_id, system, prompt, response FROM responses"
            " ORDER BY datetime_utc, id"
        ):
            cid = cid or rid
            if rid in skip or cid in threads:
                continue
            conv = convs.setdefault(cid, {"id": cid, "name": names.get(cid), "messages": [], "system": None})
            if system and system != conv["system"]:
                conv["messages"].append({"role": "system", "text": [system], "images": []})
                conv["system"] = system
            images = []
            if "prompt_attachments" in tables:
                images = [
                    _image(conn, aid)
                    for (aid,) in conn.execute(
                        "SELECT attachment_id FROM prompt_attachments WHERE response_id = ?"
                        ' ORDER BY "order"',
                        (rid,),
                    )
                ]
            results = []
            if "tool_results" in tables:
                results = [r[0] for r in conn.execute("SELECT output FROM tool_results WHERE response_id = ? ORDER BY id", (rid,))]
            if results:
                conv["messages"].append({"role": "tool", "text": [], "images": [], "results": results})
            if prompt or images:
                conv["messages"].append({"role": "user", "text": [prompt or ""], "images": images})
            tools = []
            if "tool_calls" in tables:
                tools = [r[0] for r in conn.execute("SELECT name FROM tool_calls WHERE response_id = ? ORDER BY id", (rid,))]
            reasoning = []
            if "reasoning" in cols:
                (r,) = conn.execute("SELECT reasoning FROM responses WHERE id = ?", (rid,)).fetchone()
                reasoning = [r] if r else []
            conv["messages"].append({"role": "assistant", "text": [response or ""], "images": [], "tools": tools, "reasoning": reasoning})
        for conv in convs.values():
            del conv["system"]
            out.append(conv)
    conn.close()
    return out


if __name__ == "__main__":
    args = sys.argv[1:]
    model = args[args.index("--model") + 1] if "--model" in args else "echo"
    print(make_logs(args[0], Path(args[1]), pictures(), model))
