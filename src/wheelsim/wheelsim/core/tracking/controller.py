"""The controller: follows one trajectory with the configured law, limits, and goal handling.

:class:`TrackingController` is stepped at the control rate with the time (seconds on the
caller's clock), the pose (map frame) and optionally the measured body twist (odometry). Each
step returns the command to publish (or None: publish nothing), the tracking errors and the
status. The trajectory's time 0 is ``start_time_s`` on the same clock; when the vehicle falls
more than ``max_schedule_lag`` behind the schedule (a late start, a stall), time 0 moves later
so that the schedule waits for it. The time it waited counts towards ``goal.timeout``. Across a
gap between steps (or between the start and the first step) longer than ten control periods
(the clock jumped, the caller stalled) or a jump back in time, the schedule advances by one
period only.

A vehicle that turns on the spot (not a car), under a law that is not a policy, that starts a
leg facing farther than ``TURN_FIRST_RAD`` from it (a plan leaving behind it) turns on the spot
first, the schedule waiting, until it faces within ``TURN_DONE_RAD`` turning no faster than
``goal.max_yaw_rate``; a turn goes on into the next plan (a replan). A car drives the leg as it
is.

When the vehicle turns up far from its previous point on the path (put back by a restarted
simulator, relocalised), it is found again where it faces along the path, and the schedule goes
on from there (no wait is counted).

Goal: reached when the schedule has ended (pure pursuit: at once), base_link has progressed to
within ``goal.xy_tolerance`` of the path's end, is that close to the final position (a
vehicle that finishes point to point, below: has been, moving no faster than
``goal.max_speed``; once is enough, so that a pose estimate noisier than the tolerance does not
turn it back towards the point again and again, as Nav2's ``SimpleGoalChecker`` with its default
``stateful: true``, navigation2 1.3.13 and 1.4.2), moves no
faster than ``goal.max_speed`` and turns no faster than ``goal.max_yaw_rate`` (measured;
faster, a stop is commanded first, or the turn onto the final heading slowed), and
(vehicles that can turn on the spot) within
``goal.yaw_tolerance`` of the final heading; a vehicle at the final position but not yet at its
heading turns on the spot; a differential vehicle still off the final position when its schedule
has ended drives there point to point (:mod:`tracking_point`). On reaching the goal a zero
command is returned once and the trajectory is dropped. If the goal is not reached
``goal.timeout`` after the planned arrival (or the schedule has waited that long for the
vehicle), a zero command is returned once, the trajectory dropped and the status says so.

Reversing: a trajectory with cusps is followed leg by leg (:attr:`Trajectory.legs`). Base_link
is matched with the leg being driven only, so a path folding back on itself is followed on the
right branch. The next leg begins once the vehicle is at the cusp (within ``goal.xy_tolerance``
or past it) or, for the schedule-following laws, once the schedule has passed the cusp and the
vehicle moves the new way. Every law drives a reversed leg backwards (feedforward with the plan's
negative speed, pure pursuit towards a point behind, Stanley steering a point ``wheel_base``
behind base_link, see :mod:`tracking_stanley`); a policy (``algorithm: policy``,
:mod:`wheelsim.core.tracking.policy`) gets the path-tracking observation of the leg being
driven and is trusted with the direction.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import MAX_COORDINATE_M, Pose2D
from wheelsim.core.planning.path import PlanningError
from wheelsim.core.planning.timing import (
    AT_REST,
    MOVING_MPS,
    MotionLimits,
    Velocity2D,
    start_speed,
    time_scale,
)
from wheelsim.core.planning.trajectory import (
    Leg,
    Trajectory,
    TrajectoryPoint,
    joined,
    legs_of,
    path_from_points,
    trajectory_from_poses,
)
from wheelsim.core.tracking.config import ControllerConfig, waiting_for_vehicle
from wheelsim.core.tracking.feedforward import feedforward_twist
from wheelsim.core.tracking.limits import limit_twist
from wheelsim.core.tracking.point import point_to_point_twist
from wheelsim.core.tracking.policy import Policy, action_twist, load_policy, path_observations
from wheelsim.core.tracking.pure_pursuit import pure_pursuit_twist
from wheelsim.core.tracking.reference import (
    ZERO_TWIST,
    BodyTwist,
    PathProgress,
    Projection,
    TrackingErrors,
    resume_arc_length,
    tracking_errors,
)
from wheelsim.core.tracking.stanley import (
    stanley_twist,
    steered_point,
    steered_point_trajectory,
)

IDLE = 'idle'
TRACKING = 'tracking'
GOAL_REACHED = 'goal_reached'
GOAL_FAILED = 'goal_failed'
#: A plan reaching farther from the origin is broken (vehicle_sim's poses stay within 1e9 m).
MAX_PLAN_COORDINATE_M = 1e6
#: A vehicle that turns on the spot and starts a leg facing farther from it than this turns
#: towards it first (Nav2's regulated pure pursuit: rotate_to_heading_min_angle, 0.785 rad by
#: default, parameter_handler.cpp of navigation2 1.3.13 and 1.4.2).
TURN_FIRST_RAD = math.pi / 4
#: ... and the law takes over once it faces within this of the leg, its turn slowed (the drive's
#: lag carries a turn on; handed over at TURN_FIRST_RAD, the vehicle swung 0.1 m off the path).
TURN_DONE_RAD = 0.1
#: A plan without times or headings (a grid planner's) is driven along the direction of its
#: chords this long (:func:`path_from_points`): the real NavFn's paths turn 30 degrees within
#: 5 cm of their start (the start cell's centre joined to the descent), whose curvature, taken
#: pose by pose, held each replan's start to 0.2 m/s; over this chord it allows 0.6 m/s. A plan
#: with headings (a planner of smooth, feasible paths: a car's legs may be shorter than the
#: chord) keeps the curvature of its poses.
UNTIMED_CHORD_M = 0.5


class ControlStep(NamedTuple):
    """What one control step decided: ``command`` (None: publish nothing), ``errors`` (None
    without a trajectory), ``status`` (one of IDLE, TRACKING, GOAL_REACHED, GOAL_FAILED) and a
    human-readable ``message`` when the status changed."""

    command: BodyTwist | None
    errors: TrackingErrors | None
    status: str
    message: str = ''


def trajectory_from_plan(
    t_s: ArrayLike, x_m: ArrayLike, y_m: ArrayLike, yaw_rad: ArrayLike, config: ControllerConfig,
    start_velocity_mps: Velocity2D = AT_REST, vehicle_yaw_rad: float | None = None,
) -> tuple[Trajectory, bool]:
    """The trajectory of a received plan, and whether the plan carried its own schedule.

    Strictly increasing times give the planned schedule. Otherwise (a plan without times, such
    as Nav2's) the path is timed here within the output speed (backwards on a reversing leg) and
    yaw rate limits and the ``untimed_plans`` accelerations, each leg (:func:`legs_of`) to rest,
    the first from the vehicle's speed along it (``start_velocity_mps``, map frame:
    :func:`start_speed`), the others from rest, facing along the path (without headings: along
    its chords of :data:`UNTIMED_CHORD_M`; backwards on a leg whose steps point against its
    poses' headings). Poses all at heading 0 but the last (or NaN: a zero quaternion) carry no
    headings, as Nav2's grid planners (NavFn, Smac 2D, Theta*) fill them: the first leg is then
    driven forwards, but by a car (model bicycle, which cannot turn on the spot) facing away
    from it at ``vehicle_yaw_rad`` (map frame, if given) backwards, and each cusp flips the
    direction. Raises :class:`PlanningError` for an unusable plan.
    """
    largest = max((float(np.max(np.abs(v), initial=0.0)) for v in (x_m, y_m)), default=0.0)
    if not largest <= MAX_PLAN_COORDINATE_M:
        raise PlanningError(f'plan coordinates reach {largest:.3g} m, beyond '
                            f'{MAX_PLAN_COORDINATE_M:g} m (a broken plan)')
    t = np.asarray(t_s, dtype=float)
    if len(t) >= 2 and np.isfinite(t).all() and (np.diff(t) > 0).all():
        return trajectory_from_poses(t, x_m, y_m, yaw_rad), True
    motion = MotionLimits(
        max_speed_mps=config.limits.max_linear_x,
        max_acceleration_mps2=config.untimed_plans.max_acceleration,
        max_lateral_acceleration_mps2=config.untimed_plans.max_lateral_acceleration,
        max_yaw_rate_radps=config.limits.max_angular_z,
    )
    # a reversing leg within the backward limit (none: reversing_refused says why it stops)
    backward = (replace(motion, max_speed_mps=-config.limits.min_linear_x)
                if config.limits.min_linear_x < 0.0 else motion)
    x, y, yaw = (np.asarray(v, dtype=float) for v in (x_m, y_m, yaw_rad))
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise PlanningError('path has no points or non-finite coordinates')
    headings = None if np.all(np.nan_to_num(yaw[:-1]) == 0.0) else np.nan_to_num(yaw)
    first_reverse = False
    if headings is None and config.model == 'bicycle' and vehicle_yaw_rad is not None:
        moving = np.flatnonzero(np.hypot(np.diff(x), np.diff(y)) > 0)
        if len(moving):
            k = moving[0]
            first_reverse = bool((x[k + 1] - x[k]) * math.cos(vehicle_yaw_rad)
                                 + (y[k + 1] - y[k]) * math.sin(vehicle_yaw_rad) < 0.0)
    parts = []
    for leg in legs_of(x, y, headings, first_reverse):
        path = path_from_points(x[leg.first:leg.last + 1], y[leg.first:leg.last + 1],
                                None if headings is not None else UNTIMED_CHORD_M)
        # the direction of travel (path.yaw_rad), which a reversing vehicle's velocity takes too
        speed_mps = 0.0 if parts else start_speed(start_velocity_mps, path.yaw_rad[0])
        parts.append(time_scale(path, backward if leg.reverse else motion,
                                start_speed_mps=speed_mps, reverse=leg.reverse))
    return (parts[0] if len(parts) == 1 else joined(parts)), False


def reversing_refused(trajectory: Trajectory, config: ControllerConfig) -> str | None:
    """Why the controller cannot drive ``trajectory`` as planned, or None: it has a reversing
    leg, and ``limits.min_linear_x`` (>= 0) allows no backward speed, so the vehicle stops
    where it should back up and the goal times out."""
    min_linear_x = config.limits.min_linear_x
    reversing = [k for k, leg in enumerate(trajectory.legs) if leg.reverse]
    if not reversing or min_linear_x < 0.0:
        return None
    return (f'leg {reversing[0] + 1} of {len(trajectory.legs)} reverses, and limits.min_linear_x '
            f'= {min_linear_x:g} m/s allows no reversing: the vehicle will stop where it should '
            'back up (set limits.min_linear_x < 0, or plan without reversing)')


@dataclass
class _Following:
    """The trajectory being followed, its time 0 on the caller's clock, the leg being driven,
    the progress of base_link along it and of the steered point along its own path (Stanley),
    and whether a vehicle that finishes point to point has come to the final position at no
    more than ``goal.max_speed`` (then it stays there: only the heading and the rest are
    checked, as Nav2's stateful goal checker does)."""

    trajectory: Trajectory
    start_time_s: float
    progress: PathProgress
    front_progress: PathProgress | None = None  # built when Stanley first needs it
    leg: int = 0
    waited_s: float = 0.0
    at_final_position: bool = False
    final_yaw_rad: float | None = None  # None: the trajectory's last heading
    aligned: bool = False  # the leg's start needs no turn on the spot, or it is done
    turning: bool = False  # it began with one


class TrackingController:
    """Follows one trajectory at a time (see the module doc)."""

    def __init__(self, config: ControllerConfig) -> None:
        waiting = waiting_for_vehicle(config)
        if waiting:
            raise ValueError(
                f'the controller parameters {", ".join(waiting)} take their values from the '
                'vehicle: resolve the configuration with a vehicle description (with_vehicle) '
                'or set them')
        self.config = config
        self._policy: Policy | None = None  # algorithm policy: loaded at its first step
        self._following: _Following | None = None
        self._previous = ZERO_TWIST
        self._previous_time_s: float | None = None

    @property
    def trajectory(self) -> Trajectory | None:
        """The trajectory being followed, or None."""
        return None if self._following is None else self._following.trajectory

    @property
    def leg(self) -> Leg | None:
        """The leg being driven, or None."""
        following = self._following
        return None if following is None else following.trajectory.legs[following.leg]

    @property
    def at_final_position(self) -> bool:
        """Whether the vehicle has come to the final position of the trajectory followed (one
        that finishes point to point, see the module doc): only the goal's heading is left."""
        return self._following is not None and self._following.at_final_position

    def follow(self, trajectory: Trajectory, start_time_s: float, leg: int = 0,
               final_yaw_rad: float | None = None) -> None:
        """Follow ``trajectory`` from now on, from its leg ``leg``; its time 0 is
        ``start_time_s``. ``final_yaw_rad``: the heading (map frame) a vehicle that turns on the
        spot turns onto at the goal, and the goal's heading (None: the trajectory's last, as a
        plan without times ends facing along the path, while its last pose may give another)."""
        previous = self._following  # a turn on the spot goes on into a replan
        turning = previous is not None and previous.turning and not previous.aligned
        self._following = _Following(trajectory, start_time_s, PathProgress(trajectory),
                                     final_yaw_rad=final_yaw_rad)
        self._enter_leg(self._following, leg)
        self._following.turning = turning
        # The first step is measured from the start, so a first step long after it (a stale
        # clock when the plan came) starts the schedule one period in, like any gap.
        self._previous_time_s = start_time_s

    def _enter_leg(self, following: _Following, index: int) -> None:
        """Drive leg ``index`` from now on: base_link is matched with it only (Stanley's
        steered point gets the leg's own path when next needed)."""
        leg = following.trajectory.legs[index]
        following.leg = index
        following.aligned = following.turning = False
        following.progress.hold_to(leg.first, leg.last)
        following.front_progress = None

    def follow_from_nearest(self, trajectory: Trajectory, now_s: float, pose: Pose2D,
                            stamped_s: float | None = None) -> float:
        """Follow ``trajectory`` with its schedule placed so that now is the time of the path
        point where ``pose`` resumes it (:func:`resume_arc_length`: nearest in position and
        heading; of near-equal points, the one nearest to ``stamped_s``, the time into the path
        its own stamps place now): a vehicle already partway along the path goes on from there
        (a restarted controller given a latched plan), never back to the start. Returns the
        planned time (s) the schedule starts at."""
        resumed_m = resume_arc_length(trajectory, pose, stamped_s)
        planned_s = trajectory.value_at_arc_length(resumed_m, 't_s')
        leg = next(k for k, leg in enumerate(trajectory.legs)
                   if trajectory.s_m[leg.last] >= resumed_m or k == len(trajectory.legs) - 1)
        self.follow(trajectory, now_s - planned_s, leg)
        self._previous_time_s = now_s  # a schedule placed now: no gap to make up at the step
        return planned_s

    def turn_onto(self, final_yaw_rad: float) -> None:
        """Take ``final_yaw_rad`` (map frame) as the goal's heading of the trajectory being
        followed (as :meth:`follow`'s ``final_yaw_rad``), if any: a plan of one pose at its
        goal."""
        if self._following is not None:
            self._following.final_yaw_rad = final_yaw_rad

    def stop(self) -> None:
        """Drop the trajectory (the next steps are idle; the caller commands a stop, from which
        the next trajectory starts)."""
        self._following = None
        self._previous = ZERO_TWIST

    def hold(self, now_s: float) -> None:
        """Keep the schedule where it was at the previous step (no pose to act on now): it
        resumes from there; this is not counted as waiting for the vehicle."""
        previous_s = self._previous_time_s
        if self._following is not None and previous_s is not None and now_s > previous_s:
            self._following.start_time_s += now_s - previous_s
        self._previous_time_s = now_s
        self._previous = ZERO_TWIST

    def step(self, now_s: float, pose: Pose2D, measured: BodyTwist | None = None) -> ControlStep:
        """One control step at time ``now_s`` from ``pose``; ``measured`` is the body twist.

        Raises ValueError for a non-finite time or yaw, or a pose with x or y not within
        +-:data:`~wheelsim.core.geometry.se2.MAX_COORDINATE_M` (NaN included; nothing changes
        then), and
        :class:`~wheelsim.core.tracking.policy.PolicyError` (a ValueError) when a policy returns
        no action (the schedule has moved on to now).
        """
        if not (math.isfinite(now_s) and abs(pose[0]) <= MAX_COORDINATE_M
                and abs(pose[1]) <= MAX_COORDINATE_M and math.isfinite(pose[2])):
            raise ValueError(f'time and pose must be finite, with x and y within '
                             f'+-{MAX_COORDINATE_M:g} m; got {now_s}, {pose}')
        following = self._following
        previous_s = self._previous_time_s
        period_s = self._period(now_s)
        if following is None:
            return ControlStep(None, None, IDLE)
        if previous_s is not None and now_s - previous_s != period_s:
            # A gap (the caller did not step, its clock jumped) or time going back: the
            # schedule moves on by one period only, as if no time had passed in between.
            following.start_time_s += now_s - previous_s - period_s
        trajectory = following.trajectory
        t_s = now_s - following.start_time_s
        scheduled = trajectory.at_time(t_s)
        # The first search starts at the scheduled point: a path may cross itself there. A
        # vehicle found far from where it was (put back at its start by a restarted simulator,
        # a relocalised pose) resumes the path where it faces along it, on a schedule from there.
        progress = following.progress
        nearest = progress.nearest(pose.x_m, pose.y_m, None if progress.located else scheduled.s_m,
                                   yaw_rad=pose.yaw_rad)
        if progress.relocated and math.isfinite(nearest.s_m):  # the schedule goes on from there
            t_s = trajectory.value_at_arc_length(nearest.s_m, 't_s')
            following.start_time_s = now_s - t_s
            scheduled = trajectory.at_time(t_s)
        if following.leg + 1 < len(trajectory.legs) and self._at_cusp(
                following, nearest, pose, t_s, measured):
            self._enter_leg(following, following.leg + 1)
            nearest = progress.nearest(pose.x_m, pose.y_m)
        max_lag = self.config.max_schedule_lag
        if 0 < max_lag < scheduled.s_m - nearest.s_m:  # too far behind: the schedule waits
            waiting_t_s = trajectory.value_at_arc_length(nearest.s_m + max_lag, 't_s')
            following.waited_s += t_s - waiting_t_s
            following.start_time_s, t_s = now_s - waiting_t_s, waiting_t_s
            scheduled = trajectory.at_time(t_s)
        errors = tracking_errors(nearest, pose, scheduled.s_m)
        end = trajectory.end()
        goal_distance_m = math.hypot(pose.x_m - end.x_m, pose.y_m - end.y_m)
        final_yaw_rad = end.yaw_rad if following.final_yaw_rad is None else \
            following.final_yaw_rad
        goal_yaw_error = float(wrap_angle(final_yaw_rad - pose.yaw_rad))
        goal = self.config.goal
        # Schedule-following laws arrive with the schedule (at its final speed, zero);
        # pure pursuit arrives when it gets there.
        arrived = self.config.algorithm == 'pure_pursuit' or t_s >= trajectory.duration_s
        at_end = following.at_final_position or (
            arrived
            and nearest.s_m >= trajectory.length_m - goal.xy_tolerance
            and goal_distance_m <= goal.xy_tolerance
        )
        driving = (measured is not None and goal.max_speed > 0
                   and math.hypot(measured.vx_mps, measured.vy_mps) > goal.max_speed)
        # Come there at the end of the schedule, the position holds: only the heading is left.
        following.at_final_position = (at_end and not driving
                                       and self._finishes_point_to_point())
        turns_on_spot = self.config.model != 'bicycle'
        moving = driving or (measured is not None and goal.max_yaw_rate > 0
                             and abs(measured.wz_radps) > goal.max_yaw_rate)
        if at_end and not moving and (
                not turns_on_spot or abs(goal_yaw_error) <= goal.yaw_tolerance):
            return self._finish(
                errors,
                GOAL_REACHED,
                f'goal reached: {goal_distance_m:.3f} m, {goal_yaw_error:+.3f} rad from the '
                'final pose',
            )
        late_s = max(t_s - trajectory.duration_s, following.waited_s)
        if late_s > goal.timeout:
            return self._finish(
                errors,
                GOAL_FAILED,
                f'goal not reached {goal.timeout:g} s after the planned arrival (the schedule '
                f'waited {following.waited_s:.1f} s for the vehicle): {goal_distance_m:.3f} m, '
                f'{goal_yaw_error:+.3f} rad from the final pose',
            )
        if at_end:  # at the final position: stop; not yet at its heading: turn on the spot
            command = BodyTwist(0.0, 0.0, self._heading_gain() * goal_yaw_error
                                if turns_on_spot else 0.0)
        elif self._finishes_point_to_point() and t_s >= trajectory.duration_s:
            command = point_to_point_twist(
                end.x_m, end.y_m, pose, self.config.feedforward.k_x, self._heading_gain()
            )
        elif self._turns_first(following, errors, measured):  # the schedule waits meanwhile
            following.start_time_s += period_s
            command = BodyTwist(0.0, 0.0, -self._heading_gain() * errors.heading_rad)
        else:
            command = self._law(following, nearest, pose, scheduled, errors, measured, now_s)
        command = limit_twist(
            command,
            self._previous,
            period_s,
            self.config.limits,
            holonomic=self.config.model == 'omni',
            max_curvature_inv_m=self.config.max_curvature_inv_m,
        )
        self._previous = command
        return ControlStep(command, errors, TRACKING)

    def _at_cusp(self, following: _Following, nearest: Projection, pose: Pose2D, t_s: float,
                 measured: BodyTwist | None) -> bool:
        """Whether the leg being driven is done: the vehicle is at its end (the cusp) or past
        it, or (schedule-following laws) the schedule has passed the cusp and the vehicle moves
        the way of the next leg."""
        trajectory = following.trajectory
        legs = trajectory.legs
        cusp = legs[following.leg].last
        if nearest.s_m >= trajectory.s_m[cusp] or math.hypot(
                pose.x_m - trajectory.x_m[cusp],
                pose.y_m - trajectory.y_m[cusp]) <= self.config.goal.xy_tolerance:
            return True
        if self.config.algorithm == 'pure_pursuit' or t_s < trajectory.t_s[cusp]:
            return False
        speed = self._previous.vx_mps if measured is None else measured.vx_mps
        next_direction = -1.0 if legs[following.leg + 1].reverse else 1.0
        return speed * next_direction > MOVING_MPS

    def _period(self, now_s: float) -> float:
        """Time since the previous step, or the nominal period after a gap or a jump back."""
        nominal = 1.0 / self.config.control_rate
        previous, self._previous_time_s = self._previous_time_s, now_s
        if previous is None or not 0.0 < now_s - previous < 10.0 * nominal:
            return nominal
        return now_s - previous

    def _finishes_point_to_point(self) -> bool:
        """Differential vehicles under a schedule-following law end off the goal point to point:
        with the schedule at rest the law cannot remove a sideways error (omni can, pure
        pursuit keeps driving to the end, a car cannot turn on the spot, a policy drives on)."""
        return (self.config.model == 'differential'
                and self.config.algorithm in ('feedforward', 'stanley'))

    def _turns_first(self, following: _Following, errors: TrackingErrors,
                     measured: BodyTwist | None) -> bool:
        """Whether the vehicle turns on the spot towards the leg it starts: it can (not a car),
        the law is not a policy (trusted with the direction), and it started the leg facing
        farther than :data:`TURN_FIRST_RAD` from it (a plan leaving behind or beside it, as
        Nav2's planners give from where the vehicle stands) and has not yet come within
        :data:`TURN_DONE_RAD`, turning (measured) no faster than ``goal.max_yaw_rate``."""
        if following.aligned or self.config.model == 'bicycle' or \
                self.config.algorithm == 'policy':
            return False
        error = abs(errors.heading_rad)
        following.turning = following.turning or error > TURN_FIRST_RAD
        if following.turning:
            max_yaw_rate = self.config.goal.max_yaw_rate
            settled = measured is None or max_yaw_rate <= 0 or \
                abs(measured.wz_radps) <= max_yaw_rate
            following.aligned = error <= TURN_DONE_RAD and settled
        else:
            following.aligned = True
        return not following.aligned

    def _heading_gain(self) -> float:
        if self.config.algorithm == 'pure_pursuit':
            return self.config.pure_pursuit.k_theta
        return self.config.feedforward.k_theta

    def _finish(self, errors: TrackingErrors, status: str, message: str) -> ControlStep:
        self._following = None
        self._previous = ZERO_TWIST
        return ControlStep(ZERO_TWIST, errors, status, message)

    def _law(
        self,
        following: _Following,
        nearest: Projection,
        pose: Pose2D,
        scheduled: TrajectoryPoint,
        errors: TrackingErrors,
        measured: BodyTwist | None,
        now_s: float,
    ) -> BodyTwist:
        config = self.config
        trajectory = following.trajectory
        ahead = trajectory.at_time(now_s - following.start_time_s + config.lead_time)
        if config.algorithm == 'feedforward':
            return feedforward_twist(
                scheduled, pose, config.feedforward, config.model == 'omni', ahead
            )
        if config.algorithm == 'policy':
            return self._policy_twist(trajectory, nearest, pose, errors, measured, ahead)
        speed_mps = self._previous.vx_mps if measured is None else measured.vx_mps
        leg = trajectory.legs[following.leg]
        if config.algorithm == 'pure_pursuit':
            return pure_pursuit_twist(
                trajectory,
                nearest,
                pose,
                speed_mps,
                config.pure_pursuit,
                config.model,
                config.lead_time,
                end_s_m=float(trajectory.s_m[leg.last]),
                reverse=leg.reverse,
            )
        if following.front_progress is None:
            following.front_progress = PathProgress(
                steered_point_trajectory(trajectory, config.wheel_base, leg))
        front_path = following.front_progress.trajectory
        leg_s = trajectory.s_m[leg.first:leg.last + 1]
        front = following.front_progress.nearest(
            *steered_point(pose, config.wheel_base, leg.reverse),
            float(np.interp(nearest.s_m, leg_s, front_path.s_m)),
        )
        return stanley_twist(
            front,
            pose,
            ahead.vx_mps,
            errors.along_track_m,
            speed_mps,
            config.stanley,
            config.wheel_base,
            config.max_steering_angle,
            reverse=leg.reverse,
        )

    def _policy_twist(self, trajectory: Trajectory, nearest: Projection, pose: Pose2D,
                      errors: TrackingErrors, measured: BodyTwist | None,
                      ahead: TrajectoryPoint) -> BodyTwist:
        """The policy's action on this step's observation (:mod:`wheelsim.core.tracking.policy`)."""
        if self._policy is None:
            self._policy = load_policy(self.config.policy.callable)
        preview_yaw_rad = trajectory.value_at_arc_length(
            nearest.s_m + self.config.policy.preview_distance, 'yaw_rad')
        observation = path_observations(
            errors.cross_track_m, errors.heading_rad, errors.along_track_m,
            [measured or ZERO_TWIST], wrap_angle(preview_yaw_rad - pose.yaw_rad),
            [(ahead.vx_mps, ahead.vy_mps, ahead.wz_radps)])[0]
        return action_twist(self._policy(observation), self.config.model == 'omni')
