"""Clock modes and clock helpers for nodes that run on simulated time.

The three modes of INTERFACE.md:

1. ``WALL``: ``use_sim_time`` false, the node's clock is the system clock.
2. ``FOLLOW``: ``use_sim_time`` true, the node's clock follows ``/clock`` (or, in a lock-step
   run, whatever sets it); :func:`on_time_change` reports every change at once.
3. ``REFERENCE``: the node owns simulated time and publishes ``/clock``; its own ROS clock stays
   the system clock.

:class:`WallTicker` runs periodic wall-clock work on its own thread. In the Python executor a
timer wake-up costs about 0.5 ms of CPU (it rebuilds and scans the wait set); a thread sleeping
until the next due time costs a few microseconds and wakes within about 0.1 ms.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from collections.abc import Callable

from rclpy.clock import Clock, ClockType, JumpHandle, JumpThreshold, TimeJump
from rclpy.duration import Duration
from rclpy.node import Node
from rclpy.timer import Timer

from wheelsim.core.params import ParameterError


class ClockMode(enum.Enum):
    WALL = 'wall clock'
    FOLLOW = 'following /clock'
    REFERENCE = 'reference clock (publishing /clock)'


def clock_mode(node: Node, be_reference_clock: bool) -> ClockMode:
    """The mode from ``use_sim_time`` and ``be_reference_clock``; both true is an error."""
    use_sim_time = node.get_parameter('use_sim_time').value
    if use_sim_time and be_reference_clock:
        raise ParameterError(
            'be_reference_clock', True,
            'must be false when use_sim_time is true: a node cannot follow /clock and publish '
            'it at once (choose one clock mode)',
        )
    if be_reference_clock:
        return ClockMode.REFERENCE
    return ClockMode.FOLLOW if use_sim_time else ClockMode.WALL


def now_ns(node: Node) -> int:
    """The node's ROS time in integer nanoseconds (0 while following /clock before any)."""
    return node.get_clock().now().nanoseconds


def timer_period_s(rate_hz: float) -> float:
    """Timer period for a rate, rounded up to the nanosecond (rclpy truncates to whole ns).

    A timer must never fire before the event it serves: events at ``k / rate`` seconds are
    served by a timer firing at ``k * ceil(1e9 / rate)`` nanoseconds after its start.
    """
    return math.ceil(1e9 / rate_hz) / 1e9


def steady_timer(node: Node, period_s: float, callback: Callable[[], None]) -> Timer:
    """A timer on the monotonic wall clock, whatever ``use_sim_time`` says."""
    return node.create_timer(period_s, callback, clock=Clock(clock_type=ClockType.STEADY_TIME))


def on_time_change(node: Node, callback: Callable[[TimeJump], None]) -> JumpHandle:
    """Call ``callback`` after every change of the node's ROS time (forward or backward).

    With ``use_sim_time`` that is every new ``/clock`` value, and every time a lock-step
    executor sets the clock. Keep the returned handle for as long as the callback is wanted.
    """
    threshold = JumpThreshold(
        min_forward=Duration(nanoseconds=1),
        min_backward=Duration(nanoseconds=-1),
        on_clock_change=True,
    )
    return node.get_clock().create_jump_callback(threshold, post_callback=callback)


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
