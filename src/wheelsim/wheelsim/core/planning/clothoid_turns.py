"""Turns with linear curvature ramps in closed form, and candidate solutions of each Dubins word.

A turn of angle phi (unsigned) ramps its curvature from 0 up at ``sharpness`` per metre to
``max_curvature``, holds it, and ramps down again (a clothoid, an arc, a clothoid); short turns
are two clothoids meeting at a lower peak. The clothoid's end is given by the Fresnel integrals

    x(a) = sqrt(pi / sharpness) C(a sqrt(sharpness / pi)),  y(a) = sqrt(pi / sharpness) S(...),

and the turn is symmetric, so its end lies along the mean heading phi / 2 at twice the
projection of its midpoint on that direction. From these closed forms, each word's candidate
segment lengths follow from a scan: for CSC words (turn, straight, turn) the first turn angle
decides the second (the headings must add up) and the straight must bridge the two turns, a
one-dimensional root; CCC words (three turns) are a two-dimensional scan. The candidates are
seeds: :mod:`planning_clothoid` polishes them on the sampled path.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Pose2D

_SIGNS = {'L': 1.0, 'R': -1.0}
#: The miss of the goal at which a leg counts as reaching it: x and y in turning radii, heading
#: in radians (what Newton's polish, clothoid.polish_lengths, converges to).
END_TOLERANCE = 1e-7
_CSC_WORDS = ('LSL', 'RSR', 'LSR', 'RSL')
_CCC_WORDS = ('RLR', 'LRL')
_CSC_GRID = np.linspace(0.0, 2.0 * np.pi, 721)  # first turn angle, 0.5 degree steps
_CCC_GRID = np.linspace(0.0, 2.0 * np.pi, 121)  # first and middle turn angles, 3 degree steps
#: Every difference first - middle of two ``_CCC_GRID`` angles (rad), ascending.
_CCC_DIFFERENCES = np.concatenate([-_CCC_GRID[:0:-1], _CCC_GRID])
#: Index into ``_CCC_DIFFERENCES`` of the difference of each cell (first row, middle column).
_CCC_DIFFERENCE_INDEX = (
    np.arange(len(_CCC_GRID))[:, np.newaxis] - np.arange(len(_CCC_GRID)) + len(_CCC_GRID) - 1
)
_TABLE_ANGLES = np.linspace(0.0, 2.0 * np.pi, 8193)


@dataclass(frozen=True)
class TurnShape:
    """Curvature bound (1/m) and ramp sharpness (1/m^2) shared by every turn of a leg."""

    max_curvature_inv_m: float
    sharpness_inv_m2: float

    @property
    def ramp_length_m(self) -> float:
        """Length of a full ramp from curvature 0 to the bound."""
        return self.max_curvature_inv_m / self.sharpness_inv_m2

    def turn_length(self, angle_rad: FloatArray | float) -> FloatArray:
        """Length (m) of the turn that changes the heading by ``angle_rad`` (>= 0)."""
        angle = np.asarray(angle_rad, dtype=float)
        ramp_m = self.ramp_length_m
        plateau = angle >= self.max_curvature_inv_m * ramp_m
        short = 2.0 * np.sqrt(
            np.minimum(angle, self.max_curvature_inv_m * ramp_m) / self.sharpness_inv_m2
        )
        return np.where(plateau, angle / self.max_curvature_inv_m + ramp_m, short)

    def end_offset(self, angle_rad: FloatArray) -> tuple[FloatArray, FloatArray]:
        """End position (m) of a left turn of ``angle_rad`` (>= 0) in the frame of its start."""
        from scipy.special import fresnel  # on first use: docs/architecture.md

        angle = np.asarray(angle_rad, dtype=float)
        sharpness = self.sharpness_inv_m2
        full_turn = self.max_curvature_inv_m * self.ramp_length_m  # both ramps at full length
        ramp_m = np.where(angle >= full_turn, self.ramp_length_m, np.sqrt(angle / sharpness))
        peak = sharpness * ramp_m
        ramp_turn = sharpness * ramp_m**2 / 2.0
        scale = math.sqrt(math.pi / sharpness)
        fresnel_s, fresnel_c = fresnel(ramp_m / scale)
        half_arc = (angle - 2.0 * ramp_turn) / 2.0
        with np.errstate(divide='ignore', invalid='ignore'):
            arc_x = np.where(peak > 0, np.sin(half_arc) / peak, 0.0)
            arc_y = np.where(peak > 0, (1.0 - np.cos(half_arc)) / peak, 0.0)
        mid_x = scale * fresnel_c + np.cos(ramp_turn) * arc_x - np.sin(ramp_turn) * arc_y
        mid_y = scale * fresnel_s + np.sin(ramp_turn) * arc_x + np.cos(ramp_turn) * arc_y
        chord = 2.0 * (mid_x * np.cos(angle / 2.0) + mid_y * np.sin(angle / 2.0))
        return chord * np.cos(angle / 2.0), chord * np.sin(angle / 2.0)


@functools.lru_cache(maxsize=16)
def _offset_table(shape: TurnShape) -> tuple[FloatArray, FloatArray]:
    """:meth:`TurnShape.end_offset` on ``_TABLE_ANGLES``."""
    return shape.end_offset(_TABLE_ANGLES)


def _seed_offset(shape: TurnShape, angle: FloatArray) -> tuple[FloatArray, FloatArray]:
    """:meth:`TurnShape.end_offset` interpolated from a table (about 1e-6 turning radii)."""
    x_table, y_table = _offset_table(shape)
    return np.interp(angle, _TABLE_ANGLES, x_table), np.interp(angle, _TABLE_ANGLES, y_table)


def _after_turn(
    shape: TurnShape,
    x: FloatArray | float,
    y: FloatArray | float,
    yaw: FloatArray | float,
    sign: float,
    angle: FloatArray,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Pose after a turn of ``angle`` (>= 0) in direction ``sign`` (+1 left) from (x, y, yaw)
    (m, m, rad; the arrays broadcast against each other)."""
    dx, dy = _seed_offset(shape, angle)
    dy = sign * dy
    return (
        x + np.cos(yaw) * dx - np.sin(yaw) * dy,
        y + np.sin(yaw) * dx + np.cos(yaw) * dy,
        yaw + sign * angle,
    )


def _csc_candidates(shape: TurnShape, start: Pose2D, goal: Pose2D, word: str) -> list[FloatArray]:
    first_sign, last_sign = _SIGNS[word[0]], _SIGNS[word[2]]
    # The last angle wraps (2 pi -> 0) where the first turn alone makes the heading change; a
    # root next to that point (a nearly straight goal: both turns tiny) would fall in a bracket
    # skipped as wrapping, so the grid gets points just before and after it.
    zero_last = np.mod(first_sign * (goal.yaw_rad - start.yaw_rad), 2.0 * np.pi)
    first = np.union1d(_CSC_GRID, np.clip(zero_last + np.array([-1e-9, 1e-9]), 0.0, 2.0 * np.pi))
    last = np.mod(last_sign * (goal.yaw_rad - start.yaw_rad - first_sign * first), 2.0 * np.pi)
    x1, y1, yaw1 = _after_turn(shape, start.x_m, start.y_m, start.yaw_rad, first_sign, first)
    # Where the last turn must begin: walk it backwards from the goal.
    dx, dy = _seed_offset(shape, last)
    dy = last_sign * dy
    x3 = goal.x_m - (np.cos(yaw1) * dx - np.sin(yaw1) * dy)
    y3 = goal.y_m - (np.sin(yaw1) * dx + np.cos(yaw1) * dy)
    across = -np.sin(yaw1) * (x3 - x1) + np.cos(yaw1) * (y3 - y1)
    along = np.cos(yaw1) * (x3 - x1) + np.sin(yaw1) * (y3 - y1)
    out = []
    for i in np.flatnonzero(across[:-1] * across[1:] <= 0):
        if abs(last[i + 1] - last[i]) > np.pi:  # the last angle wraps here: no root
            continue
        w = across[i] / (across[i] - across[i + 1]) if across[i] != across[i + 1] else 0.0
        straight = (1 - w) * along[i] + w * along[i + 1]
        if straight < -0.05 * shape.ramp_length_m:
            continue
        angles = (1 - w) * first[i] + w * first[i + 1], (1 - w) * last[i] + w * last[i + 1]
        out.append(
            np.array(
                [shape.turn_length(angles[0]), max(straight, 0.0), shape.turn_length(angles[1])]
            )
        )
    return out


def _ccc_candidates(
    shape: TurnShape, start: Pose2D, goal: Pose2D, word: str, radius_m: float
) -> list[FloatArray]:
    from scipy.ndimage import minimum_filter  # on first use: docs/architecture.md

    first_sign, middle_sign, last_sign = (_SIGNS[kind] for kind in word)
    # Grid rows: first turn angle, columns: middle turn angle. The pose after the first turn
    # depends on the row only and the middle turn's offset on the column only: both broadcast.
    x, y, yaw = start.x_m, start.y_m, start.yaw_rad
    x, y, yaw = _after_turn(shape, x, y, yaw, first_sign, _CCC_GRID[:, np.newaxis])
    x, y, _ = _after_turn(shape, x, y, yaw, middle_sign, _CCC_GRID[np.newaxis, :])
    # The middle turn goes the other way than the first (middle_sign == -first_sign), so the
    # heading before the last turn and the last turn angle depend on first - middle only: the
    # last turn is computed once per difference and looked up per cell.
    turned = first_sign * _CCC_DIFFERENCES  # heading change of the first two turns
    last = np.mod(last_sign * (goal.yaw_rad - start.yaw_rad - turned), 2.0 * np.pi)
    last_dx, last_dy, _ = _after_turn(shape, 0.0, 0.0, start.yaw_rad + turned, last_sign, last)
    cell = _CCC_DIFFERENCE_INDEX
    miss = np.hypot(x + last_dx[cell] - goal.x_m, y + last_dy[cell] - goal.y_m)
    # Local minima of the miss distance over the grid (edges repeated) close to a solution.
    minima = (miss <= minimum_filter(miss, size=3, mode='nearest')) & (miss < 0.2 * radius_m)
    return [
        shape.turn_length(np.array([_CCC_GRID[i], _CCC_GRID[j], last[cell[i, j]]]))
        for i, j in zip(*np.nonzero(minima), strict=True)
    ]


def candidates(shape: TurnShape, start: Pose2D, goal: Pose2D) -> list[tuple[str, FloatArray]]:
    """Approximate segment lengths (m) of every solution of every word found by the scans,
    shortest first."""
    radius_m = 1.0 / shape.max_curvature_inv_m
    found = [
        (word, lengths)
        for word in _CSC_WORDS
        for lengths in _csc_candidates(shape, start, goal, word)
    ]
    found += [
        (word, lengths)
        for word in _CCC_WORDS
        for lengths in _ccc_candidates(shape, start, goal, word, radius_m)
    ]
    found += _straight_candidate(start, goal, radius_m)
    return sorted(found, key=lambda item: float(item[1].sum()))


def _straight_candidate(
    start: Pose2D, goal: Pose2D, radius_m: float
) -> list[tuple[str, FloatArray]]:
    """The straight line when it reaches a goal ahead within half :data:`END_TOLERANCE` (both
    turns of zero length): turns that small are below the scans' resolution, which then find
    nothing (a goal 3 m ahead, 1e-9 m aside and 1e-9 rad turned, at curvature 2) or only
    detours (3 m ahead and 2e-16 m aside, at curvature 1: a 3.11 m wiggle)."""
    dx, dy = goal.x_m - start.x_m, goal.y_m - start.y_m
    along = math.cos(start.yaw_rad) * dx + math.sin(start.yaw_rad) * dy
    across = -math.sin(start.yaw_rad) * dx + math.cos(start.yaw_rad) * dy
    heading = math.remainder(goal.yaw_rad - start.yaw_rad, 2.0 * math.pi)
    tolerance = 0.5 * END_TOLERANCE
    if along <= 0.0 or abs(across) > tolerance * radius_m or abs(heading) > tolerance:
        return []
    return [('LSR', np.array([0.0, along, 0.0]))]
