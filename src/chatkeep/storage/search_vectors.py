"""Semantic search (SPEC §16), behind ``pip install 'chatkeep[semantic]'``.

The model is WordLlama's ``l2_supercat`` static token embeddings, whose weights (16 MB) and
tokenizer ship inside the ``wordllama`` wheel: they are read from the installed package,
nothing is downloaded at run time. A text's vector is the normalized mean of its tokens'
vectors, cut to :data:`DIM` dimensions (the model is trained so a prefix of its dimensions is
itself an embedding). It was chosen over a transformer (MiniLM packaged on PyPI needs torch,
hundreds of megabytes) because it embeds thousands of chunks a second on one core, so the
index never makes a turn wait, and over ``model2vec``'s static models because no PyPI
package carries their weights.

Vectors are kept per index row (one chunk of an entry's text, :mod:`.search_index`) in
``ck_search_vec`` (float16 bytes), and written incrementally: a semantic search first embeds
up to :data:`CATCH_UP` of the rows written since the last one (rows only grow in ``rid``; a
row's vector goes with the row, by trigger or cascade), so an append never waits for the
model and a search after a big import does not wait for all of it. The search itself is
exact: the cosine of the query's vector with every vector of the profile (numpy, one matrix
kept per profile in this process; vectors added since are read alone).
"""

from __future__ import annotations

import importlib.util
import threading
from pathlib import Path
from typing import Any

from .backend import Backend
from .search_query import Candidate, rows_by_rid

#: Dimensions kept of the model's 256.
DIM = 128
#: Characters of a chunk the model reads (a mean of tokens: more adds little).
EMBED_CHARS = 2000
BATCH = 512
#: Rows a search embeds at most before it answers (about a third of a second): a backlog
#: (an import's rows) is embedded over the next searches, the text side finding it meanwhile.
CATCH_UP = 1024
#: Cosine below which a chunk is not taken for an answer (unrelated text scores 0–0.15).
MIN_SIMILARITY = 0.2

_lock = threading.Lock()
_model: Any = None


def installed() -> bool:
    """Whether the ``semantic`` extra is installed (``wordllama`` and ``numpy``)."""
    return all(importlib.util.find_spec(m) is not None for m in ("wordllama", "numpy"))


def _load() -> Any:
    global _model
    with _lock:
        if _model is None:
            # lazy: the model and its libraries load only for a semantic search
            import wordllama
            from safetensors import safe_open
            from wordllama import WordLlama
            from wordllama.inference import WordLlamaInference

            root = Path(wordllama.__file__).parent
            tok = WordLlama.load_tokenizer(
                root / "tokenizers" / "l2_supercat_tokenizer_config.json", hf_model_id=None
            )
            weights = root / "weights" / "l2_supercat_256.safetensors"
            with safe_open(str(weights), framework="np", device="cpu") as f:
                table = f.get_tensor("embedding.weight")[:, :DIM]
            _model = WordLlamaInference(table, tok, binary=False)
        return _model


def embed(texts: list[str]) -> Any:
    """Unit vectors (float32, ``len(texts)`` × :data:`DIM`) of ``texts``."""
    import numpy as np  # lazy: the semantic extra

    vecs = np.asarray(_load().embed([t[:EMBED_CHARS] for t in texts], norm=False), np.float32)
    norms = np.linalg.norm(vecs, axis=1, keepdims=True)
    return vecs / np.where(norms == 0, 1, norms)


class Semantic:
    """The semantic side of one backend: catch-up embedding and exact search."""

    def __init__(self, backend: Backend) -> None:
        self.b = backend
        self._cache: dict[str, tuple[int, Any, Any]] = {}

    def catch_up(self, profile: str, most: int | None = None) -> int:
        """Embed the profile's rows that have no vector yet, oldest first, at most ``most``
        of them (by default :data:`CATCH_UP`); returns how many."""
        if self.b.read_only:
            return 0
        most = CATCH_UP if most is None else most
        done = 0
        # by rid from the last vector's (SQLite: not through the profile's whole index)
        who = "+profile" if self.b.dialect == "sqlite" else "profile"
        with self.b.transaction(profile, write=False) as tx:  # nothing waiting: no write
            self.b.plan_each_statement()  # PostgreSQL: a plan for this rid, not any rid
            top = tx.rows("SELECT max(rid) FROM ck_search_vec WHERE profile=?")[0][0] or 0
            if not self.b.query(
                f"SELECT 1 FROM ck_search WHERE rid > ? AND {who}=? LIMIT 1", (top, profile)
            ):
                return 0
        with self.b.transaction(profile) as tx:
            self.b.plan_each_statement()
            top = tx.rows("SELECT max(rid) FROM ck_search_vec WHERE profile=?")[0][0] or 0
            while done < most:
                rows = tx.rows(
                    f"SELECT rid, body FROM ck_search WHERE {who}=? AND rid > ?"
                    " ORDER BY rid LIMIT ?",
                    (top, min(BATCH, most - done)),
                )
                if not rows:
                    break
                vecs = embed([r[1] for r in rows]).astype("float16")
                for (rid, _body), v in zip(rows, vecs, strict=True):
                    self.b.execute(
                        "INSERT INTO ck_search_vec (rid, profile, vec) VALUES (?,?,?)",
                        (rid, profile, self.b.binary(v.tobytes())),
                    )
                top = int(rows[-1][0])
                done += len(rows)
        return done

    def _matrix(self, tx: Any, fresh: bool = False) -> tuple[Any, Any]:
        """The profile's vectors and their rids, kept between searches. Rids only grow (a
        reindex writes new ones), so the newest rid tells what was added since: those vectors
        are read and added alone. Vectors of rows removed since stay until a search meets one
        (:meth:`ranked` then asks again with ``fresh``: everything read anew) — no count of
        the profile's vectors, which grows with the profile, on every search."""
        import numpy as np  # lazy: the semantic extra

        top = int(tx.rows("SELECT max(rid) FROM ck_search_vec WHERE profile=?")[0][0] or 0)
        cached = None if fresh else self._cache.get(tx.profile)
        if cached is not None and cached[0] == top:
            return cached[1], cached[2]
        since = cached[0] if cached is not None and top > cached[0] else 0
        rows = tx.rows(
            "SELECT rid, vec FROM ck_search_vec WHERE profile=? AND rid > ? ORDER BY rid",
            (since,),
        )
        rids = np.array([int(r[0]) for r in rows], dtype=np.int64)
        raw = b"".join(bytes(r[1]) for r in rows)
        matrix = np.frombuffer(raw, dtype=np.float16).reshape(len(rows), DIM).astype(np.float32)
        if since and cached is not None:
            rids = np.concatenate([cached[1], rids])
            matrix = np.concatenate([cached[2], matrix])
        self._cache[tx.profile] = (top, rids, matrix)
        return rids, matrix

    def ranked(
        self, tx: Any, query: str, places: list[str], window: int, fresh: bool = False
    ) -> list[tuple[Candidate, float]]:
        """Up to ``window`` chunks of ``places``, most similar to ``query`` first."""
        import numpy as np  # lazy: the semantic extra

        rids, matrix = self._matrix(tx, fresh)
        if not len(rids):
            return []
        scores = matrix @ embed([query])[0]
        want = min(len(rids), window * 2)
        top = np.argpartition(-scores, want - 1)[:want]
        top = top[np.argsort(-scores[top])]
        wanted = [int(rids[i]) for i in top]
        by_rid = {r[0]: r for r in rows_by_rid(tx, wanted)}
        if len(by_rid) < len(wanted) and not fresh:  # a removed row's vector: read them anew
            return self.ranked(tx, query, places, window, fresh=True)
        out = []
        for i in top:
            row = by_rid.get(int(rids[i]))
            if scores[i] < MIN_SIMILARITY:
                break
            if row is not None and row[1] in places:
                out.append((row, round(float(scores[i]), 4)))
        return out[:window]


def semantic_for(backend: Backend) -> Semantic | None:
    """The semantic side of ``backend``, or ``None`` when the extra is not installed (or the
    store has no vector table yet)."""
    if not installed() or not getattr(backend, "search_vectors", False):
        return None
    found = getattr(backend, "_semantic", None)
    if found is None:
        found = Semantic(backend)
        backend._semantic = found  # type: ignore[attr-defined]
    return found
