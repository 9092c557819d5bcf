"""The vehicle's collision footprint: a simple polygon in the base frame.

Given by the ``footprint`` parameter as a flat list ``[x1, y1, x2, y2, ...]`` (metres, base
frame, at least three corners, any orientation, no self-intersection), or, when that list is
empty, the rectangle that covers every wheel (wheel centres plus the wheel radius ahead and
behind, a quarter radius beside: the wheels of the URDF).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.params import ParameterError
from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.joints import wheel_layout

MAX_CORNERS = 1000
MAX_EXTENT_M = 1000.0


def _segments_cross(p1, p2, q1, q2) -> bool:
    """Whether two segments share a point (touching included)."""
    def orientation(a, b, c):
        value = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])
        return 0 if value == 0 else (1 if value > 0 else -1)

    def on_segment(a, b, c):
        return (min(a[0], b[0]) <= c[0] <= max(a[0], b[0])
                and min(a[1], b[1]) <= c[1] <= max(a[1], b[1]))

    o1, o2 = orientation(p1, p2, q1), orientation(p1, p2, q2)
    o3, o4 = orientation(q1, q2, p1), orientation(q1, q2, p2)
    if o1 != o2 and o3 != o4:
        return True
    return ((o1 == 0 and on_segment(p1, p2, q1)) or (o2 == 0 and on_segment(p1, p2, q2))
            or (o3 == 0 and on_segment(q1, q2, p1)) or (o4 == 0 and on_segment(q1, q2, p2)))


@dataclass(frozen=True)
class Footprint:
    """Corners ``(K, 2)`` [m] in the base frame, counter-clockwise."""

    corners: FloatArray

    @classmethod
    def from_flat(cls, values: Sequence[float], name: str = 'footprint') -> Footprint:
        """From ``[x1, y1, x2, y2, ...]``; raises ParameterError naming ``name``."""
        values = tuple(values)
        if len(values) % 2 or not 3 <= len(values) // 2 <= MAX_CORNERS:
            raise ParameterError(name, values, f'must be x, y pairs of 3 to {MAX_CORNERS} '
                                 'corners (empty: the rectangle around the wheels)')
        if not all(math.isfinite(v) and abs(v) <= MAX_EXTENT_M for v in values):
            raise ParameterError(name, values,
                                 f'every coordinate must be finite, within +-{MAX_EXTENT_M:g} m')
        corners = np.array(values, dtype=float).reshape(-1, 2)
        area = _signed_area(corners)
        if abs(area) < 1e-9:
            raise ParameterError(name, values, 'the polygon has no area')
        k = len(corners)
        for i in range(k):
            for j in range(i + 1, k):
                if j == i + 1 or (i == 0 and j == k - 1):
                    continue  # neighbouring edges share a corner
                if _segments_cross(corners[i], corners[(i + 1) % k], corners[j],
                                   corners[(j + 1) % k]):
                    raise ParameterError(name, values, f'edges {i} and {j} cross: the polygon '
                                         'must not intersect itself')
        return cls(corners if area > 0 else corners[::-1].copy())

    @classmethod
    def around_wheels(cls, config: VehicleConfig) -> Footprint:
        """The rectangle covering every wheel of the vehicle (see the module docstring)."""
        wheels = wheel_layout(config)
        xs = [w.x_m + s * w.radius_m for w in wheels for s in (-1.0, 1.0)]
        ys = [w.y_m + s * 0.25 * w.radius_m for w in wheels for s in (-1.0, 1.0)]
        low_x, high_x, low_y, high_y = min(xs), max(xs), min(ys), max(ys)
        return cls(np.array([[low_x, low_y], [high_x, low_y], [high_x, high_y], [low_x, high_y]]))

    @property
    def radius_m(self) -> float:
        """Largest distance of a corner from the base frame's origin."""
        return float(np.hypot(self.corners[:, 0], self.corners[:, 1]).max())

    def flat(self) -> tuple[float, ...]:
        """``[x1, y1, x2, y2, ...]``, counter-clockwise."""
        return tuple(float(v) for v in self.corners.reshape(-1))

    def in_map(self, x_m: float, y_m: float, yaw_rad: float) -> FloatArray:
        """The corners ``(K, 2)`` placed at the map-frame pose of the base frame."""
        cos, sin = math.cos(yaw_rad), math.sin(yaw_rad)
        corners = self.corners
        return np.column_stack((x_m + cos * corners[:, 0] - sin * corners[:, 1],
                                y_m + sin * corners[:, 0] + cos * corners[:, 1]))


def footprint_of(values: Sequence[float], config: VehicleConfig) -> Footprint:
    """The ``footprint`` parameter's polygon, or the rectangle around the wheels if empty."""
    return Footprint.from_flat(values) if len(values) else Footprint.around_wheels(config)


def _signed_area(corners: FloatArray) -> float:
    x, y = corners[:, 0], corners[:, 1]
    return 0.5 * float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
