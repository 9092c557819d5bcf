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

#: Arc lengths of a path's knots closer than this [m] are one sample: they differ by the
#: rounding of lengths summed piece by piece.
KNOT_MERGE_M = 1e-9


class PlanningError(ValueError):
    """A goal or waypoint list for which no valid path or trajectory exists; says why."""


def cubic_hermite(x: FloatArray, y: FloatArray, dydx: FloatArray, x_new: FloatArray) -> FloatArray:
    """The piecewise cubic through the points ``(x, y)`` with the slopes ``dydx`` there, at
    ``x_new`` (beyond the ends: the end pieces extended). ``x``: at least two points, finite and
    strictly increasing, else ValueError.

    The arithmetic of ``scipy.interpolate.CubicHermiteSpline``, bit for bit at finite ``x_new``
    (tested against it), without importing scipy.interpolate (docs/architecture.md, "Start-up").
    """
    dx = np.diff(x)
    if len(x) < 2 or not np.all(np.isfinite(x)) or not np.all(dx > 0):
        raise ValueError('cubic_hermite: x must be at least two finite, strictly increasing '
                         'points')
    slope = np.diff(y) / dx
    t = (dydx[:-1] + dydx[1:] - 2 * slope) / dx
    cubic, square = t / dx, (slope - dydx[:-1]) / dx - t
    piece = np.clip(np.searchsorted(x, x_new, side='right') - 1, 0, len(x) - 2)
    s = x_new - x[piece]
    power = s * s
    value = 0.0 + y[piece] + dydx[piece] * s + square[piece] * power
    return value + cubic[piece] * (power * s)


@dataclass(frozen=True)
class PathShape:
    """How long a path is and how much it bends: ``length_m``, the largest |curvature|
    ``max_curvature_inv_m`` (1/m) and ``total_turning_rad``, the integral of |curvature| (a
    full circle adds 2 pi: a loop shows here)."""

    length_m: float
    max_curvature_inv_m: float
    total_turning_rad: float


def path_shape(x_m: FloatArray, y_m: FloatArray) -> PathShape:
    """:class:`PathShape` of the polyline through the points (m), as a received plan carries it.

    Repeated points are dropped. At each interior point the turning is the angle between its two
    steps and the curvature that of the circle through it and its neighbours (2 |s1 x s2| /
    (|s1| |s2| |s1 + s2|), exact for points on a circle whatever their spacing). Where the
    direction of travel reverses (a cusp: the steps point against each other) the second step is
    taken backwards, so a reversing plan turns only where it bends.
    """
    points = np.column_stack([x_m, y_m]).astype(float)
    steps = np.diff(points, axis=0)
    lengths = np.hypot(steps[:, 0], steps[:, 1])
    steps, lengths = steps[lengths > 0], lengths[lengths > 0]
    if len(lengths) < 2:
        return PathShape(float(lengths.sum()), 0.0, 0.0)
    first, second = steps[:-1], steps[1:].copy()
    cusp = (first * second).sum(axis=1) < 0
    second[cusp] *= -1.0
    cross = first[:, 0] * second[:, 1] - first[:, 1] * second[:, 0]
    dot = (first * second).sum(axis=1)
    turn = np.abs(np.arctan2(cross, dot))
    chord = np.hypot(*(first + second).T)
    curvature = 2.0 * np.abs(cross) / (lengths[:-1] * lengths[1:] * chord)
    return PathShape(float(lengths.sum()), float(curvature.max()), float(turn.sum()))


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
        Positions are interpolated with cubic Hermite polynomials on the samples' positions and
        directions (errors of order spacing^4 * curvature^3: a resampled circle keeps its
        curvature to 1e-9), the rest linearly.
        """
        inner = np.unique([] if knot_s_m is None else knot_s_m)
        # a knot at an end or at another knot but for rounding is that sample: no zero-length
        # step between two samples (Nav2's controllers find a cusp from the steps beside it)
        inner = inner[(inner > KNOT_MERGE_M) & (inner < self.length_m - KNOT_MERGE_M)]
        inner = inner[np.diff(inner, prepend=-np.inf) > KNOT_MERGE_M]
        knots = np.concatenate([[0.0], inner, [self.length_m]])
        pieces = [
            np.linspace(a, b, max(1, int(np.ceil((b - a) / spacing_m))) + 1)[:-1]
            for a, b in zip(knots[:-1], knots[1:], strict=True)
        ]
        s_new = np.concatenate([*pieces, knots[-1:]])
        if len(s_new) < 3:
            s_new = np.linspace(0.0, self.length_m, 3)
        return PathSamples(
            s_m=s_new,
            x_m=cubic_hermite(self.s_m, self.x_m, np.cos(self.yaw_rad), s_new),
            y_m=cubic_hermite(self.s_m, self.y_m, np.sin(self.yaw_rad), s_new),
            yaw_rad=np.interp(s_new, self.s_m, self.yaw_rad),
            curvature_inv_m=np.interp(s_new, self.s_m, self.curvature_inv_m),
        )

    def max_abs_curvature(self) -> tuple[float, int]:
        """The largest |curvature| in 1/m and the index of the sample where it occurs."""
        index = int(np.argmax(np.abs(self.curvature_inv_m)))
        return float(abs(self.curvature_inv_m[index])), index


@dataclass(frozen=True)
class DrivenPath:
    """A path in pieces, each driven in one direction: ``pieces[k]`` is sampled with its yaw the
    direction of travel (arc length from 0); ``reverse[k]`` is True where the vehicle backs
    along it (its heading is then the direction of travel + pi). Between two pieces the
    direction changes: a cusp, where the vehicle stops. ``knot_s_m`` is the arc length of each
    waypoint from the start of the whole path (the pieces' lengths added up)."""

    pieces: tuple[PathSamples, ...]
    reverse: tuple[bool, ...]
    knot_s_m: FloatArray

    @property
    def length_m(self) -> float:
        """Total arc length in metres."""
        return float(sum(piece.length_m for piece in self.pieces))
