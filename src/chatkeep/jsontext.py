"""JSON texts parsed without importing the ``json`` package first.

``import json`` loads ``re`` (with ``enum`` and the regular-expression compiler) for the
patterns of its pure-Python decoder, which the C scanner it normally uses never needs; on the
reading commands' path that import costs about as long as starting the interpreter.
:func:`loads` calls the same C scanner (``_json.make_scanner``) with the settings of a plain
``json.loads``, and hands every text it does not take whole to ``json.loads`` itself, so the
result, and every error, is exactly ``json.loads``'s. Where the C scanner is missing (another
Python implementation), everything goes to ``json.loads``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # `typing` costs start-up time; only type checkers need it
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class _Settings:
    """What the C scanner reads from a ``json.JSONDecoder()`` made with no arguments."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


def _make_scanner() -> Callable[[str, int], tuple[Any, int]] | None:
    try:
        from _json import make_scanner
    except ImportError:  # pragma: no cover - CPython always has it
        return None
    try:
        return make_scanner(_Settings())  # type: ignore[arg-type]
    except Exception:  # pragma: no cover - a scanner that reads other settings
        return None


_SCAN = _make_scanner()
_SPACE = " \t\n\r"


def loads(text: str) -> Any:
    """``json.loads(text)`` for a ``str``: same values, same errors."""
    if _SCAN is not None and type(text) is str and text and text[0] not in _SPACE:
        try:
            value, end = _SCAN(text, 0)
        except StopIteration:  # no value at the start: json.loads words the error
            pass
        else:
            if end == len(text):
                return value
    import json

    return json.loads(text)
