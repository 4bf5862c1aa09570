"""The one exception tree of chatkeep.

::

    ChatkeepError                 root: catch this to catch everything chatkeep raises
    ├── InvalidEntry (ValueError) a history entry breaks §3.2; names the field; nothing written
    ├── InvalidValue (ValueError) a key or value the storage areas cannot hold; nothing written
    │   ├── BadRequest            a panel request body or parameter that cannot be used
    │   └── UnknownSetting        a setting name that is not a setting
    ├── NotFound (LookupError)    a session, entry, attachment or image that is not there
    ├── StoreError                the store is unreachable, locked too long, or corrupt
    │   ├── CorruptValue          one stored row that does not parse (read as its default)
    │   └── ProfileNotEmpty       a whole-profile import into a profile that holds data
    ├── ProviderError             a model provider refused or failed (``status``, ``hint``)
    │   └── ContextOverflow       the request did not fit the model's context window
    ├── ProviderConfigError       no usable provider card / missing key / bad card
    │   └── UnknownProvider       no provider card of that name
    └── AttachError               unreadable source, unsupported type, too large
        ├── UndecodableImage (ValueError) image bytes no decoder understands (sent as a label)
        ├── MissingFile           a file the user named is not there
        └── NotAFile              a path that is not a file (a directory where a file is wanted)

    SemanticUnavailable (UserWarning)  hybrid search without ``chatkeep[semantic]``: text only

Every error carries a ``hint``: one sentence telling the user what to do next, and a ``kind``:
the kind of mistake (:data:`KINDS`), which alone decides the command line's exit status
(``chatkeep.cli.main.EXIT_CODES``), so the same mistake exits the same way in every command.
Driver errors (``sqlite3``, ``psycopg``, SDK errors) are translated into this tree in exactly
one place each, at the adapter that talks to the driver.
"""

from __future__ import annotations

__all__ = [
    "KINDS",
    "AttachError",
    "BadRequest",
    "ChatkeepError",
    "ContextOverflow",
    "CorruptValue",
    "InvalidEntry",
    "InvalidValue",
    "MissingFile",
    "NotAFile",
    "NotFound",
    "ProfileNotEmpty",
    "ProviderConfigError",
    "ProviderError",
    "SemanticUnavailable",
    "StoreError",
    "UndecodableImage",
    "UnknownProvider",
    "UnknownSetting",
]

#: Every kind of mistake an error can be, with what it means (the exit-code table's rows).
KINDS: dict[str, str] = {
    "other": "any other chatkeep error",
    "bad-value": "bad input: a value, entry, id prefix or file content that cannot be used",
    "store": "the store cannot be opened, is locked too long, or refuses the operation",
    "provider": "the model provider refused or failed",
    "context-overflow": "the request did not fit the model's context window",
    "provider-config": "no usable provider: no card, a bad card, or its key is not set",
    "attach": "a source that cannot be attached: unreadable, unsupported type, too large",
    "unknown-name": "a name that is not there: provider, session, setting, attachment id",
    "missing-file": "a file the user named does not exist",
    "wrong-type": "a path of the wrong type, e.g. a directory where a file is wanted",
}


class ChatkeepError(Exception):
    """Root of every error chatkeep raises on purpose."""

    default_hint = ""
    #: the kind of mistake (a key of :data:`KINDS`)
    kind = "other"

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

    kind = "bad-value"
    default_hint = (
        "entries are {'role': 'user'|'assistant', 'content': str | [text/image_url parts]} "
        "with data:image/<type>;base64 image URLs"
    )

    def __init__(self, message: str, *, field: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.field = field


class InvalidValue(ChatkeepError, ValueError):
    """A key or value that a storage area cannot hold (not JSON, key too long, ...)."""

    kind = "bad-value"
    default_hint = "keys are non-empty strings of at most 200 characters; values must be JSON"


class BadRequest(InvalidValue):
    """A request body or parameter the panel cannot use."""

    default_hint = "this is a bug in the panel page or a hand-made request"


class NotFound(ChatkeepError, LookupError):
    """A session, entry, attachment or image that the caller named does not exist."""

    kind = "unknown-name"
    default_hint = "list what exists with `chatkeep sessions list` or `chatkeep history --json`"


class StoreError(ChatkeepError):
    """The store is unreachable, was locked for too long, or holds data it cannot read."""

    kind = "store"
    default_hint = "check the --store URL / CHATKEEP_STORE and that the database is running"


class ProfileNotEmpty(StoreError):
    """A whole-profile import was refused: the profile already holds data and the import was
    not asked to replace it (nothing was written)."""

    default_hint = "import into a new profile, or replace this one (a backup is written first)"


class ProviderError(ChatkeepError):
    """A model provider answered with an error or could not be reached."""

    kind = "provider"

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

    kind = "context-overflow"
    default_hint = "attach less, start a new session, or pick a model with a larger context"


class ProviderConfigError(ChatkeepError):
    """No usable provider: missing card, unknown style, or a key that is not set."""

    kind = "provider-config"
    default_hint = (
        "add one with `chatkeep provider add NAME --style chat --base-url URL --model M` "
        "or set OPENAI_BASE_URL / OPENAI_API_KEY / CHATKEEP_MODEL"
    )


class AttachError(ChatkeepError):
    """A source could not be attached: unreadable, unsupported type, or too large."""

    kind = "attach"


class CorruptValue(StoreError):
    """One stored value that does not parse (bad JSON, or a reference to a missing blob).

    Raised inside the storage layer only; readers turn it into the key's default and
    ``chatkeep stats`` / ``chatkeep doctor`` report it."""

    default_hint = "run `chatkeep doctor` to find and quarantine unreadable rows"


class UndecodableImage(AttachError, ValueError):
    """Image bytes that no decoder understands; requests send the image's label instead."""

    default_hint = "re-attach the image as PNG or JPEG"


class UnknownSetting(InvalidValue):
    """A setting name that is not one of the settings (a bad value to the panel)."""

    kind = "unknown-name"
    default_hint = "see the settings with `chatkeep config list`"


class UnknownProvider(ProviderConfigError):
    """No provider card has the name given."""

    kind = "unknown-name"
    default_hint = "see the cards with `chatkeep provider list`"


class MissingFile(AttachError):
    """A file the user named does not exist; ``path`` is the name as given."""

    kind = "missing-file"
    default_hint = "check the path and try again"

    def __init__(self, message: str, *, path: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path


class NotAFile(AttachError):
    """A path that exists but is not a file where a file is wanted (a directory, a device)."""

    kind = "wrong-type"
    default_hint = "give the path of a file"

    def __init__(self, message: str, *, path: str = "", hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.path = path


class SemanticUnavailable(UserWarning):
    """A warning, given once per process: hybrid search ran as text search because semantic
    search is not installed (``pip install 'chatkeep[semantic]'``)."""
