"""The planner: a timed trajectory through the configured waypoints or to a goal pose.

Combines the pieces: :func:`bounded_path` (smooth path within the curvature bound),
resampling at the plan resolution, a heading profile for holonomic (omni) plans, and
:func:`time_scale` (schedule within the motion limits). Everything is in the map frame.

A plan from the vehicle's pose may be made on the way (a new goal while it drives): given its
velocity, the schedule starts at its speed along the path's first direction (none if it moves
the other way), so that the vehicle is not first slowed to rest and, being ahead of the
schedule, pulled back.
"""

from __future__ import annotations

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.config import PlannerConfig, waiting_for_vehicle
from wheelsim.core.planning.curvature import bounded_path, fallback_legs, turn_backs
from wheelsim.core.planning.path import DrivenPath, PathSamples, PlanningError
from wheelsim.core.planning.timing import (
    AT_REST,
    Velocity2D,
    start_speed,
    time_scale,
)
from wheelsim.core.planning.trajectory import Trajectory, joined
from wheelsim.core.planning.waypoints import (
    MIN_WAYPOINT_SPACING_M,
    Waypoints,
    check_workspace,
    pose_is_finite,
    validated,
    waypoints_from_flat,
)

#: The most a holonomic plan's heading turns between two of its poses [rad]: a controller
#: interpolating between them then sees the yaw rate ramp up and down as planned.
MAX_YAW_STEP_RAD = 0.05
#: Passes splitting a holonomic plan's segments until they turn within
#: :data:`MAX_YAW_STEP_RAD`: the heading's monotone cubic is nearly linear over a split
#: segment, so the second pass finds little left (tested).
YAW_STEP_PASSES = 3

def _heading_profile(s_m: FloatArray, knot_s_m: FloatArray, heading_rad: FloatArray) -> FloatArray:
    """Vehicle yaw along a holonomic path: through the given headings, shortest way round.

    Between given headings the yaw follows a monotone cubic (PCHIP, no overshoot); before the
    first and after the last it is held. At least one heading must be given.
    """
    from scipy.interpolate import PchipInterpolator  # on first use: docs/architecture.md

    given = np.isfinite(heading_rad)
    knots = knot_s_m[given]
    yaw = np.unwrap(heading_rad[given])
    if len(yaw) == 1:
        return np.full_like(s_m, yaw[0])
    return PchipInterpolator(knots, yaw)(np.clip(s_m, knots[0], knots[-1]))


def fallback_curvature(config: PlannerConfig) -> float:
    """The curvature bound (1/m) of fallback legs: ``limits.max_curvature``, or where that is
    0 (unbounded), the curvature at which the lateral acceleration limit allows only the top
    speed: max_lateral_acceleration / max_speed^2."""
    limits = config.limits
    return limits.max_curvature or limits.max_lateral_acceleration / limits.max_speed**2


def plan_through(
    waypoints: Waypoints, config: PlannerConfig, warnings: list[str] | None = None,
    start_velocity_mps: Velocity2D = AT_REST,
) -> Trajectory:
    """The time-optimal trajectory through ``waypoints`` within ``config.limits``; every
    waypoint is one of its samples. What the caller should know (fallback legs) is appended to
    ``warnings`` when given. A car allowed to reverse may get cusps: the schedule stops at each.
    ``start_velocity_mps`` (map frame) is the vehicle's at the first waypoint: the schedule
    starts at :func:`start_speed` and ends at rest.

    Raises :class:`PlanningError` (a ValueError) saying why when no trajectory exists.
    """
    waypoints = validated(waypoints)
    limits = config.limits
    check_workspace(waypoints.xy_m, limits.workspace_radius, 'point')
    waiting = waiting_for_vehicle(config)
    if waiting:
        raise PlanningError(
            f'the planner parameters {", ".join(waiting)} take their values from the vehicle: '
            'resolve the configuration with a vehicle description (with_vehicle) or set them')
    bound = (limits.max_curvature, fallback_curvature(config))
    if config.holonomic:
        return _holonomic(waypoints, config, bound, warnings, start_velocity_mps)
    path = bounded_path(waypoints, *bound, warnings, reverse=config.reverses)
    _check_size(path.length_m, config)
    return _schedule(path, config, start_velocity_mps)


def _holonomic(waypoints: Waypoints, config: PlannerConfig, bound: tuple[float, float],
               warnings: list[str] | None, start_velocity_mps: Velocity2D) -> Trajectory:
    """A holonomic plan: the path through ``waypoints`` with the directions of travel free
    (``bound``: the curvature bound and the fallback legs'), the heading profiled through the
    given headings apart from it. With ``allow_reverse`` the path stops at each waypoint where
    it turns back and at the ends of each leg the smooth curve cannot drive
    (:func:`_holonomic_stops`), a smooth curve between two stops; each part is timed to rest,
    the first from ``start_velocity_mps`` (:func:`start_speed`)."""
    stops = _holonomic_stops(waypoints, bound[0]) if config.reverses else []
    ends = [0, *stops, len(waypoints) - 1]
    paths = [bounded_path(_free_part(waypoints, first, last), *bound, warnings, first_index=first)
             for first, last in zip(ends[:-1], ends[1:], strict=True)]
    _check_size(sum(path.length_m for path in paths), config)
    starts_m = np.cumsum([0.0] + [path.length_m for path in paths[:-1]])
    knot_s_m = np.concatenate([paths[0].knot_s_m[:1]] + [
        path.knot_s_m[1:] + start_m for path, start_m in zip(paths, starts_m, strict=True)])
    heading = waypoints.heading_rad
    if not np.isfinite(heading).any():  # held at the path's first direction
        heading = np.concatenate([[paths[0].pieces[0].yaw_rad[0]], heading[1:]])
    resampled = [_holonomic_samples(path, start_m, knot_s_m, heading, config.path_resolution)
                 for path, start_m in zip(paths, starts_m, strict=True)]
    parts = [time_scale(part, config.limits.motion_limits(),
                        _heading_profile(part.s_m + start_m, knot_s_m, heading),
                        start_speed(start_velocity_mps, part.yaw_rad[0]) if k == 0 else 0.0)
             for k, (part, start_m) in enumerate(zip(resampled, starts_m, strict=True))]
    return parts[0] if len(parts) == 1 else joined(parts)


def _holonomic_samples(path: DrivenPath, start_m: float, knot_s_m: FloatArray,
                       heading_rad: FloatArray, spacing_m: float) -> PathSamples:
    """``path`` (a stretch of a holonomic plan starting ``start_m`` along it) resampled at
    ``spacing_m``, every waypoint a sample, and more samples where its heading profile
    (:func:`_heading_profile` of ``knot_s_m``, ``heading_rad``) turns by more than
    :data:`MAX_YAW_STEP_RAD` between two: a turn on the spot is a path of millimetres."""
    piece = path.pieces[0]
    samples = piece.resampled(spacing_m, path.knot_s_m)
    for _ in range(YAW_STEP_PASSES):  # each pass splits the segments evenly in arc length
        yaw = _heading_profile(samples.s_m + start_m, knot_s_m, heading_rad)
        splits = np.ceil(np.abs(np.diff(yaw)) / MAX_YAW_STEP_RAD).astype(int)
        if splits.max() <= 1:
            break
        extra = [np.linspace(a, b, n + 1)[1:-1] for a, b, n
                 in zip(samples.s_m[:-1], samples.s_m[1:], splits, strict=True) if n > 1]
        samples = piece.resampled(spacing_m, np.concatenate([samples.s_m, *extra]))
    return samples


def _free_part(waypoints: Waypoints, first: int, last: int) -> Waypoints:
    """Waypoints ``first`` .. ``last`` with their headings free."""
    return Waypoints(waypoints.xy_m[first:last + 1], np.full(last + 1 - first, np.nan))


def _holonomic_stops(waypoints: Waypoints, max_curvature_inv_m: float) -> list[int]:
    """The interior waypoints where a holonomic base stops: where the route turns back
    (:func:`turn_backs`), and the ends of each leg that the smooth curve between two stops
    cannot drive within ``max_curvature_inv_m`` (:func:`fallback_legs`), found again between
    the new stops until there is none: the base stops there and drives the leg straight,
    where any other vehicle takes a fallback leg (a loop for a sharp corner)."""
    stops = set(turn_backs(waypoints))
    while True:
        ends = [0, *sorted(stops), len(waypoints) - 1]
        new = {first + leg + end for first, last in zip(ends[:-1], ends[1:], strict=True)
               for leg in fallback_legs(_free_part(waypoints, first, last), max_curvature_inv_m)
               for end in (0, 1)}
        new = {i for i in new if 0 < i < len(waypoints) - 1} - stops
        if not new:
            return sorted(stops)
        stops |= new


def _schedule(path: DrivenPath, config: PlannerConfig,
              start_velocity_mps: Velocity2D) -> Trajectory:
    """Each piece resampled at the plan resolution (every waypoint a sample) and timed to rest,
    the first from ``start_velocity_mps`` (:func:`start_speed`), the others from rest; reversed
    pieces with the heading opposite to the direction of travel."""
    parts = []
    start_m = 0.0
    for piece, backwards in zip(path.pieces, path.reverse, strict=True):
        knots = path.knot_s_m - start_m
        inside = knots[(knots > 0.0) & (knots < piece.length_m)]
        resampled = piece.resampled(config.path_resolution, inside)
        speed_mps = start_speed(start_velocity_mps, resampled.yaw_rad[0]) if not parts else 0.0
        parts.append(time_scale(resampled, config.limits.motion_limits(reverse=backwards),
                                start_speed_mps=speed_mps, reverse=backwards))
        start_m += piece.length_m
    return parts[0] if len(parts) == 1 else joined(parts)


def _check_size(length_m: float, config: PlannerConfig) -> None:
    """Refuse a path that would need more than ``limits.max_plan_poses`` poses."""
    poses = length_m / config.path_resolution
    if not poses <= config.limits.max_plan_poses:
        raise PlanningError(
            f'the path is {length_m:.4g} m long: {poses:.3g} poses at path_resolution '
            f'{config.path_resolution:g} m, more than limits.max_plan_poses = '
            f'{config.limits.max_plan_poses}')


def plan_waypoints(
    config: PlannerConfig, current: Pose2D | None, warnings: list[str] | None = None,
    position_sd_m: float = 0.0, yaw_sd_rad: float = 0.0,
    start_velocity_mps: Velocity2D = AT_REST,
) -> Trajectory:
    """The trajectory through ``config.waypoints``, from ``current`` if the config says so
    (``warnings`` as for :func:`plan_through`; ``position_sd_m`` and ``yaw_sd_rad``: the
    standard deviations of ``current``, an estimate, for a first waypoint at the start:
    :meth:`Waypoints.with_start`; ``start_velocity_mps``: the vehicle's there, map frame, see
    :func:`plan_through`). A plan not from ``current`` starts at rest."""
    waypoints = waypoints_from_flat(config.waypoints)
    if len(waypoints) == 0:
        raise PlanningError('no waypoints are configured')
    if not config.start_at_current_pose:
        return plan_through(waypoints, config, warnings)
    if current is None or not pose_is_finite(current):
        raise PlanningError(f'the current pose is unknown or not finite: {current}')
    waypoints = waypoints.with_start(current, position_sd_m, yaw_sd_rad)
    return plan_through(waypoints, config, warnings, start_velocity_mps)


def plan_to_goal(
    config: PlannerConfig, current: Pose2D, goal: Pose2D, warnings: list[str] | None = None,
    start_velocity_mps: Velocity2D = AT_REST,
) -> Trajectory:
    """The trajectory from ``current`` to ``goal`` (its heading enforced; ``warnings`` as for
    :func:`plan_through`; ``start_velocity_mps``: the vehicle's at ``current``, map frame, see
    :func:`plan_through`)."""
    if not pose_is_finite(current):
        raise PlanningError(f'the current pose is not finite: {current}')
    if not pose_is_finite(goal):
        raise PlanningError(f'the goal pose is not finite: {goal}')
    distance = float(np.hypot(goal.x_m - current.x_m, goal.y_m - current.y_m))
    if distance < MIN_WAYPOINT_SPACING_M:
        raise PlanningError(
            f'the goal is {distance:.2g} m from the current position: nothing to plan '
            f'(at least {MIN_WAYPOINT_SPACING_M:g} m)'
        )
    waypoints = Waypoints(
        xy_m=np.array([[current.x_m, current.y_m], [goal.x_m, goal.y_m]]),
        heading_rad=np.array([current.yaw_rad, goal.yaw_rad]),
    )
    return plan_through(waypoints, config, warnings, start_velocity_mps)
