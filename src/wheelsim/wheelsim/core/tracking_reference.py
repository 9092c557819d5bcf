"""Where the vehicle is along a trajectory, and its tracking errors.

:class:`PathProgress` projects a point onto the trajectory's path (a polyline through its
samples). It remembers the last arc length found and searches near it first, so a path that
crosses itself (a figure-eight) is followed along the branch being driven, not the nearest one.
Frames: positions and headings in the planning frame (``map``); errors as below.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from wheelsim.core.planning_path import Pose2D, wrap_angle
from wheelsim.core.planning_trajectory import Trajectory

#: How far (m) behind and ahead of the last arc length the local search looks.
SEARCH_BEHIND_M = 1.0
SEARCH_AHEAD_M = 3.0
#: A local nearest point farther than this (m) triggers a search of the whole path.
RELOCATE_DISTANCE_M = 1.0


class BodyTwist(NamedTuple):
    """A velocity command of base_link: vx, vy (m/s) and wz (rad/s) in the body frame."""

    vx_mps: float
    vy_mps: float
    wz_radps: float


ZERO_TWIST = BodyTwist(0.0, 0.0, 0.0)


@dataclass(frozen=True)
class TrackingErrors:
    """How far the vehicle is from where it should be.

    - ``along_track_m``: arc length of the nearest path point minus the arc length scheduled
      for now (positive: ahead of schedule);
    - ``cross_track_m``: signed distance from the nearest path point, positive when the vehicle
      is left of the path (seen along the direction of travel);
    - ``heading_rad``: vehicle yaw minus the planned yaw at the nearest point, in [-pi, pi).
    """

    along_track_m: float
    cross_track_m: float
    heading_rad: float


class Projection(NamedTuple):
    """The nearest path point to a query point: arc length (m), position (m), direction of
    travel (rad, unwrapped) and the query's signed lateral offset (m, left positive)."""

    s_m: float
    x_m: float
    y_m: float
    path_yaw_rad: float
    offset_m: float


def project(trajectory: Trajectory, x_m: float, y_m: float, first: int, last: int) -> Projection:
    """The nearest point to (x, y) on the polyline segments ``first`` .. ``last - 1``.

    The path's first and last segments extend beyond its ends, so a vehicle behind the start
    or past the end gets an arc length below 0 or above the length (and its true distance).
    """
    xs, ys = trajectory.x_m[first : last + 1], trajectory.y_m[first : last + 1]
    dx, dy = np.diff(xs), np.diff(ys)
    length_sq = dx * dx + dy * dy
    with np.errstate(invalid='ignore', divide='ignore'):
        fraction = ((x_m - xs[:-1]) * dx + (y_m - ys[:-1]) * dy) / length_sq
    fraction = np.nan_to_num(fraction)
    low = np.zeros_like(fraction)
    high = np.ones_like(fraction)
    if first == 0:
        low[0] = -np.inf
    if last == len(trajectory.s_m) - 1:
        high[-1] = np.inf
    fraction = np.clip(fraction, low, high)
    px, py = xs[:-1] + fraction * dx, ys[:-1] + fraction * dy
    k = int(np.argmin((px - x_m) ** 2 + (py - y_m) ** 2))
    i = first + k
    s = trajectory.s_m[i] + fraction[k] * (trajectory.s_m[i + 1] - trajectory.s_m[i])
    yaw = float(np.interp(s, trajectory.s_m, trajectory.path_yaw_rad))
    offset = -math.sin(yaw) * (x_m - px[k]) + math.cos(yaw) * (y_m - py[k])
    return Projection(float(s), float(px[k]), float(py[k]), yaw, float(offset))


class PathProgress:
    """Progress of one point (base_link, or a steered axle) along one trajectory."""

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self._s_m: float | None = None

    @property
    def located(self) -> bool:
        """Whether a nearest point has been found before (a local search is possible)."""
        return self._s_m is not None

    def nearest(self, x_m: float, y_m: float, near_s_m: float | None = None) -> Projection:
        """The nearest path point, searched near ``near_s_m`` if given, else near the previous
        one (see the module doc); the whole path when neither exists or nothing is close."""
        s_all = self.trajectory.s_m
        last_segment = len(s_all) - 1
        around = self._s_m if near_s_m is None else near_s_m
        if around is not None:
            first = int(np.searchsorted(s_all, around - SEARCH_BEHIND_M)) - 1
            first = min(max(first, 0), last_segment - 1)
            last = int(np.searchsorted(s_all, around + SEARCH_AHEAD_M)) + 1
            local = project(
                self.trajectory, x_m, y_m, first, min(max(last, first + 1), last_segment)
            )
            if math.hypot(local.x_m - x_m, local.y_m - y_m) <= RELOCATE_DISTANCE_M:
                self._s_m = local.s_m
                return local
        found = project(self.trajectory, x_m, y_m, 0, last_segment)
        self._s_m = found.s_m
        return found


def tracking_errors(
    trajectory: Trajectory, nearest: Projection, pose: Pose2D, scheduled_s_m: float
) -> TrackingErrors:
    """Errors of ``pose`` whose nearest path point is ``nearest``, at the scheduled arc length."""
    planned_yaw = float(np.interp(nearest.s_m, trajectory.s_m, trajectory.yaw_rad))
    return TrackingErrors(
        along_track_m=nearest.s_m - scheduled_s_m,
        cross_track_m=nearest.offset_m,
        heading_rad=float(wrap_angle(pose.yaw_rad - planned_yaw)),
    )
