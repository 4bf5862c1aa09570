"""Counted words for messages: ``plural(1, "conversation")`` is ``1 conversation``.

Every count the command line prints goes through :func:`plural`, so no message says
"1 conversations" or hides behind "image(s)".
"""

from __future__ import annotations


def plural(n: int, word: str, many: str | None = None) -> str:
    """``n`` with ``word`` in the right number (``many``, default ``word + "s"``, unless
    ``n == 1``); thousands are separated by commas."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"
