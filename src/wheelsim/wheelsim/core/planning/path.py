"""Geometric paths in the plane: arc-length sampled paths and the planner's error.

A :class:`PathSamples` is the common currency of the planner: every path constructor
(spline, curvature-bounded) returns one, and the time scaling turns one into a trajectory.
All coordinates are in the planning frame (``map``), lengths in metres, angles in radians,
curvature in 1/m (positive turning left, counter-clockwise).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray


class PlanningError(ValueError):
    """A goal or waypoint list for which no valid path or trajectory exists; says why."""




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
