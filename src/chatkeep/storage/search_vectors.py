"""Semantic search (SPEC §16), behind ``chatkeep[semantic]``: placeholder until the model is
chosen."""

from __future__ import annotations

from typing import Any


def semantic_for(backend: Any) -> Any:
    """The semantic side of ``backend``, or ``None`` when the extra is not installed."""
    return None
