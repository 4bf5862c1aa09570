"""Integrity check and safe repair of one profile (``chatkeep doctor``, SPEC §10).

:func:`check` reads everything the profile stores and reports each problem as
``{"kind", "where", "detail", "repaired"}``:

``missing-body``     a ``savedSessions`` row (or an ``evicted_<id>`` row) whose ``session_<id>``
                     body is not there
``orphan-body``      a ``session_<id>`` body that no index row and no evicted row lists
``missing-ref``      a stored value that points at a blob without a reference row
``dangling-ref``     a reference row whose owner (key, live row, archive row) is gone
``orphan-blob``      a blob nothing references
``unreadable``       a row that does not parse (or a history row that is not an entry)
``missing-blob``     a row pointing at blobs whose rows are gone: it still reads, each missing
                     image as the text part ``[image missing: sha256:<hash>]``, and is left as it
                     is (never quarantined); the problem remains until the same bytes are stored
                     again, which brings the image back
``over-limit``       a row an older version accepted past today's limits (§12): it reads, but
                     could not be imported again
``history-state``    the live count/length or the archive's kept length disagrees with the rows
``permissions``      the SQLite file (or its own directory) is readable by other users

With ``repair=True`` it fixes what is safe, in one transaction, and never deletes user content:
orphan bodies get an index row back, index and evicted rows without a body get an empty body, references
are re-linked or dropped, orphan blobs are collected, the bookkeeping is recomputed, unreadable
and over-limit rows move to a new ``quarantine_<n>`` key (their stored text, with blob markers
resolved to the bytes they stand for; exported with the profile, never deleted by chatkeep),
and the file and directory are made private (0600 / 0700; a directory only when it holds
nothing but the store). The report is then taken again: ``healthy`` says whether problems remain.

A store this process may only read is not damaged: the report's ``notes`` say it is read-only
(its file mode is shown there, not judged as a problem, since only the file's owner chooses
it), and ``repair=True`` changes nothing in it and says so in a note; problems found in its
content are still reported, and remain.
"""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING, Any

from ..constants import SESSION_BODY_PREFIX, SESSIONS_INDEX_KEY
from ..errors import CorruptValue
from ..limits import ENTRY_MAX_DEPTH, MAX_DEPTH, problem
from . import codec
from .evicted import evicted_ids, evicted_key
from .quarantine import QUARANTINE_PREFIX, restore
from .sql import now_ms

if TYPE_CHECKING:
    from .backend import Backend
    from .sql import Tx

__all__ = ["QUARANTINE_PREFIX", "check"]


def _problem(kind: str, where: str, detail: str) -> dict[str, Any]:
    return {"kind": kind, "where": where, "detail": detail, "repaired": False}


def _resolve_text(text: str, tx: Tx) -> str:
    """The stored text with every blob marker replaced by the JSON string it stands for."""
    urls = tx.fetch_urls(codec.blob_hashes(text))
    return codec.mark_re().sub(
        lambda m: (
            json.dumps(urls[m.group(1)], ensure_ascii=False) if m.group(1) in urls else m.group(0)
        ),
        text,
    )


def _readability(
    text: str, tx: Tx, max_depth: int, missing: set[str]
) -> tuple[tuple[str, str] | None, Any]:
    """((kind, detail) when a stored text cannot be read or re-imported, else None; its
    value). Hashes of blobs it points at that are gone are added to ``missing``: such a row
    still reads (a placeholder stands for each), so it is not unreadable."""
    try:
        value = codec.decode(text, tx.fetch_urls, missing)
    except CorruptValue as exc:
        return ("unreadable", exc.message), None
    why = problem(value, max_depth)
    if why is not None:
        return ("over-limit", why), value
    return None, value


def _missing_detail(missing: set[str]) -> str:
    shown = ", ".join("sha256:" + h[:12] for h in sorted(missing)[:3])
    more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
    return (
        f"{len(missing)} blob(s) gone ({shown}{more}): the row reads with a placeholder for each;"
        " the bytes cannot be repaired here (storing the same image again brings it back)"
    )


def _owners(tx: Tx) -> dict[str, str]:
    """Every blob owner of the profile and its stored text."""
    out = {"k:" + k: v for k, v in tx.rows("SELECT key, value FROM ck_kv WHERE profile=?")}
    out.update(
        {f"h:{p}": v for p, v in tx.rows("SELECT pos, value FROM ck_history WHERE profile=?")}
    )
    out.update(
        {f"a:{s}": v for s, v in tx.rows("SELECT seq, value FROM ck_archive WHERE profile=?")}
    )
    return out


def _permissions(path: str | None) -> list[dict[str, Any]]:
    if not path or path == ":memory:" or not os.path.exists(path):
        return []
    found = []
    for p in (path, path + "-wal", path + "-shm"):
        if os.path.exists(p) and os.stat(p).st_mode & 0o077:
            found.append(
                _problem("permissions", p, f"mode {stat.filemode(os.stat(p).st_mode)}; want 0600")
            )
    parent = os.path.dirname(os.path.abspath(path))
    mode = os.stat(parent).st_mode
    if mode & 0o022 and not mode & stat.S_ISVTX:
        found.append(
            _problem(
                "permissions", parent, f"directory mode {stat.filemode(mode)}: others can write"
            )
        )
    return found


def _repair_permissions(path: str, problems: list[dict[str, Any]]) -> None:
    base = os.path.basename(path)
    for p in problems:
        target = p["where"]
        try:
            if os.path.isdir(target):
                if all(n.startswith(base) for n in os.listdir(target)):
                    os.chmod(target, 0o700)
                    p["repaired"] = True
            else:
                os.chmod(target, 0o600)
                p["repaired"] = True
        except OSError as exc:
            p["detail"] += f" (could not change it: {exc})"


def _next_quarantine(tx: Tx) -> int:
    used = [k[len(QUARANTINE_PREFIX) :] for k in tx.kv_keys(QUARANTINE_PREFIX)]
    return max((int(n) for n in used if n.isdigit()), default=0) + 1


def _scan(tx: Tx) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    problems: list[dict[str, Any]] = []
    facts: dict[str, Any] = {"bad": {}, "missing_refs": {}, "dangling": set(), "orphans": set()}
    owners = _owners(tx)
    # rows that cannot be read (or re-imported)
    for owner, text in owners.items():
        if owner.startswith("k:") and owner[2:].startswith(QUARANTINE_PREFIX):
            continue
        depth = MAX_DEPTH if owner.startswith("k:") else ENTRY_MAX_DEPTH
        missing: set[str] = set()
        bad, value = _readability(text, tx, depth, missing)
        if bad is None and owner[0] in "ha":
            if not (isinstance(value, dict) and value.get("role") in ("user", "assistant")):
                bad = ("unreadable", "not a history entry")
        if missing:
            problems.append(_problem("missing-blob", owner, _missing_detail(missing)))
        if bad is not None:
            facts["bad"][owner] = bad
            problems.append(_problem(bad[0], owner, bad[1]))
    # blob references
    refs: dict[str, set[str]] = {}
    for owner, h in tx.rows("SELECT owner, hash FROM ck_blob_refs WHERE profile=?"):
        refs.setdefault(owner, set()).add(h)
    blobs = {r[0] for r in tx.rows("SELECT hash FROM ck_blobs WHERE profile=?")}
    for owner, text in owners.items():
        wanted = codec.blob_hashes(text) & blobs
        missing = wanted - refs.get(owner, set())
        if missing:
            facts["missing_refs"][owner] = missing
            problems.append(
                _problem("missing-ref", owner, f"{len(missing)} blob(s) not referenced")
            )
    for owner in refs:
        if owner not in owners:
            facts["dangling"].add(owner)
            problems.append(_problem("dangling-ref", owner, "the owner row is gone"))
    referenced = {h for owner, hs in refs.items() if owner in owners for h in hs}
    referenced |= {h for hs in facts["missing_refs"].values() for h in hs}
    for h in sorted(blobs - referenced):
        facts["orphans"].add(h)
        problems.append(_problem("orphan-blob", h[:16], "nothing references this blob"))
    # sessions index <-> bodies
    index = tx.index_light()
    ids = [r.get("id") for r in index if isinstance(r, dict)] if isinstance(index, list) else []
    bodies = {k[len(SESSION_BODY_PREFIX) :] for k in tx.kv_keys(SESSION_BODY_PREFIX)}
    gone = evicted_ids(tx)
    facts["missing_bodies"] = [i for i in ids if isinstance(i, str) and i not in bodies]
    facts["missing_evicted"] = [i for i in gone if i not in bodies]
    facts["orphan_bodies"] = sorted(bodies - {i for i in ids if isinstance(i, str)} - set(gone))
    for i in facts["missing_bodies"]:
        problems.append(_problem("missing-body", f"savedSessions:{i}", "no session_<id> body"))
    for i in facts["missing_evicted"]:
        problems.append(_problem("missing-body", evicted_key(i), "no session_<id> body"))
    for i in facts["orphan_bodies"]:
        problems.append(_problem("orphan-body", SESSION_BODY_PREFIX + i, "not in savedSessions"))
    # live bookkeeping
    rows = tx.hist_rows()
    real = (len(rows), sum(c for _p, c, _t in rows))
    if tx.hist_state() != real:
        facts["state"] = real
        problems.append(
            _problem("history-state", "ck_history_state", f"says {tx.hist_state()}, rows {real}")
        )
    kept, rows_now = tx.archive_count(), sum(1 for owner in owners if owner.startswith("a:"))
    if kept != rows_now:
        problems.append(
            _problem("history-state", "ck_history_state", f"archive {kept}, rows {rows_now}")
        )
    return problems, facts


def _repair(tx: Tx, problems: list[dict[str, Any]], facts: dict[str, Any]) -> list[str]:
    quarantined: list[str] = []
    by_where = {(p["kind"], p["where"]): p for p in problems}
    n = _next_quarantine(tx)
    owners = _owners(tx)
    for owner, (kind, detail) in facts["bad"].items():
        key = f"{QUARANTINE_PREFIX}{n}"
        n += 1
        record = {
            "from": owner,
            "reason": f"{kind}: {detail}",
            "quarantinedAt": now_ms(),
            "text": _resolve_text(owners[owner], tx),
        }
        tx.kv_put(key, record)
        quarantined.append(key)
        if owner.startswith("k:"):
            tx.kv_delete([owner[2:]])
        elif owner.startswith("h:"):
            tx.hist_delete([int(owner[2:])])
        else:
            tx.run("DELETE FROM ck_archive WHERE profile=? AND seq=?", (int(owner[2:]),))
            tx.gc(tx.drop_refs([owner]))
        by_where[(kind, owner)]["repaired"] = True
    for owner, hashes in facts["missing_refs"].items():
        if owner not in facts["bad"]:
            tx.add_refs(owner, hashes)
        by_where[("missing-ref", owner)]["repaired"] = True
    if facts["dangling"]:
        tx.gc(tx.drop_refs(sorted(facts["dangling"])))
        for owner in facts["dangling"]:
            by_where[("dangling-ref", owner)]["repaired"] = True
    if facts["orphans"]:
        tx.gc(facts["orphans"])
        for p in problems:
            if p["kind"] == "orphan-blob":
                p["repaired"] = True
    for i in facts["missing_evicted"]:
        tx.kv_put(SESSION_BODY_PREFIX + i, [])
        by_where[("missing-body", evicted_key(i))]["repaired"] = True
    if facts["missing_bodies"] or facts["orphan_bodies"]:
        index = tx.index_light()
        index = list(index) if isinstance(index, list) else []
        for i in facts["missing_bodies"]:
            tx.kv_put(SESSION_BODY_PREFIX + i, [])
            by_where[("missing-body", f"savedSessions:{i}")]["repaired"] = True
        for i in facts["orphan_bodies"]:
            body = tx.kv_get([SESSION_BODY_PREFIX + i]).get(SESSION_BODY_PREFIX + i)
            if not isinstance(body, list):
                continue  # unreadable: quarantined above, or not a session body
            index.append(
                {
                    "id": i,
                    "name": f"Recovered session {i[:8]}",
                    "createdAt": now_ms(),
                    "pinned": False,
                    "textDigest": "\n".join(
                        e.get("content", "") if isinstance(e.get("content"), str) else ""
                        for e in body
                        if isinstance(e, dict)
                    ).lower()[:100_000],
                }
            )
            by_where[("orphan-body", SESSION_BODY_PREFIX + i)]["repaired"] = True
        tx.kv_put(SESSIONS_INDEX_KEY, index)
    rows = tx.hist_rows()
    real = (len(rows), sum(c for _p, c, _t in rows))
    if tx.hist_state() != real:
        tx.hist_set_state(*real)
    tx.archive_recount()  # quarantined archive rows left it, or its kept count was off
    for p in problems:
        if p["kind"] == "history-state":
            p["repaired"] = True
    return quarantined


def _read_only_notes(path: str | None, perms: list[dict[str, Any]], repair: bool) -> list[str]:
    """The notes of a read-only store; moves the findings about its own files out of
    ``perms`` (the file's mode is the owner's choice, not damage)."""
    mode = ""
    if path and os.path.exists(path):
        mode = f" (file mode {stat.filemode(os.stat(path).st_mode)})"
    notes = [f"the store is read-only for this user{mode}: it was checked without writing"]
    own = {path, f"{path}-wal", f"{path}-shm"}
    for p in [p for p in perms if p["where"] in own]:
        perms.remove(p)
        notes.append(f"{p['where']}: {p['detail']} (only the file's owner can change it)")
    if repair:
        notes.append(
            "--repair cannot repair a read-only store: nothing was changed "
            "(get write permission on the file and its directory to repair it)"
        )
    return notes


def check(
    backend: Backend,
    profile: str,
    *,
    repair: bool = False,
    path: str | None = None,
    restore_quarantine: bool = False,
) -> dict[str, Any]:
    """The doctor's report for ``profile`` (see the module docstring). ``restore_quarantine``
    first puts back the quarantined rows that read now (:mod:`.quarantine`), then repairs."""
    if getattr(backend, "read_only", False):
        return _check_read_only(backend, profile, repair=repair or restore_quarantine, path=path)
    repair = repair or restore_quarantine
    restored: list[str] = []
    notes: list[str] = []
    with backend.transaction(profile, write=repair) as tx:
        if restore_quarantine:
            restored, kept = restore(tx)
            notes += [f"{k['key']} (from {k['from']}) stays: {k['detail']}" for k in kept]
        problems, facts = _scan(tx)
        quarantined = _repair(tx, problems, facts) if repair else []
    perms = _permissions(path)
    if repair and perms and path:
        _repair_permissions(path, perms)
    problems += perms
    remaining = problems
    if repair:
        with backend.transaction(profile, write=False) as tx:
            remaining, _ = _scan(tx)
        remaining += _permissions(path)
    return {
        "profile": profile,
        "healthy": not remaining,
        "problems": problems,
        "remaining": len(remaining),
        "repaired": sum(1 for p in problems if p["repaired"]),
        "quarantined": quarantined,
        "restored": restored,
        "readOnly": False,
        "notes": notes,
    }


def _check_read_only(
    backend: Backend, profile: str, *, repair: bool, path: str | None
) -> dict[str, Any]:
    """The report of a store this process may only read: checked, never written."""
    with backend.transaction(profile, write=False) as tx:
        problems, _facts = _scan(tx)
    perms = _permissions(path)
    notes = _read_only_notes(path, perms, repair)
    problems += perms
    return {
        "profile": profile,
        "healthy": not problems,
        "problems": problems,
        "remaining": len(problems),
        "repaired": 0,
        "quarantined": [],
        "restored": [],
        "readOnly": True,
        "notes": notes,
    }
