"""Timed trajectories: where the vehicle should be, how it should be moving, and when.

A :class:`Trajectory` is what the planner produces and what the controller tracks. It is
sampled (arrays of equal length N >= 2, time strictly increasing from 0) and interpolated
linearly between samples. Positions and headings are in the planning frame (``map``); body
velocities are in the vehicle frame (``base_link``: x forward, y left); angles are unwrapped.

On ROS the trajectory travels as a nav_msgs/Path of timed poses; :func:`trajectory_from_poses`
rebuilds the velocities from those poses by finite differences.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.planning.path import PathSamples, PlanningError


class TrajectoryPoint(NamedTuple):
    """The reference at one instant (units as in :class:`Trajectory`)."""

    t_s: float
    s_m: float
    x_m: float
    y_m: float
    yaw_rad: float
    path_yaw_rad: float
    curvature_inv_m: float
    v_mps: float
    vx_mps: float
    vy_mps: float
    wz_radps: float


@dataclass(frozen=True)
class Trajectory:
    """A path with a schedule.

    - ``t_s``: time from the start of the trajectory (s), strictly increasing from 0;
    - ``s_m``: arc length travelled (m); ``x_m``, ``y_m``: position (m);
    - ``yaw_rad``: vehicle heading; ``path_yaw_rad``: direction of travel (equal for vehicles
      that drive along their heading, different for an omni base moving sideways);
    - ``curvature_inv_m``: path curvature d(path_yaw)/ds (1/m);
    - ``v_mps``: speed along the path (>= 0); ``vx_mps``, ``vy_mps``: body-frame velocity;
      ``wz_radps``: yaw rate.

    The arrays must not be modified after construction: the first lookup copies them into
    Python lists (interpolating one instant there is several times faster than through numpy).
    """

    t_s: FloatArray
    s_m: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    yaw_rad: FloatArray
    path_yaw_rad: FloatArray
    curvature_inv_m: FloatArray
    v_mps: FloatArray
    vx_mps: FloatArray
    vy_mps: FloatArray
    wz_radps: FloatArray

    @property
    def duration_s(self) -> float:
        """Time from start to end in seconds."""
        return self._times_s[-1]

    @property
    def length_m(self) -> float:
        """Arc length in metres."""
        return self._arc_lengths_m[-1]

    def __len__(self) -> int:
        return len(self.t_s)

    def at_time(self, t_s: float) -> TrajectoryPoint:
        """The reference at time ``t_s``, clamped to [0, duration] (at rest after the end)."""
        return self._at(self._times_s, min(max(t_s, 0.0), self.duration_s))

    def at_arc_length(self, s_m: float) -> TrajectoryPoint:
        """The reference where the arc length is ``s_m`` (clamped to the path)."""
        return self._at(self._arc_lengths_m, min(max(s_m, 0.0), self.length_m))

    def end(self) -> TrajectoryPoint:
        """The final reference point."""
        return self._samples[-1]

    @cached_property
    def _samples(self) -> list[TrajectoryPoint]:
        """Every sample as a point of Python floats."""
        columns = (getattr(self, name).tolist() for name in TrajectoryPoint._fields)
        return [TrajectoryPoint(*row) for row in zip(*columns, strict=True)]

    @cached_property
    def _times_s(self) -> list[float]:
        """``t_s`` as Python floats."""
        return self.t_s.tolist()

    @cached_property
    def _arc_lengths_m(self) -> list[float]:
        """``s_m`` as Python floats."""
        return self.s_m.tolist()

    def _at(self, axis: list[float], value: float) -> TrajectoryPoint:
        """The samples interpolated linearly where ``axis`` (times or arc lengths, sorted) has
        ``value``, which lies within the axis range or is NaN (all fields NaN then).

        The arithmetic is np.interp's, so the result is the same to the last bit: the sample
        itself at a sample (the last one where the axis repeats a value), else
        ``slope * (value - axis[i]) + field[i]`` on the interval where ``axis[i] <= value``.
        """
        i = bisect.bisect_right(axis, value) - 1
        if axis[i] == value:
            return self._samples[i]
        i = min(i, len(axis) - 2)  # NaN compares false, so bisect puts it after the last sample
        before, after = self._samples[i], self._samples[i + 1]
        interval, offset = axis[i + 1] - axis[i], value - axis[i]
        return TrajectoryPoint(
            *[(b - a) / interval * offset + a for a, b in zip(before, after, strict=True)]
        )


def path_from_points(x_m: FloatArray, y_m: FloatArray) -> PathSamples:
    """A :class:`PathSamples` through the points (x, y), tangent and curvature by differences.

    Consecutive duplicate points are dropped; fewer than 2 distinct points raise PlanningError.
    """
    points = np.column_stack([x_m, y_m]).astype(float)
    if len(points) == 0 or not np.isfinite(points).all():
        raise PlanningError('path has no points or non-finite coordinates')
    keep = np.concatenate([[True], np.hypot(*np.diff(points, axis=0).T) > 1e-9])
    points = points[keep]
    if len(points) < 2:
        raise PlanningError('path needs at least 2 distinct points')
    s = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(points, axis=0).T))])
    dx = np.gradient(points[:, 0], s)
    dy = np.gradient(points[:, 1], s)
    yaw = np.unwrap(np.arctan2(dy, dx))
    curvature = np.gradient(yaw, s) if len(s) > 2 else np.zeros_like(s)
    return PathSamples(
        s_m=s, x_m=points[:, 0], y_m=points[:, 1], yaw_rad=yaw, curvature_inv_m=curvature
    )


def trajectory_from_poses(
    t_s: FloatArray, x_m: FloatArray, y_m: FloatArray, yaw_rad: FloatArray
) -> Trajectory:
    """Rebuild a :class:`Trajectory` from timed poses (as carried by a stamped nav_msgs/Path).

    ``t_s`` must be finite and strictly increasing (it is shifted to start at 0). Velocities and
    curvature are second-order finite differences, so they match the planner's up to the
    discretisation (errors of order the sample spacing times the rate of change).
    """
    t = np.asarray(t_s, dtype=float)
    arrays = [np.asarray(a, dtype=float) for a in (x_m, y_m, yaw_rad)]
    if len(t) < 2 or any(len(a) != len(t) for a in arrays):
        raise PlanningError(f'a trajectory needs at least 2 timed poses, got {len(t)}')
    if not all(np.isfinite(a).all() for a in (t, *arrays)):
        raise PlanningError('trajectory has non-finite times or poses')
    if not (np.diff(t) > 0).all():
        raise PlanningError('trajectory times are not strictly increasing')
    x, y, yaw = arrays
    yaw = np.unwrap(yaw)
    t = t - t[0]
    vel_x, vel_y = np.gradient(x, t), np.gradient(y, t)
    step = np.hypot(np.diff(x), np.diff(y))
    s = np.concatenate([[0.0], np.cumsum(step)])
    # Direction of travel: from the motion where the vehicle moves, else its heading.
    moving = np.hypot(vel_x, vel_y) > 1e-6
    path_yaw = np.where(moving, np.arctan2(vel_y, vel_x), yaw)
    path_yaw = yaw + np.angle(np.exp(1j * (path_yaw - yaw)))
    distinct = np.concatenate([[True], step > 1e-9])
    curvature = np.zeros_like(t)
    if distinct.sum() > 2:
        curvature_distinct = np.gradient(np.unwrap(path_yaw[distinct]), s[distinct])
        curvature = np.interp(s, s[distinct], curvature_distinct)
    cos_yaw, sin_yaw = np.cos(yaw), np.sin(yaw)
    return Trajectory(
        t_s=t,
        s_m=s,
        x_m=x,
        y_m=y,
        yaw_rad=yaw,
        path_yaw_rad=path_yaw,
        curvature_inv_m=curvature,
        v_mps=np.hypot(vel_x, vel_y),
        vx_mps=cos_yaw * vel_x + sin_yaw * vel_y,
        vy_mps=-sin_yaw * vel_x + cos_yaw * vel_y,
        wz_radps=np.gradient(yaw, t),
    )
