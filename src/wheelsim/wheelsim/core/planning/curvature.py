"""A continuous-curvature path through waypoints whose curvature stays within a bound, never a loop.

1. The minimum-jerk spline through the waypoints (:mod:`planning_spline`). Kept where it stays
   within ``max_curvature_inv_m`` (a car's steering limit, tan(max_steer)/wheel_base) and never
   nearly stops (a cusp).
2. Where it does not, its free headings, tangent lengths and second derivatives around those
   stretches are optimised (:mod:`planning_spline_bound`): the curve closest to the smooth one
   (least jerk and bending) that keeps the bound.
3. Only a leg (the curve between two consecutive waypoints) that no such curve can drive
   becomes a continuous-curvature Dubins leg (:mod:`planning_clothoid`), or for a vehicle that
   may reverse a Reeds-Shepp leg with cusps (:mod:`planning_reeds_shepp`), straight at both ends;
   the spline on either side then arrives and leaves straight with the same heading, so the
   curvature stays continuous. Each such leg is reported in ``warnings``.
4. In a route (more than two points), a fallback leg that turns more than its waypoints ask
   for by :data:`LOOP_SLACK_RAD` (a loop) is refused with a :class:`PlanningError` naming its
   waypoints: the route cannot be driven as given. Between two poses (a goal) the shortest
   path within the bound is what was asked for, whatever it turns.

With ``max_curvature_inv_m`` 0 (unbounded: differential and omni bases) only cusps are removed,
and fallback legs turn within ``fallback_curvature_inv_m``.
"""

from __future__ import annotations

import math

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.clothoid import cc_dubins
from wheelsim.core.planning.path import DrivenPath, PathSamples, PlanningError
from wheelsim.core.planning.reeds_shepp import cc_reeds_shepp
from wheelsim.core.planning.spline import (
    HermiteSpline,
    cusp_message,
    minimum_jerk_spline,
)
from wheelsim.core.planning.spline_bound import (
    BOUND_MARGIN,
    MIN_SPEED,
    WINDOW_MARGIN,
    Freedom,
    SegmentCheck,
    bend_within,
    check_segments,
)
from wheelsim.core.planning.waypoints import Waypoints, validated

#: How often a segment's bound may be tightened before it counts as unable to keep it.
MAX_TIGHTENING = 3
#: A fallback leg may turn this much (a U-turn) more than its waypoints' geometry (chord, headings)
#: before it counts as a loop and is refused (rad).
LOOP_SLACK_RAD = math.pi
#: A route turning by more than this at a waypoint turns back there (rad).
TURN_BACK_RAD = math.radians(170.0)
#: Each metre in reverse counts this many in choosing a free last heading: the trackers follow
#: a reverse stretch less closely. Nav2's Smac Hybrid-A* planner's default reverse_penalty
#: (navigation2 1.3.13 and 1.4.2, smac_planner_hybrid.cpp) is the same 2.0.
REVERSE_LENGTH_WEIGHT = 2.0


def _excess(check: SegmentCheck, max_curvature_inv_m: float) -> FloatArray:
    """How badly each segment breaks the bound and the speed floor (> 1: broken)."""
    excess = MIN_SPEED / np.maximum(check.min_speed, 1e-12)
    if max_curvature_inv_m > 0:
        excess = np.maximum(excess, check.max_curvature_inv_m / max_curvature_inv_m)
    return excess


def _tangent_heading(spline: HermiteSpline, i: int) -> float:
    return float(math.atan2(spline.tangents[i, 1], spline.tangents[i, 0]))


def _chord_heading(waypoints: Waypoints, i: int) -> float:
    """The heading of the chord from waypoint ``i`` to ``i + 1``."""
    dx, dy = waypoints.xy_m[i + 1] - waypoints.xy_m[i]
    return math.atan2(dy, dx)


def fallback_legs(waypoints: Waypoints, max_curvature_inv_m: float = 0.0) -> list[int]:
    """The legs (each by the index of its first waypoint) where the smooth curve through
    ``waypoints`` cannot keep ``max_curvature_inv_m`` (0: unbounded; then only where it would
    nearly stop and reverse): those :func:`bounded_path` makes fallback legs of, forwards."""
    waypoints = validated(waypoints)
    _, freedom = optimised(waypoints, minimum_jerk_spline(waypoints), max_curvature_inv_m)
    return np.flatnonzero(freedom.skipped).tolist()


def turn_backs(waypoints: Waypoints) -> list[int]:
    """The interior waypoints where the route turns back (:func:`_turns_back`)."""
    return [i for i in range(1, len(waypoints) - 1) if _turns_back(waypoints, i)]


def _turns_back(waypoints: Waypoints, i: int) -> bool:
    """Whether the route turns back at interior waypoint ``i``: its chords in and out turn by
    more than :data:`TURN_BACK_RAD`."""
    return 0 < i < len(waypoints) - 1 and abs(wrap_angle(
        _chord_heading(waypoints, i) - _chord_heading(waypoints, i - 1))) > TURN_BACK_RAD


def _arrival_heading(waypoints: Waypoints, spline: HermiteSpline, direction_rad: FloatArray,
                     i: int) -> float:
    """The heading the vehicle arrives at waypoint ``i`` with along the chord: facing along it
    or, after a turn-back, backing along it. Taken from the nearest waypoint before ``i`` whose
    heading is known (given, or the curve's where the route does not turn back), the vehicle
    facing the same way (forwards or backwards) along each chord after it."""
    known = i - 1
    while known > 0 and np.isnan(direction_rad[known]) and _turns_back(waypoints, known):
        known -= 1
    heading_rad = direction_rad[known]
    if np.isnan(heading_rad):
        heading_rad = _tangent_heading(spline, known)
    for k in range(known, i):
        chord_rad = _chord_heading(waypoints, k)
        heading_rad = chord_rad if math.cos(heading_rad - chord_rad) >= 0 else chord_rad + math.pi
    return float(heading_rad)


def _free_heading(waypoints: Waypoints, spline: HermiteSpline, direction_rad: FloatArray, i: int,
                  reverse_curvature_inv_m: float) -> float:
    """The heading a fallback leg's end takes at waypoint ``i``, whose heading is free: the
    curve's there. Where the route turns back (:func:`_turns_back`) and legs may reverse
    (``reverse_curvature_inv_m`` > 0, their curvature bound), the curve's direction is set by
    millimetres of the waypoints (a noisy start), so the heading the vehicle arrives with
    (:func:`_arrival_heading`) competes with it: whichever gives the shorter Reeds-Shepp legs to
    the waypoints either side (a free heading there the better of its chord's two), each metre
    in reverse counted :data:`REVERSE_LENGTH_WEIGHT` times; the arrival's wins a tie."""
    curve_rad = _tangent_heading(spline, i)
    if reverse_curvature_inv_m <= 0 or not _turns_back(waypoints, i):
        return curve_rad
    arriving_rad, leaving_rad = _chord_heading(waypoints, i - 1), _chord_heading(waypoints, i)
    facing_rad = _arrival_heading(waypoints, spline, direction_rad, i)

    def options(k: int, chord_rad: float) -> tuple[float, ...]:
        given = direction_rad[k]
        return (chord_rad, chord_rad + math.pi) if np.isnan(given) else (float(given),)

    def cost(heading_rad: float) -> float:
        here = Pose2D(*waypoints.xy_m[i], heading_rad)
        before = min(_weighted_length_m(Pose2D(*waypoints.xy_m[i - 1], yaw), here,
                                        reverse_curvature_inv_m)
                     for yaw in options(i - 1, arriving_rad))
        after = min(_weighted_length_m(here, Pose2D(*waypoints.xy_m[i + 1], yaw),
                                       reverse_curvature_inv_m)
                    for yaw in options(i + 1, leaving_rad))
        return before + after

    return facing_rad if cost(facing_rad) <= cost(curve_rad) else curve_rad


def _weighted_length_m(start: Pose2D, goal: Pose2D, curvature_inv_m: float) -> float:
    """The Reeds-Shepp leg's length, each metre in reverse counted
    :data:`REVERSE_LENGTH_WEIGHT` times."""
    return sum(path.length_m * (REVERSE_LENGTH_WEIGHT if backwards else 1.0)
               for path, backwards in cc_reeds_shepp(start, goal, curvature_inv_m))


def optimised(
    waypoints: Waypoints, spline: HermiteSpline, max_curvature_inv_m: float,
    reverse_curvature_inv_m: float = 0.0,
) -> tuple[HermiteSpline, Freedom]:
    """The spline bent within the bound, and which legs must fall back (``skipped``; their
    free ends' headings: :func:`_free_heading`, legs reversing within
    ``reverse_curvature_inv_m`` when > 0)."""
    count = len(waypoints)
    freedom = Freedom.of(waypoints.heading_rad)
    broken = check_segments(spline).broken(max_curvature_inv_m)
    tightened = np.zeros(count - 1, dtype=int)
    while broken.size:
        before = check_segments(spline)
        spline = bend_within(spline, freedom, max_curvature_inv_m, broken)
        check = check_segments(spline)
        still = check.broken(max_curvature_inv_m)
        still = still[~freedom.skipped[still]]
        if not still.size:
            break
        # Kept at the constraint samples but not between them: hold those segments tighter.
        close = still[(check.max_curvature_inv_m[still] < max_curvature_inv_m * 1.1)
                      & (check.min_speed[still] >= MIN_SPEED)
                      & (tightened[still] < MAX_TIGHTENING)
                      & (check.max_curvature_inv_m[still] < before.max_curvature_inv_m[still])]
        if close.size:
            freedom.bound_fraction[close] *= (
                max_curvature_inv_m / check.max_curvature_inv_m[close] * BOUND_MARGIN)
            tightened[close] += 1
            broken = close
            continue
        # The worst leg falls back; its ends keep the heading the curve has there and become
        # straight; the legs around it are bent again to meet them, and the broken legs whose
        # windows (bend_within) hold those ends. Broken legs farther away were bent with the
        # same freedom before; bending them again made a route of n such legs take n passes
        # over all of them (64 s for 50 waypoints), and mostly found the same curve.
        worst = int(still[np.argmax(_excess(check, max_curvature_inv_m)[still])])
        freedom.skipped[worst] = True
        for i in (worst, worst + 1):
            if np.isnan(freedom.direction_rad[i]):
                freedom.direction_rad[i] = _free_heading(waypoints, spline,
                                                         freedom.direction_rad, i,
                                                         reverse_curvature_inv_m)
            freedom.straight[i] = True
        neighbours = [s for s in (worst - 1, worst + 1) if 0 <= s < count - 1]
        nearby = still[np.abs(still - worst) <= WINDOW_MARGIN + 1]
        broken = np.union1d(nearby, np.array(neighbours, dtype=int))
        broken = broken[~freedom.skipped[broken]]
        if not broken.size:  # none near: the next worst is elsewhere
            broken = still[~freedom.skipped[still]]
    return spline, freedom


def _geometric_turning(start: Pose2D, goal: Pose2D) -> float:
    """Turning (rad) a forward leg needs at least: from the start heading to the chord, then
    to the goal heading."""
    chord = math.atan2(goal.y_m - start.y_m, goal.x_m - start.x_m)
    return abs(wrap_angle(chord - start.yaw_rad)) + abs(wrap_angle(goal.yaw_rad - chord))


def _fallback_leg(
    waypoints: Waypoints, i: int, heading: FloatArray, curvature_inv_m: float, reverse: bool,
    warnings: list[str] | None, first_index: int = 0,
) -> list[tuple[PathSamples, bool]]:
    """The fallback leg from waypoint i to i + 1 as pieces ``(path, reverse)``: the
    continuous-curvature Reeds-Shepp leg when reversing is allowed, else the Dubins one (refused
    if it loops in a route). Messages name waypoint ``i`` as ``first_index + i``."""
    start = Pose2D(*waypoints.xy_m[i], float(heading[i]))
    goal = Pose2D(*waypoints.xy_m[i + 1], float(heading[i + 1]))
    where = (f'waypoints {first_index + i} {_xy_text(waypoints, i)} and {first_index + i + 1} '
             f'{_xy_text(waypoints, i + 1)}')
    because = (f'{where}: no smooth curve through the waypoints keeps max_curvature '
               f'{curvature_inv_m:.3g} 1/m here, so this leg is a continuous-curvature')
    ends = (f'straight at both ends, headings {wrap_angle(start.yaw_rad):.2f} and '
            f'{wrap_angle(goal.yaw_rad):.2f} rad')
    if reverse:
        pieces = cc_reeds_shepp(start, goal, curvature_inv_m)
        if warnings is not None:
            backwards = sum(path.length_m for path, back in pieces if back)
            warnings.append(
                f'{because} Reeds-Shepp path ({sum(p.length_m for p, _ in pieces):.2f} m, '
                f'{len(pieces) - 1} direction changes, {backwards:.2f} m in reverse, {ends})')
        return pieces
    leg = cc_dubins(start, goal, curvature_inv_m)
    turning = float(np.abs(np.diff(leg.yaw_rad)).sum())
    needed = _geometric_turning(start, goal)
    if len(waypoints) > 2 and turning > needed + LOOP_SLACK_RAD:
        raise PlanningError(
            f'{where} cannot be driven within max_curvature {curvature_inv_m:.3g} 1/m (radius '
            f'{1 / curvature_inv_m:.3g} m): no smooth curve through them keeps the bound, and '
            f'the shortest path that does turns {turning:.2f} rad where they turn '
            f'{needed:.2f} rad (a loop). Space the waypoints wider, round the turn, or free '
            'their headings')
    if warnings is not None:
        warnings.append(f'{because} Dubins path ({leg.length_m:.2f} m, {ends})')
    return [(leg, False)]


def _end_heading(waypoints: Waypoints, heading: FloatArray, curvature_inv_m: float) -> float:
    """The heading a Reeds-Shepp last leg ends with where the last waypoint's is free: the
    curve's heading there, its reverse or the leg's start heading, whichever gives the shortest
    leg, each metre in reverse counted :data:`REVERSE_LENGTH_WEIGHT` times (a point just behind
    a car is reached backing up, not by turning round to face it; a loop's end is not traded for
    more reversing). The curve's heading wins a tie."""
    start = Pose2D(*waypoints.xy_m[-2], float(heading[-2]))
    weighted_lengths_m = {}
    for yaw_rad in (float(heading[-1]), float(wrap_angle(heading[-1] + math.pi)),
                    start.yaw_rad):
        weighted_lengths_m[yaw_rad] = _weighted_length_m(
            start, Pose2D(*waypoints.xy_m[-1], yaw_rad), curvature_inv_m)
    return min(weighted_lengths_m, key=weighted_lengths_m.__getitem__)


def _xy_text(waypoints: Waypoints, i: int) -> str:
    x, y = waypoints.xy_m[i]
    return f'({x:.3g}, {y:.3g})'


def _joined(parts: list[PathSamples]) -> PathSamples:
    """Paths end to end (each starts where the previous ends): arc length and yaw continued."""
    arrays: dict[str, list[FloatArray]] = {name: [] for name in PathSamples.__annotations__}
    offset_s, yaw_end = 0.0, None
    for k, part in enumerate(parts):
        skip = 1 if k else 0
        yaw = part.yaw_rad
        if yaw_end is not None:  # the same heading, the same branch of the angle
            yaw = yaw + 2 * np.pi * np.round((yaw_end - yaw[0]) / (2 * np.pi))
        arrays['s_m'].append(part.s_m[skip:] + offset_s)
        arrays['x_m'].append(part.x_m[skip:])
        arrays['y_m'].append(part.y_m[skip:])
        arrays['yaw_rad'].append(yaw[skip:])
        arrays['curvature_inv_m'].append(part.curvature_inv_m[skip:])
        offset_s += part.length_m
        yaw_end = float(yaw[-1])
    return PathSamples(**{name: np.concatenate(values) for name, values in arrays.items()})


def bounded_path(
    waypoints: Waypoints,
    max_curvature_inv_m: float = 0.0,
    fallback_curvature_inv_m: float = 0.0,
    warnings: list[str] | None = None,
    reverse: bool = False,
    first_index: int = 0,
) -> DrivenPath:
    """A smooth path through ``waypoints`` with |curvature| <= ``max_curvature_inv_m``.

    ``max_curvature_inv_m`` 0 means unbounded; fallback legs then turn within
    ``fallback_curvature_inv_m`` (0: none allowed, a cusp the optimisation cannot remove is
    refused). With ``reverse`` (a vehicle allowed to back up) fallback legs are Reeds-Shepp legs,
    with cusps. Returns the densely sampled path in pieces of one direction each; the fallback
    legs are described in ``warnings`` when given. Raises :class:`PlanningError` for invalid
    waypoints and for waypoints that cannot be driven without a loop (see the module doc),
    naming the waypoints (``waypoints[0]`` as waypoint ``first_index``: a part of a route).
    """
    waypoints = validated(waypoints)
    spline = minimum_jerk_spline(waypoints)
    leg_curvature = max_curvature_inv_m or fallback_curvature_inv_m
    spline, freedom = optimised(waypoints, spline, max_curvature_inv_m,
                                leg_curvature if reverse else 0.0)
    if freedom.skipped.any() and leg_curvature <= 0:
        raise PlanningError(cusp_message(spline, waypoints, first_index))
    if reverse and freedom.skipped[-1] and np.isnan(waypoints.heading_rad[-1]):
        freedom.direction_rad[-1] = _end_heading(waypoints, freedom.direction_rad, leg_curvature)
    parts: list[tuple[PathSamples, bool]] = []
    knot_s = [0.0]
    segment = 0
    while segment < len(waypoints) - 1:
        if freedom.skipped[segment]:
            leg = _fallback_leg(waypoints, segment, freedom.direction_rad, leg_curvature,
                                reverse, warnings, first_index)
            last = leg[-1][0]
            last.x_m[-1], last.y_m[-1] = waypoints.xy_m[segment + 1]  # exact, not within 1e-7 r
            parts.extend(leg)
            knot_s.append(knot_s[-1] + sum(piece.length_m for piece, _ in leg))
            segment += 1
            continue
        run_end = segment
        while run_end + 1 < len(waypoints) - 1 and not freedom.skipped[run_end + 1]:
            run_end += 1
        piece, piece_knots, _ = spline.sample(segments=np.arange(segment, run_end + 1))
        parts.append((piece, False))
        knot_s.extend((knot_s[-1] + piece_knots[1:]).tolist())
        segment = run_end + 1
    pieces: list[PathSamples] = []
    backwards: list[bool] = []
    start = 0
    for k in range(1, len(parts) + 1):  # consecutive parts of one direction: one piece
        if k == len(parts) or parts[k][1] != parts[start][1]:
            pieces.append(_joined([part for part, _ in parts[start:k]]))
            backwards.append(parts[start][1])
            start = k
    return DrivenPath(tuple(pieces), tuple(backwards), np.array(knot_s))
