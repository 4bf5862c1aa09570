"""Edit & resend and regenerate keep what they replace (SPEC §3.5): the replaced question, its
answer and every turn after it move to the archive as an earlier version (``replacedAt``), in
the same transaction; the request carries the current version only, and a loaded session's
write-back does not take the earlier version into the conversation."""

from __future__ import annotations

from conv_helpers import untimed, use_provider

from support.provider_server import Text


def _turns(store, provider_server, *pairs: tuple[str, str]) -> None:
    for question, answer in pairs:
        provider_server.queue(Text(answer))
        store.chat.send(question)


def test_regenerate_and_edit_move_the_replaced_turns_to_the_archive(
    sqlite_store, provider_server, sleeps
):
    use_provider(sqlite_store, provider_server)
    sqlite_store.chat.sleep = sleeps
    _turns(sqlite_store, provider_server, ("q1", "a1"), ("q2", "a2"))
    provider_server.queue(Text("a2 again"))
    sqlite_store.chat.regenerate()
    earlier = untimed(sqlite_store.history.archived())
    assert [(e["content"], e["replacedAt"]) for e in earlier] == [("q2", 2), ("a2", 2)]
    provider_server.queue(Text("a1 edited"))
    sqlite_store.chat.edit_and_resend(0, "q1, said better")
    live = [e["content"] for e in sqlite_store.history.read()]
    assert live == ["q1, said better", "a1 edited"]
    archived = [(e["content"], e["replacedAt"]) for e in sqlite_store.history.archived()]
    assert archived == [("q2", 2), ("a2", 2), ("q1", 0), ("a1", 0), ("q2", 0), ("a2 again", 0)]
    sent = provider_server.requests[-1].body["messages"]
    assert [m["content"] for m in sent if m["role"] != "system"] == ["q1, said better"]


def test_a_loaded_sessions_write_back_leaves_earlier_versions_out(
    sqlite_store, provider_server, sleeps
):
    use_provider(sqlite_store, provider_server)
    sqlite_store.chat.sleep = sleeps
    _turns(sqlite_store, provider_server, ("q1", "a1"), ("q2", "a2"))
    row = sqlite_store.sessions.save("Topic")
    provider_server.queue(Text("a2 again"))
    sqlite_store.chat.regenerate()
    sqlite_store.sessions.update(row["id"])
    body = [e["content"] for e in sqlite_store.sessions.get(row["id"])["history"]]
    assert body == ["q1", "a1", "q2", "a2 again"]
    assert [e["content"] for e in sqlite_store.history.archived()] == ["q2", "a2"]
