"""Time scaling: the fastest schedule along a path that keeps the vehicle within its limits.

Along a path sampled at arc lengths s_i, the speed v_i >= 0 obeys at every sample

    v <= max_speed,  v^2 |curvature| <= max_lateral_acceleration,
    v |dyaw/ds| <= max_yaw_rate,  v |d curvature/ds| <= max_curvature_rate (steering speed),

and between samples the tangential acceleration (v_{i+1}^2 - v_i^2) / (2 ds) is constant and
within +-max_acceleration (for a heading planned apart from the path, the yaw acceleration
d2yaw/ds2 v^2 + dyaw/ds a also within +-max_yaw_acceleration: :func:`_yaw_acceleration_limit`).
The classic two-pass sweep (forward: accelerate as hard
as allowed; backward: brake in time) gives the time-optimal speed for these constraints,
ending at rest and starting at rest or at the vehicle's speed when it is already moving (a plan
made on the way). Time between samples follows from constant acceleration:
dt = 2 ds / (v_i + v_{i+1}).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.path import PathSamples, PlanningError
from wheelsim.core.planning.trajectory import Trajectory

#: Speed (m/s) above which a vehicle counts as moving one way: what a standing vehicle's
#: odometry shows (noise on its wheels) stays below it.
MOVING_MPS = 0.02


@dataclass(frozen=True)
class MotionLimits:
    """Limits the schedule respects (SI units; 0 for the curvature rate means no limit).

    - ``max_speed_mps``: speed along the path;
    - ``max_acceleration_mps2``: tangential acceleration and braking;
    - ``max_lateral_acceleration_mps2``: v^2 * |curvature|;
    - ``max_yaw_rate_radps``: |yaw rate|;
    - ``max_curvature_rate_inv_ms``: |d curvature / dt| in 1/(m s); a car's steering rate
      limit divided by its wheel base.
    """

    max_speed_mps: float
    max_acceleration_mps2: float
    max_lateral_acceleration_mps2: float
    max_yaw_rate_radps: float
    max_curvature_rate_inv_ms: float = 0.0

    def __post_init__(self) -> None:
        for name in (
            'max_speed_mps',
            'max_acceleration_mps2',
            'max_lateral_acceleration_mps2',
            'max_yaw_rate_radps',
        ):
            value = getattr(self, name)
            if not (np.isfinite(value) and value > 0):
                raise PlanningError(f'motion limit {name} must be a finite number > 0, got {value}')
        rate = self.max_curvature_rate_inv_ms
        if not (np.isfinite(rate) and rate >= 0):
            raise PlanningError(f'motion limit max_curvature_rate_inv_ms must be >= 0, got {rate}')

    @property
    def max_yaw_acceleration_radps2(self) -> float:
        """The yaw acceleration of a heading planned apart from the path (an omni base) [rad/s^2]:
        the yaw rate reaches ``max_yaw_rate_radps`` in the time the speed takes to reach
        ``max_speed_mps`` at ``max_acceleration_mps2``."""
        return self.max_yaw_rate_radps * self.max_acceleration_mps2 / self.max_speed_mps


Velocity2D = tuple[float, float]
"""A planar velocity (vx, vy) in m/s, in the map frame."""
AT_REST: Velocity2D = (0.0, 0.0)


def velocity_in_map(pose: Pose2D, vx_mps: float, vy_mps: float) -> Velocity2D:
    """The velocity (m/s, map frame) of a vehicle at ``pose`` (map frame) moving at ``vx_mps``
    ahead and ``vy_mps`` to its left (its body frame, as odometry's twist gives them)."""
    cos_yaw, sin_yaw = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    return vx_mps * cos_yaw - vy_mps * sin_yaw, vx_mps * sin_yaw + vy_mps * cos_yaw


def start_speed(velocity_mps: Velocity2D, direction_rad: float) -> float:
    """The speed (m/s, >= 0) at which a vehicle moving at ``velocity_mps`` (map frame) starts
    along a path leaving in ``direction_rad``: the velocity's component that way; 0 (at rest)
    when that is at most :data:`MOVING_MPS` or points back. PlanningError if the velocity is not
    finite."""
    vx_mps, vy_mps = velocity_mps
    if not (math.isfinite(vx_mps) and math.isfinite(vy_mps)):
        raise PlanningError(f'the start velocity must be finite, got {tuple(velocity_mps)}')
    along_mps = vx_mps * math.cos(direction_rad) + vy_mps * math.sin(direction_rad)
    return along_mps if along_mps > MOVING_MPS else 0.0


def _ratio_limit(limit: float, rate: FloatArray) -> FloatArray:
    """limit / |rate| where rate is not zero, inf where it is."""
    with np.errstate(divide='ignore'):
        return np.where(rate != 0.0, limit / np.abs(rate), np.inf)


def _steeper_neighbour(slope: FloatArray) -> FloatArray:
    """At each of the n + 1 samples, the larger |slope| of the (one or two) segments of the n
    that it ends: a speed within the limit for it keeps both segments within it."""
    magnitude = np.abs(slope)
    return np.maximum(np.append(magnitude, 0.0), np.insert(magnitude, 0, 0.0))


def _yaw_acceleration_limit(cap: FloatArray, ds: FloatArray, segment_yaw_per_m: FloatArray,
                            max_yaw_acceleration: float, bends: bool = True) -> FloatArray:
    """The tangential acceleration allowed on each segment by the yaw acceleration of a heading
    given per sample (piecewise linear in s); with ``bends``, ``cap`` is lowered in place where
    the heading's curve bends.

    The yaw acceleration is yaw'' v^2 + yaw' a (' = d/ds): where the rate per metre changes at
    a sample (yaw'' ~ its change over the mean length of the two segments), the speed there and
    at the samples next to it is capped so that the first term takes at most half the limit
    (the mean yaw rates of both segments change with them); each segment's acceleration
    gets what its ends leave of it, |yaw'| |a| <= limit - yaw'' v_cap^2 (all of it where the
    heading turns at a steady rate per metre)."""
    bend_per_m2 = np.zeros(len(cap))
    if bends and len(ds) > 1:
        bend_per_m2[1:-1] = np.abs(np.diff(segment_yaw_per_m)) / (0.5 * (ds[:-1] + ds[1:]))
    # the speeds next to a bend time the two segments whose mean yaw rates it changes
    bend_per_m2 = np.maximum(bend_per_m2, np.maximum(np.append(bend_per_m2[1:], 0.0),
                                                     np.insert(bend_per_m2[:-1], 0, 0.0)))
    np.minimum(cap, _ratio_limit(0.5 * max_yaw_acceleration, bend_per_m2) ** 0.5, out=cap)
    used = cap**2 * bend_per_m2
    left = max_yaw_acceleration - np.maximum(used[:-1], used[1:])
    return _ratio_limit(1.0, segment_yaw_per_m) * left


def speed_limits(path: PathSamples, limits: MotionLimits, yaw_rate_per_m: FloatArray) -> FloatArray:
    """The highest allowed speed at every sample (m/s), before acceleration is considered.

    ``yaw_rate_per_m`` is |d(vehicle yaw)/ds| at each sample (the curvature for a vehicle facing
    along the path; for a yaw profile given at the samples, the steeper of the two segments
    next to the sample, so that the yaw rate stays within the limit between samples too).
    """
    cap = np.minimum(
        _ratio_limit(limits.max_lateral_acceleration_mps2, path.curvature_inv_m) ** 0.5,
        _ratio_limit(limits.max_yaw_rate_radps, yaw_rate_per_m),
    )
    if limits.max_curvature_rate_inv_ms > 0 and len(path.s_m) > 2:
        curvature_per_m = np.gradient(path.curvature_inv_m, path.s_m)
        cap = np.minimum(cap, _ratio_limit(limits.max_curvature_rate_inv_ms, curvature_per_m))
    return np.minimum(cap, limits.max_speed_mps)


def time_scale(
    path: PathSamples, limits: MotionLimits, yaw_rad: FloatArray | None = None,
    start_speed_mps: float = 0.0, reverse: bool = False,
) -> Trajectory:
    """The time-optimal trajectory along ``path`` within ``limits``, from ``start_speed_mps``
    (along the path, >= 0) to rest.

    ``yaw_rad`` is the vehicle heading at each sample (unwrapped); ``None`` means the vehicle
    faces along the path (differential drive, car). A different heading (an omni base) gives a
    body-frame lateral velocity, and its yaw acceleration is held within
    :meth:`MotionLimits.max_yaw_acceleration_radps2` (:func:`_yaw_acceleration_limit`), so
    that the yaw rate ramps up and down as the speed does. ``reverse`` (``yaw_rad`` not given):
    the vehicle faces against the direction of travel, its heading the path's turned by pi (a
    reversing leg); its yaw acceleration is bounded only where it changes speed, not where the
    path bends (as the path's curvature is not, driving forwards). The schedule starts at
    ``start_speed_mps`` where braking from it at ``max_acceleration_mps2`` keeps within the
    limits ahead, else at the highest speed that does (the vehicle then arrives too fast to
    follow it at once). Raises :class:`PlanningError` for a path of zero length or a start speed
    that is not a finite number >= 0.
    """
    if path.length_m <= 0:
        raise PlanningError('cannot time a path of zero length')
    if not 0.0 <= start_speed_mps < np.inf:
        raise PlanningError(f'the start speed must be a finite number >= 0 m/s, got '
                            f'{start_speed_mps}')
    if reverse:
        yaw_rad = path.yaw_rad - np.pi
    s = path.s_m
    yaw = path.yaw_rad if yaw_rad is None else np.asarray(yaw_rad, dtype=float)
    ds = np.diff(s)
    acceleration = np.full(len(ds), limits.max_acceleration_mps2)
    if yaw_rad is None:
        yaw_rate_per_m = path.curvature_inv_m
        # the heading's turn between samples too: a bend sharper than the samples' curvature
        # (a hook within one segment) keeps the mean yaw rate over the segment in the limit
        yaw_bound_per_m = np.maximum(np.abs(yaw_rate_per_m), _steeper_neighbour(
            np.diff(np.unwrap(path.yaw_rad)) / ds))
    else:
        yaw_rate_per_m = np.gradient(yaw, s)
        segment_yaw_per_m = np.diff(yaw) / ds
        yaw_bound_per_m = _steeper_neighbour(segment_yaw_per_m)
    cap = speed_limits(path, limits, yaw_bound_per_m)
    cap[0], cap[-1] = start_speed_mps, 0.0
    if yaw_rad is not None:
        acceleration = np.minimum(acceleration, _yaw_acceleration_limit(
            cap, ds, segment_yaw_per_m, limits.max_yaw_acceleration_radps2, bends=not reverse))
    two_a_ds = 2.0 * acceleration * ds
    speed_sq = cap**2
    for i in range(len(ds)):
        speed_sq[i + 1] = min(speed_sq[i + 1], speed_sq[i] + two_a_ds[i])
    for i in range(len(ds) - 1, -1, -1):
        speed_sq[i] = min(speed_sq[i], speed_sq[i + 1] + two_a_ds[i])
    speed = np.sqrt(speed_sq)
    end_speed_sum = speed[:-1] + speed[1:]
    with np.errstate(divide='ignore', invalid='ignore'):
        dt = 2.0 * ds / end_speed_sum
    # A segment at rest at both ends (a leg of two poses, between two cusps): it accelerates
    # over its first half and brakes over the second (2 ds / 0 would be infinite).
    at_rest = end_speed_sum == 0.0
    dt[at_rest] = 2.0 * np.sqrt(ds[at_rest] / acceleration[at_rest])
    t = np.concatenate([[0.0], np.cumsum(dt)])
    offset = path.yaw_rad - yaw
    return Trajectory(
        t_s=t,
        s_m=s,
        x_m=path.x_m,
        y_m=path.y_m,
        yaw_rad=yaw,
        path_yaw_rad=path.yaw_rad,
        curvature_inv_m=path.curvature_inv_m,
        v_mps=speed,
        vx_mps=speed * np.cos(offset),
        vy_mps=speed * np.sin(offset),
        wz_radps=speed * yaw_rate_per_m,
    )
