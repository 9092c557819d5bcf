"""Waypoints: positions the path must pass through, each with an optional heading.

ROS parameters cannot nest lists, so the ``waypoints`` parameter is a flat array of triples
``x, y, theta`` (metres, metres, radians in the map frame) with theta NaN where the heading is
free. In Python, waypoints may also be given as a list of ``[x, y]`` or ``[x, y, theta]``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.path import PlanningError

#: Consecutive waypoints closer than this (metres) are rejected as duplicates.
MIN_WAYPOINT_SPACING_M = 1e-3
#: A waypoint at the start position may differ this much from the vehicle's heading (rad).
START_HEADING_TOLERANCE_RAD = 1e-3
#: A first waypoint within this many standard deviations of the start pose's uncertainty (and
#: its heading, if given, within as many of the heading's) is taken as the start: a route written
#: from where the vehicle starts, which a noisy estimate places a few centimetres off.
START_REACHED_SIGMAS = 3.0
#: ... but never farther than these (m, rad; Nav2's default goal tolerances): a waypoint beyond
#: them is driven to, however uncertain the estimate (AMCL starts at 0.5 m).
START_REACHED_MAX_M, START_REACHED_MAX_RAD = 0.25, 0.25


@dataclass(frozen=True)
class Waypoints:
    """``xy_m`` is (N, 2) positions; ``heading_rad`` is (N,) with NaN where the heading is free."""

    xy_m: FloatArray
    heading_rad: FloatArray

    def __len__(self) -> int:
        return len(self.heading_rad)

    def with_start(self, pose: Pose2D, position_sd_m: float = 0.0,
                   yaw_sd_rad: float = 0.0) -> Waypoints:
        """These waypoints preceded by ``pose`` (its heading enforced). A first waypoint at
        ``pose``'s position is already reached and left out (a route written from where the
        vehicle starts): closer than :data:`START_REACHED_SIGMAS` times ``position_sd_m``, the
        standard deviation of ``pose``'s position (an estimate's), within
        [:data:`MIN_WAYPOINT_SPACING_M`, :data:`START_REACHED_MAX_M`]. PlanningError if it was
        the only one (nothing to plan), or if its heading is given and differs from ``pose``'s
        by more than as many times ``yaw_sd_rad``, within [:data:`START_HEADING_TOLERANCE_RAD`,
        :data:`START_REACHED_MAX_RAD`] (a path cannot turn on the spot)."""
        xy_m, heading_rad = self.xy_m, self.heading_rad
        reached_m = min(max(MIN_WAYPOINT_SPACING_M, START_REACHED_SIGMAS * position_sd_m),
                        START_REACHED_MAX_M)
        if len(xy_m) and math.hypot(xy_m[0, 0] - pose.x_m,
                                    xy_m[0, 1] - pose.y_m) < reached_m:
            where = (f'waypoint 0 ({xy_m[0, 0]:.3g}, {xy_m[0, 1]:.3g}) is the current position '
                     f'(within {reached_m:.3g} m)')
            turn = math.remainder(float(heading_rad[0]) - pose.yaw_rad, math.tau)
            turn_tolerance_rad = min(max(START_HEADING_TOLERANCE_RAD,
                                         START_REACHED_SIGMAS * yaw_sd_rad), START_REACHED_MAX_RAD)
            if abs(turn) > turn_tolerance_rad:  # NaN (free) is not
                raise PlanningError(
                    f'{where}, with heading {heading_rad[0]:.3g} rad where the vehicle\'s is '
                    f'{pose.yaw_rad:.3g} rad: a path cannot turn on the spot; free its heading '
                    '(.nan) or leave it out')
            if len(xy_m) == 1:
                raise PlanningError(f'{where}, and the only one: nothing to plan')
            xy_m, heading_rad = xy_m[1:], heading_rad[1:]
        return Waypoints(
            xy_m=np.vstack([[pose.x_m, pose.y_m], xy_m]),
            heading_rad=np.concatenate([[pose.yaw_rad], heading_rad]),
        )


def _check(xy_m: FloatArray, heading_rad: FloatArray, where: str) -> Waypoints:
    if len(heading_rad) < 2:
        raise PlanningError(f'{where}: a path needs at least 2 points, got {len(heading_rad)}')
    bad = np.flatnonzero(~np.isfinite(xy_m).all(axis=1))
    if bad.size:
        raise PlanningError(f'{where}: point {bad[0]} has a non-finite position {xy_m[bad[0]]}')
    bad = np.flatnonzero(np.isinf(heading_rad))
    if bad.size:
        raise PlanningError(f'{where}: point {bad[0]} has an infinite heading (use NaN for free)')
    gaps = np.hypot(*np.diff(xy_m, axis=0).T)
    close = np.flatnonzero(gaps < MIN_WAYPOINT_SPACING_M)
    if close.size:
        i = int(close[0])
        raise PlanningError(
            f'{where}: points {i} and {i + 1} are {gaps[i]:.2g} m apart '
            f'(at least {MIN_WAYPOINT_SPACING_M:g} m required)'
        )
    return Waypoints(xy_m=xy_m, heading_rad=heading_rad)


def waypoints_from_flat(flat: Sequence[float], where: str = 'waypoints') -> Waypoints:
    """Parse the flat ``x, y, theta`` triples of the ROS parameter (theta NaN = free heading).

    An empty array gives zero waypoints (no path is planned from it); otherwise the length must be
    a multiple of 3, a heading within [-2 pi, 2 pi] (more is taken for degrees given), and the
    result is validated like :func:`waypoints_from_lists` minus the two-point minimum (a single
    waypoint is fine when the path starts at the current pose).
    """
    values = np.asarray(flat, dtype=float)
    if values.size % 3:
        raise PlanningError(
            f'{where}: expected x, y, theta triples (theta .nan when free), got {values.size} '
            'numbers, not a multiple of 3'
        )
    triples = values.reshape(-1, 3)
    xy = triples[:, :2].copy()
    heading = triples[:, 2].copy()
    turns = np.flatnonzero(np.isfinite(heading) & (np.abs(heading) > 2.0 * np.pi))
    if turns.size:
        i = int(turns[0])
        raise PlanningError(
            f'{where}: point {i} has the heading {heading[i]:g}, more than a full turn: headings '
            f'are in radians, within [-2 pi, 2 pi] ({heading[i]:g} degrees would be '
            f'{np.radians(heading[i]):.4g})')
    if len(heading) < 2:
        if len(heading) == 1 and not np.isfinite(xy).all():
            raise PlanningError(f'{where}: point 0 has a non-finite position {xy[0]}')
        return Waypoints(xy_m=xy, heading_rad=heading)
    return _check(xy, heading, where)


def waypoints_from_lists(points: Sequence[Sequence[float]], where: str = 'waypoints') -> Waypoints:
    """Waypoints from ``[[x, y], [x, y, theta], ...]``: a heading is enforced only where given."""
    xy = np.full((len(points), 2), np.nan)
    heading = np.full(len(points), np.nan)
    for i, point in enumerate(points):
        if len(point) not in (2, 3):
            raise PlanningError(f'{where}: point {i} must be [x, y] or [x, y, theta], got {point}')
        xy[i] = point[:2]
        if len(point) == 3:
            heading[i] = point[2]
    return _check(xy, heading, where)


def validated(waypoints: Waypoints, where: str = 'waypoints') -> Waypoints:
    """``waypoints`` checked for a path: at least 2 points, finite, no duplicates."""
    return _check(waypoints.xy_m, waypoints.heading_rad, where)


def check_workspace(xy_m: FloatArray, radius_m: float, what: str) -> None:
    """Raise PlanningError naming the first point of ``xy_m`` (n, 2) [m] farther than
    ``radius_m`` from the origin (``limits.workspace_radius``)."""
    distance = np.hypot(xy_m[:, 0], xy_m[:, 1]) if len(xy_m) else np.zeros(0)
    outside = np.flatnonzero(~(distance <= radius_m))
    if len(outside):
        i = int(outside[0])
        raise PlanningError(
            f'{what} {i} at ({xy_m[i, 0]:.4g} m, {xy_m[i, 1]:.4g} m) is {distance[i]:.4g} m from '
            f'the origin, beyond limits.workspace_radius = {radius_m:g} m')


def pose_is_finite(pose: Pose2D) -> bool:
    """True when every field of ``pose`` is a finite number."""
    return all(math.isfinite(v) for v in pose)


def figure_eight(size_m: float = 14.0, count: int = 16) -> list[list[float]]:
    """Waypoints on a lemniscate of Bernoulli of half-width ``size_m`` (its largest curvature
    is 3 / size_m), starting and ending at its crossing, the origin. The first carries the
    heading of the curve there, the others are free: ``[[x, y, theta], [x, y], ...]``."""
    angle = np.linspace(np.pi / 2, np.pi / 2 + 2 * np.pi, count + 1)
    scale = size_m / (1.0 + np.sin(angle) ** 2)
    x, y = scale * np.cos(angle), scale * np.sin(angle) * np.cos(angle)
    x[[0, -1]] = y[[0, -1]] = 0.0
    start = -0.75 * math.pi  # the curve leaves the crossing towards (-1, -1)
    return [[0.0, 0.0, start]] + [[float(a), float(b)] for a, b in zip(x[1:], y[1:], strict=True)]
