"""Output limits of the controller: speed, yaw rate, acceleration and (cars) curvature.

Applied to every command in this order: clamp each component to its range (linear.y is 0 for
vehicles that cannot move sideways); limit its change since the previous command to the
acceleration limits times the control period, within the range still (a range lowered live
applies at once); finally keep a car's yaw rate within what its steering allows at the
resulting speed, |wz| <= max_curvature * |vx|. Compiled
(:mod:`wheelsim.core.compiled`): a few dozen comparisons, called at every control step.
"""

from __future__ import annotations

import math

from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.tracking.config import OutputLimitsConfig
from wheelsim.core.tracking.reference import BodyTwist


@jitable
def _clamp(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


@jitable
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
    return BodyTwist._make(_limited(
        *command, *previous, period_s, limits.min_linear_x, limits.max_linear_x,
        limits.max_linear_y, limits.max_angular_z, limits.max_linear_acceleration,
        limits.max_angular_acceleration, holonomic, max_curvature_inv_m))


@compiled
def _limited(vx: float, vy: float, wz: float, previous_vx: float, previous_vy: float,
             previous_wz: float, period_s: float, min_linear_x: float, max_linear_x: float,
             max_linear_y: float, max_angular_z: float, max_linear_acceleration: float,
             max_angular_acceleration: float, holonomic: bool, max_curvature_inv_m: float
             ) -> tuple[float, float, float]:
    """:func:`limit_twist` on the components (limits as in OutputLimitsConfig)."""
    if not (math.isfinite(vx) and math.isfinite(vy) and math.isfinite(wz)):
        vx = vy = wz = 0.0
    vx = _clamp(vx, min_linear_x, max_linear_x)
    vy = _clamp(vy, -max_linear_y, max_linear_y) if holonomic else 0.0
    wz = _clamp(wz, -max_angular_z, max_angular_z)
    linear_step = max_linear_acceleration * period_s
    # clamped again: a previous command outside the ranges (limits lowered live) is not held
    # there by the acceleration limit
    vx = _clamp(_step_towards(vx, previous_vx, linear_step), min_linear_x, max_linear_x)
    vy = _clamp(_step_towards(vy, previous_vy, linear_step), -max_linear_y, max_linear_y)
    wz = _clamp(_step_towards(wz, previous_wz, max_angular_acceleration * period_s),
                -max_angular_z, max_angular_z)
    if max_curvature_inv_m > 0:
        bound = max_curvature_inv_m * abs(vx)
        wz = _clamp(wz, -bound, bound)
    return vx, vy, wz
