"""Planar angles: wrapping to (-pi, pi], for one float (also in compiled code) or for arrays, and
a heading as the quaternion of the rotation about +z.

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


def wrap_angles(angles_rad: ArrayLike) -> FloatArray:
    """:func:`wrap_angle` of every element of an array [rad], as a float64 array."""
    angles = np.asarray(angles_rad, dtype=float)
    inside = (angles > -np.pi) & (angles <= np.pi)
    return np.where(inside, angles, np.pi - (np.pi - angles) % (2.0 * np.pi))
