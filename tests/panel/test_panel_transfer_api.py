"""The drawer's export and import routes over the library's functions: bad input is refused
before anything is sent or written, the token is required, and a whole profile is never
replaced from the panel."""

from __future__ import annotations

import json

import chatkeep
from factories import assistant, user


def _filled(store: chatkeep.Store) -> dict:
    store.history.append(user("q"))
    store.history.append(assistant("a"))
    return store.sessions.save("One")


def test_export_streams_the_library_export_and_refuses_bad_input(client, anon, pstore):
    """Each format is the library's own text with a download name; an unknown format or session
    is a 4xx with the library's message; no token, no export."""
    row = _filled(pstore)
    got = client.get("/api/export?format=json")
    assert got.status_code == 200 and "attachment;" in got.headers["content-disposition"]
    assert json.loads(got.text) == json.loads(chatkeep.export_text(pstore, "json"))
    one = client.get(f"/api/export?format=md&session={row['id']}")
    assert one.text == chatkeep.export_text(pstore, "md", row["id"])
    assert one.headers["content-disposition"].endswith('.md"')
    bad = client.get("/api/export?format=docx")
    assert bad.status_code == 400 and "docx" in bad.json()["error"]["message"]
    assert client.get("/api/export?session=nope").status_code == 404
    assert anon.get("/api/export").status_code in (401, 403)


def test_import_adds_sessions_and_never_replaces_the_profile(client, pstore, tmp_path):
    """A session export is imported as a saved session (twice is once); a whole-profile export
    is refused with nothing changed; an empty or garbled file is a 4xx."""
    with chatkeep.open(str(tmp_path / "o.db")) as other:
        row = _filled(other)
        session = chatkeep.export_text(other, "json", row["id"]).encode()
        whole = chatkeep.export_text(other, "json").encode()
    first = client.post("/api/import?name=s.json", content=session)
    assert first.status_code == 200 and first.json()["report"]["added"] == 1
    again = client.post("/api/import?name=s.json", content=session).json()["report"]
    assert again["added"] == 0 and again["already"] == 1
    pstore.history.append(user("live"))
    before = (pstore.history.read(), pstore.sessions.list())
    refused = client.post("/api/import?name=backup.json", content=whole)
    assert 400 <= refused.status_code < 500
    assert (pstore.history.read(), pstore.sessions.list()) == before
    assert client.post("/api/import?name=x.json", content=b"").status_code == 400
    assert client.post("/api/import?name=x.json", content=b"{garbled").status_code == 400
