"""Timed trajectories: where the vehicle should be, how it should be moving, and when.

A :class:`Trajectory` is what the planner produces and what the controller tracks. It is
sampled (arrays of equal length N >= 2, time strictly increasing from 0) and interpolated
linearly between samples. Positions and headings are in the planning frame (``map``); body
velocities are in the vehicle frame (``base_link``: x forward, y left); angles are unwrapped.

On ROS the trajectory travels as a nav_msgs/Path of timed poses; :func:`trajectory_from_poses`
rebuilds the velocities from those poses by finite differences.

A trajectory may reverse (a car backing up): its :attr:`Trajectory.legs` are the stretches of
one direction of travel, joined at cusps, where the direction of travel flips and the vehicle is
at rest. The pose's yaw is always the vehicle's heading; a reversed leg moves against it (its
``vx_mps`` is negative, its ``path_yaw_rad`` the heading + pi). In a nav_msgs/Path the direction
needs no extra field: a pose is driven in reverse when the step to the next pose points against
its heading, and a cusp is where two consecutive steps point against each other (as Nav2's
regulated pure pursuit finds cusps).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import NamedTuple

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.planning.lookup import (
    ARC_LENGTH,
    FIELD_COUNT,
    TIME,
    compiled_value_at,
    point_at,
    sample_table,
)
from wheelsim.core.planning.path import PathSamples, PlanningError


class Leg(NamedTuple):
    """A stretch of one direction of travel: samples ``first`` .. ``last`` (inclusive; a cusp
    sample ends one leg and starts the next), ``reverse`` True when driven backwards."""

    first: int
    last: int
    reverse: bool


def cusps(x_m: FloatArray, y_m: FloatArray) -> FloatArray:
    """Sample indices where the direction of travel reverses: the steps into and out of the
    sample point against each other (zero-length steps are skipped)."""
    steps = np.column_stack([np.diff(x_m), np.diff(y_m)])
    moving = np.flatnonzero(np.hypot(steps[:, 0], steps[:, 1]) > 0)
    dots = (steps[moving[:-1]] * steps[moving[1:]]).sum(axis=1)
    return moving[1:][dots < 0]


def legs_of(x_m: FloatArray, y_m: FloatArray, yaw_rad: FloatArray | None,
            first_reverse: bool = False) -> tuple[Leg, ...]:
    """The legs of the poses: split at :func:`cusps`, each reversed when its steps point, on
    the whole, against the headings; without headings (``yaw_rad`` None) the first leg is
    driven forwards (backwards with ``first_reverse``) and each cusp flips the direction."""
    bounds = [0, *cusps(x_m, y_m).tolist(), len(x_m) - 1]
    legs = []
    for k, (first, last) in enumerate(zip(bounds[:-1], bounds[1:], strict=True)):
        if yaw_rad is None:
            legs.append(Leg(first, last, (k % 2 == 1) != first_reverse))
            continue
        along = (np.diff(x_m[first:last + 1]) * np.cos(yaw_rad[first:last])
                 + np.diff(y_m[first:last + 1]) * np.sin(yaw_rad[first:last])).sum()
        legs.append(Leg(first, last, bool(along < 0)))
    return tuple(legs)


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


#: Position of each :class:`TrajectoryPoint` field in a point.
_FIELD_INDEX = {name: k for k, name in enumerate(TrajectoryPoint._fields)}


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

    The arrays must not be modified after construction: the first lookup copies them into one
    :attr:`table` (with the slopes between samples) that compiled code interpolates in
    (:mod:`wheelsim.core.planning.lookup`).
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

    @cached_property
    def duration_s(self) -> float:
        """Time from start to end in seconds."""
        return float(self.t_s[-1])

    @cached_property
    def length_m(self) -> float:
        """Arc length in metres."""
        return float(self.s_m[-1])

    def __len__(self) -> int:
        return len(self.t_s)

    def at_time(self, t_s: float) -> TrajectoryPoint:
        """The reference at time ``t_s``, clamped to [0, duration] (at rest after the end)."""
        return TrajectoryPoint._make(point_at(self.table, TIME, t_s))

    def at_arc_length(self, s_m: float) -> TrajectoryPoint:
        """The reference where the arc length is ``s_m`` (clamped to the path)."""
        return TrajectoryPoint._make(point_at(self.table, ARC_LENGTH, s_m))

    def value_at_time(self, t_s: float, field: str) -> float:
        """The ``field`` (a :class:`TrajectoryPoint` field name) of :meth:`at_time`, the same
        to the last bit, interpolating that field only."""
        return compiled_value_at(self.table, TIME, t_s, _FIELD_INDEX[field])

    def value_at_arc_length(self, s_m: float, field: str) -> float:
        """The ``field`` of :meth:`at_arc_length`, the same to the last bit, that field only."""
        return compiled_value_at(self.table, ARC_LENGTH, s_m, _FIELD_INDEX[field])

    def end(self) -> TrajectoryPoint:
        """The final reference point."""
        return self._end

    @cached_property
    def legs(self) -> tuple[Leg, ...]:
        """The stretches of one direction of travel (one for a path without cusps)."""
        return legs_of(self.x_m, self.y_m, self.yaw_rad)

    @cached_property
    def table(self) -> FloatArray:
        """The samples as compiled lookups read them (:func:`~wheelsim.core.planning.lookup.
        sample_table`)."""
        return sample_table([getattr(self, name) for name in TrajectoryPoint._fields])

    @cached_property
    def _end(self) -> TrajectoryPoint:
        return TrajectoryPoint._make(self.table[-1, :FIELD_COUNT].tolist())


def joined(parts: list[Trajectory]) -> Trajectory:
    """Trajectories one after the other (each starting where and, at rest, how the previous
    ends, as at a cusp): times and arc lengths continued, the headings on one branch, the
    sample where two meet kept once (the earlier part's, at rest)."""
    columns: dict[str, list[FloatArray]] = {name: [] for name in TrajectoryPoint._fields}
    t_end = s_end = 0.0
    yaw_end: float | None = None
    for k, part in enumerate(parts):
        keep = slice(1 if k else 0, None)
        turns = 0.0 if yaw_end is None else 2 * np.pi * np.round((yaw_end - part.yaw_rad[0])
                                                                  / (2 * np.pi))
        for name in TrajectoryPoint._fields:
            values = getattr(part, name)[keep]
            if name == 't_s':
                values = values + t_end
            elif name == 's_m':
                values = values + s_end
            elif name in ('yaw_rad', 'path_yaw_rad'):
                values = values + turns
            columns[name].append(values)
        t_end, s_end = t_end + part.duration_s, s_end + part.length_m
        yaw_end = float(part.yaw_rad[-1] + turns)
    return Trajectory(**{name: np.concatenate(values) for name, values in columns.items()})


def path_from_points(x_m: FloatArray, y_m: FloatArray,
                     chord_m: float | None = None) -> PathSamples:
    """A :class:`PathSamples` through the points (x, y), driven along the polyline joining them.

    The direction of travel at each sample: without ``chord_m``, the tangent by differences of
    the neighbouring points; with it, the direction of the chord between the two points of the
    polyline ``chord_m / 2`` before and after the sample in arc length, shifted to lie within
    the path at its ends (the whole path when it is shorter), so constant over the first and
    last ``chord_m / 2``. The chord spreads a kink (a grid path turning by whole cells) over
    ``chord_m``; away from the ends it is the exact tangent of a line or of a circle longer
    than ``chord_m`` all round. The curvature is the derivative of the direction along the
    path. Consecutive duplicate points are dropped; fewer than 2 distinct points raise
    PlanningError.
    """
    points = np.column_stack([x_m, y_m]).astype(float)
    if len(points) == 0 or not np.isfinite(points).all():
        raise PlanningError('path has no points or non-finite coordinates')
    keep = np.concatenate([[True], np.hypot(*np.diff(points, axis=0).T) > 1e-9])
    points = points[keep]
    if len(points) < 2:
        raise PlanningError('path needs at least 2 distinct points')
    s = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(points, axis=0).T))])
    if chord_m is None:
        tangent = [np.gradient(axis, s) for axis in points.T]
    else:
        half_m = min(chord_m, s[-1]) / 2
        centre_m = np.clip(s, half_m, s[-1] - half_m)
        tangent = [np.interp(centre_m + half_m, s, axis) - np.interp(centre_m - half_m, s, axis)
                   for axis in points.T]
    yaw = np.unwrap(np.arctan2(tangent[1], tangent[0]))
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
    discretisation (errors of order the sample spacing times the rate of change; second order
    at the ends, so a plan that stops ends at rest); each leg
    (:func:`legs_of`) is differentiated on its own, so a cusp does not blur the direction.
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
    step = np.hypot(np.diff(x), np.diff(y))
    s = np.concatenate([[0.0], np.cumsum(step)])
    legs = legs_of(x, y, yaw)
    parts = [_leg_from_poses(t[leg.first:leg.last + 1], s[leg.first:leg.last + 1],
                             x[leg.first:leg.last + 1], y[leg.first:leg.last + 1],
                             yaw[leg.first:leg.last + 1]) for leg in legs]
    names = TrajectoryPoint._fields
    return Trajectory(**{
        name: np.concatenate([getattr(part, name)[1 if k else 0:]
                              for k, part in enumerate(parts)]) for name in names})


def _leg_from_poses(t, s, x, y, yaw) -> Trajectory:
    """One leg of :func:`trajectory_from_poses` (times and arc lengths as given)."""
    if len(t) < 3:  # one step: constant velocity
        vel_x = np.full(len(t), (x[-1] - x[0]) / (t[-1] - t[0]))
        vel_y = np.full(len(t), (y[-1] - y[0]) / (t[-1] - t[0]))
        yaw_rate = np.full(len(t), (yaw[-1] - yaw[0]) / (t[-1] - t[0]))
    else:
        # Second-order one-sided differences at the ends: exact for constant acceleration, so a
        # leg timed to end at rest (the goal, a cusp) ends at rest here too.
        vel_x, vel_y, yaw_rate = (np.gradient(v, t, edge_order=2) for v in (x, y, yaw))
    # Direction of travel: from the motion, except at the leg's ends (at rest: a goal, a cusp,
    # where one-sided differences say little) and wherever it stands still: along the step to
    # the next pose (from the previous one at the end), or the heading where there is no step.
    steps_x, steps_y = np.diff(x), np.diff(y)
    step_x, step_y = np.append(steps_x, steps_x[-1]), np.append(steps_y, steps_y[-1])
    step_yaw = np.where(np.hypot(step_x, step_y) > 0, np.arctan2(step_y, step_x), yaw)
    moving = np.hypot(vel_x, vel_y) > 1e-6
    moving[[0, -1]] = False
    path_yaw = np.where(moving, np.arctan2(vel_y, vel_x), step_yaw)
    path_yaw = yaw + np.angle(np.exp(1j * (path_yaw - yaw)))
    distinct = np.concatenate([[True], np.diff(s) > 1e-9])
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
        wz_radps=yaw_rate,
    )
