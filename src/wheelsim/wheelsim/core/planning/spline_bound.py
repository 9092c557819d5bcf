"""Bend a spline back within a curvature bound: its free unknowns moved by constrained optimisation.

The minimum-jerk spline (:mod:`planning_spline`) through waypoints may bend more than a vehicle
can. Here the unknowns at the waypoints are moved so that it does not, as little as possible:
minimise the same J (jerk plus bending, a quadratic) over

- the tangent T_i: its direction and length where the heading is free, its length only where it
  is given (or fixed at the end of a fallback leg);
- the second derivative A_i: freely, or only along T_i (curvature zero) at the ends of fallback
  legs (which start and end straight);

subject to, at :data:`SAMPLES_PER_SEGMENT` points of every segment, |curvature| <= the bound
(times a fraction per segment, :data:`BOUND_MARGIN` at first, lowered where the curve still
breaks the bound between the samples) and the parametric speed |dr/du| >= :data:`MIN_SPEED` (no
cusp), with tangents at most :data:`MAX_TANGENT` long and each second derivative's components
within :func:`max_accel_inv_m`, so that no segment keeps the bound by bulging far out (a
segment faster than :data:`MAX_SPEED` counts as broken). The problem is solved by SLSQP (scipy)
on windows: only the waypoints around each stretch that breaks the bound move
(:data:`WINDOW_MARGIN` on each side), so the work grows with the number of tight spots, not of
waypoints. Both J and the constraints are affine or polynomial in the unknowns: their Jacobians
are exact. A window whose result still breaks the constraints is left as it was.

Whether a curve keeps the bound is decided on :data:`CHECK_SAMPLES` points per segment and at
every sample of the plan's path (:func:`check_segments`).

Units: positions and chord parameter in metres, curvature in 1/m, in the planning frame.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.planning.spline import HermiteSpline, basis_rows, segment_grams

#: Constraint points per segment (ends included).
SAMPLES_PER_SEGMENT = 25
#: The optimiser keeps |curvature| within this fraction of the bound at its samples.
BOUND_MARGIN = 0.995
#: Smallest parametric speed |dr/du| allowed (about 1 for an even curve; 0 at a cusp).
MIN_SPEED = 0.2
#: Largest tangent |T_i| (the chord parametrisation makes it about 1).
MAX_TANGENT = 3.0
#: Largest parametric speed |dr/du| inside a segment: faster, the segment is several times
#: longer than its chord (a bulge or a loop) and counts as broken.
MAX_SPEED = 2.0 * MAX_TANGENT
#: Points per segment at which a curve is checked against the bound.
CHECK_SAMPLES = 129
#: Waypoints beyond a stretch that breaks the bound that move with it, on each side.
WINDOW_MARGIN = 2
#: Largest number of waypoints moved together; a longer stretch is taken in pieces.
MAX_WINDOW = 16
#: SLSQP iterations per window (a window that cannot keep the bound uses them all).
MAX_ITERATIONS = 100
_SIGMA = np.linspace(0.0, 1.0, SAMPLES_PER_SEGMENT)
_D1 = basis_rows(_SIGMA, 1)
_D2 = basis_rows(_SIGMA, 2)
_CHECK_SIGMA = np.linspace(0.0, 1.0, CHECK_SAMPLES)
_CHECK_D1 = basis_rows(_CHECK_SIGMA, 1)
_CHECK_D2 = basis_rows(_CHECK_SIGMA, 2)


@dataclass(frozen=True)
class SegmentCheck:
    """Per segment: the largest |curvature| (1/m) and smallest parametric speed at the samples."""

    max_curvature_inv_m: FloatArray
    min_speed: FloatArray
    max_speed: FloatArray

    def broken(self, max_curvature_inv_m: float) -> FloatArray:
        """Indices of the segments that break the bound (0: none), nearly stop or bulge
        (:data:`MAX_SPEED`)."""
        bad = (self.min_speed < MIN_SPEED) | (self.max_speed > MAX_SPEED)
        if max_curvature_inv_m > 0:
            bad |= self.max_curvature_inv_m > max_curvature_inv_m
        return np.flatnonzero(bad)


def _abs_curvature(d1: FloatArray, d2: FloatArray) -> tuple[FloatArray, FloatArray]:
    """|curvature| (1/m, inf where the curve stops) and speed |dr/du| from the derivatives, with
    the arithmetic of :meth:`HermiteSpline.sample`."""
    speed = np.hypot(d1[..., 0], d1[..., 1])
    cross = d1[..., 0] * d2[..., 1] - d1[..., 1] * d2[..., 0]
    with np.errstate(divide='ignore', invalid='ignore'):
        return np.where(speed > 0, np.abs(cross) / speed**3, np.inf), speed


def check_segments(spline: HermiteSpline) -> SegmentCheck:
    """:class:`SegmentCheck` of every segment of ``spline``: at :data:`CHECK_SAMPLES` points
    each, and its curvature also at every sample of the plan's path
    (:meth:`HermiteSpline.sample_places`), so a curve that passes keeps the bound at each."""
    w = spline.coefficients()
    h = spline.widths_u[:, np.newaxis, np.newaxis]
    d1 = np.einsum('nk,jkc->jnc', _CHECK_D1, w) / h
    d2 = np.einsum('nk,jkc->jnc', _CHECK_D2, w) / h**2
    curvature, speed = _abs_curvature(d1, d2)
    max_curvature = curvature.max(axis=1)
    segment, sigma = spline.sample_places()
    h_plan = spline.widths_u[segment][:, np.newaxis]
    d1 = np.einsum('nk,nkc->nc', basis_rows(sigma, 1), w[segment]) / h_plan
    d2 = np.einsum('nk,nkc->nc', basis_rows(sigma, 2), w[segment]) / h_plan**2
    np.maximum.at(max_curvature, segment, _abs_curvature(d1, d2)[0])
    return SegmentCheck(max_curvature, speed.min(axis=1), speed.max(axis=1))


def max_accel_inv_m(max_curvature_inv_m: float, widths_m: FloatArray) -> float:
    """Bound (1/m) on each component of a waypoint's second derivative d2r/du2, given the
    curvature bound (0: none) and the chords of its segments: what a turn at the bound, or a
    U-turn within the shorter chord, needs at the largest tangent, :data:`MAX_TANGENT`."""
    return MAX_TANGENT**2 * max(max_curvature_inv_m, 2.0 * np.pi / float(np.min(widths_m)))


@dataclass
class Freedom:
    """What may move at each waypoint and how each segment is held.

    Per waypoint: ``direction_rad`` NaN where the tangent's direction is free, else its fixed
    direction; ``straight`` True where the curvature must be zero (the ends of fallback legs).
    Per segment: ``skipped`` True where a fallback leg replaces it (not part of J, not
    constrained); ``bound_fraction``, the fraction of the bound its samples must keep.
    """

    direction_rad: FloatArray
    straight: FloatArray
    skipped: FloatArray
    bound_fraction: FloatArray

    @classmethod
    def of(cls, heading_rad: FloatArray) -> Freedom:
        """Directions fixed where a heading is given, nothing straight or skipped."""
        count = len(heading_rad)
        return cls(np.asarray(heading_rad, dtype=float).copy(), np.zeros(count, dtype=bool),
                   np.zeros(count - 1, dtype=bool), np.full(count - 1, BOUND_MARGIN))


class _Window:
    """The optimisation over the unknowns of the waypoints ``first`` .. ``last`` (inclusive).

    The window's tangents and second derivatives are ``sum_k z_k column_k`` (each column a unit
    change of one unknown); everything else stays as in ``spline``. The segment coefficients,
    and so the derivatives at the samples, are affine in z.
    """

    def __init__(self, spline: HermiteSpline, freedom: Freedom, first: int, last: int,
                 max_curvature_inv_m: float) -> None:
        self.spline = spline
        self.points = np.arange(first, last + 1)
        segments = np.arange(max(first - 1, 0), min(last, len(spline.knots_u) - 2) + 1)
        self.segments = segments[~freedom.skipped[segments]]
        self.bound = max_curvature_inv_m * freedom.bound_fraction[self.segments, np.newaxis]
        self.columns, self.z0 = self._unknowns(freedom, max_curvature_inv_m)
        zero = np.zeros((len(self.points), 2))
        base_w = self._coefficients(zero, zero)
        change_w = np.stack(
            [self._coefficients(t, a) - base_w for t, a in self.columns], axis=-1)
        grams = segment_grams(spline.widths_u)[self.segments]
        # J(z) = sum over segments and coordinates of w^T G w, with w = base + change z.
        self.quad = np.einsum('jkcz,jkl,jlcy->zy', change_w, grams, change_w)
        self.lin = np.einsum('jkcz,jkl,jlc->z', change_w, grams, base_w)
        self.const = float(np.einsum('jkc,jkl,jlc->', base_w, grams, base_w))
        h = spline.widths_u[self.segments][:, np.newaxis, np.newaxis]
        self._r1_base = np.einsum('nk,jkc->jnc', _D1, base_w) / h
        self._r2_base = np.einsum('nk,jkc->jnc', _D2, base_w) / h**2
        self._r1_change = np.einsum('nk,jkcz->jncz', _D1, change_w) / h[..., np.newaxis]
        self._r2_change = np.einsum('nk,jkcz->jncz', _D2, change_w) / h[..., np.newaxis] ** 2

    def _unknowns(self, freedom: Freedom, max_curvature_inv_m: float
                  ) -> tuple[list[tuple[FloatArray, FloatArray]], FloatArray]:
        """The columns (unit changes of the window's tangents and accels) and z of the spline
        as it is (projected where a direction or straightness is imposed); sets ``bounds``:
        tangents at most :data:`MAX_TANGENT` long, along a fixed direction forwards, accels
        within :func:`max_accel_inv_m`."""
        widths = self.spline.widths_u
        columns: list[tuple[FloatArray, FloatArray]] = []
        z0: list[float] = []
        bounds: list[tuple[float | None, float | None]] = []

        def unknown(row: int, vector: FloatArray, tangent: bool, value: float,
                    limits: tuple[float | None, float | None] = (None, None)) -> None:
            change, other = np.zeros((len(self.points), 2)), np.zeros((len(self.points), 2))
            change[row] = vector
            columns.append((change, other) if tangent else (other, change))
            z0.append(value)
            bounds.append(limits)

        for row, i in enumerate(self.points):
            accel_max = max_accel_inv_m(max_curvature_inv_m, widths[max(i - 1, 0):i + 1])
            accel_limits = (-accel_max, accel_max)
            direction = freedom.direction_rad[i]
            unit = np.array([np.cos(direction), np.sin(direction)])
            tangent, accel = self.spline.tangents[i], self.spline.accels[i]
            if np.isnan(direction):
                for axis in np.eye(2):
                    unknown(row, axis, True, float(tangent @ axis), (-MAX_TANGENT, MAX_TANGENT))
            else:  # along the fixed direction: forwards, not stopped
                length = min(max(float(tangent @ unit), MIN_SPEED), MAX_TANGENT)
                unknown(row, unit, True, length, (MIN_SPEED, MAX_TANGENT))
            if freedom.straight[i]:
                unknown(row, unit, False, float(accel @ unit), accel_limits)
            else:
                unknown(row, np.array([1.0, 0.0]), False, accel[0], accel_limits)
                unknown(row, np.array([0.0, 1.0]), False, accel[1], accel_limits)
        self.bounds = bounds
        return columns, np.array(z0)

    def _coefficients(self, tangents: FloatArray, accels: FloatArray) -> FloatArray:
        """Coefficients of the window's segments with the window's tangents and accels set to
        these ((points, 2) each) and every other one as in the spline."""
        full_t, full_a = self.spline.tangents.copy(), self.spline.accels.copy()
        full_t[self.points], full_a[self.points] = tangents, accels
        return self.spline.with_derivatives(full_t, full_a).coefficients(self.segments)

    def objective(self, z: FloatArray) -> tuple[float, FloatArray]:
        """J and its gradient."""
        quad_z = self.quad @ z
        value = float(z @ quad_z + 2.0 * self.lin @ z + self.const)
        return value, 2.0 * quad_z + 2.0 * self.lin

    def _derivatives(self, z: FloatArray) -> tuple[FloatArray, FloatArray]:
        """dr/du and d2r/du2 at the samples, (segments, samples, 2) each."""
        return self._r1_base + self._r1_change @ z, self._r2_base + self._r2_change @ z

    def constraints(self, z: FloatArray) -> FloatArray:
        """Every constraint value (>= 0 when met): the speed, then the bound on either side."""
        r1, r2 = self._derivatives(z)
        speed_sq = (r1**2).sum(axis=2)
        parts = [speed_sq - MIN_SPEED**2]
        if self.bound.any():
            curvature = (r1[..., 0] * r2[..., 1] - r1[..., 1] * r2[..., 0]) / speed_sq**1.5
            parts += [self.bound - curvature, self.bound + curvature]
        return np.concatenate([p.ravel() for p in parts])

    def jacobian(self, z: FloatArray) -> FloatArray:
        """d constraints / d z."""
        r1, r2 = self._derivatives(z)
        speed_sq = (r1**2).sum(axis=2)
        d_speed_sq = 2.0 * np.einsum('jnc,jncz->jnz', r1, self._r1_change)
        parts = [d_speed_sq]
        if self.bound.any():
            cross = r1[..., 0] * r2[..., 1] - r1[..., 1] * r2[..., 0]
            d_cross = (
                r2[..., 1, np.newaxis] * self._r1_change[..., 0, :]
                - r2[..., 0, np.newaxis] * self._r1_change[..., 1, :]
                + r1[..., 0, np.newaxis] * self._r2_change[..., 1, :]
                - r1[..., 1, np.newaxis] * self._r2_change[..., 0, :]
            )
            d_curvature = (
                d_cross / speed_sq[..., np.newaxis] ** 1.5
                - 1.5 * (cross / speed_sq**2.5)[..., np.newaxis] * d_speed_sq
            )
            parts += [-d_curvature, d_curvature]
        return np.concatenate([p.reshape(-1, p.shape[-1]) for p in parts])

    def _minimise(self, function, start: FloatArray, constraints, bounds) -> FloatArray:
        from scipy.optimize import minimize  # on first use: docs/architecture.md

        with warnings.catch_warnings():  # SLSQP clips steps to the bounds: expected
            warnings.simplefilter('ignore', RuntimeWarning)
            return minimize(
                function, start, jac=True, method='SLSQP', bounds=bounds,
                constraints=[constraints], options={'maxiter': MAX_ITERATIONS, 'ftol': 1e-9},
            ).x

    def _feasible(self, z: FloatArray) -> bool:
        return bool(np.all(np.isfinite(z)) and self.constraints(z).min() > -1e-6)

    def _most_feasible(self) -> FloatArray:
        """Phase one: the z that maximises the smallest constraint value (a slack t added as
        the last unknown: maximise t with every constraint >= t)."""
        count = len(self.z0)
        start = np.append(self.z0, self.constraints(self.z0).min())
        gradient = np.append(np.zeros(count), -1.0)
        slack = {
            'type': 'ineq',
            'fun': lambda x: self.constraints(x[:count]) - x[-1],
            'jac': lambda x: np.hstack(
                [self.jacobian(x[:count]), -np.ones((len(self.constraints(x[:count])), 1))]),
        }
        result = self._minimise(lambda x: (-x[-1], gradient), start, slack,
                                [*self.bounds, (None, 1.0)])
        return result[:count]

    def solve(self) -> HermiteSpline:
        """The spline with the window's unknowns at the least J SLSQP finds within the
        constraints; from the most feasible point when the direct attempt fails; unchanged when
        neither keeps the constraints (the caller checks the bound)."""
        scale = max(self.objective(self.z0)[0], 1e-12)

        def scaled(z: FloatArray) -> tuple[float, FloatArray]:
            value, gradient = self.objective(z)
            return value / scale, gradient / scale

        constraints = {'type': 'ineq', 'fun': self.constraints, 'jac': self.jacobian}
        z = self._minimise(scaled, self.z0, constraints, self.bounds)
        if not self._feasible(z):
            start = self._most_feasible()
            z = self._minimise(scaled, start, constraints, self.bounds)
            if not self._feasible(z):
                z = start if self._feasible(start) else self.z0
        tangents, accels = self.spline.tangents.copy(), self.spline.accels.copy()
        tangents[self.points] = sum(v * t for v, (t, _) in zip(z, self.columns, strict=True))
        accels[self.points] = sum(v * a for v, (_, a) in zip(z, self.columns, strict=True))
        return self.spline.with_derivatives(tangents, accels)


def windows(broken_segments: FloatArray, count: int) -> list[tuple[int, int]]:
    """Waypoint ranges (first, last) around runs of broken segments, ``WINDOW_MARGIN`` wider on
    each side, merged where they overlap and cut into pieces of at most ``MAX_WINDOW``."""
    ranges: list[list[int]] = []
    for segment in sorted(int(s) for s in broken_segments):
        first = max(segment - WINDOW_MARGIN, 0)
        last = min(segment + 1 + WINDOW_MARGIN, count - 1)
        if ranges and first <= ranges[-1][1]:
            ranges[-1][1] = max(ranges[-1][1], last)
        else:
            ranges.append([first, last])
    pieces: list[tuple[int, int]] = []
    for first, last in ranges:
        while last - first + 1 > MAX_WINDOW:
            pieces.append((first, first + MAX_WINDOW - 1))
            first += MAX_WINDOW - 2 * WINDOW_MARGIN
        pieces.append((first, last))
    return pieces


def bend_within(spline: HermiteSpline, freedom: Freedom, max_curvature_inv_m: float,
                segments: FloatArray) -> HermiteSpline:
    """``spline`` with the unknowns around ``segments`` (the broken ones) optimised, window by
    window (see the module doc); the caller checks what still breaks the bound."""
    for first, last in windows(segments, len(spline.knots_u)):
        spline = _Window(spline, freedom, first, last, max_curvature_inv_m).solve()
    return spline
