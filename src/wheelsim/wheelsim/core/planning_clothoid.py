"""Continuous-curvature Dubins paths: Dubins words whose turns ramp their curvature linearly.

A Dubins path (:mod:`planning_dubins`) jumps between curvature 0 and +-1/radius, which a car
cannot do (its steering takes time). Here every turn of a Dubins word is a clothoid ramp from
curvature 0 up to the bound, an arc, and a ramp back down (a triangle when the turn is short):
on a turn segment of length L, at distance u from its start,

    |curvature(u)| = min(sharpness * u, max_curvature, sharpness * (L - u)),

with ``sharpness = max_curvature / ramp_length``. The curvature is continuous, never exceeds
the bound and changes at most ``sharpness`` per metre, and every leg starts and ends straight
(curvature 0), so legs join with continuous curvature. For each of the six words the segment
lengths (turn, straight or turn, turn) are found by Newton's method so that the leg ends at the
goal pose, starting from the Dubins solution; the shortest leg that converges is kept.
Poses in the planning frame (metres, radians).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.planning_dubins import WORDS, word_lengths
from wheelsim.core.planning_path import FloatArray, PathSamples, PlanningError, Pose2D, wrap_angle

#: Clothoid ramp length as a multiple of the minimum turning radius 1/max_curvature.
RAMP_LENGTH_PER_RADIUS = 0.5
_SIGN = {'L': 1.0, 'R': -1.0, 'S': 0.0}
_SAMPLE_SPACING_M = 0.01
_POSITION_TOLERANCE = 1e-7  # relative to the turning radius
_HEADING_TOLERANCE = 1e-7  # rad
_COARSE_SPACING_PER_RADIUS = 0.2


@dataclass(frozen=True)
class _Shape:
    """Curvature bound (1/m) and ramp sharpness (1/m^2) shared by every turn of a leg."""

    max_curvature_inv_m: float
    sharpness_inv_m2: float

    def turn_angle(self, length_m: float) -> float:
        """Heading change (rad, unsigned) of a turn segment of ``length_m``."""
        ramp_m = self.max_curvature_inv_m / self.sharpness_inv_m2
        if length_m >= 2.0 * ramp_m:
            return self.max_curvature_inv_m * (length_m - ramp_m)
        return self.sharpness_inv_m2 * (length_m / 2.0) ** 2

    def turn_length(self, angle_rad: float) -> float:
        """Length (m) of the turn segment that changes the heading by ``angle_rad`` (>= 0)."""
        ramp_m = self.max_curvature_inv_m / self.sharpness_inv_m2
        if angle_rad >= self.max_curvature_inv_m * ramp_m:
            return angle_rad / self.max_curvature_inv_m + ramp_m
        return 2.0 * math.sqrt(angle_rad / self.sharpness_inv_m2)


def _curvature(
    shape: _Shape, word: str, lengths: FloatArray, counts: list[int]
) -> tuple[FloatArray, FloatArray]:
    """Arc length and curvature samples of a leg (``counts[k]`` intervals on segment k)."""
    s_parts, k_parts = [np.zeros(1)], [np.zeros(1)]
    offset = 0.0
    for kind, length, count in zip(word, lengths, counts, strict=True):
        u = np.linspace(0.0, length, count + 1)[1:]
        ramp = shape.sharpness_inv_m2 * np.minimum(u, length - u)
        k_parts.append(_SIGN[kind] * np.minimum(ramp, shape.max_curvature_inv_m))
        s_parts.append(offset + u)
        offset += length
    return np.concatenate(s_parts), np.concatenate(k_parts)


def _integrate(start: Pose2D, s: FloatArray, curvature: FloatArray) -> tuple[FloatArray, ...]:
    """Heading and position along the samples (trapezoid in heading, midpoint chords)."""
    ds = np.diff(s)
    yaw = start.yaw_rad + np.concatenate(
        [[0.0], np.cumsum(ds * (curvature[:-1] + curvature[1:]) / 2)]
    )
    # Each step as a chord at the mean heading of its ends plus the curvature correction: exact
    # for arcs and straights, O(ds^3) per step for the ramps.
    mid = (yaw[:-1] + yaw[1:]) / 2.0
    turn = yaw[1:] - yaw[:-1]
    chord = ds * np.sinc(turn / (2.0 * np.pi))
    x = start.x_m + np.concatenate([[0.0], np.cumsum(chord * np.cos(mid))])
    y = start.y_m + np.concatenate([[0.0], np.cumsum(chord * np.sin(mid))])
    return yaw, x, y


def _end_error(
    shape: _Shape,
    start: Pose2D,
    goal: Pose2D,
    word: str,
    lengths: FloatArray,
    counts: list[int],
    radius_m: float,
) -> FloatArray:
    s, k = _curvature(shape, word, lengths, counts)
    yaw, x, y = _integrate(start, s, k)
    return np.array(
        [
            (x[-1] - goal.x_m) / radius_m,
            (y[-1] - goal.y_m) / radius_m,
            wrap_angle(yaw[-1] - goal.yaw_rad),
        ]
    )


def _solve(
    shape: _Shape, start: Pose2D, goal: Pose2D, word: str, guess: FloatArray, spacing_m: float
) -> tuple[FloatArray, list[int]] | None:
    """Newton's method on the three segment lengths; None if it does not converge.

    The number of samples per segment (about ``spacing_m`` apart for the guess) stays fixed so
    that the end pose is a smooth function of the lengths; they are returned with the lengths,
    and the leg must be sampled with them to end exactly at the goal.
    """
    radius_m = 1.0 / shape.max_curvature_inv_m
    counts = [max(8, math.ceil(v / spacing_m)) for v in guess]
    lengths = guess.copy()
    error = _end_error(shape, start, goal, word, lengths, counts, radius_m)
    step_m = 1e-7 * radius_m
    for _ in range(40):
        if np.all(np.abs(error[:2]) < _POSITION_TOLERANCE) and abs(error[2]) < _HEADING_TOLERANCE:
            return lengths, counts
        jacobian = (
            np.column_stack(
                [
                    _end_error(shape, start, goal, word, lengths + step, counts, radius_m) - error
                    for step in step_m * np.eye(3)
                ]
            )
            / step_m
        )
        try:
            delta = np.linalg.solve(jacobian, -error)
        except np.linalg.LinAlgError:
            return None
        scale = 1.0
        while scale > 1e-3:  # backtracking: stay non-negative and reduce the error
            trial = np.maximum(lengths + scale * delta, 0.0)
            trial_error = _end_error(shape, start, goal, word, trial, counts, radius_m)
            if np.linalg.norm(trial_error) < np.linalg.norm(error):
                break
            scale /= 2.0
        else:
            return None
        lengths, error = trial, trial_error
    return None


def _shortest(
    start: Pose2D, goal: Pose2D, max_curvature_inv_m: float
) -> tuple[_Shape, str, FloatArray] | None:
    """The shortest word that converges on a coarse grid (5 samples per turning radius),
    starting from the Dubins solutions for the turning radius and 1.5 times it."""
    shape = _Shape(max_curvature_inv_m, max_curvature_inv_m**2 / RAMP_LENGTH_PER_RADIUS)
    spacing_m = _COARSE_SPACING_PER_RADIUS / max_curvature_inv_m
    best: tuple[_Shape, str, FloatArray] | None = None
    for radius_factor in (1.0, 1.5):
        radius_m = radius_factor / max_curvature_inv_m
        for word in WORDS:
            dubins = word_lengths(start, goal, radius_m, word)
            if dubins is None:
                continue
            guess = np.array(
                [
                    length if kind == 'S' else shape.turn_length(length / radius_m)
                    for kind, length in zip(word, dubins, strict=True)
                ]
            )
            solved = _solve(shape, start, goal, word, guess, spacing_m)
            if solved is not None and (best is None or solved[0].sum() < best[2].sum()):
                best = (shape, word, solved[0])
        if best is not None:
            return best
    return None


def cc_dubins_length(start: Pose2D, goal: Pose2D, max_curvature_inv_m: float) -> float:
    """Length (m) of the leg :func:`cc_dubins` would return, from the coarse solution (about
    1e-3 relative); inf if there is none."""
    best = _shortest(start, goal, max_curvature_inv_m)
    return math.inf if best is None else float(best[2].sum())


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
    best = _shortest(start, goal, max_curvature_inv_m)
    spacing_m = min(_SAMPLE_SPACING_M, 0.02 / max_curvature_inv_m)
    solved = None if best is None else _solve(best[0], start, goal, best[1], best[2], spacing_m)
    if best is None or solved is None:
        raise PlanningError(f'no continuous-curvature path from {tuple(start)} to {tuple(goal)}')
    s, curvature = _curvature(best[0], best[1], *solved)
    yaw, x, y = _integrate(start, s, curvature)
    keep = np.concatenate([[True], np.diff(s) > 0])
    return PathSamples(
        s_m=s[keep], x_m=x[keep], y_m=y[keep], yaw_rad=yaw[keep], curvature_inv_m=curvature[keep]
    )
