"""A smooth, continuous-curvature spline through waypoints (headings enforced where given).

The curve is a piecewise quintic Hermite spline r(u) parametrised by cumulative chord length u.
At every waypoint it has a position P_i (given), a tangent T_i and a second derivative A_i
shared by the two segments that meet there, so the curve is C2 and its curvature is continuous
wherever the tangent does not vanish. Where a heading theta_i is given the tangent is fixed to the
unit vector (cos theta_i, sin theta_i); every other T_i and every A_i is chosen to minimise

    J = integral |r'''(u)|^2 du + (1 / h_mean^2) integral |r''(u)|^2 du,

a quadratic in the unknowns (x and y separate), so the optimum is one linear solve. The first
term spreads curvature changes smoothly (gentle steering), the second keeps the curve from
bulging; with free headings on collinear points the optimum is the straight line itself.
"""

from __future__ import annotations

import numpy as np
from numpy.polynomial import polynomial as npoly
from scipy.integrate import cumulative_trapezoid
from scipy.interpolate import BPoly

from wheelsim.core.arrays import FloatArray
from wheelsim.core.planning.path import PathSamples, PlanningError
from wheelsim.core.planning.waypoints import Waypoints, validated

#: Smallest |dr/du| (the curve's speed in its chord parametrisation, about 1) accepted; below it
#: the spline nearly stops and turns on the spot (a cusp), which no vehicle can follow.
MIN_PARAMETRIC_SPEED = 0.05

# Quintic Hermite basis on sigma in [0, 1] for (P0, T0, A0, P1, T1, A1), lowest power first.
_BASIS = np.array(
    [
        [1, 0, 0, -10, 15, -6],
        [0, 1, 0, -6, 8, -3],
        [0, 0, 0.5, -1.5, 1.5, -0.5],
        [0, 0, 0, 10, -15, 6],
        [0, 0, 0, -4, 7, -3],
        [0, 0, 0, 0.5, -1, 0.5],
    ]
)


def _gram(order: int) -> FloatArray:
    """G[k, l] = integral over [0, 1] of H_k^(order) * H_l^(order)."""
    derivs = [npoly.polyder(row, order) for row in _BASIS]
    gram = np.empty((6, 6))
    for k in range(6):
        for m in range(6):
            antiderivative = npoly.polyint(npoly.polymul(derivs[k], derivs[m]))
            gram[k, m] = npoly.polyval(1.0, antiderivative)
    return gram


_GRAM_JERK = _gram(3)
_GRAM_BEND = _gram(2)


def _solve_derivatives(waypoints: Waypoints, knots_u: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Tangents T (N, 2) and second derivatives A (N, 2) minimising J (see module doc)."""
    count = len(waypoints)
    heading = waypoints.heading_rad
    fixed = np.isfinite(heading)
    tangents = np.zeros((count, 2))
    tangents[fixed] = np.column_stack([np.cos(heading[fixed]), np.sin(heading[fixed])])
    # Unknowns (the same layout for x and y): a tangent at each free knot, then every A_i.
    tangent_var = np.full(count, -1)
    tangent_var[~fixed] = np.arange(int((~fixed).sum()))
    accel_var = int((~fixed).sum()) + np.arange(count)
    n_vars = int((~fixed).sum()) + count
    widths = np.diff(knots_u)
    bend_weight = 1.0 / float(np.mean(widths)) ** 2
    quad = np.zeros((n_vars, n_vars))
    lin = np.zeros((n_vars, 2))
    for j, h in enumerate(widths):
        gram = _GRAM_JERK / h**5 + bend_weight * _GRAM_BEND / h**3
        # w = select @ z + const, w = (P0, h T0, h^2 A0, P1, h T1, h^2 A1) per coordinate.
        select = np.zeros((6, n_vars))
        const = np.zeros((6, 2))
        for side, i in ((0, j), (3, j + 1)):
            const[side] = waypoints.xy_m[i]
            if fixed[i]:
                const[side + 1] = h * tangents[i]
            else:
                select[side + 1, tangent_var[i]] = h
            select[side + 2, accel_var[i]] = h * h
        quad += select.T @ gram @ select
        lin += select.T @ gram @ const
    solution = np.linalg.solve(quad, -lin)
    tangents[~fixed] = solution[tangent_var[~fixed]]
    return tangents, solution[accel_var]


def spline_through(
    waypoints: Waypoints, max_sample_spacing_m: float = 0.01
) -> tuple[PathSamples, FloatArray]:
    """The minimum-jerk quintic spline through ``waypoints``, densely sampled.

    Returns the path (arc-length samples at most ``max_sample_spacing_m`` apart, at least 16 per
    segment) and the arc length in metres at which it passes each waypoint.
    Raises :class:`PlanningError` for invalid waypoints or a spline with a cusp.
    """
    waypoints = validated(waypoints)
    knots_u = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(waypoints.xy_m, axis=0).T))])
    tangents, accels = _solve_derivatives(waypoints, knots_u)
    curves = [
        BPoly.from_derivatives(
            knots_u, np.stack([waypoints.xy_m[:, c], tangents[:, c], accels[:, c]], axis=1)
        )
        for c in (0, 1)
    ]
    pieces = [
        np.linspace(a, b, max(16, int(np.ceil((b - a) / max_sample_spacing_m)) + 1))[:-1]
        for a, b in zip(knots_u[:-1], knots_u[1:], strict=True)
    ]
    u = np.concatenate([*pieces, knots_u[-1:]])
    d1 = np.stack([curve.derivative(1)(u) for curve in curves])
    d2 = np.stack([curve.derivative(2)(u) for curve in curves])
    speed = np.hypot(d1[0], d1[1])
    slow = int(np.argmin(speed))
    if speed[slow] < MIN_PARAMETRIC_SPEED:
        near = int(np.argmin(np.abs(knots_u - u[slow])))
        raise PlanningError(
            f'the spline through the waypoints nearly reverses near waypoint {near} '
            f'({waypoints.xy_m[near].tolist()}): a heading there points against the direction '
            'to the neighbouring waypoints, or waypoints are too close for the given headings'
        )
    s = cumulative_trapezoid(speed, u, initial=0.0)
    path = PathSamples(
        s_m=s,
        x_m=curves[0](u),
        y_m=curves[1](u),
        yaw_rad=np.unwrap(np.arctan2(d1[1], d1[0])),
        curvature_inv_m=(d1[0] * d2[1] - d1[1] * d2[0]) / speed**3,
    )
    return path, np.interp(knots_u, u, s)
