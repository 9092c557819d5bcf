"""Continuous-curvature Dubins paths: Dubins words whose turns ramp their curvature linearly.

A Dubins path (:mod:`planning_dubins`) jumps between curvature 0 and +-1/radius, which a car
cannot do (its steering takes time). Here every turn of a Dubins word is a clothoid ramp from
curvature 0 up to the bound, an arc, and a ramp back down (a triangle when the turn is short):
on a turn segment of length L, at distance u from its start,

    |curvature(u)| = min(sharpness * u, max_curvature, sharpness * (L - u)),

with ``sharpness = max_curvature / ramp_length``. The curvature is continuous, never exceeds
the bound and changes at most ``sharpness`` per metre, and every leg starts and ends straight
(curvature 0), so legs join with continuous curvature. For each of the six words the segment
lengths (turn, straight or turn, turn) are found in closed form up to a scan
(:mod:`planning_clothoid_turns`) and polished by Newton's method on the sampled leg, so that it
ends at the goal pose; the shortest leg is kept.
Poses in the planning frame (metres, radians).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.clothoid_turns import END_TOLERANCE, TurnShape, candidates
from wheelsim.core.planning.path import PathSamples, PlanningError

#: Clothoid ramp length as a multiple of the minimum turning radius 1/max_curvature.
RAMP_LENGTH_PER_RADIUS = 0.5
_SIGN = {'L': 1.0, 'R': -1.0, 'S': 0.0}
_SAMPLE_SPACING_M = 0.01
_COARSE_RAMP_COUNT = 8


def curvature_profile(
    shape: TurnShape, word: str, lengths: FloatArray, ramp_count: int, spacing_m: float = math.inf
) -> tuple[FloatArray, FloatArray]:
    """Arc length (m) and curvature (1/m) samples of a leg.

    The curvature is linear in arc length between knots (a turn's start, the ends of its ramp
    up and of its arc, its end; a straight's ends), so both are interpolated linearly in the
    sample index between the knots' values. Every ramp gets ``ramp_count`` intervals, and its
    ends are samples, so the heading (the integral of the piecewise linear curvature) is exact
    by the trapezoid rule. Arcs and straights, integrated exactly by :func:`integrate`
    whatever their sampling, get intervals at most ``spacing_m`` long (a single one by
    default).
    """
    knot_s_m, knot_curvature, knot_index = [0.0], [0.0], [0]
    ramp_m = shape.ramp_length_m
    for kind, length in zip(word, lengths.tolist(), strict=True):
        start_m = knot_s_m[-1]
        ramp = 0.0 if kind == 'S' else min(ramp_m, length / 2.0)
        peak = _SIGN[kind] * min(shape.sharpness_inv_m2 * ramp, shape.max_curvature_inv_m)
        middle = length - 2.0 * ramp
        middle_count = 1 if math.isinf(spacing_m) else max(1, math.ceil(middle / spacing_m))
        ramp_intervals = ramp_count if ramp > 0 else 0
        for end_m, end_curvature, count in (
            (ramp, peak, ramp_intervals),
            (length - ramp, peak, middle_count),
            (length, 0.0, ramp_intervals),
        ):
            if count:
                knot_s_m.append(start_m + end_m)
                knot_curvature.append(end_curvature)
                knot_index.append(knot_index[-1] + count)
    index = np.arange(knot_index[-1] + 1)
    return np.interp(index, knot_index, knot_s_m), np.interp(index, knot_index, knot_curvature)


def integrate(
    start: Pose2D, s: FloatArray, curvature: FloatArray, direction: FloatArray | None = None
) -> tuple[FloatArray, ...]:
    """Heading and position along the samples (trapezoid in heading, midpoint chords).

    ``curvature`` is the steering curvature (1/m, left positive); ``direction`` (one per
    interval, default all +1) is -1 where the vehicle backs: the heading then turns the other
    way for the same steering and the position moves against it.
    """
    ds = np.diff(s) if direction is None else np.diff(s) * direction
    turn = ds * (curvature[:-1] + curvature[1:]) / 2.0
    yaw = start.yaw_rad + np.concatenate([[0.0], np.cumsum(turn)])
    # Each step as a chord at the mean heading of its ends plus the curvature correction: exact
    # for arcs and straights, O(ds^3) per step for the ramps.
    mid = yaw[:-1] + turn / 2.0
    chord = ds * np.sinc(turn / (2.0 * np.pi))
    x = start.x_m + np.concatenate([[0.0], np.cumsum(chord * np.cos(mid))])
    y = start.y_m + np.concatenate([[0.0], np.cumsum(chord * np.sin(mid))])
    return yaw, x, y


def _end_error(
    shape: TurnShape,
    start: Pose2D,
    goal: Pose2D,
    word: str,
    lengths: FloatArray,
    ramp_count: int,
    radius_m: float,
) -> FloatArray:
    s, k = curvature_profile(shape, word, lengths, ramp_count)
    yaw, x, y = integrate(start, s, k)
    return np.array(
        [
            (x[-1] - goal.x_m) / radius_m,
            (y[-1] - goal.y_m) / radius_m,
            wrap_angle(yaw[-1] - goal.yaw_rad),
        ]
    )


def polish_lengths(
    end_error: Callable[[FloatArray], FloatArray], guess: FloatArray, step_m: float,
    iterations: int = 40, min_scale: float = 1e-3,
) -> FloatArray | None:
    """Segment lengths (m) near ``guess`` at which ``end_error`` (miss of the goal: x, y in
    turning radii, heading in rad) is below :data:`END_TOLERANCE`, by Newton's method
    (least-norm steps when there are more lengths than errors) with backtracking that keeps the
    lengths >= 0; None if it does not converge. The Jacobian is a forward difference of
    ``step_m``."""
    lengths = guess.copy()
    error = end_error(lengths)
    for _ in range(iterations):
        if np.all(np.abs(error) < END_TOLERANCE):
            return lengths
        jacobian = np.column_stack(
            [end_error(lengths + step) - error for step in step_m * np.eye(len(lengths))]
        ) / step_m
        try:
            if len(lengths) == len(error):
                delta = np.linalg.solve(jacobian, -error)
            else:
                delta = np.linalg.lstsq(jacobian, -error, rcond=None)[0]
        except np.linalg.LinAlgError:
            return None
        scale = 1.0
        while scale > min_scale:  # backtracking: stay non-negative and reduce the error
            trial = np.maximum(lengths + scale * delta, 0.0)
            trial_error = end_error(trial)
            if np.linalg.norm(trial_error) < np.linalg.norm(error):
                break
            scale /= 2.0
        else:
            return None
        lengths, error = trial, trial_error
    return None


def _solve(
    shape: TurnShape, start: Pose2D, goal: Pose2D, word: str, guess: FloatArray, ramp_count: int
) -> FloatArray | None:
    """Newton's method on the three segment lengths; None if it does not converge."""
    radius_m = 1.0 / shape.max_curvature_inv_m
    return polish_lengths(
        lambda lengths: _end_error(shape, start, goal, word, lengths, ramp_count, radius_m),
        guess, 1e-7 * radius_m)


def _coarse_solutions(
    start: Pose2D, goal: Pose2D, max_curvature_inv_m: float, every_word: bool
) -> list[tuple[TurnShape, str, FloatArray]]:
    """Candidates (:func:`candidates`) that converge with coarsely sampled ramps, shortest
    first.

    Candidates come shortest first and are close to exact, so unless ``every_word`` the search
    stops at the first candidate longer than the best converged solution.
    """
    shape = TurnShape(max_curvature_inv_m, max_curvature_inv_m**2 / RAMP_LENGTH_PER_RADIUS)
    found: list[tuple[TurnShape, str, FloatArray]] = []
    for word, guess in candidates(shape, start, goal):
        if found and not every_word and guess.sum() > found[0][2].sum() * (1 + 1e-3):
            break
        solved = _solve(shape, start, goal, word, guess, _COARSE_RAMP_COUNT)
        if solved is not None:
            found.append((shape, word, solved))
            found.sort(key=lambda solution: solution[2].sum())
    return found


def cc_dubins(start: Pose2D, goal: Pose2D, max_curvature_inv_m: float) -> PathSamples:
    """The shortest continuous-curvature Dubins leg found from ``start`` to ``goal``.

    Curvature stays within +-``max_curvature_inv_m``, is 0 at both ends and changes at most
    ``max_curvature / ramp length`` per metre, the ramp being ``RAMP_LENGTH_PER_RADIUS`` turning
    radii long. Samples are at most 1 cm apart. Raises :class:`PlanningError` if start and goal
    coincide or no word converges.
    """
    if math.hypot(goal.x_m - start.x_m, goal.y_m - start.y_m) * max_curvature_inv_m < 1e-9 and (
        abs(wrap_angle(goal.yaw_rad - start.yaw_rad)) < 1e-9
    ):
        raise PlanningError(f'start and goal coincide at {tuple(start)}: no leg to plan')
    ramp_count = max(8, math.ceil(RAMP_LENGTH_PER_RADIUS / max_curvature_inv_m / _SAMPLE_SPACING_M))
    tried: set[str] = set()
    lengths = None
    # The shortest word first; near the boundary between two words its fine-grid solution may
    # not converge (seen: (0, 0, 0) to (0.25, 4.0879, 0) at curvature 1), then the next word.
    for every_word in (False, True):
        for shape, word, coarse in _coarse_solutions(start, goal, max_curvature_inv_m, every_word):
            if word not in tried:
                tried.add(word)
                lengths = _solve(shape, start, goal, word, coarse, ramp_count)
                if lengths is not None:
                    break
        if lengths is not None:
            break
    if not tried:
        raise PlanningError(f'no continuous-curvature path from {tuple(start)} to {tuple(goal)}')
    if lengths is None:
        raise PlanningError(
            f'continuous-curvature path from {tuple(start)} to {tuple(goal)} '
            'did not converge on the fine grid'
        )
    s, curvature = curvature_profile(shape, word, lengths, ramp_count, _SAMPLE_SPACING_M)
    yaw, x, y = integrate(start, s, curvature)
    # Of samples at one arc length (knots of a turn too short to advance it in floating point),
    # the last: the leg's final one is its end, where the curvature is 0.
    keep = np.concatenate([np.diff(s) > 0, [True]])
    return PathSamples(
        s_m=s[keep], x_m=x[keep], y_m=y[keep], yaw_rad=yaw[keep], curvature_inv_m=curvature[keep]
    )
