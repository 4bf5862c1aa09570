"""Files written by the real producers (tests/fixtures/interop/real, see SOURCES.md): LLaMA-Factory's
fine-tuning sets (OpenAI messages with ``value`` parts, reasoning and tool calls; the
``[{"messages": [...]}]`` array; ShareGPT with ``function_call``/``observation``) and
SillyTavern chat files. Each import is compared with a reading of the file written here,
walking its JSON — not with chatkeep's reader."""

from __future__ import annotations

import base64
import datetime as dt
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import FIXTURES, saved

import chatkeep
from clirun import run

REAL = FIXTURES / "real"
LF = REAL / "llama-factory"
ST = REAL / "sillytavern"
PREFIX = "[Page context attached by chatkeep]"


def _import(db: Path, path: Path, *extra: str) -> dict[str, Any]:
    return json.loads(run(db, "import", str(path), "--json", *extra).stdout)


def _shape(entry: dict[str, Any]) -> tuple[Any, ...]:
    """What the tests compare of a stored entry: role, text, reasoning, calls, results."""
    content = entry["content"]
    text = content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content)
    return (
        entry["role"],
        text,
        entry.get("reasoning"),
        tuple((c["name"], c["arguments"]) for c in entry.get("toolCalls", [])),
        tuple(r["content"] for r in entry.get("toolResult", [])),
    )


def _histories(db: Path) -> Counter[str]:
    return Counter(json.dumps([_shape(e) for e in s["history"]]) for s in saved(db))


class Expected:
    """An independent reading of one conversation: the entries it should become (tool calls
    and results on the assistant entry of their turn, a system prompt as an attachment)."""

    def __init__(self) -> None:
        self.rows: list[list[Any]] = []
        self.loop = False

    def system(self, text: str) -> None:
        self.rows.append(["system", text, None, [], []])
        self.loop = False

    def user(self, text: str) -> None:
        self.rows.append(["user", text, None, [], []])
        self.loop = False

    def assistant(self, text: str, reasoning: str | None, calls: list[tuple[str, str]]) -> None:
        last = self.rows[-1] if self.rows and self.rows[-1][0] == "assistant" else None
        if self.loop and last is not None:
            last[1] = f"{last[1]}\n\n{text}" if last[1] and text else last[1] or text
            if reasoning:
                last[2] = f"{last[2]}\n\n{reasoning}" if last[2] else reasoning
            last[3] += calls
        else:
            self.rows.append(["assistant", text, reasoning, list(calls), []])
        self.loop = bool(calls)

    def result(self, text: str) -> None:
        self.rows[-1][4].append(text)
        self.loop = True

    def matches(self, history: list[dict[str, Any]]) -> bool:
        got = [_shape(e) for e in history]
        if len(got) != len(self.rows):
            return False
        for (role, text, reasoning, calls, results), g in zip(self.rows, got, strict=True):
            if role == "system":
                if not (g[0] == "user" and g[1].startswith(PREFIX) and g[1].endswith(text)):
                    return False
            elif g != (role, text, reasoning, tuple(calls), tuple(results)):
                return False
        return True


def _call(value: str) -> tuple[str, str]:
    doc = json.loads(value)
    return doc["name"], json.dumps(doc["arguments"], ensure_ascii=False)


def _expect_messages(msgs: list[dict[str, Any]], images: tuple[str, ...] = ()) -> Expected:
    exp = Expected()
    for m in msgs:
        content = m["content"]
        parts = [{"type": "text", "value": content}] if isinstance(content, str) else content
        texts, thoughts, calls = [], [], []
        for p in parts:
            if p["type"] == "text":
                texts.append(p["value"])
            elif p["type"] == "image_url":
                texts.append(f"[image not in the export: {p['value']}]")
            elif p["type"] == "reasoning":
                thoughts.append(p["value"])
            elif p["type"] == "tool_call":
                calls.append(_call(p["value"]))
        text = "\n".join(texts)
        if m["role"] == "system":
            exp.system(text)
        elif m["role"] == "user":
            exp.user(text)
        elif m["role"] == "assistant":
            exp.assistant(text, "\n\n".join(thoughts) or None, calls)
        elif m["role"] == "tool":
            exp.result(text)
    # the k-th image path fills the k-th <image> marker of the user turns
    slots = [r for r in exp.rows if r[0] == "user" for _ in range(r[1].count("<image>"))]
    for row, path in zip(slots, images, strict=True):
        row[1] += f"\n[image not in the export: {path}]"
    return exp


def _assert_all_match(db: Path, expected: list[Expected]) -> None:
    sessions = [s["history"] for s in saved(db)]
    assert len(sessions) == len(expected)
    unmatched = list(sessions)
    for exp in expected:  # every expected conversation has its own session
        hit = next((k for k, h in enumerate(unmatched) if exp.matches(h)), None)
        assert hit is not None, exp.rows
        unmatched.pop(hit)


def test_llama_factory_v1_sft_value_parts(db: Path) -> None:
    """OpenAI messages whose parts are {"type": "text", "value": …}: every line imports
    (used to be 0 of 500 with exit 0), equal lines as separate sessions; twice adds nothing."""
    lines = [json.loads(x) for x in (LF / "v1_sft_demo.jsonl").read_text().splitlines()]
    report = _import(db, LF / "v1_sft_demo.jsonl")
    assert (report["source"], report["added"], report["skipped"]) == ("jsonl", len(lines), [])
    expected = Counter(
        json.dumps([(m["role"], m["content"][0]["value"], None, [], []) for m in line["messages"]])
        for line in lines
    )
    assert _histories(db) == expected
    assert _import(db, LF / "v1_sft_demo.jsonl")["added"] == 0


def test_llama_factory_reasoning_and_tool_calls(db: Path) -> None:
    """Reasoning parts, tool_call parts and tool messages: kept on the assistant entry of
    their turn; the system prompt kept as an attachment entry."""
    lines = [json.loads(x) for x in (LF / "reason_tool_use_demo_50.jsonl").read_text().splitlines()]
    report = _import(db, LF / "reason_tool_use_demo_50.jsonl")
    assert (report["added"], report["skipped"]) == (len(lines), [])
    _assert_all_match(db, [_expect_messages(line["messages"]) for line in lines])
    stored = [e for s in saved(db) for e in s["history"]]
    assert sum(len(e.get("toolCalls", [])) for e in stored) == sum(
        1 for ln in lines for m in ln["messages"] for p in m["content"] if p["type"] == "tool_call"
    )
    assert sum(len(e.get("toolResult", [])) for e in stored) == sum(
        1 for ln in lines for m in ln["messages"] if m["role"] == "tool"
    )


def test_llama_factory_multimodal_image_paths_are_named(db: Path) -> None:
    """image_url parts whose value is a path: named in the text, in the order of the parts."""
    path = LF / "v1_multimodal_demo.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    assert _import(db, path)["added"] == len(lines)
    _assert_all_match(db, [_expect_messages(line["messages"]) for line in lines])


def test_llama_factory_messages_array(db: Path) -> None:
    """The [{"messages": [...], "images": [...]}] array of fine-tuning sets is detected and
    imported (it used to be refused by every --from), and by --from jsonl too."""
    doc = json.loads((LF / "mllm_demo.json").read_text())
    report = _import(db, LF / "mllm_demo.json")
    assert (report["source"], report["added"]) == ("jsonl", len(doc))
    _assert_all_match(db, [_expect_messages(c["messages"], tuple(c["images"])) for c in doc])
    other = db.with_name("other.db")
    assert _import(other, LF / "mllm_demo.json", "--from", "jsonl")["added"] == len(doc)


def test_llama_factory_sharegpt_function_call_and_observation(db: Path) -> None:
    """ShareGPT function_call/observation turns become toolCalls/toolResult of the assistant
    entry that answers (they used to be dropped without a word)."""
    doc = json.loads((LF / "glaive_toolcall_en_demo.json").read_text())
    report = _import(db, LF / "glaive_toolcall_en_demo.json")
    assert (report["source"], report["added"], report["skipped"]) == ("sharegpt", len(doc), [])
    expected = []
    for conv in doc:
        exp = Expected()
        for turn in conv["conversations"]:
            kind, value = turn["from"], turn["value"]
            if kind == "human":
                exp.user(value)
            elif kind == "gpt":
                exp.assistant(value, None, [])
            elif kind == "function_call":
                exp.assistant("", None, [_call(value)])
            elif kind == "observation":
                exp.result(value)
        expected.append(exp)
    _assert_all_match(db, expected)
    assert any(e.get("toolCalls") for s in saved(db) for e in s["history"])


# -- SillyTavern -----------------------------------------------------------------------------
def _st_time(value: Any) -> int | None:
    """SillyTavern's times, read here: epoch ms, ISO-8601, or ``2023-4-21 @20h 02m 47s 124ms``."""
    if isinstance(value, int):
        return value
    if "@" in value and "h" in value:
        day, clock = value.split("@")
        y, mo, d = (int(x) for x in day.strip().split("-"))
        nums = [int("".join(ch for ch in piece if ch.isdigit())) for piece in clock.split()]
        h, mi, s, ms = nums
        return int(dt.datetime(y, mo, d, h, mi, s, ms * 1000, tzinfo=dt.UTC).timestamp() * 1000)
    return int(dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)


@pytest.mark.parametrize("path", sorted(ST.glob("*/*.jsonl")), ids=lambda p: p.parent.name)
def test_sillytavern_chats(db: Path, path: Path) -> None:
    """SillyTavern 1.3.0 chats (header line, then messages): one session named after the
    character, every message in order with its role, text and time."""
    header, *msgs = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    report = _import(db, path)
    assert (report["source"], report["added"], report["skipped"]) == ("sillytavern", 1, [])
    (s,) = saved(db)
    assert s["name"] == header["character_name"]
    assert s["createdAt"] == header["create_date"]
    assert [(e["role"], e["content"], e.get("createdAt")) for e in s["history"]] == [
        ("user" if m["is_user"] else "assistant", m["mes"], _st_time(m["send_date"])) for m in msgs
    ]
    assert _import(db, path)["added"] == 0


def test_sillytavern_modern_chat_swipes_reasoning_images_files(db: Path) -> None:
    """A chat in the shape SillyTavern 1.12+ writes (hand-made, see SOURCES.md): the chosen
    swipe kept and the others left out, reasoning, provider, inline image, attached file."""
    (path,) = (REAL / "sillytavern-handmade").glob("*/*.jsonl")
    header, *msgs = [json.loads(x) for x in path.read_text().splitlines()]
    report = _import(db, path)
    assert (report["source"], report["added"]) == ("sillytavern", 1)
    (s,) = saved(db)
    assert s["name"] == path.stem
    history = s["history"]
    want: list[tuple[str, str]] = []
    for m in msgs:
        f = m["extra"].get("file")
        if f:
            want.append(("user", "attachment:" + f["text"]))
        want.append(("user" if m["is_user"] else "assistant", m["mes"]))
    got = []
    for e in history:
        text = e["content"] if isinstance(e["content"], str) else e["content"][0]["text"]
        if text.startswith(PREFIX):
            got.append((e["role"], "attachment:" + text.split("---\n\n", 1)[1]))
        else:
            got.append((e["role"], text))
    assert got == want
    chosen = next(m for m in msgs if m.get("swipe_id") == 1)
    answer = next(e for e in history if e["content"] == chosen["mes"])
    assert answer["reasoning"] == chosen["extra"]["reasoning"]
    assert answer["provider"] == {"name": "openai", "model": "gpt-4o"}
    assert answer["createdAt"] == _st_time(chosen["send_date"])
    swiped_away = [t for m in msgs for t in m.get("swipes", []) if t != m["mes"]]
    text = json.dumps(history)
    assert swiped_away and not any(json.dumps(t)[1:-1] in text for t in swiped_away)
    image_msg = next(m for m in msgs if "image" in m["extra"])
    image_entry = next(e for e in history if isinstance(e["content"], list))
    assert image_entry["content"][1]["image_url"]["url"] == image_msg["extra"]["image"]


def test_sillytavern_detection_needs_the_header(db: Path, tmp_path: Path) -> None:
    """--from auto takes a .jsonl as SillyTavern only by its header line; a header with no
    message imports nothing and says so (exit 3)."""
    only = tmp_path / "empty-chat.jsonl"
    only.write_text(json.dumps({"user_name": "You", "character_name": "X", "chat_metadata": {}}))
    proc = run(db, "import", str(only), ok=False)
    assert proc.returncode == 3 and "holds no message" in proc.stderr
    with chatkeep.open(str(db)) as store:
        assert store.sessions.list() == []


@pytest.mark.parametrize(
    ("written", "moment"),
    [
        ("June 6, 2023 12:43am", dt.datetime(2023, 6, 6, 0, 43, tzinfo=dt.UTC)),
        ("December 31, 2023 11:05pm", dt.datetime(2023, 12, 31, 23, 5, tzinfo=dt.UTC)),
        ("2023-4-21 @20h 02m 47s 124ms", dt.datetime(2023, 4, 21, 20, 2, 47, 124000, dt.UTC)),
        ("2025-09-26@15h04m33s", dt.datetime(2025, 9, 26, 15, 4, 33, tzinfo=dt.UTC)),
        ("2025-09-26T07:05:40.881Z", dt.datetime(2025, 9, 26, 7, 5, 40, 881000, dt.UTC)),
    ],
)
def test_sillytavern_time_notations(db: Path, tmp_path: Path, written: str, moment: Any) -> None:
    """Every notation SillyTavern has written send_date in becomes the message's time."""
    path = tmp_path / "Iris - chat.jsonl"
    header = {"user_name": "You", "character_name": "Iris", "create_date": written}
    msg = {"name": "You", "is_user": True, "send_date": written, "mes": "hello"}
    path.write_text("\n".join(json.dumps(x) for x in (header, msg)))
    _import(db, path)
    (s,) = saved(db)
    want = int(moment.timestamp() * 1000)
    assert (s["name"], s["createdAt"], s["history"][0]["createdAt"]) == ("Iris - chat", want, want)


def test_from_md_reads_the_markdown_export_and_refuses_other_files(
    db: Path, tmp_path: Path
) -> None:
    """--from md imports chatkeep's Markdown export; another file is refused, nothing imported."""
    src = tmp_path / "src.db"
    run(src, "import", str(LF / "glaive_toolcall_en_demo.json"))
    md = tmp_path / "all.md"
    run(src, "export", "--format", "md", "-o", str(md))
    report = _import(db, md, "--from", "md")
    assert report["added"] == 12
    assert [s["history"] for s in saved(db)] == [s["history"] for s in saved(src)]
    proc = run(db, "import", str(LF / "mllm_demo.json"), "--from", "md", ok=False)
    assert proc.returncode == 3 and "nothing was imported" in proc.stderr


def test_image_paths_beside_an_image_only_message(db: Path, tmp_path: Path) -> None:
    """An `images` path named on a user turn that holds only an image part: the note goes in
    a text part before the image, and the entry stays valid."""
    url = (
        "data:image/png;base64,"
        + base64.b64encode((FIXTURES / "photo-red.png").read_bytes()).decode()
    )
    line = {
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]},
            {"role": "assistant", "content": "A red square."},
        ],
        "images": ["pics/a.jpg"],
    }
    path = tmp_path / "x.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert _import(db, path)["added"] == 1
    (s,) = saved(db)
    assert s["history"][0]["content"] == [
        {"type": "text", "text": "[image not in the export: pics/a.jpg]"},
        {"type": "image_url", "image_url": {"url": url}},
    ]
