"""Exact integration of a constant planar body twist (the SE(2) exponential), compiled.

A body twist ``(vx, vy, wz)`` held for ``dt`` moves a frame along a circular arc. With
``theta = wz * dt`` the displacement in the frame's own axes at the start of the step is

    dx = (A * vx - B * vy) * dt,   dy = (B * vx + A * vy) * dt,
    A = sin(theta) / theta,        B = (1 - cos(theta)) / theta = 2 sin^2(theta / 2) / theta,

which is exact for any step length (not an Euler or midpoint approximation). Near
``theta = 0`` both ratios use their Taylor series, so straight driving is exact too.
"""

from __future__ import annotations

import math

from wheelsim.core.compiled import compiled

SERIES_BELOW_RAD = 1e-3


@compiled
def wrap_angle(angle_rad: float) -> float:
    """``angle_rad`` mapped into (-pi, pi]; values already inside are returned unchanged."""
    if -math.pi < angle_rad <= math.pi:
        return angle_rad
    wrapped = (angle_rad + math.pi) % (2.0 * math.pi)
    if wrapped == 0.0:
        wrapped += 2.0 * math.pi
    return wrapped - math.pi


@compiled
def arc_factors(theta_rad: float) -> tuple[float, float]:
    """``(sin(t)/t, (1 - cos(t))/t)`` for ``t = theta_rad``, accurate to rounding for every t.

    Below ``SERIES_BELOW_RAD`` the series ``1 - t^2/6 + t^4/120`` and ``t/2 - t^3/24 + t^5/720``
    are used (truncation error below 1e-21).
    """
    if abs(theta_rad) < SERIES_BELOW_RAD:
        t2 = theta_rad * theta_rad
        return 1.0 - t2 / 6.0 + t2 * t2 / 120.0, theta_rad * (0.5 - t2 / 24.0 + t2 * t2 / 720.0)
    half_sin = math.sin(0.5 * theta_rad)
    half_cos = math.cos(0.5 * theta_rad)
    twice_over = 2.0 / theta_rad
    return twice_over * half_sin * half_cos, twice_over * half_sin * half_sin


@compiled
def integrate_twist(
    x_m: float, y_m: float, yaw_rad: float, vx_mps: float, vy_mps: float, wz_radps: float,
    dt_s: float,
) -> tuple[float, float, float]:
    """Pose (map frame) after holding the body twist (body frame) for ``dt_s`` seconds."""
    a, b = arc_factors(wz_radps * dt_s)
    dx = (a * vx_mps - b * vy_mps) * dt_s
    dy = (b * vx_mps + a * vy_mps) * dt_s
    cos_yaw = math.cos(yaw_rad)
    sin_yaw = math.sin(yaw_rad)
    return (
        x_m + cos_yaw * dx - sin_yaw * dy,
        y_m + sin_yaw * dx + cos_yaw * dy,
        wrap_angle(yaw_rad + wz_radps * dt_s),
    )
