"""The one exception tree of chatkeep.

::

    ChatkeepError                 root: catch this to catch everything chatkeep raises
    ├── InvalidEntry (ValueError) a history entry breaks §3.2; names the field; nothing written
    ├── InvalidValue (ValueError) a key or value the storage areas cannot hold; nothing written
    │   └── BadRequest            a panel request body or parameter that cannot be used
    ├── NotFound (LookupError)    a session, entry, attachment or image that is not there
    ├── StoreError                the store is unreachable, locked too long, or corrupt
    │   └── CorruptValue          one stored row that does not parse (read as its default)
    ├── ProviderError             a model provider refused or failed (``status``, ``hint``)
    │   └── ContextOverflow       the request did not fit the model's context window
    ├── ProviderConfigError       no usable provider card / missing key / bad card
    └── AttachError               unreadable source, unsupported type, too large
        └── UndecodableImage (ValueError) image bytes no decoder understands (sent as a label)

Every error carries a ``hint``: one sentence telling the user what to do next.
Driver errors (``sqlite3``, ``psycopg``, SDK errors) are translated into this tree in exactly
one place each, at the adapter that talks to the driver.
"""

from __future__ import annotations

__all__ = [
    "AttachError",
    "BadRequest",
    "ChatkeepError",
    "ContextOverflow",
    "CorruptValue",
    "InvalidEntry",
    "InvalidValue",
    "NotFound",
    "ProviderConfigError",
    "ProviderError",
    "StoreError",
    "UndecodableImage",
]


class ChatkeepError(Exception):
    """Root of every error chatkeep raises on purpose."""

    default_hint = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} (hint: {self.hint})"
        return self.message


class InvalidEntry(ChatkeepError, ValueError):
    """A history entry does not follow the entry shape; ``field`` names the offending part."""

    default_hint = (
        "entries are {'role': 'user'|'assistant', 'content': str | [text/image_url parts]} "
        "with data:image/(png|jpeg|webp|gif);base64 image URLs"
    )

    def __init__(self, message: str, *, field: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


class InvalidValue(ChatkeepError, ValueError):
    """A key or value that a storage area cannot hold (not JSON, key too long, ...)."""

    default_hint = "keys are non-empty strings of at most 200 characters; values must be JSON"


class BadRequest(InvalidValue):
    """A request body or parameter the panel cannot use."""

    default_hint = "this is a bug in the panel page or a hand-made request"


class NotFound(ChatkeepError, LookupError):
    """A session, entry, attachment or image that the caller named does not exist."""

    default_hint = "list what exists with `chatkeep sessions list` or `chatkeep history --json`"


class StoreError(ChatkeepError):
    """The store is unreachable, was locked for too long, or holds data it cannot read."""

    default_hint = "check the --store URL / CHATKEEP_STORE and that the database is running"


class ProviderError(ChatkeepError):
    """A model provider answered with an error or could not be reached."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        hint: str | None = None,
        code: str | None = None,
        body: object = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.status = status
        self.code = code
        self.body = body


class ContextOverflow(ProviderError):
    """The request was larger than the model's context window."""

    default_hint = "attach less, start a new session, or pick a model with a larger context"


class ProviderConfigError(ChatkeepError):
    """No usable provider: missing card, unknown style, or a key that is not set."""

    default_hint = (
        "add one with `chatkeep provider add NAME --style chat --base-url URL --model M` "
        "or set OPENAI_BASE_URL / OPENAI_API_KEY / CHATKEEP_MODEL"
    )


class AttachError(ChatkeepError):
    """A source could not be attached: unreadable, unsupported type, or too large."""


class CorruptValue(StoreError):
    """One stored value that does not parse (bad JSON, or a reference to a missing blob).

    Raised inside the storage layer only; readers turn it into the key's default and
    ``chatkeep stats`` / ``chatkeep doctor`` report it."""

    default_hint = "run `chatkeep doctor` to find and quarantine unreadable rows"


class UndecodableImage(AttachError, ValueError):
    """Image bytes that no decoder understands; requests send the image's label instead."""

    default_hint = "re-attach the image as PNG or JPEG"
