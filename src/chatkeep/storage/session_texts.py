"""A saved session's entries as JSON texts, for readers that parse them themselves.

Mixed into :class:`~.sessions.Sessions`. :meth:`SessionTexts.entries_json` gives the entries of
a saved body as :meth:`~.sessions.Sessions.get` does, but each as its JSON text and without
parsing it: a body kept as rows (:mod:`.body_rows`) is one ``SELECT`` of its rows' stored
texts, and a stored text is the entry's JSON text unless it holds a blob reference or an
escaped NUL-prefixed string (:mod:`.codec`); only those rows are decoded and dumped again. A
framework adapter that keeps its own object as JSON inside each entry validates it from these
texts in one pass of its own parser (Pydantic AI: ``bench.adapters``), where a decoded body
would be parsed twice.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import CorruptValue
from . import codec
from . import evicted as _evicted
from .backend import Backend
from .drawer_rows import check_id
from .sql import Tx

if TYPE_CHECKING:
    from .drawer_rows import Row


def _resolved(tx: Tx, text: str) -> str:
    """A stored text holding blob references (or escaped NULs) as the entry's JSON text; one
    that does not parse is given as it is."""
    try:
        return codec.dumps(tx.blobs.decode(text))
    except CorruptValue:
        return text


class SessionTexts:
    """``store.sessions.entries_json`` (see the module docstring)."""

    _b: Backend
    _profile: str

    if TYPE_CHECKING:

        def get(self, session_id: str) -> Row | None: ...

    def entries_json(self, session_id: str) -> list[str] | None:
        """The entries of saved (or evicted) session ``session_id`` as JSON texts, in order:
        each text parses to the entry :meth:`get` gives at its place. ``None`` for an unknown
        id. Texts are not checked: a row damaged on disk gives a text that does not parse (the
        caller's parser says so; :meth:`get` reads such a body as empty)."""
        check_id(session_id)
        with self._b.transaction(self._profile, write=False) as tx:
            if not tx.sessions.index_has_legacy():
                if (
                    tx.sessions.index_find(session_id) is None
                    and _evicted.find(tx, session_id) is None
                ):
                    return None
                texts = tx.sessions.items_texts(session_id)
                if texts is not None:
                    if not codec.any_needs_resolve(texts):  # most bodies: nothing to decode
                        return texts
                    return [_resolved(tx, t) if codec.needs_resolve(t) else t for t in texts]
        # a body stored whole, or an index still to migrate: the decoding read
        found: Any = self.get(session_id)
        return None if found is None else [codec.dumps(e) for e in found["history"]]
