"""Clock modes and clock helpers for nodes that run on simulated time.

The three modes of the public interface (docs/interface.md, "Clock modes"):

1. ``WALL``: ``use_sim_time`` false, the node's clock is the system clock.
2. ``FOLLOW``: ``use_sim_time`` true, the node's clock follows ``/clock`` (or, in a lock-step
   run, the runner's simulated time); ``NodeSeam.on_time_change`` reports every change at once.
3. ``REFERENCE``: the node owns simulated time and publishes ``/clock``; its own ROS clock stays
   the system clock.

:class:`WallTicker` runs periodic wall-clock work on its own thread. In the Python executor a
timer wake-up costs about 0.7 ms of CPU on the development machine (it rebuilds and scans the
wait set); a thread sleeping until the next due time wakes within about 0.1 ms for about
0.06 ms. :class:`PeriodicCalls` lets one such thread serve several periodic jobs.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from collections.abc import Callable, Sequence

from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.timer import Timer

from wheelsim.core.params import ParameterError
from wheelsim.ros.seam import NodeSeam


class ClockMode(enum.Enum):
    WALL = 'wall clock'
    FOLLOW = 'following /clock'
    REFERENCE = 'reference clock (publishing /clock)'


def clock_mode(seam: NodeSeam, be_reference_clock: bool) -> ClockMode:
    """The mode from ``use_sim_time`` and ``be_reference_clock``; both true is an error."""
    use_sim_time = seam.use_sim_time
    if use_sim_time and be_reference_clock:
        raise ParameterError(
            'be_reference_clock', True,
            'must be false when use_sim_time is true: a node cannot follow /clock and publish '
            'it at once (choose one clock mode)',
        )
    if be_reference_clock:
        return ClockMode.REFERENCE
    return ClockMode.FOLLOW if use_sim_time else ClockMode.WALL


def ros_time_reader(seam: NodeSeam, mode: ClockMode) -> Callable[[], int]:
    """A function returning the node's ROS time [ns], for code that reads it every cycle.

    On the wall clock the ROS time is the system clock (``CLOCK_REALTIME``, as
    :func:`time.time_ns`), read directly: ``Clock.now()`` builds an rclpy ``Time`` each call,
    25 us of CPU from cold caches on the development machine.
    """
    return time.time_ns if mode is ClockMode.WALL else seam.now_ns


def timer_period_s(rate_hz: float) -> float:
    """Timer period for a rate, rounded up to the nanosecond (rclpy truncates to whole ns).

    A timer must never fire before the event it serves: events at ``k / rate`` seconds are
    served by a timer firing at ``k * ceil(1e9 / rate)`` nanoseconds after its start.
    """
    return math.ceil(1e9 / rate_hz) / 1e9


def steady_timer(node: Node, period_s: float, callback: Callable[[], None]) -> Timer:
    """A timer on the monotonic wall clock of a live rclpy ``node``, whatever ``use_sim_time``
    says."""
    return node.create_timer(period_s, callback, clock=Clock(clock_type=ClockType.STEADY_TIME))


class PeriodicCalls:
    """Several jobs, each called every ``period_s`` of monotonic time, on one :class:`WallTicker`.

    ``tick`` (the ticker's callable) calls the jobs that are due, in the given order, and
    returns the delay [s] until the next one is; a job that fell behind is not called twice
    to catch up. A job's exception goes to ``on_error`` and the other jobs still run. The first
    calls happen one period after construction. ``clock_s`` gives the time in seconds.
    """

    def __init__(
        self,
        jobs: Sequence[tuple[float, Callable[[], None]]],
        on_error: Callable[[Exception], None],
        clock_s: Callable[[], float] = time.monotonic,
    ) -> None:
        self._on_error = on_error
        self._clock_s = clock_s
        start_s = clock_s()
        self._jobs = [[start_s + period_s, period_s, job] for period_s, job in jobs]

    def tick(self) -> float:
        now_s = self._clock_s()
        for entry in self._jobs:
            due_s, period_s, job = entry
            if now_s >= due_s:
                # On time or a little late: keep the phase; a period or more late: restart.
                next_s = due_s + period_s
                entry[0] = next_s if next_s > now_s else now_s + period_s
                try:
                    job()
                except Exception as err:  # noqa: BLE001 - report, go on with the other jobs
                    self._on_error(err)
        return min(due_s for due_s, _, _ in self._jobs) - self._clock_s()


class WallTicker:
    """Calls ``tick()`` on a daemon thread; ``tick`` returns the wall delay [s] to the next call.

    ``tick`` runs concurrently with the executor's callbacks: guard shared state with a lock.
    A delay <= 0 only yields to other threads. An exception is passed to ``on_error`` and the
    ticker goes on after ``error_pause_s``: it never dies.
    """

    def __init__(
        self,
        tick: Callable[[], float],
        on_error: Callable[[Exception], None],
        name: str = 'wall-ticker',
        error_pause_s: float = 1.0,
    ) -> None:
        self._tick = tick
        self._on_error = on_error
        self._error_pause_s = error_pause_s
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self._thread.start()

    def wake(self) -> None:
        """Call ``tick`` now instead of at the end of the current delay (e.g. after a rate
        change)."""
        self._wake.set()

    def stop(self, timeout_s: float = 2.0) -> None:
        """Stop after the current tick, waiting up to ``timeout_s`` for it (0: do not wait)."""
        self._stop.set()
        self._wake.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                delay_s = self._tick()
            except Exception as err:  # noqa: BLE001 - report, pause, go on
                self._on_error(err)
                delay_s = self._error_pause_s
            if delay_s > 0.0:
                self._wake.wait(delay_s)
                self._wake.clear()
            else:
                time.sleep(0)  # let the executor thread take the GIL
