"""One exit status per kind of mistake, whichever command makes it (docs/cli.md's table).

Each row of ``chatkeep.cli.main.EXIT_CODES`` is driven through the console script by several
commands making the same kind of mistake, and docs/cli.md's table is parsed and compared with
``EXIT_CODES`` and with ``chatkeep.errors.KINDS``.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest
from PIL import Image

from chatkeep.cli.main import EXIT_CODES
from chatkeep.errors import KINDS
from clirun import chatkeep_exe
from clirun import run_process as run
from support.provider_server import Text, overflow, unauthorized

DOC = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()


def _card(db: Path, server, name: str = "loop") -> None:
    run(db, "provider", "add", name, "--style", "chat", "--base-url", server.url("/v1"),
        "--model", "loop-model")  # fmt: skip


def _fails(db: Path, *args: str) -> tuple[int, str]:
    proc = run(db, *args, ok=False, env={"OPENAI_API_KEY": "sk-loop"})
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stderr


@pytest.fixture
def paths(tmp_path: Path) -> dict[str, Path]:
    folder = tmp_path / "folder"
    folder.mkdir()
    text = tmp_path / "notes.txt"
    text.write_text("plain words\n")
    image = tmp_path / "dot.png"
    Image.new("RGB", (4, 4), "red").save(image)
    return {"db": tmp_path / "ck.db", "dir": folder, "text": text, "image": image,
            "missing": tmp_path / "gone.png"}  # fmt: skip


def test_missing_file_is_one_code_in_every_command(paths: dict[str, Path]) -> None:
    """A file that is not there exits with the missing-file code in chat --image, attach,
    import and attach --transcript."""
    db, missing = paths["db"], str(paths["missing"])
    want = EXIT_CODES["missing-file"]
    for args in (("chat", "hi", "--image", missing), ("attach", missing), ("import", missing),
                 ("attach", "--video", "https://youtu.be/x", "--transcript", missing)):  # fmt: skip
        code, err = _fails(db, *args)
        assert code == want and "hint:" in err, (args, code, err)


def test_directory_for_a_file_is_one_code_in_every_command(paths: dict[str, Path]) -> None:
    """A directory where a file is wanted exits with the wrong-type code in chat --image,
    attach and export -o."""
    db, folder = paths["db"], str(paths["dir"])
    want = EXIT_CODES["wrong-type"]
    for args in (("chat", "hi", "--image", folder), ("attach", folder), ("export", "-o", folder)):
        code, err = _fails(db, *args)
        assert code == want and "directory" in err, (args, code, err)


def test_unknown_name_is_one_code_in_every_command(paths: dict[str, Path], provider_server) -> None:
    """An unknown provider, session, setting or attachment id exits with the unknown-name code."""
    db = paths["db"]
    _card(db, provider_server)
    want = EXIT_CODES["unknown-name"]
    for args in (("provider", "use", "zzz"), ("provider", "remove", "zzz"),
                 ("chat", "hi", "--provider", "zzz"), ("sessions", "load", "zzzz"),
                 ("sessions", "show", "zzzz"), ("config", "get", "zzz"),
                 ("config", "set", "zzz", "1"), ("undo-attach", "zzz")):  # fmt: skip
        code, err = _fails(db, *args)
        assert code == want and "zzz" in err, (args, code, err)


def test_the_other_kinds_keep_their_rows(paths: dict[str, Path], provider_server) -> None:
    """Bad value, store, provider, overflow, provider-config, attach and usage mistakes exit
    with their own rows of the table, across several commands."""
    db = paths["db"]
    assert _fails(db, "chat", "hi")[0] == EXIT_CODES["provider-config"]  # no card yet
    _card(db, provider_server)
    rows = [
        ("bad-value", ("config", "set", "maxHistoryEntries", "abc")),
        ("bad-value", ("sessions", "load", "zz")),
        ("store", ("--store", str(paths["dir"] / "no" / "such.db"), "history")),
        ("attach", ("chat", "hi", "--image", str(paths["text"]))),
        ("attach", ("attach", str(paths["image"].with_suffix(".xyz")))),
        ("usage", ("history", "-n", "-1")),
        ("usage", ("chat",)),
    ]
    paths["image"].with_suffix(".xyz").write_bytes(b"\x00\x01 no known type")
    for kind, args in rows:
        code, err = _fails(db, *args)
        assert code == EXIT_CODES[kind], (kind, args, code, err)
    provider_server.queue(unauthorized())
    assert _fails(db, "chat", "hi")[0] == EXIT_CODES["provider"]
    provider_server.queue(overflow("openai_chat"))
    assert (
        _fails(db, "chat", "hi", "--image", str(paths["image"]))[0]
        == EXIT_CODES["context-overflow"]
    )


def test_ctrl_c_is_the_interrupted_row(paths: dict[str, Path], provider_server) -> None:
    """SIGINT while a reply streams exits with the interrupted code."""
    db = paths["db"]
    _card(db, provider_server)
    provider_server.queue(Text(" ".join(f"w{k}" for k in range(100)), delay=0.2))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CHATKEEP_")}
    proc = subprocess.Popen(
        [chatkeep_exe(), "--store", str(db), "chat", "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**env, "OPENAI_API_KEY": "sk-loop"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stdout is not None
    assert proc.stdout.read(2) == b"w0"  # the reply is streaming
    time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode == EXIT_CODES["interrupted"]


def _doc_table() -> dict[str, int]:
    section = DOC[DOC.index("## Errors and exit codes") :]
    rows = re.findall(r"^\| (\d+) \| ([a-z-]+) \|", section, re.M)
    return {kind: int(code) for code, kind in rows}


def test_docs_state_the_same_table() -> None:
    """docs/cli.md's exit-code table is EXIT_CODES row for row (plus success 0), and every
    kind of error has a row."""
    assert _doc_table() == {"success": 0, **EXIT_CODES}
    assert set(KINDS) <= set(EXIT_CODES)
    assert len(set(EXIT_CODES.values())) == len(EXIT_CODES)  # one code per kind
