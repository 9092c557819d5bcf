"""A smooth, continuous-curvature spline through waypoints (headings enforced where given).

The curve is a piecewise quintic Hermite spline r(u) parametrised by cumulative chord length u.
At every waypoint it has a position P_i (given), a tangent T_i and a second derivative A_i
shared by the two segments that meet there, so the curve is C2 and its curvature is continuous
wherever the tangent does not vanish. Where a heading theta_i is given the tangent is fixed to the
unit vector (cos theta_i, sin theta_i); every other T_i and every A_i is chosen to minimise

    J = integral |r'''(u)|^2 du + (1 / h_mean^2) integral |r''(u)|^2 du,

a quadratic in the unknowns (x and y separate), so the optimum is one sparse (banded) linear
solve. The first term spreads curvature changes smoothly (gentle steering), the second keeps the
curve from bulging; with free headings on collinear points the optimum is the straight line
itself. :mod:`planning_spline_bound` moves the unknowns (and the tangents' lengths) where this
curve bends more than a vehicle can.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np
from numpy.polynomial import polynomial as npoly

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.planning.path import PathSamples, PlanningError
from wheelsim.core.planning.waypoints import Waypoints, validated

#: Smallest |dr/du| (the curve's speed in its chord parametrisation, about 1) accepted; below it
#: the spline nearly stops and turns on the spot (a cusp), which no vehicle can follow.
MIN_PARAMETRIC_SPEED = 0.05

#: Quintic Hermite basis on sigma in [0, 1] for (P0, T0, A0, P1, T1, A1), lowest power first:
#: on a segment of width h, r(sigma) = sum_k BASIS[k](sigma) w_k with
#: w = (P0, h T0, h^2 A0, P1, h T1, h^2 A1).
BASIS = np.array(
    [
        [1, 0, 0, -10, 15, -6],
        [0, 1, 0, -6, 8, -3],
        [0, 0, 0.5, -1.5, 1.5, -0.5],
        [0, 0, 0, 10, -15, 6],
        [0, 0, 0, -4, 7, -3],
        [0, 0, 0, 0.5, -1, 0.5],
    ]
)


def basis_rows(sigma: FloatArray, order: int = 0) -> FloatArray:
    """(n, 6): the ``order``-th sigma-derivative of every basis polynomial at each sigma."""
    coefficients = np.array([npoly.polyder(row, order) if order else row for row in BASIS])
    powers = np.asarray(sigma, dtype=float)[:, np.newaxis] ** np.arange(coefficients.shape[1])
    return powers @ coefficients.T


def _gram(order: int) -> FloatArray:
    """G[k, l] = integral over [0, 1] of H_k^(order) * H_l^(order)."""
    derivs = [npoly.polyder(row, order) for row in BASIS]
    gram = np.empty((6, 6))
    for k in range(6):
        for m in range(6):
            antiderivative = npoly.polyint(npoly.polymul(derivs[k], derivs[m]))
            gram[k, m] = npoly.polyval(1.0, antiderivative)
    return gram


GRAM_JERK = _gram(3)
GRAM_BEND = _gram(2)


def segment_grams(widths_u: FloatArray) -> FloatArray:
    """(n, 6, 6): the matrix of J on each segment in its coefficients w (see :data:`BASIS`)."""
    bend_weight = 1.0 / float(np.mean(widths_u)) ** 2
    h = widths_u[:, np.newaxis, np.newaxis]
    return GRAM_JERK / h**5 + bend_weight * GRAM_BEND / h**3


@dataclass(frozen=True)
class HermiteSpline:
    """The curve: at knot ``knots_u[i]`` (chord length, m) it passes ``points[i]`` (m) with
    tangent ``tangents[i]`` (dr/du) and second derivative ``accels[i]`` (d2r/du2, 1/m)."""

    knots_u: FloatArray
    points: FloatArray
    tangents: FloatArray
    accels: FloatArray

    @property
    def widths_u(self) -> FloatArray:
        """Width of each segment in the chord parameter (m)."""
        return np.diff(self.knots_u)

    def coefficients(self, segments: FloatArray | slice = slice(None)) -> FloatArray:
        """(n, 6, 2): each segment's w = (P0, h T0, h^2 A0, P1, h T1, h^2 A1)."""
        index = np.arange(len(self.knots_u) - 1)[segments]
        h = self.widths_u[index][:, np.newaxis]
        return np.stack(
            [
                self.points[index],
                h * self.tangents[index],
                h * h * self.accels[index],
                self.points[index + 1],
                h * self.tangents[index + 1],
                h * h * self.accels[index + 1],
            ],
            axis=1,
        )

    def with_derivatives(self, tangents: FloatArray, accels: FloatArray) -> HermiteSpline:
        """The same knots and points with other tangents and second derivatives."""
        return replace(self, tangents=tangents, accels=accels)

    def sample_places(
        self, max_sample_spacing_m: float = 0.01, segments: IntArray | None = None
    ) -> tuple[IntArray, FloatArray]:
        """Where :meth:`sample` samples the curve (or only ``segments``, consecutive): per
        sample its segment and the fraction of that segment's width before it (0 at the
        segment's start knot; the last sample is 1 on the last segment). Samples are equally
        spaced in u in each segment, at most ``max_sample_spacing_m`` apart, at least 16."""
        if segments is None:
            segments = np.arange(len(self.knots_u) - 1)
        widths = self.widths_u[segments]
        counts = np.maximum(16, np.ceil(widths / max_sample_spacing_m).astype(int))
        segment = np.concatenate([np.repeat(segments, counts), segments[-1:]])
        sigma = np.concatenate([np.arange(n) / n for n in counts] + [[1.0]])
        return segment, sigma

    def sample(
        self, max_sample_spacing_m: float = 0.01, segments: FloatArray | None = None
    ) -> tuple[PathSamples, FloatArray, float]:
        """The curve (or only ``segments``, consecutive) densely sampled: the path with arc
        length from 0, the arc length at each knot of those segments, and the smallest
        parametric speed |dr/du| (about 1; near 0 at a cusp).

        Samples are at most ``max_sample_spacing_m`` apart in u, at least 16 per segment
        (:meth:`sample_places`).
        """
        if segments is None:
            segments = np.arange(len(self.knots_u) - 1)
        segment, sigma = self.sample_places(max_sample_spacing_m, segments)
        w = self.coefficients(segment)
        h = self.widths_u[segment][:, np.newaxis]
        position = np.einsum('nk,nkc->nc', basis_rows(sigma), w)
        d1 = np.einsum('nk,nkc->nc', basis_rows(sigma, 1), w) / h
        d2 = np.einsum('nk,nkc->nc', basis_rows(sigma, 2), w) / h**2
        u = self.knots_u[segment] + sigma * h[:, 0]
        speed = np.hypot(d1[:, 0], d1[:, 1])
        s = arc_length(speed, u)
        with np.errstate(divide='ignore', invalid='ignore'):
            curvature = (d1[:, 0] * d2[:, 1] - d1[:, 1] * d2[:, 0]) / speed**3
        path = PathSamples(
            s_m=s,
            x_m=position[:, 0],
            y_m=position[:, 1],
            yaw_rad=np.unwrap(np.arctan2(d1[:, 1], d1[:, 0])),
            curvature_inv_m=curvature,
        )
        knots = np.append(self.knots_u[segments], self.knots_u[segments[-1] + 1])
        return path, np.interp(knots, u, s), float(speed.min())


def arc_length(speed: FloatArray, u: FloatArray) -> FloatArray:
    """The arc length from the first sample to each, by the trapezoid rule over the samples'
    ``speed`` |dr/du| at ``u``: scipy's ``cumulative_trapezoid(speed, u, initial=0)`` bit for
    bit (tested against it), without importing scipy.integrate (docs/architecture.md,
    "Start-up")."""
    return np.concatenate([[0.0], np.cumsum(np.diff(u) * (speed[1:] + speed[:-1]) / 2.0)])


#: Entries on and below the diagonal per row of the spline's matrix (:func:`solve_banded_spd`).
BAND_WIDTH = 4


def solve_banded_spd(lower: FloatArray, rhs: FloatArray) -> FloatArray:
    """x with M x = ``rhs`` (n, or n x columns), M symmetric positive definite and banded:
    ``lower[i, d]`` is M[i, i - d] for d < ``lower.shape[1]``, 0 further out (entries before
    row 0 are ignored). By Cholesky's M = L L^T, in O(n) for a given band: what
    ``scipy.sparse.linalg.spsolve`` gives up to rounding (tested against it), without importing
    scipy.sparse (docs/architecture.md, "Start-up"). ValueError if M is not positive definite.
    """
    n, width = lower.shape
    m = lower.tolist()
    chol = [[0.0] * width for _ in range(n)]  # chol[i][d] = L[i, i - d]
    for i in range(n):
        first = max(0, i - width + 1)
        for j in range(first, i + 1):
            total = m[i][i - j] - sum(chol[i][i - k] * chol[j][j - k] for k in range(first, j))
            if j < i:
                chol[i][i - j] = total / chol[j][0]
            elif total > 0.0:
                chol[i][0] = math.sqrt(total)
            else:
                raise ValueError(f'solve_banded_spd: not positive definite at row {i}')
    x = np.array(rhs, dtype=float)
    for i in range(n):  # L y = rhs
        for d in range(1, min(i, width - 1) + 1):
            x[i] -= chol[i][d] * x[i - d]
        x[i] /= chol[i][0]
    for i in reversed(range(n)):  # L^T x = y
        for d in range(1, min(n - 1 - i, width - 1) + 1):
            x[i] -= chol[i + d][d] * x[i + d]
        x[i] /= chol[i][0]
    return x


def chord_knots(xy_m: FloatArray) -> FloatArray:
    """Cumulative chord length (m) at each point."""
    return np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(xy_m, axis=0).T))])


def minimum_jerk_spline(waypoints: Waypoints) -> HermiteSpline:
    """The spline through ``waypoints`` minimising J (see the module doc), unit tangents where a
    heading is given. One banded solve, linear in the number of waypoints."""
    waypoints = validated(waypoints)
    knots_u = chord_knots(waypoints.xy_m)
    count = len(waypoints)
    heading = waypoints.heading_rad
    fixed = np.isfinite(heading)
    tangents = np.zeros((count, 2))
    tangents[fixed] = np.column_stack([np.cos(heading[fixed]), np.sin(heading[fixed])])
    # Unknowns (the same layout for x and y), knot by knot: the tangent if free, then A_i. A
    # segment couples the unknowns of its two knots only: no entry is more than 3 off the
    # diagonal (BAND_WIDTH).
    unknown = np.column_stack([~fixed, np.ones(count, dtype=bool)])
    variable = np.where(unknown, np.cumsum(unknown).reshape(count, 2) - 1, -1)
    n_vars = int(unknown.sum())
    widths = np.diff(knots_u)
    grams = segment_grams(widths)
    j = np.arange(count - 1)
    # Per segment and local slot k: the global variable (-1: a constant), its scale, and the
    # constant's value (per coordinate) where it is one.
    slot_var = np.stack([np.full(count - 1, -1), variable[j, 0], variable[j, 1],
                         np.full(count - 1, -1), variable[j + 1, 0], variable[j + 1, 1]], axis=1)
    h = widths[:, np.newaxis]
    slot_scale = np.hstack([np.ones_like(h), h, h * h, np.ones_like(h), h, h * h])
    constant = np.stack([waypoints.xy_m[j], h * tangents[j], np.zeros((count - 1, 2)),
                         waypoints.xy_m[j + 1], h * tangents[j + 1], np.zeros((count - 1, 2))],
                        axis=1)
    constant[slot_var >= 0] = 0.0
    is_var = slot_var >= 0
    # Quadratic: sum over segments of (S z + c)^T G (S z + c) per coordinate.
    seg, k, m = np.nonzero(is_var[:, :, np.newaxis] & is_var[:, np.newaxis, :])
    values = slot_scale[seg, k] * slot_scale[seg, m] * grams[seg, k, m]
    row, column = slot_var[seg, k], slot_var[seg, m]
    lower = np.zeros((n_vars, BAND_WIDTH))  # lower[i, d]: the matrix's entry (i, i - d)
    below = row >= column
    np.add.at(lower, (row[below], (row - column)[below]), values[below])
    lin = np.zeros((n_vars, 2))
    g_c = np.einsum('jkl,jlc->jkc', grams, constant)  # G c per segment, slot, coordinate
    seg_v, k_v = np.nonzero(is_var)
    np.add.at(lin, slot_var[seg_v, k_v], slot_scale[seg_v, k_v, np.newaxis] * g_c[seg_v, k_v])
    solution = solve_banded_spd(lower, -lin)
    tangents[~fixed] = solution[variable[~fixed, 0]]
    return HermiteSpline(knots_u, waypoints.xy_m.astype(float), tangents, solution[variable[:, 1]])


def spline_through(
    waypoints: Waypoints, max_sample_spacing_m: float = 0.01
) -> tuple[PathSamples, FloatArray]:
    """The minimum-jerk quintic spline through ``waypoints``, densely sampled.

    Returns the path (arc-length samples at most ``max_sample_spacing_m`` apart, at least 16 per
    segment) and the arc length in metres at which it passes each waypoint.
    Raises :class:`PlanningError` for invalid waypoints or a spline with a cusp.
    """
    waypoints = validated(waypoints)
    spline = minimum_jerk_spline(waypoints)
    path, knot_s, slowest = spline.sample(max_sample_spacing_m)
    if slowest < MIN_PARAMETRIC_SPEED:
        raise PlanningError(cusp_message(spline, waypoints))
    return path, knot_s


def cusp_message(spline: HermiteSpline, waypoints: Waypoints, first_index: int = 0) -> str:
    """Where the spline nearly reverses (its slowest point), naming the nearest waypoint
    (``waypoints[0]`` as waypoint ``first_index``)."""
    sigma = np.linspace(0.0, 1.0, 33)
    w = spline.coefficients()
    speed = np.linalg.norm(np.einsum('nk,jkc->jnc', basis_rows(sigma, 1), w), axis=2)
    speed /= spline.widths_u[:, np.newaxis]
    segment, where = np.unravel_index(int(np.argmin(speed)), speed.shape)
    u = spline.knots_u[segment] + sigma[where] * spline.widths_u[segment]
    near = int(np.argmin(np.abs(spline.knots_u - u)))
    return (
        f'the spline through the waypoints nearly reverses near waypoint {first_index + near} '
        f'({waypoints.xy_m[near].tolist()}): a heading there points against the direction '
        'to the neighbouring waypoints, or waypoints are too close for the given headings'
    )
