"""Files written by the real producers (tests/fixtures/interop/real, SOURCES.md says where each
came from) import faithfully (SPEC §14, issue 27).

Every fixture file is imported and what was saved is compared with a reading of the file
written here, independently of chatkeep's readers: the conversations, the messages of each in
order (role, text, time), the branch taken, reasoning, tool calls and tool results, attachments
kept, and what was skipped with its reason. Then each imported profile goes through the json,
md, jsonl and sharegpt exports and back with the same messages in the same order.
"""

from __future__ import annotations

import copy
import datetime as dt
import html
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from interop_helpers import FIXTURES, saved

import chatkeep
from clirun import run

REAL = FIXTURES / "real"
Expected = dict[str, Any]  # one conversation: {"title", "messages": [...], "skipped"?: reason}


def _files(producer: str) -> list[Path]:
    found = sorted((REAL / producer).glob("*.json"))
    assert found, producer
    return found


def _import(db: Path, path: Path, source: str = "auto") -> dict[str, Any]:
    with chatkeep.open(str(db)) as store:
        return chatkeep.import_file(store, str(path), source=source)


def _text(entry: dict[str, Any]) -> str:
    content = entry["content"]
    if isinstance(content, str):
        return content
    return "\n".join(p["text"] for p in content if p.get("type") == "text")


def _seen(entry: dict[str, Any]) -> dict[str, Any]:
    """What a test compares of a saved entry."""
    return {
        "role": entry["role"],
        "text": _text(entry),
        "attachment": "attachId" in entry,
        "createdAt": entry.get("createdAt"),
        "reasoning": entry.get("reasoning"),
        "toolCalls": entry.get("toolCalls"),
        "toolResult": entry.get("toolResult"),
    }


def _message(role: str, text: str, when: int | None, **more: Any) -> dict[str, Any]:
    return {
        "role": role,
        "text": text,
        "attachment": more.get("attachment", False),
        "createdAt": when,
        "reasoning": more.get("reasoning"),
        "toolCalls": more.get("toolCalls"),
        "toolResult": more.get("toolResult"),
    }


def _iso_ms(value: str) -> int:
    return int(dt.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp() * 1000)


def _list(doc: Any) -> list[Any]:
    return doc if isinstance(doc, list) else [doc]


# --- independent readings of each producer's file ----------------------------------------


def _chatgpt_branch(conv: dict[str, Any]) -> list[dict[str, Any]]:
    """Root → current_node; when current_node is not in the mapping, → the newest leaf."""
    mapping = conv["mapping"]
    node_id = conv.get("current_node")
    if node_id not in mapping:
        leaves = [k for k, n in mapping.items() if not n["children"]]
        times = {k: (mapping[k]["message"] or {}).get("create_time") or 0 for k in leaves}
        node_id = max(leaves, key=lambda k: (times[k], leaves.index(k)))
    chain = []
    while node_id is not None:
        chain.append(mapping[node_id])
        node_id = mapping[node_id]["parent"]
    return chain[::-1]


def _thought_text(content: dict[str, Any]) -> str:
    if content["content_type"] == "reasoning_recap":
        return content["content"]
    return "\n\n".join(
        "\n".join(x for x in (t["summary"], t["content"]) if x) for t in content["thoughts"]
    )


def _flush(pending: dict[str, list[Any]], into: dict[str, Any]) -> None:
    """What came before an answer in its turn goes on the answer."""
    if pending["reasoning"]:
        into["reasoning"] = "\n\n".join(pending["reasoning"])
    for key in ("toolCalls", "toolResult"):
        if pending[key]:
            into[key] = pending[key]
    for key in pending:
        pending[key] = []


def _chatgpt(doc: Any) -> list[Expected]:
    out: list[Expected] = []
    for conv in _list(doc):
        if "mapping" not in conv:
            out.append({"title": conv["title"], "skipped": "it holds no messages"})
            continue
        messages: list[dict[str, Any]] = []
        pending: dict[str, list[Any]] = {"reasoning": [], "toolCalls": [], "toolResult": []}
        last_call: dict[str, str] = {}

        for node in _chatgpt_branch(conv):
            m = node["message"]
            if m is None or (m.get("metadata") or {}).get("is_visually_hidden_from_conversation"):
                continue
            role, content = m["author"]["role"], m["content"]
            kind = content["content_type"]
            when = int(m["create_time"] * 1000) if m.get("create_time") else None
            if role == "system" or kind == "user_editable_context":
                continue
            if role == "tool":
                name = m["author"]["name"]
                pending["toolResult"].append(
                    {"content": _thought_text(content), "name": name, "id": last_call[name]}
                )
            elif m.get("recipient", "all") != "all":
                if kind == "thoughts":
                    pending["reasoning"].append(_thought_text(content))
                last_call[m["recipient"]] = m["id"]
                pending["toolCalls"].append(
                    {"name": m["recipient"], "arguments": "", "id": m["id"]}
                )
            elif kind in ("thoughts", "reasoning_recap"):
                pending["reasoning"].append(_thought_text(content))
            else:
                text = "\n".join(p for p in content["parts"] if isinstance(p, str))
                if not text.strip():
                    continue
                if role == "user":
                    assert not any(pending.values())  # every turn here ends on an answer
                    messages.append(_message("user", text, when))
                else:
                    messages.append(_message("assistant", text, when))
                    _flush(pending, messages[-1])
        out.append({"title": conv["title"], "messages": messages})
    return out


def _claude(doc: Any) -> list[Expected]:
    out: list[Expected] = []
    for conv in _list(doc):
        messages: list[dict[str, Any]] = []
        for m in conv["chat_messages"]:
            role = "user" if m["sender"] == "human" else "assistant"
            when = _iso_ms(m["created_at"])
            for att in m["attachments"]:
                messages.append(_message("user", att["extracted_content"], when, attachment=True))
            blocks = m.get("content") or []
            said = [b["text"] for b in blocks if b["type"] == "text"]
            said += [b["transcript"] for b in blocks if b["type"] == "voice_note"]
            more: dict[str, Any] = {}
            thinking = [b["thinking"] for b in blocks if b["type"] == "thinking"]
            if thinking:
                more["reasoning"] = "\n\n".join(thinking)
            uses = [b for b in blocks if b["type"] == "tool_use"]
            if uses:
                more["toolCalls"] = [
                    {"name": b["name"], "arguments": json.dumps(b["input"]), "id": b["id"]}
                    for b in uses
                ]
            results = [b for b in blocks if b["type"] == "tool_result"]
            if results:
                more["toolResult"] = [
                    {
                        "content": "\n".join(p["text"] for p in b["content"]),
                        "name": b["name"],
                        "id": b["tool_use_id"],
                    }
                    for b in results
                ]
            messages.append(_message(role, "\n\n".join(said) or m["text"], when, **more))
        out.append({"title": conv["name"], "messages": messages})
    return out


_DETAILS = re.compile(r"<details[^>]*>.*?</details>", re.S)


def _openwebui(doc: Any) -> list[Expected]:
    out: list[Expected] = []
    for chat in _list(doc):
        msgs = chat["chat"]["history"]["messages"]
        node_id = chat["chat"]["history"]["currentId"]
        chain = []
        while node_id is not None:
            chain.append(msgs[node_id])
            node_id = msgs[node_id]["parentId"]
        messages: list[dict[str, Any]] = []
        for m in chain[::-1]:
            when = m["timestamp"] * 1000
            output = m.get("output") or []
            if not output:
                messages.append(_message(m["role"], m["content"], when))
                continue
            more: dict[str, Any] = {}
            reasoning = [
                c["text"] for o in output if o["type"] == "reasoning" for c in o["content"]
            ]
            if reasoning:
                more["reasoning"] = "\n\n".join(reasoning)
            calls = [o for o in output if o["type"] == "function_call"]
            if calls:
                more["toolCalls"] = [
                    {"name": o["name"], "arguments": o["arguments"], "id": o["call_id"]}
                    for o in calls
                ]
                names = {o["call_id"]: o["name"] for o in calls}
                more["toolResult"] = [
                    {
                        "content": "\n".join(p["text"] for p in o["output"]),
                        "name": names[o["call_id"]],
                        "id": o["call_id"],
                    }
                    for o in output
                    if o["type"] == "function_call_output"
                ]
            answer = "\n\n".join(
                c["text"] for o in output if o["type"] == "message" for c in o["content"]
            )
            assert answer == _DETAILS.sub("", m["content"]) or not m["content"]
            messages.append(_message(m["role"], answer, when, **more))
        out.append({"title": chat["title"], "messages": messages})
    return out


def _librechat(doc: Any) -> list[Expected]:
    out: list[Expected] = []
    for conv in _list(doc):
        if "messagesTree" in conv:
            chain, level = [], conv["messagesTree"]
            while level:
                chain.append(level[-1])
                level = level[-1]["children"]
        else:
            by_id = {m["messageId"]: m for m in conv["messages"]}
            chain, node = [], conv["messages"][-1]
            while node is not None:
                chain.append(node)
                node = by_id.get(node["parentMessageId"])
            chain.reverse()
        messages = [
            _message(
                "user" if m["isCreatedByUser"] else "assistant", m["text"], _iso_ms(m["createdAt"])
            )
            for m in chain
        ]
        out.append({"title": conv["title"], "messages": messages})
    return out


READINGS: dict[str, Callable[[Any], list[Expected]]] = {
    "chatgpt": _chatgpt,
    "claude": _claude,
    "openwebui": _openwebui,
    "librechat": _librechat,
}
CASES = [(producer, path) for producer in READINGS for path in _files(producer)]


def _compare(db: Path, report: dict[str, Any], expected: list[Expected], producer: str) -> None:
    good = [c for c in expected if "skipped" not in c]
    skipped = [c for c in expected if "skipped" in c]
    assert report["source"] == producer
    assert (report["conversations"], report["added"]) == (len(expected), len(good))
    assert [(s["title"], s["reason"].split(" (")[0]) for s in report["skipped"]] == [
        (c["title"], c["skipped"]) for c in skipped
    ]
    sessions = {s["name"]: s for s in saved(db)}
    assert sorted(sessions) == sorted(c["title"] for c in good)
    for conv in good:
        got = [_seen(e) for e in sessions[conv["title"]]["history"]]
        want = conv["messages"]
        # attachment entries hold chatkeep's prefix before the file's text
        for g, w in zip(got, want, strict=True):
            if w["attachment"]:
                assert g["attachment"] and g["text"].endswith("\n---\n\n" + w["text"])
                g["text"] = w["text"]
        assert got == want, conv["title"]
    count = sum(1 for c in good for m in c["messages"] if not m["attachment"])
    assert (report["messages"], report["images"]) == (count, 0)


@pytest.mark.parametrize(("producer", "path"), CASES, ids=[f"{p}/{f.name}" for p, f in CASES])
def test_every_real_file_imports_as_an_independent_reading_says(
    tmp_path: Path, producer: str, path: Path
) -> None:
    """Conversations, messages in order (role, text, time), branch, reasoning, tool calls and
    results, attachments and skipped conversations are those the file holds."""
    db = tmp_path / "store.db"
    report = _import(db, path)
    _compare(db, report, READINGS[producer](json.loads(path.read_text())), producer)
    assert _import(db, path)["added"] == 0  # twice is once


# --- the cases SPEC §14 names, on the files that show them --------------------------------


def test_chatgpt_file_holding_one_conversation_object(tmp_path: Path) -> None:
    path = REAL / "chatgpt" / "polylogue-thinking-tools-trimmed.json"
    assert isinstance(json.loads(path.read_text()), dict)
    report = _import(tmp_path / "s.db", path)
    assert (report["added"], report["skipped"]) == (1, [])


def test_chatgpt_branch_at_current_node_only(tmp_path: Path) -> None:
    """The real 2024 export with forks: the branch ending at current_node, nothing else."""
    _import(tmp_path / "s.db", REAL / "chatgpt" / "librechat-chatgpt-tree.json")
    [session] = saved(tmp_path / "s.db")
    said = [_text(e) for e in session["history"]]
    assert said[::2] == ["hi there", "hi again", "tell me a joke"]
    assert "so cool bro" not in said and "tell me a story" not in said


def test_chatgpt_entry_without_mapping_is_skipped_the_others_import(tmp_path: Path) -> None:
    """The 'Corrupted entry' of LibreChat's modern ChatGPT sample: reported with its reason,
    the two good conversations imported, in the report the user reads and in --json."""
    path = REAL / "chatgpt" / "librechat-modern-export.json"
    db = tmp_path / "s.db"
    proc = run(db, "import", str(path))
    assert proc.stdout.splitlines() == [
        "imported 2 conversations from chatgpt (6 messages, 0 images): "
        "2 new saved sessions; skipped 1:",
        '  "Corrupted entry" — it holds no messages (it has no `mapping`)',
    ]
    report = json.loads(run(tmp_path / "t.db", "import", str(path), "--json").stdout)
    assert report["skipped"] == [
        {
            "where": "conversation 2",
            "reason": "it holds no messages (it has no `mapping`)",
            "title": "Corrupted entry",
        }
    ]
    assert {s["name"] for s in saved(db)} == {"Deploying the staging cluster", "Weeknight pasta"}


def test_chatgpt_file_opening_with_the_entry_without_mapping(tmp_path: Path) -> None:
    """The LibreChat sample reordered here so the 'Corrupted entry' comes first: the format is
    still told (ChatGPT's conversation_id and create_time) and the two others import."""
    doc = json.loads((REAL / "chatgpt" / "librechat-modern-export.json").read_text())
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps([doc[1], doc[0], doc[2]]))
    report = _import(tmp_path / "s.db", path)
    assert (report["source"], report["added"]) == ("chatgpt", 2)
    assert [s["where"] for s in report["skipped"]] == ["conversation 1"]


def test_chatgpt_current_node_missing_walks_from_the_newest_leaf(tmp_path: Path) -> None:
    """derived-current-node-missing.json imports its text; and (derived here from the
    LibreChat sample by adding an older second answer last in the mapping and pointing
    current_node nowhere) the branch ends at the newest leaf, not at the last one listed."""
    report = _import(tmp_path / "a.db", REAL / "chatgpt" / "derived-current-node-missing.json")
    assert report["added"] == 2
    pasta = {s["name"]: s for s in saved(tmp_path / "a.db")}["Weeknight pasta"]
    assert [_text(e) for e in pasta["history"]] == ["Something with anchovies?", "Puttanesca."]

    doc = json.loads((REAL / "chatgpt" / "librechat-modern-export.json").read_text())
    conv = doc[0]
    older = copy.deepcopy(conv["mapping"]["assistant-2"])
    older["id"] = older["message"]["id"] = "assistant-2-older"
    older["message"]["create_time"] = 1756000003.5
    older["message"]["content"]["parts"] = ["An older answer."]
    conv["mapping"]["user-2"]["children"].append("assistant-2-older")
    conv["mapping"]["assistant-2-older"] = older
    conv["current_node"] = "not-there"
    path = tmp_path / "branched.json"
    path.write_text(json.dumps([conv]))
    _import(tmp_path / "b.db", path)
    [session] = saved(tmp_path / "b.db")
    assert _text(session["history"][-1]) == "Restore from the last known-good chart."
    assert "An older answer." not in json.dumps(session)


def test_chatgpt_reasoning_and_tool_calls_are_kept_on_the_answer(tmp_path: Path) -> None:
    """The real gpt-5-thinking export: thoughts and the recap are the answer's reasoning; the
    two Gmail calls and their outputs are its toolCalls and toolResult, in order."""
    _import(tmp_path / "s.db", REAL / "chatgpt" / "polylogue-thinking-tools-trimmed.json")
    [session] = saved(tmp_path / "s.db")
    first = session["history"][1]
    assert first["role"] == "assistant" and first["content"].startswith("Here are the INBOX")
    assert first["reasoning"].startswith("Searching for emails\nThe user is asking me")
    assert first["reasoning"].endswith("Reading 2 emails in Gmail...\n\nThought for 7s")
    assert [c["name"] for c in first["toolCalls"]] == [
        "gmail.search_email_ids",
        "gmail.batch_read_email",
    ]
    assert [r["content"] for r in first["toolResult"]] == [
        "Found 2 emails in Gmail",
        "Read 2 emails in Gmail",
    ]
    assert [r["id"] for r in first["toolResult"]] == [c["id"] for c in first["toolCalls"]]
    assert all("reasoning" not in e for e in session["history"][2:])


def test_claude_voice_note_thinking_and_tools(tmp_path: Path) -> None:
    """derived-blocks.json: a voice note keeps its transcript (the conversation imports);
    thinking is reasoning; tool_use / tool_result are toolCalls / toolResult."""
    report = _import(tmp_path / "s.db", REAL / "claude" / "derived-blocks.json")
    assert (report["added"], report["skipped"]) == (1, [])
    [session] = saved(tmp_path / "s.db")
    h = session["history"]
    assert h[0] == {
        "role": "user",
        "content": "Hello! Can you help me understand recursion?",
        "createdAt": _iso_ms("2024-01-15T10:30:00Z"),
    }
    assert h[1]["reasoning"].startswith("The user wants recursion explained")
    assert h[3]["toolCalls"] == [
        {
            "name": "web_search",
            "arguments": '{"query": "fibonacci recursion python"}',
            "id": "toolu_01",
        }
    ]
    assert h[3]["toolResult"] == [
        {
            "content": "F(n) = F(n-1) + F(n-2), F(0) = 0, F(1) = 1",
            "name": "web_search",
            "id": "toolu_01",
        }
    ]
    assert h[3]["content"].startswith("Here's the Fibonacci sequence")


def test_claude_branch_ends_at_the_current_leaf(tmp_path: Path) -> None:
    """Derived here from polylogue's Claude sample: messages linked by parent_message_uuid,
    a retried last answer added after the first, current_leaf_message_uuid on the first: the
    first branch is kept; without the leaf, the last message's branch."""
    doc = json.loads((REAL / "claude" / "polylogue-simple.json").read_text())
    msgs = doc["chat_messages"]
    for before, msg in zip(msgs, msgs[1:], strict=False):
        msg["parent_message_uuid"] = before["uuid"]
    retry = {**copy.deepcopy(msgs[3]), "uuid": "msg-retry", "text": "A retried answer."}
    msgs.append(retry)
    doc["current_leaf_message_uuid"] = msgs[3]["uuid"]
    path = tmp_path / "branched.json"
    path.write_text(json.dumps(doc))
    _import(tmp_path / "a.db", path)
    [kept] = saved(tmp_path / "a.db")
    assert [_text(e) for e in kept["history"]] == [m["text"] for m in msgs[:4]]
    del doc["current_leaf_message_uuid"]
    path.write_text(json.dumps(doc))
    _import(tmp_path / "b.db", path)
    [last] = saved(tmp_path / "b.db")
    assert [_text(e) for e in last["history"]] == [m["text"] for m in [*msgs[:3], retry]]


def test_openwebui_details_blocks_become_reasoning_and_tool_calls(tmp_path: Path) -> None:
    """With output[] removed (derived here from LibreChat's Open WebUI sample: the smallest
    edit that leaves only the <details> blocks), the blocks are read: no raw HTML stays in the
    answer, the quoted thinking is the reasoning, the block's body the tool result."""
    doc = json.loads((REAL / "openwebui" / "librechat-openwebui-export.json").read_text())
    for chat in doc:
        for m in chat["chat"]["history"]["messages"].values():
            m.pop("output", None)
    path = tmp_path / "details-only.json"
    path.write_text(json.dumps(doc))
    _import(tmp_path / "s.db", path)
    sessions = {s["name"]: s for s in saved(tmp_path / "s.db")}
    assert "<details" not in json.dumps([s["history"] for s in sessions.values()])
    answer = sessions["Chat with reasoning"]["history"][1]
    assert answer["content"] == "255"
    assert answer["reasoning"] == html.unescape("Let me break this down...")
    tool = sessions["Chat with tool call"]["history"][1]
    assert tool["content"] == "The weather in Paris is 18C with rain."
    assert tool["toolResult"] == [{"content": '"Paris: 18C, rain"'}]


def test_openwebui_tool_call_block_with_attributes(tmp_path: Path) -> None:
    """Open WebUI's current block carries name, arguments and result as escaped attributes
    (the LibreChat sample's tool answer rewritten in that form)."""
    doc = json.loads((REAL / "openwebui" / "librechat-openwebui-export.json").read_text())
    msg = doc[1]["chat"]["history"]["messages"]["ta2"]
    msg.pop("output")
    msg["content"] = (
        '<details type="tool_calls" done="true" id="call_1" name="get_weather" '
        'arguments="{&quot;city&quot;:&quot;Paris&quot;}" result="&quot;Paris: 18C, rain&quot;">'
        "\n<summary>Tool Executed</summary>\n</details>\nThe weather in Paris is 18C with rain."
    )
    path = tmp_path / "attrs.json"
    path.write_text(json.dumps(doc[1:2]))
    _import(tmp_path / "s.db", path)
    [session] = saved(tmp_path / "s.db")
    entry = session["history"][1]
    assert entry["content"] == "The weather in Paris is 18C with rain."
    assert entry["toolCalls"] == [
        {"name": "get_weather", "arguments": '{"city":"Paris"}', "id": "call_1"}
    ]
    assert entry["toolResult"] == [
        {"content": '"Paris: 18C, rain"', "name": "get_weather", "id": "call_1"}
    ]


def test_openwebui_answer_held_only_in_output_is_kept(tmp_path: Path) -> None:
    _import(tmp_path / "s.db", REAL / "openwebui" / "derived-output-only.json")
    answer = {s["name"]: s for s in saved(tmp_path / "s.db")}["Chat with reasoning"]["history"][1]
    assert (answer["content"], answer["reasoning"]) == (
        "255",
        "15 * 17 = 15 * 10 + 15 * 7 = 150 + 105 = 255",
    )


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("chatgpt/librechat-modern-export.json", "title"),
        ("claude/polylogue-simple.json", "name"),
        ("openwebui/librechat-openwebui-export.json", "title"),
        ("librechat/librechat-export.json", "title"),
    ],
)
def test_imported_names_are_kept_whole(tmp_path: Path, path: str, key: str) -> None:
    """A 300-character title (put in the real file here) is the session's name, whole."""
    doc = json.loads((REAL / path).read_text())
    first = _list(doc)[0]
    title = "A long title about " + "the staging cluster and its rollbacks " * 8
    first[key] = title.strip()
    if "chat" in first:
        first["chat"]["title"] = title.strip()
    out = tmp_path / "long.json"
    out.write_text(json.dumps(doc))
    _import(tmp_path / "s.db", out)
    assert title.strip() in {s["name"] for s in saved(tmp_path / "s.db")}
    assert len(title.strip()) > 300


def test_report_separates_thousands(tmp_path: Path) -> None:
    """600 conversations (the LibreChat sample's 'Weeknight pasta', each with its own id):
    'imported 600 conversations from chatgpt (1,200 messages, 0 images)'."""
    conv = json.loads((REAL / "chatgpt" / "librechat-modern-export.json").read_text())[2]
    many = []
    for n in range(600):
        c = copy.deepcopy(conv)
        c["id"] = c["conversation_id"] = f"conv-{n}"
        many.append(c)
    path = tmp_path / "many.json"
    path.write_text(json.dumps(many))
    out = run(tmp_path / "s.db", "import", str(path)).stdout
    assert out == (
        "imported 600 conversations from chatgpt (1,200 messages, 0 images): "
        "600 new saved sessions\n"
    )


# --- round trips through the exports ------------------------------------------------------


def _messages(db: Path) -> dict[str, list[tuple[str, str]]]:
    """Each session's messages as (role, text), attachments by their file text."""
    return {
        s["name"]: [(e["role"], _text(e).split("\n---\n\n", 1)[-1]) for e in s["history"]]
        for s in saved(db)
    }


@pytest.mark.parametrize("fmt", ["json", "md", "jsonl", "sharegpt"])
@pytest.mark.parametrize(("producer", "path"), CASES, ids=[f"{p}/{f.name}" for p, f in CASES])
def test_imported_profile_round_trips_through_the_exports(
    tmp_path: Path, producer: str, path: Path, fmt: str
) -> None:
    """The same messages, in the same order, after export and import back (json and md: the
    same sessions, every field; jsonl and sharegpt hold role and text only)."""
    db = tmp_path / "first.db"
    _import(db, path)
    out = tmp_path / f"export.{fmt}"
    run(db, "export", "--format", fmt, "-o", str(out))
    back = tmp_path / "back.db"
    report = json.loads(run(back, "import", str(out), "--json").stdout)
    # the json export is the whole profile: it becomes the profile; the others add sessions
    assert report["sessions" if fmt == "json" else "added"] == len(saved(db))
    if fmt in ("json", "md"):  # both hold every field: reasoning, tools, times, attachments
        with chatkeep.open(str(db)) as a, chatkeep.open(str(back)) as b:
            for row in a.sessions.list():
                assert b.sessions.get(row["id"]) == a.sessions.get(row["id"])
    assert _messages(back) == _messages(db)
