"""In-process lock used by every store connection: reentrant and first-come, first-served.

Python's own locks make no fairness promise; the history lock must be FIFO within a process
(SPEC §3.4), so waiters take a ticket and are served in ticket order. The same thread may
re-enter (a read issued from inside a mutator joins the running transaction).
"""

from __future__ import annotations

import threading


class FifoRLock:
    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._next_ticket = 0
        self._serving = 0

    def acquire(self) -> None:
        me = threading.get_ident()
        with self._cond:
            if self._owner == me:
                self._depth += 1
                return
            ticket = self._next_ticket
            self._next_ticket += 1
            while self._serving != ticket or self._owner is not None:
                self._cond.wait()
            self._owner = me
            self._depth = 1

    def release(self) -> None:
        with self._cond:
            if self._owner != threading.get_ident():
                raise RuntimeError("release of a lock held by another thread")
            self._depth -= 1
            if self._depth == 0:
                self._owner = None
                self._serving += 1
                self._cond.notify_all()

    def __enter__(self) -> FifoRLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
