"""Planar geometry over arrays for the run report: headings, interpolation, paths.

Pure numpy (no ROS); rigid transforms and angle wrapping are
:mod:`wheelsim.core.localization_se2`'s. Positions in metres, angles in radians, times in
seconds. Functions take whole arrays; a 60 s run at 50 Hz takes well under a second.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.angles import wrap_angles


def yaw_from_quaternion(qx: FloatArray, qy: FloatArray, qz: FloatArray,
                        qw: FloatArray) -> FloatArray:
    """Heading (rotation about +z) of quaternions, in [-pi, pi]; roll and pitch are ignored."""
    return np.arctan2(2.0 * (qw * qz + qx * qy), 1.0 - 2.0 * (qy * qy + qz * qz))


def interp_pose(t_s: FloatArray, at_t_s: FloatArray, x_m: FloatArray, y_m: FloatArray,
                yaw_rad: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Linear interpolation of a pose series ``(t_s, x, y, yaw)`` at times ``at_t_s``.

    ``t_s`` must be non-decreasing with at least one sample; the heading is interpolated on the
    unwrapped angle (the short way round between samples) and returned wrapped. Times outside
    the series take its first or last pose.
    """
    yaw_unwrapped = np.unwrap(yaw_rad)
    return (np.interp(at_t_s, t_s, x_m), np.interp(at_t_s, t_s, y_m),
            wrap_angles(np.interp(at_t_s, t_s, yaw_unwrapped)))


def hold_last(t_s: FloatArray, values: FloatArray, at_t_s: FloatArray) -> FloatArray:
    """Zero-order hold: the last value at or before each of ``at_t_s`` (NaN before the first)."""
    index = np.searchsorted(t_s, at_t_s, side='right') - 1
    held = np.asarray(values, dtype=float)[np.clip(index, 0, None)]
    return np.where(index >= 0, held, np.nan)


def path_length_m(x_m: FloatArray, y_m: FloatArray) -> float:
    """Length of the polyline through the points [m] (0 for fewer than two)."""
    return float(np.sum(np.hypot(np.diff(x_m), np.diff(y_m))))


@dataclass(frozen=True)
class PathMatch:
    """Where points lie relative to a polyline, one entry per point.

    ``cross_track_m``: signed distance to the matched closest point, positive when the point is
    left of the direction of travel; ``s_m``: arc length of the matched point along the polyline;
    ``yaw_rad``: the polyline's pose heading there (interpolated between its vertices).
    """

    cross_track_m: FloatArray
    s_m: FloatArray
    yaw_rad: FloatArray


class Polyline:
    """A path through vertices ``(x_m, y_m)`` with a heading ``yaw_rad`` given at each vertex."""

    def __init__(self, x_m: FloatArray, y_m: FloatArray, yaw_rad: FloatArray) -> None:
        if len(x_m) == 0:
            raise ValueError('a polyline needs at least one vertex')
        # Arc length of every vertex [m].
        self.vertex_s_m = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x_m), np.diff(y_m)))])
        if len(x_m) == 1:  # one zero-length segment: distances are to the single point
            x_m, y_m, yaw_rad = (np.repeat(v, 2) for v in (x_m, y_m, yaw_rad))
        self.start = np.column_stack([x_m[:-1], y_m[:-1]])
        self.delta = np.column_stack([np.diff(x_m), np.diff(y_m)])
        self.length2 = np.sum(self.delta**2, axis=1)
        self.s_start_m = np.concatenate([[0.0], np.cumsum(np.sqrt(self.length2))])[:-1]
        self.yaw_start = np.asarray(yaw_rad[:-1], dtype=float)
        self.yaw_step = wrap_angles(np.diff(yaw_rad))
        self.tangent = self._tangents(np.asarray(yaw_rad, dtype=float))

    def _tangents(self, yaw_rad: FloatArray) -> FloatArray:
        """Unit direction of each segment; zero-length ones take the nearest non-zero one's
        (or the vertex heading when the whole polyline is one point)."""
        moving = np.flatnonzero(self.length2 > 0.0)
        if len(moving) == 0:
            return np.column_stack([np.cos(yaw_rad[:-1]), np.sin(yaw_rad[:-1])])
        nearest = moving[np.clip(np.searchsorted(moving, np.arange(len(self.length2))),
                                 0, len(moving) - 1)]
        return self.delta[nearest] / np.sqrt(self.length2[nearest])[:, None]

    def _project(self, point: FloatArray, segments: slice) -> tuple[int, float, float]:
        """Closest point on the segments in ``segments`` to ``point``: (segment, fraction, d2).

        Called once per matched point: array methods rather than the ``np.`` functions (the
        same computation without their Python wrappers), and the 0/0 of zero-length segments
        (replaced by 0) silenced by the caller, :meth:`match`, once for all points."""
        start, delta, length2 = self.start[segments], self.delta[segments], self.length2[segments]
        offset = point - start
        fraction = np.where(length2 > 0.0, (offset * delta).sum(axis=1) / length2, 0.0)
        fraction = fraction.clip(0.0, 1.0)
        gap = offset - fraction[:, None] * delta
        distance2 = (gap**2).sum(axis=1)
        best = int(distance2.argmin())
        return best + (segments.start or 0), float(fraction[best]), float(distance2[best])

    def match(self, x_m: FloatArray, y_m: FloatArray, window_m: float = 1.0) -> PathMatch:
        """Match a sequence of points (a driven path, in time order) to the polyline.

        Each point searches only the part of the polyline within ``window_m`` (plus the
        distance the point moved) of the previous point's match, the first point from the
        polyline's start (a plan starts where the vehicle is). So a path that crosses itself (a
        figure-eight) is followed branch by branch instead of jumping to the crossing branch. A
        point farther than ``2 window_m`` from that part, with a point of the polyline closer by
        more than ``window_m`` elsewhere, is matched there (the vehicle left its track).
        """
        count = len(x_m)
        cross = np.empty(count)
        s_m = np.empty(count)
        yaw = np.empty(count)
        segment_end_m = self.s_start_m + np.sqrt(self.length2)
        everything = slice(0, len(self.length2))
        previous_s = 0.0
        previous_xy = np.array([x_m[0], y_m[0]]) if count else None
        with np.errstate(invalid='ignore', divide='ignore'):  # see _project
            for i in range(count):
                point = np.array([x_m[i], y_m[i]])
                reach = window_m + float(np.hypot(*(point - previous_xy)))
                first = int(segment_end_m.searchsorted(previous_s - reach, side='left'))
                first = min(first, len(self.length2) - 1)
                last = max(int(self.s_start_m.searchsorted(previous_s + reach, side='right')),
                           first + 1)
                segment, fraction, distance2 = self._project(point, slice(first, last))
                if distance2 > (2.0 * window_m) ** 2:
                    global_match = self._project(point, everything)
                    if np.sqrt(global_match[2]) < np.sqrt(distance2) - window_m:
                        segment, fraction, distance2 = global_match
                closest = self.start[segment] + fraction * self.delta[segment]
                tangent = self.tangent[segment]
                side = tangent[0] * (point[1] - closest[1]) - tangent[1] * (point[0] - closest[0])
                cross[i] = np.copysign(np.sqrt(distance2), side) if distance2 > 0.0 else 0.0
                s_m[i] = self.s_start_m[segment] + fraction * np.sqrt(self.length2[segment])
                yaw[i] = self.yaw_start[segment] + fraction * self.yaw_step[segment]
                previous_s, previous_xy = s_m[i], point
        return PathMatch(cross_track_m=cross, s_m=s_m, yaw_rad=wrap_angles(yaw))
