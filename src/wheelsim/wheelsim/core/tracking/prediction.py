"""Where the vehicle is now, from a pose measured earlier and the commands sent since.

A controller's latest pose is older than its clock: localization's processing, the transport,
the controller's own scheduling. On a busy machine, and in a run faster than real time (where
each millisecond of wall-clock delay is ``real_time_factor`` milliseconds of simulated time),
that age reaches a second and more. A prediction that holds the body twist measured at the
pose's stamp for the whole age misses every command sent meanwhile: at the goal, turning on
the spot, it sees the vehicle still turning the old way when the commands sent since have long
reversed it, and the heading loop, already lagging by the actuators' dead time and time
constant, turns back and forth ever wider (at 10x on a loaded 2-core machine the goal was
missed by up to 2.2 rad of heading; in lock step, poses 0.6 s old and commands 0.2 s in
transit turned the vehicle through 10 rad).

:func:`predicted_pose` moves the pose on with the twist the vehicle has had since the stamp:
from the measured twist, following the commands sent (:class:`CommandHistory`) through the
actuators' lag (``lag_s``, the controller's ``lead_time``: taken as half dead time, half
first-order time constant; vehicle_sim's default drive, 0.2 s and 0.4 s, is followed as well,
see ``test_tracking_prediction.py``). Without a command sent early enough to act, or with no
lag (``lead_time`` 0: no compensation for the vehicle's lag at all), the measured twist is held
(as before). The vehicle is assumed to do what it was told: where it does not
(a stop by a safety layer, its acceleration limits, the commands' own transit), the prediction
is off by the difference over the pose's age, which the feedback then corrects.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from wheelsim.core.geometry.se2 import Floats3, integrate_twist

#: The longest step (s) of the prediction's integration, unless the age needs more than
#: ``MAX_STEPS`` of them (besides one per command).
MAX_STEP_S = 0.05
MAX_STEPS = 100


class CommandHistory:
    """The commands (body twists) a controller sent, with their times (s), oldest first."""

    def __init__(self) -> None:
        self.times_s: list[float] = []
        self.twists: list[Floats3] = []

    def add(self, time_s: float, twist: Sequence[float]) -> None:
        """A command sent at ``time_s``; a time before the last one (the clock went back)
        forgets every earlier command first."""
        if self.times_s and time_s < self.times_s[-1]:
            self.clear()
        self.times_s.append(time_s)
        self.twists.append((float(twist[0]), float(twist[1]), float(twist[2])))

    def forget_before(self, time_s: float) -> None:
        """Drop the commands older than the one in force at ``time_s`` (it is kept)."""
        keep_from = bisect.bisect_right(self.times_s, time_s) - 1
        if keep_from > 0:
            del self.times_s[:keep_from]
            del self.twists[:keep_from]

    def clear(self) -> None:
        self.times_s.clear()
        self.twists.clear()

    def __len__(self) -> int:
        return len(self.times_s)


def predicted_pose(pose: Floats3, twist: Floats3, stamp_s: float, now_s: float,
                   commands: CommandHistory, lag_s: float) -> Floats3:
    """``pose`` (map frame) measured at ``stamp_s`` with the body ``twist``, moved on to
    ``now_s`` (see the module doc): the vehicle's twist follows each command of ``commands``
    ``lag_s / 2`` after it was sent, approaching it with the time constant ``lag_s / 2``;
    ``lag_s`` 0: ``twist`` held. ``now_s`` at or before ``stamp_s``: ``pose`` as it is."""
    if lag_s <= 0.0:
        return integrate_twist(*pose, *twist, now_s - stamp_s) if now_s > stamp_s else pose
    x, y, yaw = pose
    w = (float(twist[0]), float(twist[1]), float(twist[2]))
    dead_s = tau_s = 0.5 * lag_s
    times, twists = commands.times_s, commands.twists
    t = stamp_s
    max_step_s = max(MAX_STEP_S, (now_s - stamp_s) / MAX_STEPS)  # bounded work for any age
    # The command in force at t: the last one sent at or before t - dead_s (index k - 1).
    k = bisect.bisect_right(times, t - dead_s)
    while t < now_s:
        change = times[k] + dead_s if k < len(times) else math.inf
        end = min(now_s, change, t + max_step_s)
        h = end - t
        if h <= 0.0:  # the next command takes effect now (rounding)
            pass
        elif k > 0:
            u = twists[k - 1]
            if tau_s > 0.0:
                decay = math.exp(-h / tau_s)
                mean = tau_s / h * (1.0 - decay)  # mean of exp(-s / tau) over the step
                average = tuple(ui + (wi - ui) * mean for wi, ui in zip(w, u, strict=True))
                w = tuple(ui + (wi - ui) * decay for wi, ui in zip(w, u, strict=True))
            else:
                average = w = u
            # The mean twist over the step: its heading change is exact, its arc nearly so.
            x, y, yaw = integrate_twist(x, y, yaw, *average, h)
        else:
            x, y, yaw = integrate_twist(x, y, yaw, *w, h)
        t = end
        if end == change:
            k += 1
    return x, y, yaw
