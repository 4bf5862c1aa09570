"""The object every command receives: where the store is, and the store opened on first use."""

from __future__ import annotations

from typing import Any

import click


class Ctx:
    """What every command gets: where the store is, and a lazily opened store."""

    def __init__(self, store_url: str | None, profile: str, debug: bool) -> None:
        self.store_url = store_url
        self.profile = profile
        self.debug = debug
        self._store: Any = None

    def store(self) -> Any:
        if self._store is None:
            from .. import open as open_store

            self._store = open_store(self.store_url, profile=self.profile)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None


pass_ctx = click.make_pass_decorator(Ctx)
