"""Planar geometry over arrays for the run report: headings, interpolation, paths.

numpy (no ROS), and one compiled loop (:func:`_match_points`, by :mod:`wheelsim.core.compiled`:
matching a driven path to a plan goes point by point); angle wrapping is
:mod:`wheelsim.core.geometry.angles`'s. Positions in metres, angles in radians, times in
seconds. Functions take whole arrays; a 90 s run at 50 Hz is matched in about 3 ms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled
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

    def match(self, x_m: FloatArray, y_m: FloatArray, window_m: float = 1.0,
              extend_ends: bool = False) -> PathMatch:
        """Match a sequence of points (a driven path, in time order) to the polyline.

        Each point searches only the part of the polyline within ``window_m`` (plus the
        distance the point moved) of the previous point's match, the first point from the
        polyline's start (a plan starts where the vehicle is). So a path that crosses itself (a
        figure-eight) is followed branch by branch instead of jumping to the crossing branch. A
        point farther than ``2 window_m`` from that part, with a point of the polyline closer by
        more than ``window_m`` elsewhere, is matched there (the vehicle left its track).

        ``extend_ends``: a point matched to the first or the last vertex (before the start or
        past the end) is measured along the extended first or last segment instead, as the
        controller measures it: its cross-track is its distance from that line, its arc length
        below 0 or beyond the end, so a vehicle behind the start has an along-track error, not
        a cross-track one (a polyline without length, a goal or a turn on the spot, keeps the
        distance to it).
        """
        count = len(x_m)
        x_m, y_m = np.asarray(x_m, dtype=float), np.asarray(y_m, dtype=float)
        cross, s_m, yaw = np.empty(count), np.empty(count), np.empty(count)
        _match_points(x_m, y_m, self.start, self.delta, self.length2, self.s_start_m,
                      self.yaw_start, self.yaw_step, self.tangent, float(window_m), cross, s_m,
                      yaw)
        if extend_ends and self.vertex_s_m[-1] > 0.0:  # without length: the distance to it
            self._extend_ends(x_m, y_m, cross, s_m)
        return PathMatch(cross_track_m=cross, s_m=s_m, yaw_rad=wrap_angles(yaw))

    def _extend_ends(self, x_m: FloatArray, y_m: FloatArray, cross: FloatArray,
                     s_m: FloatArray) -> None:
        """``cross`` and ``s_m`` of the points matched to an end vertex, along the extended end
        segment (see :meth:`match`)."""
        end_m = self.s_start_m[-1] + math.sqrt(self.length2[-1])
        ends = ((s_m <= 0.0, self.start[0], self.tangent[0], 0.0),
                (s_m >= end_m, self.start[-1] + self.delta[-1], self.tangent[-1], end_m))
        for at, (origin_x, origin_y), (tangent_x, tangent_y), origin_s_m in ends:
            dx, dy = x_m[at] - origin_x, y_m[at] - origin_y
            cross[at] = tangent_x * dy - tangent_y * dx
            s_m[at] = origin_s_m + tangent_x * dx + tangent_y * dy

    def match_next(self, x_m: FloatArray, y_m: FloatArray, previous_x_m: FloatArray,
                   previous_y_m: FloatArray, previous_s_m: FloatArray,
                   window_m: float = 1.0) -> PathMatch:
        """Match points that each continue a sequence of their own (many vehicles, one step
        each): point i as :meth:`match` matches the point after one at ``(previous_x_m[i],
        previous_y_m[i])`` matched at arc length ``previous_s_m[i]``. Stepping a vehicle and
        matching each new point so gives :meth:`match`'s result for its whole path."""
        count = len(x_m)
        cross, s_m, yaw = np.empty(count), np.empty(count), np.empty(count)
        _match_next(np.asarray(x_m, dtype=float), np.asarray(y_m, dtype=float),
                    np.asarray(previous_x_m, dtype=float), np.asarray(previous_y_m, dtype=float),
                    np.asarray(previous_s_m, dtype=float), self.start, self.delta, self.length2,
                    self.s_start_m, self.yaw_start, self.yaw_step, self.tangent, float(window_m),
                    cross, s_m, yaw)
        return PathMatch(cross_track_m=cross, s_m=s_m, yaw_rad=wrap_angles(yaw))


@compiled
def _project(x_m: float, y_m: float, start: FloatArray, delta: FloatArray, length2: FloatArray,
             first: int, last: int) -> tuple[int, float, float]:
    """Closest point to ``(x_m, y_m)`` on segments ``first`` to ``last - 1``: (segment, fraction
    along it, squared distance); the first segment of the least distance, or the first whose
    distance is NaN (as ``numpy.argmin``)."""
    best, best_fraction, best_distance2 = first, 0.0, np.inf
    for segment in range(first, last):
        offset_x, offset_y = x_m - start[segment, 0], y_m - start[segment, 1]
        delta_x, delta_y = delta[segment, 0], delta[segment, 1]
        fraction = 0.0
        if length2[segment] > 0.0:
            fraction = min(max((offset_x * delta_x + offset_y * delta_y) / length2[segment],
                               0.0), 1.0)
        gap_x, gap_y = offset_x - fraction * delta_x, offset_y - fraction * delta_y
        distance2 = gap_x * gap_x + gap_y * gap_y
        if np.isnan(distance2):
            return segment, fraction, distance2
        if distance2 < best_distance2:
            best, best_fraction, best_distance2 = segment, fraction, distance2
    return best, best_fraction, best_distance2


@compiled
def _match_point(x: float, y: float, previous_x: float, previous_y: float, previous_s: float,
                 start: FloatArray, delta: FloatArray, length2: FloatArray,
                 s_start_m: FloatArray, segment_end_m: FloatArray, yaw_start: FloatArray,
                 yaw_step: FloatArray, tangent: FloatArray, window_m: float
                 ) -> tuple[float, float, float]:
    """One point of :meth:`Polyline.match` after a point at ``(previous_x, previous_y)``
    matched at ``previous_s``: (cross-track, arc length, unwrapped yaw)."""
    segments = len(length2)
    reach = window_m + np.hypot(x - previous_x, y - previous_y)
    first = min(np.searchsorted(segment_end_m, previous_s - reach, side='left'), segments - 1)
    last = max(np.searchsorted(s_start_m, previous_s + reach, side='right'), first + 1)
    segment, fraction, distance2 = _project(x, y, start, delta, length2, first, last)
    if distance2 > (2.0 * window_m) ** 2:
        other, other_fraction, other_distance2 = _project(x, y, start, delta, length2, 0,
                                                          segments)
        if np.sqrt(other_distance2) < np.sqrt(distance2) - window_m:
            segment, fraction, distance2 = other, other_fraction, other_distance2
    closest_x = start[segment, 0] + fraction * delta[segment, 0]
    closest_y = start[segment, 1] + fraction * delta[segment, 1]
    side = tangent[segment, 0] * (y - closest_y) - tangent[segment, 1] * (x - closest_x)
    cross = np.copysign(np.sqrt(distance2), side) if distance2 > 0.0 else 0.0
    return (cross, s_start_m[segment] + fraction * np.sqrt(length2[segment]),
            yaw_start[segment] + fraction * yaw_step[segment])


@compiled
def _match_points(x_m: FloatArray, y_m: FloatArray, start: FloatArray, delta: FloatArray,
                  length2: FloatArray, s_start_m: FloatArray, yaw_start: FloatArray,
                  yaw_step: FloatArray, tangent: FloatArray, window_m: float, cross: FloatArray,
                  s_m: FloatArray, yaw: FloatArray) -> None:
    """:meth:`Polyline.match` point by point (compiled: each point's window depends on the
    previous point's match), into ``cross``, ``s_m`` and ``yaw`` (unwrapped)."""
    segment_end_m = s_start_m + np.sqrt(length2)
    previous_s = 0.0
    previous_x, previous_y = (x_m[0], y_m[0]) if len(x_m) else (0.0, 0.0)
    for i in range(len(x_m)):
        cross[i], s_m[i], yaw[i] = _match_point(
            x_m[i], y_m[i], previous_x, previous_y, previous_s, start, delta, length2,
            s_start_m, segment_end_m, yaw_start, yaw_step, tangent, window_m)
        previous_s, previous_x, previous_y = s_m[i], x_m[i], y_m[i]


@compiled
def _match_next(x_m: FloatArray, y_m: FloatArray, previous_x_m: FloatArray,
                previous_y_m: FloatArray, previous_s_m: FloatArray, start: FloatArray,
                delta: FloatArray, length2: FloatArray, s_start_m: FloatArray,
                yaw_start: FloatArray, yaw_step: FloatArray, tangent: FloatArray,
                window_m: float, cross: FloatArray, s_m: FloatArray, yaw: FloatArray) -> None:
    """:meth:`Polyline.match_next`, into ``cross``, ``s_m`` and ``yaw`` (unwrapped)."""
    segment_end_m = s_start_m + np.sqrt(length2)
    for i in range(len(x_m)):
        cross[i], s_m[i], yaw[i] = _match_point(
            x_m[i], y_m[i], previous_x_m[i], previous_y_m[i], previous_s_m[i], start, delta,
            length2, s_start_m, segment_end_m, yaw_start, yaw_step, tangent, window_m)
