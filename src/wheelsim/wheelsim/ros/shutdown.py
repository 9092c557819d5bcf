"""SIGINT and SIGTERM end a node process within a second, whenever they come.

Standard library only, so that a node's executable takes the signals over before its slow imports
(rclpy, numpy and numba take about a second): :func:`take_over_signals` is the first thing it does.

The process goes through four phases (:class:`Phase`); a signal (the first one, SIGINT or
SIGTERM alike) does, in each:

- ``IMPORTING`` (the node's modules, before ``rclpy.init``): the process ends at once with exit 0
  (nothing was started; an exception raised inside an import can come out as another one, so
  none is raised). A signal before :func:`take_over_signals` (the interpreter's own start-up,
  about 0.1 s) gets Python's default handling: KeyboardInterrupt, or the default action of
  SIGTERM. Python loses that KeyboardInterrupt when it is raised inside a callback (printed as
  "Exception ignored in", e.g. in importlib's module locks) or while site runs a .pth file
  ("Error processing line"): the process then runs on until the
  next signal (``ros2 launch`` follows an unanswered SIGINT with SIGTERM). No program can close
  this window: CPython's own start-up runs such callbacks before any code of the program.
- ``STARTING`` (``rclpy.init``, building the node): :class:`Interrupted` is raised in the main
  thread, which abandons the start-up; :mod:`wheelsim.ros.node_main` frees what was built and
  exits 0. The Python handler runs once the main thread is back in Python code (after a call
  into C); raised inside a finaliser or a callback (rclpy's loggers have a ``__del__``), the
  exception is dropped by Python, and the helper thread simulates the signal again for the
  handler to raise it once the finaliser has returned.
- ``SPINNING``: the stop request is set (``bool(stop)`` turns true) and a guard condition of the
  node's executor is triggered from a helper thread every :data:`RETRIGGER_PERIOD_S` until the
  main loop has left, so the executor's wait returns even if one trigger is lost (seen: a main
  thread blocked in ``rcl_wait`` for minutes past its timeout, its Python signal handler never
  run, after the trigger had been sent once).
- ``STOPPING`` (tearing the node down): nothing more; further signals are ignored.

Whatever the phase, :data:`GRACE_S` after the first signal the helper thread ends the process
if it still runs (and, for a teardown that holds the interpreter lock, faulthandler's C thread at
:data:`HARD_LIMIT_S`: exit 1 and every thread's stack). Exit 0 and one line on standard error
saying where the main thread was, when it was starting (inside a long call into C, where no
Python handler runs: compiling a kernel with a cold cache takes seconds) or stopping (the
teardown, in rmw and Fast DDS, took too long). A teardown no signal began (after a start-up
refused for its parameters) gets :data:`TEARDOWN_LIMIT_S` before faulthandler's C thread ends
it (exit 1 and every thread's stack); a signal during it cannot shorten that while the teardown
holds the interpreter lock (re-arming the limit needs it).
Exit 1 and every thread's Python stack when it was spinning: a main loop that does not return
after a stop request is a defect to look at. During the start-up, nothing ends the process while
a call into C holds the interpreter lock (the helper thread needs it): then it ends when that
call returns, which can be later than the promise.
"""

from __future__ import annotations

import _thread
import enum
import faulthandler
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import NoReturn

#: From the first signal to the end of the process by the helper thread, which needs the Python
#: interpreter lock (the promise is 1 s; the end, seen by the process that sent the signal, came
#: up to 0.29 s after this in CI).
GRACE_S = 0.6
#: From the first signal to the end of the process by faulthandler's C thread, armed when the
#: teardown starts: for a teardown that holds the interpreter lock (seen in rmw_fastrtps's
#: participant deletion, docs/reliability.md), which no Python thread can interrupt. The
#: stacks it writes and the process's end took up to 0.14 s on 2 cores at a load of 14.
HARD_LIMIT_S = 0.8
#: From the start of a teardown that no signal began (a start-up refused for its parameters, an
#: external shutdown; normally under 0.2 s) to the end of the process by faulthandler's C thread,
#: as :data:`HARD_LIMIT_S` does after a signal. Seen: Fast DDS 3.2 (Kilted) deleting a
#: participant while one of its discovery callbacks waits spins for tens of seconds, holding the
#: interpreter lock (eProsima/Fast-DDS#6513; 2 of 480 refused start-ups, 8 nodes at a time).
TEARDOWN_LIMIT_S = 3.0
#: How often the helper thread triggers the executor's guard condition while it spins.
RETRIGGER_PERIOD_S = 0.05
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):
    """Raised in the main thread by a signal during start-up (a BaseException, so that no
    ``except Exception`` on the way swallows it)."""


class Phase(enum.Enum):
    IMPORTING = 'importing'
    STARTING = 'starting'
    SPINNING = 'spinning'
    STOPPING = 'stopping'


class StopRequest:
    """The process's handling of SIGINT and SIGTERM (one per process: :func:`take_over_signals`).

    ``bool(stop)`` is true once a signal came; ``stop.signal_name`` names the first one.
    """

    def __init__(self, program: str) -> None:
        self.program = program
        self.signal_name = ''
        self.phase = Phase.IMPORTING
        self._handled = False  # the Python handler acted on the first signal
        self._handled_signum = 0  # that signal: simulated again if Python drops its Interrupted
        self._dropped = threading.Event()  # Python dropped the handler's Interrupted
        self._unraisablehook = sys.unraisablehook  # Python's hook, replaced in starting()
        self._first_signal_s: float | None = None
        self._wake: Callable[[], None] | None = None
        self._lock = threading.RLock()  # the Python handler may run inside a holder (main thread)
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        for sig in SIGNALS:
            signal.signal(sig, self._on_signal)
        # The C-level handler writes one byte per signal here even while the main thread is
        # inside C code and cannot run the Python handler.
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)
        threading.Thread(target=self._watch, name='signal wake-up', daemon=True).start()

    def __bool__(self) -> bool:
        return bool(self.signal_name)

    def _on_signal(self, signum: int, _frame: object) -> None:
        """The Python handler, run by the main thread between two bytecodes: acts on the first
        signal only. The wake-up thread may have recorded that signal already (it runs first
        when the main thread was inside C code without the interpreter lock); that does not
        make it a second one."""
        if self._handled:
            return
        self._handled = True
        self._handled_signum = signum
        self.signal_name = self.signal_name or signal.Signals(signum).name
        self._first_signal_s = self._first_signal_s or time.monotonic()
        with self._lock:
            if self.phase is Phase.IMPORTING:
                exit_now(0)
        if self.phase is Phase.STARTING:
            raise Interrupted(self.signal_name)

    def _on_unraisable(self, unraisable: sys.UnraisableHookArgs) -> None:
        """Python's hook for an exception it cannot raise. The handler's :class:`Interrupted`,
        raised inside a finaliser or a callback (a ``__del__``, a weak reference's), is dropped
        without a word, and the helper thread simulates the signal again: the handler runs anew
        at the main thread's next check for signals, by then outside the finaliser (or it is
        dropped again). Any other exception goes to the hook there was before."""
        if isinstance(unraisable.exc_value, Interrupted):
            # Not interrupt_main here: the handler would run again at once, in this hook. And
            # the helper thread, not this hook, lets the handler act again: a second signal
            # pending here must find it done, or its Interrupted would be dropped in the hook.
            self._dropped.set()
            return
        self._unraisablehook(unraisable)

    def starting(self) -> None:
        """The imports are done; rclpy and the node are about to be built. From here on,
        :meth:`_on_unraisable` is Python's hook for the exceptions it cannot raise (the one
        there was before, perhaps set by an import, gets the others)."""
        self._unraisablehook = sys.unraisablehook
        sys.unraisablehook = self._on_unraisable
        with self._lock:
            self.phase = Phase.STARTING

    def spinning(self, wake: Callable[[], None]) -> None:
        """The node spins from now on; ``wake`` (thread-safe) wakes its executor. A signal
        that came during the start-up and was not raised (it landed between two phases) makes
        the main loop end at once."""
        with self._lock:
            self._wake = wake
            self.phase = Phase.SPINNING

    def stopping(self) -> None:
        """The main loop has left, or the start-up was abandoned; the node is being torn down.
        Should the teardown still run (holding the interpreter lock or not), faulthandler ends
        the process with every thread's stack and exit 1: :data:`HARD_LIMIT_S` after a signal,
        or :data:`TEARDOWN_LIMIT_S` from now without one."""
        with self._lock:
            self._wake = None
            self.phase = Phase.STOPPING
            left_s = TEARDOWN_LIMIT_S
            if self._first_signal_s is not None:
                left_s = self._first_signal_s + HARD_LIMIT_S - time.monotonic()
            faulthandler.dump_traceback_later(max(0.01, left_s), exit=True, file=sys.stderr)

    def _watch(self) -> None:
        """Helper thread: on the first signal, wake the executor until the main loop has left
        (during the start-up: simulate the signal again whenever Python dropped the handler's
        :class:`Interrupted`), and end the process :data:`GRACE_S` later if it has not ended by
        then."""
        received = b''
        while not received:
            received = os.read(self._read_fd, 64)
        self._first_signal_s = self._first_signal_s or time.monotonic()
        # The C-level handler writes the signal's number; the Python handler may not have run
        # (the main thread inside a long C call).
        self.signal_name = self.signal_name or _name_of(received[0])
        with self._lock:
            if self.phase is Phase.IMPORTING:  # the main thread may be inside a long C call
                exit_now(0)
        deadline = self._first_signal_s + GRACE_S
        while time.monotonic() < deadline:
            with self._lock:
                wake = self._wake
            if wake is not None:
                try:
                    wake()
                except Exception:  # noqa: BLE001 - destroyed meanwhile: the loop has left
                    pass
            if self._dropped.wait(min(RETRIGGER_PERIOD_S, max(0.0, deadline - time.monotonic()))):
                self._dropped.clear()
                self._handled = False
                _thread.interrupt_main(self._handled_signum)
        self._end_overdue()

    def _end_overdue(self) -> None:
        main = sys._current_frames().get(threading.main_thread().ident)
        where = 'unknown'
        if main is not None:
            where = (f'{main.f_code.co_name} ({os.path.basename(main.f_code.co_filename)}:'
                     f'{main.f_lineno})')
        if self.phase is Phase.SPINNING:
            print(f'{self.program}: still spinning {GRACE_S} s after {self.signal_name} (in '
                  f'{where}): process ended; every thread:', file=sys.stderr, flush=True)
            faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
            exit_now(1)
        what = 'the teardown took' if self.phase is Phase.STOPPING else 'the start-up took'
        print(f'{self.program}: {what} over {GRACE_S} s after {self.signal_name} (in {where}): '
              'process ended', file=sys.stderr, flush=True)
        exit_now(0)


def _name_of(signum: int) -> str:
    """``'SIGINT'`` for 2; ``'signal <n>'`` for a number that is no known signal."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f'signal {signum}'


def exit_now(code: int) -> NoReturn:
    """End the process now with ``code``, after flushing standard output and error."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


_STOP: StopRequest | None = None


def take_over_signals(program: str) -> StopRequest:
    """Install the process's :class:`StopRequest` (once; later calls return the same one).
    ``program`` names the executable in the lines it prints."""
    global _STOP
    if _STOP is None:
        _STOP = StopRequest(program)
    return _STOP
