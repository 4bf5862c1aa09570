"""``chatkeep config list|get KEY|set KEY VALUE`` — the settings of SPEC §2 and the panel options.

Every key of ``chatkeep.GET_ALL_KEYS`` but ``providers`` (cards have ``chatkeep provider``).
``set`` parses the value by the key's type (``true``/``false``, integers, text as it is), checks
it with the same rules as the panel (:data:`chatkeep.SETTING_RULES`) and writes nothing when it
is not allowed (exit 3). ``--json`` prints ``{key: value}`` (``list``: every setting, with
``defaults`` naming those not set).
"""

from __future__ import annotations

import json
from typing import Any

import click

from .. import SETTING_DEFAULTS, SETTING_RULES, check_settings, parse_setting
from .context import pass_ctx
from .output import echo_json, plain

_JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


@click.group("config")
def config_group() -> None:
    """Settings: list them, get one, set one (validated, written whole or not at all)."""


@config_group.command("list")
@_JSON
@pass_ctx
def list_cmd(ctx, as_json: bool) -> None:
    """Every setting with its value; `(default)` marks those never set."""
    store = ctx.store()
    settings = store.get_all()
    stored = store.local.get(list(SETTING_RULES))
    values = {k: settings.get(k, SETTING_DEFAULTS[k]) for k in SETTING_RULES}
    if as_json:
        echo_json({"settings": values, "defaults": sorted(k for k in values if k not in stored)})
        return
    width = max(len(k) for k in values)
    for key, value in values.items():
        mark = "" if key in stored else "  (default)"
        shown = _shown(value) if value != "" else '""'
        if "\n" in shown or len(shown) > 70:
            shown = json.dumps(value, ensure_ascii=False)[:70] + "…"
        click.echo(plain(f"{key:<{width}}  {shown}{mark}"))


@config_group.command("get")
@click.argument("key")
@_JSON
@pass_ctx
def get_cmd(ctx, key: str, as_json: bool) -> None:
    """Print one setting's value (text as it is, other values as JSON)."""
    if key not in SETTING_RULES:
        parse_setting(key, "")  # raises the unknown-key error with its hint
    value = ctx.store().get_all().get(key, SETTING_DEFAULTS[key])
    if as_json:
        echo_json({key: value})
    else:
        click.echo(plain(_shown(value)))


@config_group.command("set")
@click.argument("key")
@click.argument("value")
@_JSON
@pass_ctx
def set_cmd(ctx, key: str, value: str, as_json: bool) -> None:
    """Set one setting; VALUE is parsed by its type (true/false, an integer, or text)."""
    typed = parse_setting(key, value)
    store = ctx.store()
    check_settings({key: typed}, store.get_all().get("providers") or {})
    store.local.set(key, typed)
    if as_json:
        echo_json({key: typed})
    else:
        click.echo(plain(f"{key} = {_shown(typed)}"))
