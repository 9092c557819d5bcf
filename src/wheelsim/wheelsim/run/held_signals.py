"""Ctrl-C and SIGTERM during a run, taken between two events of the lock-step loop.

``wheelsim run`` turns both signals into KeyboardInterrupt (:mod:`wheelsim.cli`). Raised at
whatever line the simulation is on, it could land in the middle of writing a batch into the bag
(a message written twice, a record without its data) or between the recorder's bag and the
report's reader getting the same message. While :class:`HeldSignals` is open, those signals are
noted instead and handed to their own handler by :meth:`HeldSignals.deliver`, which the runner
calls between two events, or when the block ends without an error (after the bag is finished;
a block ending in an error says why it ended). With ``second_at_once``, a second signal while
one is held goes to its handler at once, for a block that may take long (a database call): Ctrl-C
twice ends it. Within a hold, :meth:`HeldSignals.released` gives a block (a loop of runs, which
Ctrl-C stops) the signals straight away and holds them again at its end, with no moment between
the two taken by neither; a signal taken there counts as the first, so the next one after the
block goes at once with ``second_at_once``. A hold opened inside another leaves the signals to
the outer one (inside a released block it holds them). A signal whose handler raises while the
handlers are being swapped leaves none of this hold's behind. Only signals whose handler is
Python code are held (a default or ignored one stays as it is), and only in the main thread,
where Python runs signal handlers.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Iterator
from typing import Any

HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: The exit code of a command ended by one of them, as a shell gives for SIGINT.
EXIT_INTERRUPTED = 130


class HeldSignals:
    """A context manager holding SIGINT and SIGTERM until :meth:`deliver` or its end."""

    def __init__(self, second_at_once: bool = False) -> None:
        self._second_at_once = second_at_once
        self._handlers: dict[int, Callable[[int, Any], Any]] = {}
        self._pending: list[int] = []
        self._delivered = False  # a signal went to its handler (deliver, a released block)

    def __enter__(self) -> HeldSignals:
        if threading.current_thread() is threading.main_thread():
            try:
                for signum in HELD_SIGNALS:
                    handler = signal.getsignal(signum)
                    if callable(handler) and getattr(handler, '__func__', None) is not \
                            HeldSignals._note:  # not inside another hold
                        self._handlers[signum] = handler
                        signal.signal(signum, self._note)
            except BaseException:  # a signal's own handler raised between two swaps
                self._swap_to(self._handlers)
                raise
        return self

    def _swap_to(self, handlers: dict[int, Callable[[int, Any], Any]]) -> None:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)

    def _note(self, signum: int, frame: Any) -> None:
        if self._second_at_once and (self._pending or self._delivered):
            self._pending.clear()
            self._deliver_now(signum, frame)
        else:
            self._pending.append(signum)

    def _deliver_now(self, signum: int, frame: Any) -> None:
        self._delivered = True
        self._handlers[signum](signum, frame)

    def deliver(self) -> None:
        """Call the handler of each signal held so far (it may raise, KeyboardInterrupt say)."""
        while self._pending:
            self._deliver_now(self._pending.pop(0), None)

    @contextlib.contextmanager
    def released(self) -> Iterator[None]:
        """Within the hold: the signals held so far, then those that come in the block, go
        to their handlers (which may raise, in the block); held again as the block ends."""
        try:
            self._swap_to(dict.fromkeys(self._handlers, self._deliver_now))
            self.deliver()
            yield
        finally:
            self._swap_to(dict.fromkeys(self._handlers, self._note))

    def take(self) -> bool:
        """Forget the signals held so far, for a caller that acts on them itself: whether
        there was one."""
        held = bool(self._pending)
        self._pending.clear()
        return held

    def __exit__(self, exc_type: type | None, *exc: object) -> None:
        self._swap_to(self._handlers)
        if exc_type is None:
            self.deliver()
