"""Geometric paths in the plane: poses, angle wrapping and arc-length sampled paths.

A :class:`PathSamples` is the common currency of the planner: every path constructor
(spline, curvature-bounded) returns one, and the time scaling turns one into a trajectory.
All coordinates are in the planning frame (``map``), lengths in metres, angles in radians,
curvature in 1/m (positive turning left, counter-clockwise).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]


class PlanningError(ValueError):
    """A goal or waypoint list for which no valid path or trajectory exists; says why."""


class Pose2D(NamedTuple):
    """A planar pose: position in metres and heading (yaw) in radians, in the planning frame."""

    x_m: float
    y_m: float
    yaw_rad: float


def wrap_angle(angle_rad: float | FloatArray) -> float | FloatArray:
    """Wrap an angle (or array of angles) to [-pi, pi). On a Python float this is Python's
    float arithmetic: the same result as numpy's, without its cost per call."""
    return (angle_rad + math.pi) % (2.0 * math.pi) - math.pi


@dataclass(frozen=True)
class PathSamples:
    """A path sampled along its arc length.

    All arrays have the same length N >= 2. ``s_m`` increases strictly from 0;
    ``yaw_rad`` is the direction of travel (the tangent), unwrapped (continuous, not limited to
    [-pi, pi)) so that it can be interpolated; ``curvature_inv_m`` is d(yaw)/ds.
    """

    s_m: FloatArray
    x_m: FloatArray
    y_m: FloatArray
    yaw_rad: FloatArray
    curvature_inv_m: FloatArray

    @property
    def length_m(self) -> float:
        """Total arc length in metres."""
        return float(self.s_m[-1])

    def resampled(self, spacing_m: float, knot_s_m: FloatArray | None = None) -> PathSamples:
        """The same path at (nearly) uniform arc-length spacing, at least 3 samples.

        The ends and every arc length in ``knot_s_m`` (the waypoints) are kept as samples.
        """
        knots = np.unique(
            np.concatenate([[0.0, self.length_m], [] if knot_s_m is None else knot_s_m])
        )
        pieces = [
            np.linspace(a, b, max(1, int(np.ceil((b - a) / spacing_m))) + 1)[:-1]
            for a, b in zip(knots[:-1], knots[1:], strict=True)
        ]
        s_new = np.concatenate([*pieces, knots[-1:]])
        if len(s_new) < 3:
            s_new = np.linspace(0.0, self.length_m, 3)
        return PathSamples(
            s_m=s_new,
            x_m=np.interp(s_new, self.s_m, self.x_m),
            y_m=np.interp(s_new, self.s_m, self.y_m),
            yaw_rad=np.interp(s_new, self.s_m, self.yaw_rad),
            curvature_inv_m=np.interp(s_new, self.s_m, self.curvature_inv_m),
        )

    def max_abs_curvature(self) -> tuple[float, int]:
        """The largest |curvature| in 1/m and the index of the sample where it occurs."""
        index = int(np.argmax(np.abs(self.curvature_inv_m)))
        return float(abs(self.curvature_inv_m[index])), index
