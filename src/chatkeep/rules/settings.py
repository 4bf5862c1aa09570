"""The settings a user may change (SPEC §2): what each accepts, checked before any write.

Pure: no I/O. :data:`SETTING_RULES` maps every key of :data:`chatkeep.GET_ALL_KEYS` except
``providers`` (cards have their own commands and checks) to ``(check, what)``: a predicate on
the JSON value and the phrase that describes a valid one. :func:`check_settings` raises
:class:`~chatkeep.errors.InvalidValue` naming the first bad key, so a batch is written whole or
not at all; :func:`parse_setting` turns command-line text into the typed value of a key
(``true``/``false`` for flags, integers for numbers, text as it is) and checks it.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import Any

from ..constants import DEFAULTS, PANEL_OPTION_DEFAULTS
from ..errors import InvalidValue, UnknownSetting

__all__ = ["SEND_SHORTCUTS", "SETTING_DEFAULTS", "SETTING_RULES", "check_settings", "parse_setting"]

SEND_SHORTCUTS = ("Enter", "Ctrl+Enter")
MAX_PROMPT_CHARS = 100_000
MAX_NAME_CHARS = 60

Check = Callable[[Any], bool]


def _int_range(low: int, high: int | None = None) -> Check:
    def check(v: Any) -> bool:
        ok_type = isinstance(v, int) and not isinstance(v, bool)
        return ok_type and v >= low and (high is None or v <= high)

    return check


def _string(limit: int, *, single_line: bool = False, non_empty: bool = False) -> Check:
    def check(v: Any) -> bool:
        if not isinstance(v, str) or len(v) > limit:
            return False
        if single_line and any(c in v for c in "\r\n\x00"):
            return False
        return bool(v.strip()) or not non_empty

    return check


def _bool(v: Any) -> bool:
    return isinstance(v, bool)


#: ``key: (check, what a valid value is)`` for every settable key.
SETTING_RULES: dict[str, tuple[Check, str]] = {
    "activeProvider": (_string(MAX_NAME_CHARS, single_line=True), "a provider card name or ''"),
    "activeModel": (_string(200, single_line=True), "a model id, or '' for the card's own"),
    "contextMode": (_string(40, single_line=True, non_empty=True), "a short mode name"),
    "maxTextChars": (_int_range(0), "an integer ≥ 0 (0 = 1,000,000)"),
    "autoSummarizeAttachments": (_bool, "true or false"),
    "summarizeThresholdChars": (_int_range(0), "an integer ≥ 0 (0 = 100,000)"),
    "systemPrompt": (_string(MAX_PROMPT_CHARS), f"text of at most {MAX_PROMPT_CHARS:,} chars"),
    "replyLanguage": (_string(100, single_line=True), "a language name, or ''"),
    "maxHistoryEntries": (_int_range(1), "an integer ≥ 1"),
    "maxHistoryChars": (_int_range(1), "an integer ≥ 1"),
    "maxSessions": (_int_range(0), "an integer ≥ 0 (0 = unlimited)"),
    "fontSize": (_int_range(10, 32), "an integer from 10 to 32"),
    "sendShortcut": (lambda v: v in SEND_SHORTCUTS, " or ".join(SEND_SHORTCUTS)),
    "thoughtAutoCollapse": (_bool, "true or false"),
}

#: The value each setting has when it was never set (the panel options included).
SETTING_DEFAULTS: dict[str, Any] = {
    k: {**DEFAULTS, **PANEL_OPTION_DEFAULTS}[k] for k in SETTING_RULES
}

_TRUE = ("true", "yes", "on", "1")
_FALSE = ("false", "no", "off", "0")


def _unknown(key: str) -> InvalidValue:
    if key == "providers":
        return InvalidValue(
            "provider cards are not changed as a setting",
            hint="use `chatkeep provider add|use|remove`",
        )
    near = difflib.get_close_matches(key, SETTING_RULES, n=1)
    return UnknownSetting(
        f"{key!r} is not a setting",
        hint=(f"did you mean {near[0]}? " if near else "")
        + "`chatkeep config list` shows every setting",
    )


def check_settings(changes: Mapping[str, Any], providers: Mapping[str, Any]) -> None:
    """Raise ``InvalidValue`` naming the first key whose value is not allowed (or unknown);
    ``activeProvider`` must name one of ``providers`` (or be ``""``)."""
    if not isinstance(changes, Mapping) or not isinstance(providers, Mapping):
        raise InvalidValue(
            "settings are changed with an object of {key: value}", hint="send a JSON object"
        )
    for key, value in changes.items():
        if key not in SETTING_RULES:
            raise _unknown(key)
        check, what = SETTING_RULES[key]
        if not check(value):
            raise InvalidValue(f"{key} must be {what}, got {value!r}", hint=f"give {what}")
    active = changes.get("activeProvider")
    if active and active not in providers:
        raise InvalidValue(
            f"no provider card named {active!r}",
            hint="add the card first (`chatkeep provider add`), then select it",
        )


def parse_setting(key: str, text: str) -> Any:
    """The typed value of setting ``key`` written as ``text`` on a command line (checked by
    its rule, not yet against the provider cards)."""
    if not isinstance(key, str) or not isinstance(text, str):
        raise InvalidValue("a setting is given as a key and its value as text")
    if key not in SETTING_RULES:
        raise _unknown(key)
    default = SETTING_DEFAULTS[key]
    check, what = SETTING_RULES[key]
    value: Any = text
    if isinstance(default, bool):
        word = text.strip().lower()
        if word not in _TRUE + _FALSE:
            raise InvalidValue(f"{key} must be {what}, got {text!r}", hint="give true or false")
        value = word in _TRUE
    elif isinstance(default, int):
        try:
            value = int(text.strip().replace("_", "").replace(",", ""))
        except ValueError:
            raise InvalidValue(f"{key} must be {what}, got {text!r}", hint=f"give {what}") from None
    if not check(value):
        raise InvalidValue(f"{key} must be {what}, got {text!r}", hint=f"give {what}")
    return value
