"""Planar angles: wrapping to (-pi, pi], for one float (also in compiled code) or for arrays, and
a heading as the quaternion of the rotation about +z, and back.

Angles already inside (-pi, pi] are returned unchanged (bit for bit), so wrapping a wrapped
angle is free of rounding; outside, ``pi - (pi - a) mod 2 pi`` maps ``-pi`` to ``pi``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import jitable


@jitable
def wrap_angle(angle_rad: float) -> float:
    """``angle_rad`` [rad] mapped into (-pi, pi]; values already inside are returned unchanged."""
    if -math.pi < angle_rad <= math.pi:
        return angle_rad
    return math.pi - (math.pi - angle_rad) % (2.0 * math.pi)


@jitable
def yaw_quaternion_zw(yaw_rad: float) -> tuple[float, float]:
    """The z and w components of the unit quaternion of the rotation about +z by ``yaw_rad``
    (x = y = 0): ``(sin(yaw / 2), cos(yaw / 2))``."""
    half = 0.5 * float(yaw_rad)
    return math.sin(half), math.cos(half)


UNIT_TOLERANCE = 1e-9  # |norm^2 - 1| below which a quaternion is taken as unit
MIN_NORM_SQUARED = 1e-12  # below this a quaternion is no rotation at all


def quaternion_yaw(x: float, y: float, z: float, w: float) -> float:
    """Heading [rad] (rotation about +z) of the quaternion ``(x, y, z, w)``, in (-pi, pi]; roll
    and pitch are ignored.

    A quaternion that is not of unit length is taken for the rotation it represents (the
    scale-free form ``atan2(2(wz + xy), w^2 + x^2 - y^2 - z^2)``); a zero or non-finite one
    gives NaN, which every input check refuses.
    """
    norm_squared = w * w + x * x + y * y + z * z
    if not norm_squared > MIN_NORM_SQUARED or math.isinf(norm_squared):
        return math.nan
    along = 1.0 if abs(norm_squared - 1.0) <= UNIT_TOLERANCE else norm_squared
    return math.atan2(2.0 * (w * z + x * y), along - 2.0 * (y * y + z * z))


def wrap_angles(angles_rad: ArrayLike) -> FloatArray:
    """:func:`wrap_angle` of every element of an array [rad], as a float64 array."""
    angles = np.asarray(angles_rad, dtype=float)
    inside = (angles > -np.pi) & (angles <= np.pi)
    return np.where(inside, angles, np.pi - (np.pi - angles) % (2.0 * np.pi))
