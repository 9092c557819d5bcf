"""The planner: a timed trajectory through the configured waypoints or to a goal pose.

Combines the pieces: :func:`bounded_path` (smooth path within the curvature bound),
resampling at the plan resolution, a heading profile for holonomic (omni) plans, and
:func:`time_scale` (schedule within the motion limits). Everything is in the map frame.
"""

from __future__ import annotations

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.config import PlannerConfig, waiting_for_vehicle
from wheelsim.core.planning.curvature import bounded_path
from wheelsim.core.planning.path import DrivenPath, PlanningError
from wheelsim.core.planning.timing import time_scale
from wheelsim.core.planning.trajectory import Trajectory, joined
from wheelsim.core.planning.waypoints import (
    MIN_WAYPOINT_SPACING_M,
    Waypoints,
    check_workspace,
    pose_is_finite,
    validated,
    waypoints_from_flat,
)


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
    waypoints: Waypoints, config: PlannerConfig, warnings: list[str] | None = None
) -> Trajectory:
    """The time-optimal trajectory through ``waypoints`` within ``config.limits``; every
    waypoint is one of its samples. What the caller should know (fallback legs) is appended to
    ``warnings`` when given. A car allowed to reverse may get cusps: the schedule stops at each.

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
        free = Waypoints(waypoints.xy_m, np.full(len(waypoints), np.nan))
        path = bounded_path(free, *bound, warnings)
        _check_size(path.length_m, config)
        resampled = path.pieces[0].resampled(config.path_resolution, path.knot_s_m)
        heading = waypoints.heading_rad
        if not np.isfinite(heading).any():
            heading = np.concatenate([[resampled.yaw_rad[0]], heading[1:]])
        yaw = _heading_profile(resampled.s_m, path.knot_s_m, heading)
        return time_scale(resampled, limits.motion_limits(), yaw)
    path = bounded_path(waypoints, *bound, warnings, reverse=config.reverses)
    _check_size(path.length_m, config)
    return _schedule(path, config)


def _schedule(path: DrivenPath, config: PlannerConfig) -> Trajectory:
    """Each piece resampled at the plan resolution (every waypoint a sample) and timed from rest
    to rest, reversed pieces with the heading opposite to the direction of travel."""
    parts = []
    start_m = 0.0
    for piece, backwards in zip(path.pieces, path.reverse, strict=True):
        knots = path.knot_s_m - start_m
        inside = knots[(knots > 0.0) & (knots < piece.length_m)]
        resampled = piece.resampled(config.path_resolution, inside)
        heading = resampled.yaw_rad - np.pi if backwards else None
        parts.append(time_scale(resampled, config.limits.motion_limits(reverse=backwards),
                                heading))
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
) -> Trajectory:
    """The trajectory through ``config.waypoints``, from ``current`` if the config says so
    (``warnings`` as for :func:`plan_through`; ``position_sd_m`` and ``yaw_sd_rad``: the
    standard deviations of ``current``, an estimate, for a first waypoint at the start:
    :meth:`Waypoints.with_start`)."""
    waypoints = waypoints_from_flat(config.waypoints)
    if len(waypoints) == 0:
        raise PlanningError('no waypoints are configured')
    if config.start_at_current_pose:
        if current is None or not pose_is_finite(current):
            raise PlanningError(f'the current pose is unknown or not finite: {current}')
        waypoints = waypoints.with_start(current, position_sd_m, yaw_sd_rad)
    return plan_through(waypoints, config, warnings)


def plan_to_goal(
    config: PlannerConfig, current: Pose2D, goal: Pose2D, warnings: list[str] | None = None
) -> Trajectory:
    """The trajectory from ``current`` to ``goal`` (its heading enforced; ``warnings`` as for
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
    return plan_through(waypoints, config, warnings)
