"""Reasoning ("thinking") that a reply streams before its answer, kept apart from the answer.

Each API style sends it its own way; the adapters turn all of them into
:class:`~chatkeep.providers.events.ReasoningDelta` events and ``Done.reasoning``, and the
answer text (``TextDelta``, ``Done.text``) holds only the answer:

* ``anthropic`` — ``thinking`` content blocks (``thinking_delta`` events); a
  ``redacted_thinking`` block (encrypted, unreadable) is noted as :data:`REDACTED_NOTE`;
* ``responses`` — reasoning summaries (``response.reasoning_summary_text.delta``) and raw
  reasoning text (``response.reasoning_text.delta``, sent by open-weight models);
* ``chat`` — a ``<think>…</think>`` section at the very start of the reply (leading whitespace
  allowed; the whitespace after ``</think>`` is dropped), and the ``reasoning_content``
  (DeepSeek, vLLM) or ``reasoning`` (OpenRouter, LM Studio) fields of a delta or message.

Separate blocks (two thinking blocks, two summary parts) are joined by a blank line.
:class:`ReasoningParts` collects the pieces; :class:`ThinkSplitter` splits a streamed chat reply
at its ``</think>``, however the tags are cut across chunks; :func:`split_think` does the same
for a whole reply. ``Done.reasoning`` is the collected text with surrounding whitespace trimmed.
"""

from __future__ import annotations

from .events import ReasoningDelta, TextDelta

__all__ = ["REDACTED_NOTE", "ReasoningParts", "ThinkSplitter", "split_think"]

#: Kept in ``reasoning`` for each ``redacted_thinking`` block (its content is encrypted).
REDACTED_NOTE = "[some of the reasoning was redacted by the provider]"

OPEN_TAG = "<think>"
CLOSE_TAG = "</think>"


class ReasoningParts:
    """The reasoning of one reply, piece by piece (blocks separated by a blank line)."""

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self._gap = False

    def block(self) -> None:
        """A new block starts: its first piece is preceded by a blank line."""
        if self.pieces:
            self._gap = True

    def add(self, text: str | None) -> ReasoningDelta | None:
        """Keep ``text`` and return the event that carries it (``None`` for no text)."""
        if not isinstance(text, str) or not text:
            return None
        if self._gap:
            text, self._gap = "\n\n" + text, False
        self.pieces.append(text)
        return ReasoningDelta(text)

    @property
    def text(self) -> str:
        return "".join(self.pieces).strip()


def _tail_prefix(text: str, tag: str) -> int:
    """The length of the longest end of ``text`` that begins ``tag`` (a tag cut mid-chunk)."""
    for n in range(min(len(text), len(tag) - 1), 0, -1):
        if tag.startswith(text[-n:]):
            return n
    return 0


class ThinkSplitter:
    """Splits a streamed chat reply into reasoning (a leading ``<think>`` section) and answer.

    ``feed(text)`` returns the events the new text completes; ``finish()`` the rest (an unclosed
    section is all reasoning: the reply was cut, or the model never finished thinking). Text
    that could still be the start of a tag is held back until the next piece decides it."""

    def __init__(self, reasoning: ReasoningParts) -> None:
        self.reasoning = reasoning
        self._state = "start"  # start → think → after → answer (or start → answer)
        self._buf = ""

    def feed(self, text: str) -> list[TextDelta | ReasoningDelta]:
        self._buf += text
        out: list[TextDelta | ReasoningDelta] = []
        while self._buf:
            before = (self._state, self._buf)
            self._step(out)
            if (self._state, self._buf) == before:  # waiting for more text
                break
        return out

    def _step(self, out: list[TextDelta | ReasoningDelta]) -> None:
        buf = self._buf
        if self._state == "start":
            head = buf.lstrip()
            if not head or (len(head) < len(OPEN_TAG) and OPEN_TAG.startswith(head)):
                return  # still undecided
            if head.startswith(OPEN_TAG):
                self._state, self._buf = "think", head[len(OPEN_TAG) :].lstrip()
            else:
                self._state = "answer"
        elif self._state == "think":
            end = buf.find(CLOSE_TAG)
            if end >= 0:
                self._think(out, buf[:end])
                self._state, self._buf = "after", buf[end + len(CLOSE_TAG) :]
                return
            keep = _tail_prefix(buf, CLOSE_TAG)
            self._think(out, buf[: len(buf) - keep])
            self._buf = buf[len(buf) - keep :]
        elif self._state == "after":
            rest = buf.lstrip()
            self._buf = rest
            if rest:
                self._state = "answer"
        else:
            out.append(TextDelta(buf))
            self._buf = ""

    def _think(self, out: list[TextDelta | ReasoningDelta], text: str) -> None:
        event = self.reasoning.add(text)
        if event is not None:
            out.append(event)

    def finish(self) -> list[TextDelta | ReasoningDelta]:
        out: list[TextDelta | ReasoningDelta] = []
        buf, self._buf = self._buf, ""
        if self._state == "think":
            self._think(out, buf)
        elif self._state in ("start", "answer") and buf.strip():
            out.append(TextDelta(buf))
        self._state = "answer"
        return out


def split_think(text: str, reasoning: ReasoningParts) -> str:
    """The answer of a whole chat reply; its leading ``<think>`` section goes to ``reasoning``."""
    splitter = ThinkSplitter(reasoning)
    events = splitter.feed(text) + splitter.finish()
    return "".join(e.text for e in events if isinstance(e, TextDelta))
