"""Where the vehicle is along a trajectory, and its tracking errors.

:class:`PathProgress` projects a point onto the trajectory's path (a polyline through its
samples). It remembers the last arc length found and searches near it first, so a path that
crosses itself (a figure-eight) is followed along the branch being driven, not the nearest one.
The search over the segments is compiled (:mod:`wheelsim.core.tracking.projection`); the
nearest point comes with the plan's heading there, from which :func:`tracking_errors` takes the
heading error. Frames: positions and headings in the planning frame (``map``); errors as below.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from wheelsim.core.geometry.angles import wrap_angle, wrap_angles
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import Trajectory
from wheelsim.core.tracking.projection import nearest_around, nearest_on_segments

#: How far (m) behind and ahead of the last arc length the local search looks.
SEARCH_BEHIND_M = 1.0
SEARCH_AHEAD_M = 3.0
#: A local nearest point farther than this (m) triggers a search of the whole path.
RELOCATE_DISTANCE_M = 1.0
#: Where a vehicle resumes a path: metres of distance one radian of heading mismatch weighs as.
RESUME_HEADING_WEIGHT_M_PER_RAD = 1.0
#: Path points within this much (m) of the best match count as equal (a pose estimate's error:
#: the EKF's default fix noise is 5 cm per axis); the earliest wins, or the one planned nearest
#: to where the plan's schedule places now.
RESUME_TIE_M = 0.25


class BodyTwist(NamedTuple):
    """A velocity command of base_link: vx, vy (m/s) and wz (rad/s) in the body frame."""

    vx_mps: float
    vy_mps: float
    wz_radps: float


ZERO_TWIST = BodyTwist(0.0, 0.0, 0.0)


class TrackingErrors(NamedTuple):
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
    """The nearest path point to a query point: arc length (m), position (m), planned heading
    and direction of travel (rad, unwrapped) there, and the query's signed lateral offset (m,
    left positive)."""

    s_m: float
    x_m: float
    y_m: float
    yaw_rad: float
    path_yaw_rad: float
    offset_m: float


class PathProgress:
    """Progress of one point (base_link, or a steered axle) along one trajectory.

    The search may be held to one leg (:meth:`hold_to`, samples ``first`` .. ``last``): where a
    path folds back on itself at a cusp, the vehicle is matched with the leg it drives.
    """

    def __init__(self, trajectory: Trajectory) -> None:
        self.trajectory = trajectory
        self._table = trajectory.table
        self._s_m: float | None = None
        #: Whether the last search lost the vehicle near its previous point and found it
        #: elsewhere on the path (put back by a restarted simulator, relocalised).
        self.relocated = False
        self.hold_to(0, len(trajectory) - 1)

    def hold_to(self, first: int, last: int) -> None:
        """Search only the samples ``first`` .. ``last``; projections may lie beyond both ends
        (on the extended first and last segments)."""
        self._first_segment, self._last_segment = first, last - 1

    @property
    def located(self) -> bool:
        """Whether a nearest point has been found before (a local search is possible)."""
        return self._s_m is not None

    def nearest(self, x_m: float, y_m: float, near_s_m: float | None = None,
                yaw_rad: float | None = None, scheduled_s: float | None = None) -> Projection:
        """The nearest path point, searched near ``near_s_m`` if given, else near the previous
        one (see the module doc). When neither exists or nothing is close (a first search, a
        vehicle put somewhere else), the whole path is searched: by position alone, or, given the
        vehicle's ``yaw_rad`` (map frame), where it resumes the path (:meth:`resume_s_m`, with
        ``scheduled_s``)."""
        around = self._s_m if near_s_m is None else near_s_m
        self.relocated = False
        if around is not None:
            local = self._near(x_m, y_m, around)
            if math.hypot(local.x_m - x_m, local.y_m - y_m) <= RELOCATE_DISTANCE_M:
                self._s_m = local.s_m
                return local
        self.relocated = self._s_m is not None
        if yaw_rad is None:
            found = Projection._make(nearest_on_segments(
                self._table, x_m, y_m, self._first_segment, self._last_segment + 1,
                self._first_segment, self._last_segment))
        else:
            found = self._near(x_m, y_m, self.resume_s_m(x_m, y_m, yaw_rad, scheduled_s))
        self._s_m = found.s_m
        return found

    def resume_s_m(self, x_m: float, y_m: float, yaw_rad: float,
                   scheduled_s: float | None = None) -> float:
        """The arc length (m) of the sample where a vehicle at (x, y, yaw) (map frame) resumes
        the searched part of the path: nearest in position and heading (one radian of heading
        mismatch weighs :data:`RESUME_HEADING_WEIGHT_M_PER_RAD` metres); of the near-equal ones
        (:data:`RESUME_TIE_M`), the one planned nearest to ``scheduled_s`` (s into the path,
        where its stamps place now) if given and within the path's duration, else the earliest.
        Where a path crosses itself (a figure-eight) the branch the vehicle faces along is
        taken, and a vehicle at the start of a closed path starts it, not ends it, unless the
        schedule places it at the end."""
        first = self._first_segment
        samples = slice(first, self._last_segment + 2)
        trajectory = self.trajectory
        heading_mismatch = np.abs(wrap_angles(trajectory.yaw_rad[samples] - yaw_rad))
        cost_m = (np.hypot(trajectory.x_m[samples] - x_m, trajectory.y_m[samples] - y_m)
                  + RESUME_HEADING_WEIGHT_M_PER_RAD * heading_mismatch)
        near_equal = np.flatnonzero(cost_m <= cost_m.min() + RESUME_TIE_M)
        chosen = near_equal[0]
        if scheduled_s is not None and 0.0 <= scheduled_s <= trajectory.duration_s:
            chosen = near_equal[np.argmin(np.abs(trajectory.t_s[samples][near_equal]
                                                 - scheduled_s))]
        return float(trajectory.s_m[first + int(chosen)])

    def _near(self, x_m: float, y_m: float, around_s_m: float) -> Projection:
        """The nearest point on the segments from SEARCH_BEHIND_M before ``around_s_m`` to
        SEARCH_AHEAD_M after it."""
        return Projection._make(nearest_around(
            self._table, x_m, y_m, around_s_m, SEARCH_BEHIND_M, SEARCH_AHEAD_M,
            self._first_segment, self._last_segment))


def resume_arc_length(trajectory: Trajectory, pose: Pose2D,
                      scheduled_s: float | None = None) -> float:
    """The arc length (m) at which a vehicle at ``pose`` (map frame) resumes ``trajectory``
    (:meth:`PathProgress.resume_s_m`, then the nearest point around it)."""
    return PathProgress(trajectory).nearest(pose.x_m, pose.y_m, yaw_rad=pose.yaw_rad,
                                            scheduled_s=scheduled_s).s_m


def tracking_errors(nearest: Projection, pose: Pose2D, scheduled_s_m: float) -> TrackingErrors:
    """Errors of ``pose`` whose nearest path point is ``nearest``, at the scheduled arc length."""
    return TrackingErrors(nearest.s_m - scheduled_s_m, nearest.offset_m,
                          wrap_angle(pose.yaw_rad - nearest.yaw_rad))
