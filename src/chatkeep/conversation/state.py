"""What one turn reads from the store, read once (SPEC §6, §7): :func:`read_state`.

A turn (and a preview) needs the settings, the live history, the active session, the request
sent last (for the prefix figures) and, for a server-held transcript, the response chain. They
are read in **one read transaction** and travel in the :class:`TurnState` that the
:class:`~.prepare.Turn` carries: the planner, the engine and the landing read them from there,
never from the store again. ``version`` is the history write counter the history was read at:
the engine appends the question only while the counter is unchanged
(:meth:`~chatkeep.storage.history.History.append_at`), so a history that moved meanwhile is
read again rather than answered from a stale copy.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..constants import ACTIVE_SESSION_KEY, MAX_IMAGE_PIXELS_KEY
from ..entries import Entry
from ..rules.cache import PACE_KEY

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["LAST_REQUEST_KEY", "RESPONSE_CHAIN_KEY", "TurnState", "read_state"]

#: The figures of the request sent last (:mod:`chatkeep.rules.request_print`).
LAST_REQUEST_KEY = "lastRequest"
#: Where a Responses card with ``serverTranscript`` keeps the id of the last stored reply.
RESPONSE_CHAIN_KEY = "responseChain"


@dataclass
class TurnState:
    """The store as one turn found it (see the module docstring)."""

    settings: dict[str, Any]
    history: list[Entry]
    version: int
    session_id: str
    last_request: Any
    chain: Any
    max_image_pixels: Any
    #: the profile's earlier question times (epoch ms, :data:`~chatkeep.rules.cache.PACE_KEY`)
    pace: list[int]


def read_state(profile: Profile) -> TurnState:
    """Everything a turn reads, in one read transaction."""
    with profile.reading():
        settings = profile.get_all()
        history, version = profile.history.read_versioned()
        keys = [
            ACTIVE_SESSION_KEY,
            LAST_REQUEST_KEY,
            RESPONSE_CHAIN_KEY,
            MAX_IMAGE_PIXELS_KEY,
            PACE_KEY,
        ]
        kept = profile.local.get(keys)
    session = kept.get(ACTIVE_SESSION_KEY)
    pace = kept.get(PACE_KEY)
    return TurnState(
        settings=settings,
        history=history,
        version=version,
        session_id=session if isinstance(session, str) else "",
        last_request=kept.get(LAST_REQUEST_KEY),
        chain=kept.get(RESPONSE_CHAIN_KEY),
        max_image_pixels=kept.get(MAX_IMAGE_PIXELS_KEY),
        pace=[t for t in pace if isinstance(t, int)] if isinstance(pace, list) else [],
    )
