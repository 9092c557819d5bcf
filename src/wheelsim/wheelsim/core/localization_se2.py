"""Planar rigid transforms (SE(2)) as ``(x, y, yaw)`` arrays, as localization needs them.

A pose ``a_T_b = (x, y, yaw)`` places frame ``b`` in frame ``a``: ``(x, y)`` [m] is ``b``'s origin
in ``a``, ``yaw`` [rad] its heading, always wrapped to ``(-pi, pi]`` (as
:func:`wheelsim.core.se2.wrap_angle` and a yaw read from a quaternion).  Every array function
accepts arrays of shape ``(..., 3)`` and broadcasts over the leading axes, so the statistical tests
can run many seeded trajectories at once.  :func:`wrap_float`, :func:`compose_floats` and
:func:`inverse_floats` do the same for one angle or pose as plain floats (:data:`Floats3`): the
per-sample path of the localization, where a numpy array per 3-vector would cost more than the
arithmetic.  The array functions use them for a single pose, so both give the same numbers.

Only composition, inversion, relative motion and the Jacobians of composition live here; exact
twist integration is :mod:`wheelsim.core.se2` (scalar, compiled).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]

#: Three plain floats: a pose or increment ``(x [m], y [m], yaw [rad])``, a body twist
#: ``(vx [m/s], vy [m/s], wz [rad/s])`` or the diagonal of such a 3x3 covariance.
Floats3 = tuple[float, float, float]


def wrap_angle(angle_rad: ArrayLike) -> FloatArray:
    """Angles wrapped to ``(-pi, pi]`` [rad]; angles already inside are returned unchanged."""
    angle = np.asarray(angle_rad, dtype=float)
    if angle.ndim == 0:
        value = float(angle)
        return angle if -math.pi < value <= math.pi else np.asarray(wrap_float(value))
    inside = (angle > -np.pi) & (angle <= np.pi)
    return np.where(inside, angle, np.pi - (np.pi - angle) % (2.0 * np.pi))


def wrap_float(angle_rad: float) -> float:
    """:func:`wrap_angle` of one float, as a float (the per-sample case, without array overhead)."""
    if -math.pi < angle_rad <= math.pi:
        return angle_rad
    return math.pi - (math.pi - angle_rad) % (2.0 * math.pi)


def compose_floats(a_T_b: Floats3, b_T_c: Floats3) -> Floats3:
    """:func:`compose` of one pose pair given as floats, as floats."""
    x, y, yaw = a_T_b
    dx, dy, dyaw = b_T_c
    cos, sin = math.cos(yaw), math.sin(yaw)
    return x + cos * dx - sin * dy, y + sin * dx + cos * dy, wrap_float(yaw + dyaw)


def inverse_floats(a_T_b: Floats3) -> Floats3:
    """:func:`inverse` of one pose given as floats, as floats."""
    x, y, yaw = a_T_b
    cos, sin = math.cos(yaw), math.sin(yaw)
    return -cos * x - sin * y, sin * x - cos * y, wrap_float(-yaw)


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
            wrap_angle(ab[..., 2] + bc[..., 2]),
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
            wrap_angle(-ab[..., 2]),
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
