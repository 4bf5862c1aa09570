"""Phase one of a turn (SPEC §3.5, §5.5, §7.1): check everything, write nothing.

Each function reads the store once (:func:`~.state.read_state`: one read transaction) and
returns a :class:`Turn` — the resolved provider card, the new user entry (every pasted image
whole, validated here, where it comes in, and trusted after; the per-request image cap is
applied when the request is built, §5.5), the system prompt, for edit/regenerate which stored
entry the turn replaces, and the :class:`~.state.TurnState` it was checked against — or raises
a typed error (``InvalidValue``, ``InvalidEntry``, ``ProviderConfigError``) before anything is
written. :meth:`chatkeep.conversation.Chat.run` performs a ``Turn``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..constants import DEFAULT_MAX_IMAGE_PIXELS, MAX_IMAGE_PIXELS_KEY
from ..entries import Entry, entry_text, is_attachment, is_unanswered, last_question
from ..errors import AttachError, InvalidValue
from ..providers import Card, resolve_provider
from ..rules.tokens import image_size
from .state import TurnState, read_state
from .turn import build_user_entry, entry_images, system_prompt

if TYPE_CHECKING:
    from ..storage.profile import Profile

__all__ = ["Turn", "prepare_edit", "prepare_regenerate", "prepare_send", "reuses_last"]


@dataclass
class Turn:
    """A checked turn, ready to :meth:`Chat.run` (nothing has been written yet)."""

    kind: str  # "send" | "edit" | "regenerate"
    card: Card
    user_entry: Entry
    system: str
    #: the store as the prepare read it (settings, history, session, last request)
    state: TurnState
    warnings: list[str] = field(default_factory=list)
    #: images the per-request cap sent as labels (set when the request is planned)
    dropped: int = 0
    #: edit/regenerate: the index whose entry (``original``) and everything after is replaced
    replace_at: int | None = None
    original: Entry | None = None
    #: regenerate: attachments after the question, kept before the new question
    keep: list[Entry] = field(default_factory=list)
    #: send: the unanswered last question has this very text and images; it is answered
    reuse: bool = False
    #: the cache-hit share of the replies before this turn (set when the request is planned)
    hits_before: dict[str, Any] | None = None
    #: edit/regenerate: the replaced entries are gone (set when the run replaced them)
    replaced: bool = False
    #: the history write counter once the question is stored (the landing checks it)
    stored_at: int | None = None


def _check_pixels(limit: Any, entry: Entry) -> None:
    """Every pasted image within the pixel limit (§12: 50 megapixels unless the setting
    ``maxImagePixels`` raises it), read from its header before anything decodes it."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit <= 0:
        limit = DEFAULT_MAX_IMAGE_PIXELS
    for k, url in enumerate(entry_images(entry), 1):
        size = image_size(url)
        if size is not None and size[0] * size[1] > limit:
            w, h = size
            raise AttachError(
                f"pasted image {k} is {w}×{h} = {w * h / 1e6:.1f} megapixels, over the "
                f"{limit / 1e6:g}-megapixel limit",
                hint=(
                    "paste a smaller image, or raise the limit with "
                    f"store.local.set('{MAX_IMAGE_PIXELS_KEY}', N)"
                ),
            )


def _turn(
    state: TurnState,
    env: Mapping[str, str] | None,
    kind: str,
    text: Any,
    images: Iterable[Any],
    provider: str | None,
    model: str | None,
) -> Turn:
    settings = state.settings
    card = resolve_provider(settings, provider, model, env=env)
    entry = build_user_entry(text, images)
    _check_pixels(state.max_image_pixels, entry)
    return Turn(kind=kind, card=card, user_entry=entry, system=system_prompt(settings), state=state)


def prepare_send(
    profile: Profile,
    env: Mapping[str, str] | None,
    text: str,
    images: Iterable[Any] = (),
    provider: str | None = None,
    model: str | None = None,
) -> Turn:
    """Check one new turn. Sending the text (and images) of the unanswered last question
    again answers that question instead of adding a second one (§3.5)."""
    state = read_state(profile)
    turn = _turn(state, env, "send", text, images, provider, model)
    history = state.history
    if reuses_last(history, turn.user_entry):
        turn.reuse = True
        turn.replace_at = len(history) - 1
        turn.original = history[-1]
    return turn


def reuses_last(history: list[Entry], user_entry: Entry) -> bool:
    """Whether a send of ``user_entry`` answers the unanswered last question instead of
    adding one: it is the newest entry and has the same text and images (§3.5)."""
    if not history:
        return False
    last = history[-1]
    return (
        last.get("role") == "user"
        and not is_attachment(last)
        and not is_unanswered(last)
        and entry_text(last) == entry_text(user_entry)
        and entry_images(last) == entry_images(user_entry)
    )


def prepare_edit(
    profile: Profile,
    env: Mapping[str, str] | None,
    i: int,
    text: str,
    images: Iterable[Any] | None = None,
    provider: str | None = None,
    model: str | None = None,
) -> Turn:
    """Check replacing user entry ``i`` (and everything after it) by ``text``;
    ``images=None`` keeps the edited entry's images."""
    state = read_state(profile)
    history = state.history
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < len(history):
        raise InvalidValue(
            f"no history entry at index {i!r} (the live history has {len(history)})",
            hint="see `chatkeep history` for the indexes",
        )
    original = history[i]
    if original.get("role") != "user" or is_attachment(original):
        raise InvalidValue(
            f"entry {i} is not a message you wrote", hint="only your own messages can be edited"
        )
    pics = entry_images(original) if images is None else images
    turn = _turn(state, env, "edit", text, pics, provider, model)
    turn.replace_at, turn.original = i, original
    return turn


def prepare_regenerate(
    profile: Profile,
    env: Mapping[str, str] | None,
    provider: str | None = None,
    model: str | None = None,
) -> Turn:
    """Check sending the last question again in place of its answer (or answering it,
    when a failed send left it unanswered)."""
    state = read_state(profile)
    history = state.history
    i = last_question(history)
    if i < 0:
        raise InvalidValue("there is no question to regenerate", hint="send a message first")
    original = history[i]
    turn = _turn(
        state, env, "regenerate", entry_text(original), entry_images(original), provider, model
    )
    turn.replace_at, turn.original = i, original
    turn.keep = [e for e in history[i + 1 :] if is_attachment(e)]
    return turn
