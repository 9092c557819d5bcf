"""Simulated time on a fixed step grid, with exact periodic events, for the vehicle_sim node.

The vehicle is stepped at ``step_rate`` in simulated time. Step ``k`` happens at
``origin_ns + floor(k * 1e9 / step_rate)`` nanoseconds, computed with exact rationals, so any
rate (300, 400, 2500 Hz, ...) keeps the right speed for as long as the simulation runs.

Periodic events (publishing outputs, scans, publishing ``/clock``) fire at the step where their time
falls: event ``j`` of a rate ``r`` anchored at step ``a`` fires at step
``a + floor(j * step_rate / r)``; when ``step_rate / r`` is an integer (1000/50 Hz, 300/50 Hz)
that is exactly every ``1/r`` seconds. A one-shot deadline (a command going stale) fires at the
first step whose time is strictly later than the deadline.

:meth:`Timeline.run` yields ``(n_steps, event)`` pairs: the caller steps the vehicle by
``n_steps`` in one batch and then handles ``event`` at the new :attr:`Timeline.now_ns`.
:class:`Pacer` turns wall-clock time into the simulated time to reach in reference-clock mode.

No ROS imports: used by the node and tested on its own.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from fractions import Fraction

from wheelsim.core.units import NS_PER_S

# Wall time the reference clock may fall behind before it restarts pacing instead of catching up.
PACER_MAX_LAG_S = 0.1


class Event(enum.IntEnum):
    """What happens at a step; at equal steps the lower value is handled first."""

    EXPIRE = 0  # the command deadline has passed
    PUBLISH = 1  # publish the outputs
    SCAN = 2  # publish the scan and the footprint
    CLOCK = 3  # publish /clock (reference-clock mode)


class JumpKind(enum.Enum):
    """How a new target time relates to the current simulated time."""

    NORMAL = 'normal'
    BACKWARD = 'backward'  # earlier than the current simulated time
    FORWARD = 'forward'  # further ahead than the largest gap that is stepped through


class _Periodic:
    """Occurrence ``count`` of a periodic event fires at ``next_step``; ``num / den`` is
    step_rate / rate as an exact fraction (a plain attribute: it is read every step batch)."""

    __slots__ = ('num', 'den', 'anchor_step', 'count', 'next_step')

    def __init__(self, num: int, den: int, anchor_step: int) -> None:
        self.num, self.den, self.anchor_step = num, den, anchor_step
        self.count = 0
        self.advance()

    def advance(self) -> None:
        self.count += 1
        self.next_step = self.anchor_step + (self.count * self.num) // self.den


class Timeline:
    """Step counter with exact step times, periodic events and a one-shot deadline."""

    def __init__(self, step_rate_hz: float, origin_ns: int = 0) -> None:
        rate = Fraction(step_rate_hz)
        if rate <= 0:
            raise ValueError(f'step_rate_hz must be > 0, got {step_rate_hz}')
        self.step_rate = rate
        # The fraction's parts as plain ints: Fraction's properties cost a Python call each.
        self._rate_num, self._rate_den = rate.numerator, rate.denominator
        self.origin_ns = int(origin_ns)
        # The current step and its simulated time [ns] (read only: run() moves both).
        self.step = 0
        self.now_ns = self.origin_ns
        self._periodic: dict[Event, _Periodic] = {}
        self._deadline_step: int | None = None

    def time_ns(self, step: int) -> int:
        """Simulated time of ``step`` (floor to the nanosecond)."""
        return self.origin_ns + (step * NS_PER_S * self._rate_den) // self._rate_num

    def last_step_at(self, t_ns: int) -> int:
        """The largest step whose time is ``<= t_ns``."""
        elapsed = int(t_ns) - self.origin_ns
        return ((elapsed + 1) * self._rate_num - 1) // (NS_PER_S * self._rate_den)

    def set_rate(self, event: Event, rate_hz: float | None) -> None:
        """Fire ``event`` every ``1/rate_hz`` from now on (``None`` stops it)."""
        if rate_hz is None:
            self._periodic.pop(event, None)  # the others stay in event order
            return
        ratio = self.step_rate / Fraction(rate_hz)
        self._periodic[event] = _Periodic(ratio.numerator, ratio.denominator, self.step)
        self._periodic = dict(sorted(self._periodic.items()))  # see _next_event

    def next_time_ns(self, event: Event) -> int | None:
        """Simulated time of the next occurrence of a periodic ``event`` (None: not set)."""
        periodic = self._periodic.get(event)
        return None if periodic is None else self.time_ns(periodic.next_step)

    def set_deadline(self, t_ns: int | None) -> None:
        """Fire :attr:`Event.EXPIRE` at the first step later than ``t_ns`` (``None``: never)."""
        self._deadline_step = None if t_ns is None else self.last_step_at(t_ns) + 1

    def classify(self, target_ns: int, max_gap_ns: int) -> JumpKind:
        """Whether advancing to ``target_ns`` is normal, a backward or a large forward jump."""
        now_ns = self.now_ns
        if target_ns < now_ns:
            return JumpKind.BACKWARD
        if target_ns - now_ns > max_gap_ns:
            return JumpKind.FORWARD
        return JumpKind.NORMAL

    def _next_event(self) -> tuple[int, Event | None]:
        """``(step, event)`` of the earliest pending event, at equal steps the lower event;
        ``(0, None)`` if none is pending. The periodic events are kept in event order after
        EXPIRE, the lowest: the first of the earliest is the one."""
        step, upcoming = 0, None
        if self._deadline_step is not None:
            step, upcoming = max(self._deadline_step, self.step), Event.EXPIRE
        for event, periodic in self._periodic.items():
            if upcoming is None or periodic.next_step < step:
                step, upcoming = periodic.next_step, event
        return step, upcoming

    def run(self, target_ns: int) -> Iterator[tuple[int, Event | None]]:
        """Advance to the last step at or before ``target_ns``.

        Yields ``(n_steps, event)``: step the vehicle ``n_steps`` (possibly 0), then handle
        ``event`` at :attr:`now_ns`; the final pair has ``event is None`` if steps remain after
        the last event. Stopping the iteration early leaves a consistent state.
        """
        target_step = self.last_step_at(target_ns)
        while True:
            event_step, event = self._next_event()
            if event is None or event_step > target_step:
                if target_step > self.step:
                    n_steps, self.step = target_step - self.step, target_step
                    self.now_ns = self.time_ns(target_step)
                    yield n_steps, None
                return
            n_steps, self.step = event_step - self.step, event_step
            self.now_ns = self.time_ns(event_step)
            if event is Event.EXPIRE:
                self._deadline_step = None
            else:
                self._periodic[event].advance()
            yield n_steps, event


class Pacer:
    """Simulated time to reach at a given wall time, for ``real_time_factor`` (0: no limit).

    Simulated time advances ``factor`` times faster than the wall clock from the last
    :meth:`restart`. If the simulation falls more than ``max_lag_s`` of wall time behind (the
    machine is too slow for the factor, or the process was paused), the pacer restarts from the
    current simulated time instead of racing to catch up, and counts it in :attr:`lag_restarts`.
    """

    def __init__(self, real_time_factor: float, max_lag_s: float = PACER_MAX_LAG_S) -> None:
        self.factor = float(real_time_factor)
        self.max_lag_ns = int(max_lag_s * NS_PER_S)
        self.lag_restarts = 0
        self._sim_anchor_ns = 0
        self._wall_anchor_ns = 0

    def restart(self, sim_ns: int, wall_ns: int, real_time_factor: float | None = None) -> None:
        """Pace from ``(sim_ns, wall_ns)`` on, optionally with a new factor."""
        if real_time_factor is not None:
            self.factor = float(real_time_factor)
        self._sim_anchor_ns = int(sim_ns)
        self._wall_anchor_ns = int(wall_ns)

    def target_ns(self, sim_now_ns: int, wall_now_ns: int) -> int | None:
        """Simulated time to advance to now; ``None`` when unlimited (factor 0)."""
        if self.factor == 0.0:
            return None
        lag_wall_ns = wall_now_ns - self._wall_anchor_ns - (
            (sim_now_ns - self._sim_anchor_ns) / self.factor
        )
        if lag_wall_ns > self.max_lag_ns:
            self.lag_restarts += 1
            self.restart(sim_now_ns, wall_now_ns - self.max_lag_ns)
        return self._sim_anchor_ns + round(self.factor * (wall_now_ns - self._wall_anchor_ns))

    def wall_time_ns(self, sim_ns: int) -> int | None:
        """Wall time at which ``sim_ns`` is due; ``None`` when unlimited (factor 0)."""
        if self.factor == 0.0:
            return None
        return self._wall_anchor_ns + round((sim_ns - self._sim_anchor_ns) / self.factor)
