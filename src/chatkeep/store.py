"""``chatkeep.open()`` and the :class:`Store` facade (SPEC §1, §2, §5.1, §5.4).

A store is one profile of one backend: the storage profile below
(:class:`chatkeep.storage.profile.Profile`: ``store.local`` durable, ``store.session`` this
process, ``store.history`` live history + archive, ``store.sessions`` the drawer, export,
import, stats) extended with the engine (``store.chat``) and the image lifecycle operations
that combine storage with the request rules. The facade is the top of the library: nothing
below imports it.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .constants import DEFAULT_UNSEEN_BUDGET
from .errors import InvalidValue, StoreError
from .limits import MAX_PROFILE_CHARS, check_id, check_text
from .storage.backend import Backend
from .storage.profile import Profile

if TYPE_CHECKING:
    from .conversation import Chat
    from .providers import CardRegistry


def default_store_path() -> str:
    """``chatkeep.db`` in the user data directory platformdirs names for ``chatkeep``."""
    import platformdirs  # only needed when no store URL is given

    return os.path.join(platformdirs.user_data_dir("chatkeep"), "chatkeep.db")


def _backend_for(url: str) -> Backend:
    if url.startswith(("postgresql://", "postgres://")):
        from .storage.postgres import PostgresBackend

        return PostgresBackend(url)
    from .storage.sqlite import SQLiteBackend

    if url == ":memory:":
        return SQLiteBackend(":memory:")
    if url.startswith("sqlite://"):
        path = url[len("sqlite://") :]
        if not path.startswith("/"):
            raise StoreError(
                f"unsupported SQLite URL {url!r}",
                hint="use sqlite:///absolute/path.db or a plain path",
            )
        return SQLiteBackend(path)
    if "://" in url:
        raise StoreError(
            f"unsupported store URL {url!r}",
            hint="use a file path, sqlite:///abs/path.db, :memory: or postgresql://user@host/db",
        )
    return SQLiteBackend(os.path.abspath(os.path.expanduser(url)))


def open(url: str | None = None, *, profile: str | None = None) -> Store:
    """Open a store. ``url``: None (env ``CHATKEEP_STORE``, else ``chatkeep.db`` in the user
    data dir, which is created when missing), a path, ``sqlite:///abs/path.db``, ``:memory:``
    or ``postgresql://…``; any other directory must exist already. ``profile``: None (env
    ``CHATKEEP_PROFILE``, else ``"default"``) or a name."""
    if profile is None:
        profile = os.environ.get("CHATKEEP_PROFILE") or "default"
    check_id(
        profile,
        "the profile name",
        max_chars=MAX_PROFILE_CHARS,
        hint="pass profile='default' or another short name",
    )
    if url is not None and not isinstance(url, str | os.PathLike):
        raise InvalidValue(f"the store URL must be a string, got {type(url).__name__}")
    if isinstance(url, str):
        check_text(url, "the store URL")
    if isinstance(url, os.PathLike):
        url = os.fspath(url)
    target = url or os.environ.get("CHATKEEP_STORE")
    if not target:
        target = default_store_path()
        _make_default_dir(os.path.dirname(target))
    return Store(_backend_for(target), profile)


def _make_default_dir(path: str) -> None:
    """The user data directory is the one directory chatkeep creates (mode 0700)."""
    try:
        os.makedirs(path, mode=0o700, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the data directory {path}: {exc.strerror or exc}",
            hint="set CHATKEEP_STORE (or --store) to a file in a directory you can write",
        ) from exc


class Store(Profile):
    """One profile of one backend, with its conversation engine. Use as a context manager or
    call :meth:`close`."""

    @property
    def chat(self) -> Chat:
        """The conversation engine bound to this store (``chatkeep.conversation.Chat``),
        created on first use; creating it loads no provider SDK."""
        engine = self.__dict__.get("_chat")
        if engine is None:
            from .conversation import Chat  # lazy: reading commands never load the engine

            engine = self.__dict__.setdefault("_chat", Chat(self))
        return engine

    @property
    def cards(self) -> CardRegistry:
        """The provider-card registry (``put``, ``remove``, ``use``, ``rows``; one transaction
        each, one set of rules for the active card and model)."""
        from .providers import CardRegistry  # lazy: reading commands never load providers

        return CardRegistry(self)

    def __enter__(self) -> Store:
        return self

    def __repr__(self) -> str:
        return f"<chatkeep.Store {self.url} profile={self.profile!r}>"

    # -- image lifecycle --------------------------------------------------------------------
    def mark_images_seen(self) -> int:
        """Stamp ``imagesSeen: true`` on every live entry with image parts (§5.1)."""
        from .conversation.lifecycle import mark_images_seen  # lazy, as the engine above

        return mark_images_seen(self)

    def bound_unseen_image_bytes(self, budget: int = DEFAULT_UNSEEN_BUDGET) -> int:
        """Thumbnail the oldest images until their data URLs fit ``budget`` (§5.4)."""
        from .conversation.lifecycle import bound_unseen_image_bytes  # lazy, as above

        return bound_unseen_image_bytes(self, budget)
