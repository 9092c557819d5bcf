"""A continuous-curvature path through waypoints whose curvature stays within a bound.

First choice: the minimum-jerk spline through the waypoints (:mod:`planning_spline`). When its
curvature exceeds ``max_curvature_inv_m`` (a car's steering limit, tan(max_steer)/wheel_base) or
it has a cusp, the path becomes a chain of continuous-curvature Dubins legs
(:mod:`planning_clothoid`), one between each pair of consecutive waypoints: forward-only,
curvature within the bound by construction, straight (curvature 0) at every waypoint, so the
chain's curvature is continuous too.

Headings at waypoints are kept where given; free ones are chosen to make the chain short
(coordinate descent on the lengths of the legs, starting from the first spline's tangents).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.clothoid import cc_dubins, cc_dubins_length
from wheelsim.core.planning.dubins import dubins_path
from wheelsim.core.planning.path import PathSamples, PlanningError
from wheelsim.core.planning.spline import spline_through
from wheelsim.core.planning.waypoints import Waypoints

#: Free headings are searched for a short chain only when this few are free (it is costly).
MAX_SEARCHED_HEADINGS = 4
#: A chain through three or more waypoints may exceed twice the spline's length by this many
#: turning radii (about two turns) before it counts as looping.
MAX_DETOUR_M_PER_RADIUS = 4.0 * math.pi

#: Candidate headings tried for a free waypoint heading (every 10 degrees).
_CANDIDATE_HEADINGS = np.linspace(-math.pi, math.pi, 36, endpoint=False)
#: How many candidates (the shortest by Dubins length) are measured as continuous-curvature legs.
_CANDIDATES_MEASURED = 12


def _free_headings(
    waypoints: Waypoints, initial: FloatArray, max_curvature_inv_m: float
) -> FloatArray:
    """Waypoint headings, free ones chosen to shorten the chain of continuous-curvature legs.

    Coordinate descent, two sweeps: each free heading in turn becomes the best of its current
    value and the candidates by the length of the two legs it joins. Dubins lengths (a lower
    bound, cheap) pick the candidates worth measuring as continuous-curvature legs.
    """
    heading = initial.copy()
    xy = waypoints.xy_m
    radius_m = 1.0 / max_curvature_inv_m

    @functools.cache
    def leg(i: int, yaw_i: float, yaw_j: float) -> float:
        pair = Pose2D(*xy[i], yaw_i), Pose2D(*xy[i + 1], yaw_j)
        return cc_dubins_length(*pair, max_curvature_inv_m)

    def joined(i: int, yaw: float, length: Callable[[int, float, float], float]) -> float:
        before = length(i - 1, heading[i - 1], yaw) if i > 0 else 0.0
        after = length(i, yaw, heading[i + 1]) if i + 1 < len(heading) else 0.0
        return before + after

    def dubins_length(i: int, yaw_i: float, yaw_j: float) -> float:
        pair = Pose2D(*xy[i], yaw_i), Pose2D(*xy[i + 1], yaw_j)
        return dubins_path(*pair, radius_m).length_m

    for _ in range(2):
        for i in np.flatnonzero(~np.isfinite(waypoints.heading_rad)):
            ranked = sorted(_CANDIDATE_HEADINGS, key=lambda yaw: joined(i, yaw, dubins_length))
            measured = [heading[i], *ranked[:_CANDIDATES_MEASURED]]
            heading[i] = min(measured, key=lambda yaw: joined(i, float(yaw), leg))
    return heading


def _initial_headings(
    waypoints: Waypoints, spline: tuple[PathSamples, FloatArray] | None
) -> FloatArray:
    """Given headings, free ones from the spline's tangent (or along the neighbours' chord)."""
    heading = waypoints.heading_rad.copy()
    free = ~np.isfinite(heading)
    if spline is not None:
        path, knot_s = spline
        heading[free] = np.interp(knot_s[free], path.s_m, path.yaw_rad)
        return heading
    xy = waypoints.xy_m
    ahead = np.vstack([xy[1:], xy[-1:]]) - np.vstack([xy[:1], xy[:-1]])
    heading[free] = np.arctan2(ahead[free, 1], ahead[free, 0])
    return heading


def _chain(
    waypoints: Waypoints, heading: FloatArray, max_curvature_inv_m: float
) -> tuple[PathSamples, FloatArray]:
    """Continuous-curvature Dubins legs joined end to end (yaw kept continuous), and the arc
    length at each waypoint."""
    parts: list[PathSamples] = []
    knot_s = [0.0]
    for i in range(len(waypoints) - 1):
        start = Pose2D(*waypoints.xy_m[i], heading[i])
        if parts:
            start = Pose2D(start.x_m, start.y_m, float(parts[-1].yaw_rad[-1]))
        goal = Pose2D(*waypoints.xy_m[i + 1], heading[i + 1])
        leg = cc_dubins(start, goal, max_curvature_inv_m)
        # The leg ends within Newton's tolerance (1e-7 turning radii): end exactly at the goal.
        leg.x_m[-1], leg.y_m[-1] = goal.x_m, goal.y_m
        skip = 1 if parts else 0
        parts.append(
            PathSamples(
                s_m=leg.s_m[skip:] + knot_s[-1],
                x_m=leg.x_m[skip:],
                y_m=leg.y_m[skip:],
                yaw_rad=leg.yaw_rad[skip:],
                curvature_inv_m=leg.curvature_inv_m[skip:],
            )
        )
        knot_s.append(knot_s[-1] + leg.length_m)
    path = PathSamples(
        *(np.concatenate([getattr(p, name) for p in parts]) for name in PathSamples.__annotations__)
    )
    return path, np.array(knot_s)


def _excess_message(waypoints: Waypoints, spline: tuple[PathSamples, FloatArray] | None) -> str:
    """Where and by how much the spline through the waypoints exceeds the bound."""
    if spline is None:
        return 'the smooth curve through them has a cusp'
    path, knot_s = spline
    peak, index = path.max_abs_curvature()
    near = int(np.argmin(np.abs(knot_s - path.s_m[index])))
    return (
        f'the smooth curve through them bends up to {peak:.3g} 1/m (radius {1 / peak:.3g} m) '
        f'near waypoint {near} {waypoints.xy_m[near].tolist()}'
    )


def bounded_path(
    waypoints: Waypoints, max_curvature_inv_m: float = 0.0
) -> tuple[PathSamples, FloatArray]:
    """A smooth path through ``waypoints`` with |curvature| <= ``max_curvature_inv_m``.

    ``max_curvature_inv_m`` 0 means unbounded (then only the spline is used). Returns the densely
    sampled path and the arc length (m) at each waypoint.

    The chain of legs is meant for sparse waypoints (corners, goals): as it comes to a straight
    at every waypoint, dense waypoints along a curve near the bound would need loops. So free
    headings are searched only when at most ``MAX_SEARCHED_HEADINGS`` are free, and with three
    or more waypoints a chain longer than the spline by more than ``MAX_DETOUR_M_PER_RADIUS``
    turning radii plus the spline's own length is refused. Raises :class:`PlanningError` for
    invalid waypoints, a cusp (unbounded), or that refusal, saying where the curve is too tight.
    """
    try:
        spline = spline_through(waypoints)
    except PlanningError:
        if max_curvature_inv_m <= 0:
            raise
        spline = None
    if spline is not None:
        peak, _ = spline[0].max_abs_curvature()
        if max_curvature_inv_m <= 0 or peak <= max_curvature_inv_m:
            return spline
    heading = _initial_headings(waypoints, spline)
    if int((~np.isfinite(waypoints.heading_rad)).sum()) <= MAX_SEARCHED_HEADINGS:
        heading = _free_headings(waypoints, heading, max_curvature_inv_m)
    chain = _chain(waypoints, heading, max_curvature_inv_m)
    if len(waypoints) > 2:
        radius_m = 1.0 / max_curvature_inv_m
        reference_m = spline[0].length_m if spline is not None else chain[0].length_m
        allowed_m = 2.0 * reference_m + MAX_DETOUR_M_PER_RADIUS * radius_m
        if chain[0].length_m > allowed_m:
            where = _excess_message(waypoints, spline)
            raise PlanningError(
                f'the waypoints ask for tighter turns than max_curvature {max_curvature_inv_m:.3g}'
                f' 1/m (radius {radius_m:.3g} m): {where}; a path within the bound would loop '
                f'({chain[0].length_m:.1f} m instead of '
                f'{reference_m:.1f} m). Space the waypoints wider or round the turns.'
            )
    return chain
