"""Planar rigid motion (SE(2)): poses, composition, inversion, and exact twist integration.

A pose ``a_T_b = (x, y, yaw)`` places frame ``b`` in frame ``a``: ``(x, y)`` [m] is ``b``'s origin
in ``a``, ``yaw`` [rad] its heading, wrapped to ``(-pi, pi]`` (:mod:`.angles`).
:class:`Pose2D` names the three fields; :data:`Floats3` is the same as a plain tuple.

- Composition, inversion and relative motion of one pose as plain floats
  (:func:`compose_floats`, :func:`inverse_floats`: the per-sample path, where a numpy array per
  3-vector would cost more than the arithmetic) or over arrays of shape ``(..., 3)``
  (:func:`compose`, :func:`inverse`, :func:`relative`, broadcasting over the leading axes so the
  statistical tests can run many seeded trajectories at once); the array functions use the
  float ones for a single pose, so both give the same numbers. :func:`compose_jacobians` for
  covariance propagation.
- Exact integration of a constant body twist (the SE(2) exponential), compiled. A body twist
  ``(vx, vy, wz)`` held for ``dt`` moves a frame along a circular arc. With ``theta = wz * dt``
  the displacement in the frame's own axes at the start of the step is

      dx = (A * vx - B * vy) * dt,   dy = (B * vx + A * vy) * dt,
      A = sin(theta) / theta,        B = (1 - cos(theta)) / theta = 2 sin^2(theta / 2) / theta,

  which is exact for any step length (not an Euler or midpoint approximation). Near
  ``theta = 0`` both ratios use their Taylor series, so straight driving is exact too.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.geometry.angles import wrap_angle, wrap_angles

SERIES_BELOW_RAD = 1e-3
#: The largest map-frame coordinate [m] of any pose, frame or map cell an input may give (both x
#: and y within +- this): no world is that large, and much larger coordinates overflow the
#: trackers' nearest-point search into inf and NaN.
MAX_COORDINATE_M = 1e9

#: Three plain floats: a pose or increment ``(x [m], y [m], yaw [rad])``, a body twist
#: ``(vx [m/s], vy [m/s], wz [rad/s])`` or the diagonal of such a 3x3 covariance.
Floats3 = tuple[float, float, float]


class Pose2D(NamedTuple):
    """A planar pose: position in metres and heading (yaw) in radians, in the named frame."""

    x_m: float
    y_m: float
    yaw_rad: float


@jitable
def compose_floats(a_T_b: Floats3, b_T_c: Floats3) -> Floats3:
    """:func:`compose` of one pose pair given as floats, as floats (also in compiled code)."""
    x, y, yaw = a_T_b
    dx, dy, dyaw = b_T_c
    cos, sin = math.cos(yaw), math.sin(yaw)
    return x + cos * dx - sin * dy, y + sin * dx + cos * dy, wrap_angle(yaw + dyaw)


@jitable
def inverse_floats(a_T_b: Floats3) -> Floats3:
    """:func:`inverse` of one pose given as floats, as floats (also in compiled code)."""
    x, y, yaw = a_T_b
    cos, sin = math.cos(yaw), math.sin(yaw)
    return -cos * x - sin * y, sin * x - cos * y, wrap_angle(-yaw)


def compose(a_T_b: ArrayLike, b_T_c: ArrayLike) -> FloatArray:
    """``a_T_c = a_T_b * b_T_c``: pose ``b_T_c`` (given in frame ``b``) expressed in frame ``a``."""
    ab = np.asarray(a_T_b, dtype=float)
    bc = np.asarray(b_T_c, dtype=float)
    if ab.shape == bc.shape == (3,):
        return np.array(compose_floats(ab.tolist(), bc.tolist()))
    cos, sin = np.cos(ab[..., 2]), np.sin(ab[..., 2])
    return np.stack(
        [
            ab[..., 0] + cos * bc[..., 0] - sin * bc[..., 1],
            ab[..., 1] + sin * bc[..., 0] + cos * bc[..., 1],
            wrap_angles(ab[..., 2] + bc[..., 2]),
        ],
        axis=-1,
    )


def inverse(a_T_b: ArrayLike) -> FloatArray:
    """``b_T_a``, the inverse transform of ``a_T_b``."""
    ab = np.asarray(a_T_b, dtype=float)
    if ab.shape == (3,):
        return np.array(inverse_floats(ab.tolist()))
    cos, sin = np.cos(ab[..., 2]), np.sin(ab[..., 2])
    return np.stack(
        [
            -cos * ab[..., 0] - sin * ab[..., 1],
            sin * ab[..., 0] - cos * ab[..., 1],
            wrap_angles(-ab[..., 2]),
        ],
        axis=-1,
    )


def relative(a_T_b: ArrayLike, a_T_c: ArrayLike) -> FloatArray:
    """``b_T_c = inverse(a_T_b) * a_T_c``: the motion from pose ``b`` to ``c`` seen from ``b``."""
    return compose(inverse(a_T_b), a_T_c)


def compose_jacobians(
    a_T_b: Sequence[float], b_T_c: Sequence[float]
) -> tuple[FloatArray, FloatArray]:
    """Jacobians of :func:`compose` with respect to ``a_T_b`` and to ``b_T_c`` (single poses).

    Returns ``(J_first, J_second)``, each 3x3, so that to first order
    ``cov(a_T_c) = J_first cov(a_T_b) J_first^T + J_second cov(b_T_c) J_second^T`` for independent
    errors added to the ``(x, y, yaw)`` components.
    """
    yaw = float(a_T_b[2])
    cos, sin = math.cos(yaw), math.sin(yaw)
    dx, dy = float(b_T_c[0]), float(b_T_c[1])
    j_first = np.array(
        [
            [1.0, 0.0, -sin * dx - cos * dy],
            [0.0, 1.0, cos * dx - sin * dy],
            [0.0, 0.0, 1.0],
        ]
    )
    j_second = np.array([[cos, -sin, 0.0], [sin, cos, 0.0], [0.0, 0.0, 1.0]])
    return j_first, j_second


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
