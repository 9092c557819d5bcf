"""The control loop without ROS: a :class:`Vehicle` driven by a :class:`TrackingController`.

Every control period the controller sees the pose (optionally through a localization error
model) and the true body twist, and its command is held for the period while the vehicle steps
at its own fixed period. Used by the tests and the tracking benchmark; the same controller runs
in the ``controller`` node.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import Trajectory
from wheelsim.core.tracking.controller import GOAL_FAILED, GOAL_REACHED, TrackingController
from wheelsim.core.tracking.reference import BodyTwist, PathProgress, tracking_errors
from wheelsim.core.vehicle.model import Vehicle

#: Maps (true pose, true body twist, time in s) to the pose the controller is given.
PoseEstimator = Callable[[Pose2D, BodyTwist, float], Pose2D]


@dataclass(frozen=True)
class ClosedLoopResult:
    """One run, sampled at every control step.

    ``t_s`` time; ``x_m``, ``y_m``, ``yaw_rad`` the true pose; ``cross_track_m``,
    ``along_track_m``, ``heading_rad`` the errors of the true pose (whatever the controller saw);
    ``status`` and ``message`` how it ended; ``end_time_s`` when the goal was reached (or the
    run stopped). The last row is the vehicle at rest after the goal.
    """

    t_s: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    yaw_rad: FloatArray
    cross_track_m: FloatArray
    along_track_m: FloatArray
    heading_rad: FloatArray
    status: str
    message: str
    end_time_s: float

    @property
    def rms_cross_track_m(self) -> float:
        """Root mean square cross-track error over the run (m)."""
        return float(np.sqrt(np.mean(self.cross_track_m**2)))

    @property
    def max_cross_track_m(self) -> float:
        """Largest absolute cross-track error over the run (m)."""
        return float(np.max(np.abs(self.cross_track_m)))

    def final_error_m(self, goal: Pose2D) -> float:
        """Distance from the last true position to ``goal`` (m)."""
        return float(math.hypot(self.x_m[-1] - goal.x_m, self.y_m[-1] - goal.y_m))


def run_closed_loop(
    vehicle: Vehicle,
    controller: TrackingController,
    trajectory: Trajectory,
    max_duration_s: float,
    estimator: PoseEstimator | None = None,
    settle_s: float = 2.0,
) -> ClosedLoopResult:
    """Follow ``trajectory`` (time 0 = now) until the goal is reached or failed, or for at most
    ``max_duration_s`` simulated seconds. The control period is the controller's
    ``1 / control_rate``, rounded to whole vehicle steps. After the goal (reached or given up)
    the vehicle runs ``settle_s`` more with zero command; the last row is where it came to rest
    (its errors repeat the previous row's)."""
    steps = max(1, round(1.0 / (controller.config.control_rate * vehicle.step_period_s)))
    period_s = steps * vehicle.step_period_s
    controller.follow(trajectory, 0.0)
    truth_progress = PathProgress(trajectory)
    held = trajectory.legs[0]
    rows: list[tuple[float, ...]] = []
    status, message, now_s = 'running', '', 0.0
    while now_s <= max_duration_s:
        state = vehicle.state()
        truth = Pose2D(state.x_m, state.y_m, state.yaw_rad)
        scheduled_s = trajectory.value_at_time(now_s, 's_m')
        leg = controller.leg
        if leg is not None and leg != held:  # the truth on the leg the controller drives
            truth_progress.hold_to(leg.first, leg.last)
            held = leg
        nearest = truth_progress.nearest(
            truth.x_m, truth.y_m, None if truth_progress.located else scheduled_s
        )
        errors = tracking_errors(nearest, truth, scheduled_s)
        rows.append((now_s, *truth, errors.cross_track_m, errors.along_track_m, errors.heading_rad))
        twist = BodyTwist(state.vx_mps, state.vy_mps, state.wz_radps)
        seen = truth if estimator is None else estimator(truth, twist, now_s)
        step = controller.step(now_s, seen, twist)
        if step.status in (GOAL_REACHED, GOAL_FAILED):
            status, message = step.status, step.message
            vehicle.set_command(0.0, 0.0, 0.0)
            vehicle.step(round(settle_s / vehicle.step_period_s))
            state = vehicle.state()
            rows.append((now_s + settle_s, state.x_m, state.y_m, state.yaw_rad, *rows[-1][4:]))
            break
        command = step.command or BodyTwist(0.0, 0.0, 0.0)
        vehicle.set_command(*command)
        vehicle.step(steps)
        now_s += period_s
    columns = np.array(rows).T
    return ClosedLoopResult(*columns, status=status, message=message, end_time_s=now_s)
