"""Output limits of the controller: speed, yaw rate, acceleration and (cars) curvature.

Applied to every command in this order: clamp each component to its range (linear.y is 0 for
vehicles that cannot move sideways); limit its change since the previous command to the
acceleration limits times the control period; finally keep a car's yaw rate within what its
steering allows at the resulting speed, |wz| <= max_curvature * |vx|.
"""

from __future__ import annotations

import math

from wheelsim.core.tracking.config import OutputLimitsConfig
from wheelsim.core.tracking.reference import BodyTwist


def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def _step_towards(target: float, previous: float, max_change: float) -> float:
    """``target``, moved no further than ``max_change`` from ``previous`` (0: unlimited)."""
    if max_change <= 0:
        return target
    return _clamp(target, previous - max_change, previous + max_change)


def limit_twist(
    command: BodyTwist,
    previous: BodyTwist,
    period_s: float,
    limits: OutputLimitsConfig,
    holonomic: bool,
    max_curvature_inv_m: float = 0.0,
) -> BodyTwist:
    """``command`` within ``limits``; ``previous`` is the last command sent, ``period_s`` ago.

    A non-finite command becomes zero (still rate limited), so NaN never leaves the controller.
    ``max_curvature_inv_m`` 0 means no curvature limit.
    """
    vx, vy, wz = command
    if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(wz)):
        vx = vy = wz = 0.0
    vx = _clamp(vx, limits.min_linear_x, limits.max_linear_x)
    vy = _clamp(vy, -limits.max_linear_y, limits.max_linear_y) if holonomic else 0.0
    wz = _clamp(wz, -limits.max_angular_z, limits.max_angular_z)
    linear_step = limits.max_linear_acceleration * period_s
    vx = _step_towards(vx, previous.vx_mps, linear_step)
    vy = _step_towards(vy, previous.vy_mps, linear_step)
    wz = _step_towards(wz, previous.wz_radps, limits.max_angular_acceleration * period_s)
    if max_curvature_inv_m > 0:
        bound = max_curvature_inv_m * abs(vx)
        wz = _clamp(wz, -bound, bound)
    return BodyTwist(vx, vy, wz)
