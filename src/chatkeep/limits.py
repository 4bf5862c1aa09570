"""The limits of what chatkeep stores (SPEC §12), checked before anything is written.

* values nest at most :data:`MAX_DEPTH` levels (a scalar is depth 0, ``[1]`` depth 1);
* every string — values, object keys, names, queries — is valid Unicode (no lone surrogates);
* object keys are strings; storage keys are non-empty, NUL-free and at most
  :data:`MAX_KEY_CHARS` characters;
* ids — a saved session's (a framework conversation is one), a profile's — follow the same
  rule (:func:`check_id`): non-empty, NUL-free, valid Unicode, and short enough that every key
  built from them fits :data:`MAX_KEY_CHARS`;
* integers fit in 64 bits and floats are finite, so every other JSON reader reads them back;
* token counts are integers from 0 to :data:`MAX_INT` (a provider's count outside that range is
  not stored; totals stop at :data:`MAX_INT`, :func:`add_counts`) and prices per million tokens
  are finite numbers from 0 to :data:`MAX_PRICE` (:func:`price_problem`), so every cost is
  finite and every ``--json`` output is strict JSON;
* JSON texts (imports, panel bodies) are parsed by :func:`parse_json`, which applies the same
  limits while parsing and never raises anything but :class:`~chatkeep.errors.InvalidValue`.

:func:`check_value` is one iterative pass (no recursion, so no input can exhaust the stack)
and is what every write calls: ``entries.validate_entry`` for history entries, the storage
areas and imports for every other value. Errors name the limit that was hit.
"""

from __future__ import annotations

import json
import math
from typing import Any, TypeGuard

from .errors import InvalidValue

MAX_DEPTH = 100
#: History entries nest one level less, so a list of them (a saved session's body) fits too.
ENTRY_MAX_DEPTH = MAX_DEPTH - 1
#: Import documents and panel bodies wrap stored values in at most two more levels.
DOCUMENT_MAX_DEPTH = MAX_DEPTH + 2
MAX_KEY_CHARS = 200
#: A saved session is stored under ``session_<id>`` (``evicted_<id>`` once evicted): its id is
#: a key less the longest of those 8-character prefixes.
MAX_ID_CHARS = MAX_KEY_CHARS - len("evicted_")
#: Profile names are shorter still: a profile is a column, shown in every listing.
MAX_PROFILE_CHARS = 100
MAX_INT = 2**63 - 1
MIN_INT = -(2**63)
#: The highest price per million tokens a card may carry: a currency unit per token.
MAX_PRICE = 1_000_000.0
#: Digits of an integer literal in a JSON text (19 fit in 64 bits; a sign is one more char).
_MAX_INT_DIGITS = 20

_SCALARS = (str, bool, int, float, type(None))


def is_unicode(text: str) -> bool:
    """Whether ``text`` can be encoded as UTF-8 (no lone surrogates). Constant time for ASCII."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _shown(text: str) -> str:
    return repr(text[:40] + ("…" if len(text) > 40 else ""))


def _where(path: str) -> str:
    if not path:
        return "the top"
    return path if len(path) <= 60 else "…" + path[-59:]


def _scalar_problem(v: Any, path: str) -> str | None:
    t = type(v)
    if t is str:
        if v.isascii() or is_unicode(v):
            return None
        return f"the string at {_where(path)} is not valid Unicode (a lone surrogate)"
    if t is int:
        if MIN_INT <= v <= MAX_INT:
            return None
        return f"the integer at {_where(path)} does not fit in 64 bits"
    if t is float:
        if math.isfinite(v):
            return None
        return f"the number at {_where(path)} is not finite ({v!r})"
    return None


#: Where a value sits, kept unrendered while walking: ``(parent, key, key is an object key)``,
#: ``None`` for the top. Only a value that breaks a limit has its path written out.
_Chain = tuple[Any, Any, bool] | None


def _path(chain: _Chain) -> str:
    """The path of ``chain`` as errors name it (an object key ``a.b``, a list index ``a[0]``;
    a long path keeps its last characters at each object key, :func:`_where`)."""
    steps: list[tuple[Any, bool]] = []
    while chain is not None:
        chain, key, is_key = chain
        steps.append((key, is_key))
    path = ""
    for key, is_key in reversed(steps):
        if is_key:
            path = _where(path + "." + key) if path else key
        else:
            path = f"{path}[{key}]"
    return path


def problem(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """Why ``value`` breaks a limit (a sentence naming the limit and where), or ``None``.

    Iterative depth-first walk; every node is visited once. Valid strings and numbers are
    checked in line, and a path is written out only for the value that breaks a limit."""
    stack: list[tuple[Any, int, _Chain]] = [(value, 0, None)]
    pop, push = stack.pop, stack.append
    while stack:
        v, depth, chain = pop()
        t = type(v)
        if t is dict or t is list or t is tuple:
            if depth >= max_depth:
                return f"the value at {_where(_path(chain))} nests deeper than {max_depth} levels"
            is_dict = t is dict
            for k, item in v.items() if is_dict else enumerate(v):
                if is_dict:
                    if type(k) is not str:
                        return f"object keys must be strings, got {k!r} at {_where(_path(chain))}"
                    if not k.isascii() and not is_unicode(k):
                        where = _where(_path(chain))
                        return f"the key {_shown(k)} at {where} is not valid Unicode"
                ti = type(item)
                if ti is str:
                    if item.isascii() or is_unicode(item):
                        continue
                elif ti is int:
                    if MIN_INT <= item <= MAX_INT:
                        continue
                elif ti is float:
                    if math.isfinite(item):
                        continue
                elif ti is bool or item is None:
                    continue
                else:
                    push((item, depth + 1, (chain, k, is_dict)))
                    continue
                return _scalar_problem(item, _path((chain, k, is_dict)))
            continue
        if t in _SCALARS:
            why = _scalar_problem(v, _path(chain))
            if why:
                return why
            continue
        for base in (bool, str, int, float, dict, list, tuple):  # subclasses: check as the base
            if isinstance(v, base):
                push((base(v), depth, chain))  # type: ignore[arg-type]
                break
        else:
            return f"the value at {_where(_path(chain))} is not JSON-compatible ({t.__name__})"
    return None


def check_value(value: Any, what: str = "value", max_depth: int = MAX_DEPTH) -> None:
    """Raise :class:`InvalidValue` when ``value`` breaks a limit of §12; nothing is written."""
    why = problem(value, max_depth)
    if why is not None:
        raise InvalidValue(
            f"{what} cannot be stored: {why}",
            hint=(
                f"values nest at most {MAX_DEPTH} levels, hold valid Unicode text, 64-bit "
                "integers and finite numbers, and have string keys"
            ),
        )


def check_text(text: Any, what: str, *, allow_empty: bool = True) -> str:
    """A string argument (a name, a query, a profile): a ``str`` of valid Unicode."""
    if not isinstance(text, str):
        raise InvalidValue(f"{what} must be a string, got {type(text).__name__}")
    if not is_unicode(text):
        raise InvalidValue(
            f"{what} is not valid Unicode (a lone surrogate)",
            hint="pass text that can be written as UTF-8",
        )
    if not allow_empty and not text:
        raise InvalidValue(f"{what} must not be empty")
    return text


def check_key(key: Any) -> str:
    """A storage key: a non-empty, NUL-free, valid-Unicode string of ≤ 200 characters."""
    if not isinstance(key, str) or not key:
        raise InvalidValue(f"storage keys must be non-empty strings, got {key!r}")
    if len(key) > MAX_KEY_CHARS:
        raise InvalidValue(
            f"storage key of {len(key)} characters is longer than the {MAX_KEY_CHARS}-character limit",
            hint="use a short key and put large data in the value",
        )
    if "\x00" in key:
        raise InvalidValue("storage keys must not contain NUL characters")
    if not is_unicode(key):
        raise InvalidValue("storage key is not valid Unicode (a lone surrogate)")
    return key


def id_problem(value: Any, max_chars: int = MAX_ID_CHARS) -> str | None:
    """Why ``value`` cannot be an id (session, framework conversation, profile), or ``None``."""
    if not isinstance(value, str):
        return f"it must be a string, got {type(value).__name__}"
    if not value:
        return "it is empty"
    if len(value) > max_chars:
        return f"it has {len(value)} characters, more than the {max_chars}-character limit"
    if "\x00" in value:
        return "it contains a NUL character"
    if not is_unicode(value):
        return "it is not valid Unicode (a lone surrogate)"
    return None


def check_id(
    value: Any,
    what: str = "the session id",
    *,
    max_chars: int = MAX_ID_CHARS,
    hint: str = "pass a short stable id such as 'user-42' or a uuid hex",
) -> str:
    """An id at the public boundary: the one rule of :func:`id_problem`, else
    :class:`InvalidValue` (raised before anything is read or written)."""
    why = id_problem(value, max_chars)
    if why is not None:
        shown = _shown(value) if isinstance(value, str) else type(value).__name__
        raise InvalidValue(
            f"{what} {shown} cannot be used: {why}",
            hint=f"{hint} (ids are non-empty, NUL-free Unicode text of at most "
            f"{max_chars} characters)",
        )
    return value


def is_count(value: Any) -> TypeGuard[int]:
    """Whether ``value`` is a token count that can be stored: an ``int`` from 0 to 2**63 − 1."""
    return type(value) is int and 0 <= value <= MAX_INT


def add_counts(a: int, b: int) -> int:
    """``a + b`` stopped at :data:`MAX_INT`: totals of counts stay within 64 bits."""
    return min(a + b, MAX_INT)


def price_problem(value: Any) -> str | None:
    """Why ``value`` cannot be a price per million tokens, or ``None``."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"it must be a number, got {value!r}"
    if not math.isfinite(value) or not 0 <= value <= MAX_PRICE:
        return f"it must be a number from 0 to {MAX_PRICE:,.0f}, got {value!r}"
    return None


def _parse_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS - 1:
        raise ValueError(f"the integer {text[:24]}… does not fit in 64 bits")
    return int(text)


def _parse_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:24]} is out of range")
    return value


def _parse_constant(text: str) -> Any:
    raise ValueError(f"{text} is not a JSON number")


def parse_json(
    text: str | bytes, what: str = "the JSON text", max_depth: int = DOCUMENT_MAX_DEPTH
) -> Any:
    """Parse JSON within the limits: depth, 64-bit integers, finite numbers, valid Unicode.

    Anything else — a syntax error, a number out of range, nesting too deep — raises
    :class:`InvalidValue` naming the limit."""
    hint = (
        f"JSON values nest at most {MAX_DEPTH} levels and hold 64-bit integers, finite numbers "
        "and valid Unicode"
    )
    if not isinstance(text, str | bytes | bytearray):
        raise InvalidValue(f"{what} must be text or bytes, got {type(text).__name__}", hint=hint)
    try:
        if isinstance(text, bytes | bytearray):
            text = bytes(text).decode("utf-8-sig")
        value = json.loads(
            text,
            parse_int=_parse_int,
            parse_float=_parse_float,
            parse_constant=_parse_constant,
        )
    except RecursionError:
        raise InvalidValue(
            f"cannot read {what} as JSON: it nests deeper than {max_depth} levels", hint=hint
        ) from None
    except UnicodeDecodeError as exc:
        raise InvalidValue(
            f"cannot read {what} as JSON: not UTF-8 text ({exc})", hint=hint
        ) from None
    except ValueError as exc:  # JSONDecodeError and the parse_* limits
        raise InvalidValue(f"cannot read {what} as JSON: {exc}", hint=hint) from None
    check_value(value, what, max_depth)
    return value


def check_count(v: object, what: str, *, allow_none: bool = False) -> None:
    """``v`` is a whole number of 0 or more (or ``None`` when allowed): a row count or offset."""
    if v is None and allow_none:
        return
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InvalidValue(
            f"the {what} must be a whole number of 0 or more, got {v!r}",
            hint=f"pass {what}=50 for a page of 50 rows" if what == "limit" else "pass offset=0",
        )
