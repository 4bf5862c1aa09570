"""The request's images: resized for the provider, then capped per request (SPEC §5.5).

Every pasted image is stored whole; these steps shape only what one request carries. They run
on the whole request — the prepared history followed by the new turn — after the history steps
(:data:`~chatkeep.rules.wire.HISTORY_STEPS`), so seen images are labels already and only
images that travel with their pixels count:

1. :func:`resize_images_anthropic` / :func:`resize_images_openai` — each image resized to what
   the provider uses (:func:`~chatkeep.rules.resize.resize_for_request`); an image that cannot
   be decoded (or is too large to decode) becomes its label (§5.3);
2. :func:`cap_request_images` — first fit in order, at most 8 images and 3 MiB of data-URL
   characters (:func:`~chatkeep.rules.images.first_fit`); an image that does not fit is sent as
   its label. The user is told (:func:`held_back_note`), never in the stored text.

:func:`request_steps` gives the tuple of a style. Every step is a pure ``history -> history``
function that returns its input when nothing changes, like the other pipeline steps.

A label is numbered by the image's place among the image parts the entry still has when the
step runs: in an entry where the type step (:mod:`~chatkeep.rules.sendable`) already labelled an
undecodable image, a later image's label number can differ from the one it gets once seen.
"""

from __future__ import annotations

from collections.abc import Callable

from ..entries import Entry, has_image_parts, image_part_url, is_image_part
from ..errors import UndecodableImage
from .images import TURN_IMAGE_MAX_CHARS, TURN_IMAGE_MAX_COUNT, first_fit
from .labels import map_image_parts
from .resize import resize_for_request

__all__ = [
    "REQUEST_STEPS",
    "cap_request_images",
    "count_image_parts",
    "held_back_note",
    "request_steps",
    "resize_images_anthropic",
    "resize_images_openai",
]

RequestStep = Callable[[list[Entry]], list[Entry]]


def _each_image_entry(history: list[Entry], fn: Callable[[Entry], Entry]) -> list[Entry]:
    out: list[Entry] | None = None
    for i, entry in enumerate(history):
        new = fn(entry) if has_image_parts(entry) else entry
        if new is not entry and out is None:
            out = list(history[:i])
        if out is not None:
            out.append(new)
    return history if out is None else out


def _resize_history(history: list[Entry], style: str) -> list[Entry]:
    def one(_k: int, url: str) -> str | None:
        try:
            return resize_for_request(url, style)
        except UndecodableImage:
            return None

    return _each_image_entry(history, lambda e: map_image_parts(e, one))


def resize_images_anthropic(history: list[Entry]) -> list[Entry]:
    """Images resized to Anthropic's size (long edge 1,568 px, about 1.15 megapixels)."""
    return _resize_history(history, "anthropic")


def resize_images_openai(history: list[Entry]) -> list[Entry]:
    """Images resized to OpenAI's high-detail size (fit 2,048 px, short side 768 px)."""
    return _resize_history(history, "chat")


def count_image_parts(history: list[Entry]) -> int:
    """Image parts (with pixels) in ``history``."""
    return sum(
        sum(1 for p in e["content"] if is_image_part(p)) for e in history if has_image_parts(e)
    )


def cap_request_images(history: list[Entry]) -> list[Entry]:
    """At most 8 images and 3 MiB of image data in the request, first fit in order; the rest
    go as their labels. The input itself when everything fits."""
    sizes = [
        len(image_part_url(p))
        for e in history
        if has_image_parts(e)
        for p in e["content"]
        if is_image_part(p)
    ]
    mask = first_fit(sizes)
    if all(mask):
        return history
    fits = iter(mask)
    return _each_image_entry(
        history, lambda e: map_image_parts(e, lambda _k, url: url if next(fits) else None)
    )


def held_back_note(count: int) -> str:
    """What the user is told when ``count`` images went to the model as labels ("" for 0)."""
    if count <= 0:
        return ""
    mib = TURN_IMAGE_MAX_CHARS / (1024 * 1024)
    what = "1 image was" if count == 1 else f"{count} images were"
    return (
        f"{what} sent as a label, not as pixels: one request carries at most "
        f"{TURN_IMAGE_MAX_COUNT} images and {mib:g} MiB of images (all of them stay stored whole)"
    )


#: The request steps of each API style (the preview lists them after the history steps).
REQUEST_STEPS: dict[str, tuple[RequestStep, ...]] = {
    "anthropic": (resize_images_anthropic, cap_request_images),
    "chat": (resize_images_openai, cap_request_images),
    "responses": (resize_images_openai, cap_request_images),
}


def request_steps(style: str) -> tuple[RequestStep, ...]:
    """The request steps of API ``style`` (OpenAI's sizes for any other style)."""
    return REQUEST_STEPS.get(style, REQUEST_STEPS["chat"])
