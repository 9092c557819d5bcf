"""Reeds-Shepp legs: the shortest path for a car that also reverses, with continuous curvature.

Between two poses, the shortest path of a vehicle with a minimum turning radius that may drive
forwards and backwards is one of 48 words of at most five arcs (L, R) and straights (S) with up
to two cusps (Reeds and Shepp 1990). The library rsplan (pure Python, pip; its lengths equal
OMPL's, see the tests) finds it.

As for the forward legs (:mod:`planning_clothoid`), every turn of the word then ramps its
curvature linearly up to the bound, holds it and ramps down, with the same ramps; the segment
lengths are polished by Gauss-Newton (least-norm steps, words have three to five segments) from
the Reeds-Shepp lengths, each turn lengthened to keep its heading change, until the leg ends at
the goal; where that fails, from the Reeds-Shepp path of a larger radius (up to six times). The
curvature is zero at every segment's ends, so also at each cusp, where the vehicle stops. Where
no seed converges (about 1 % of random goals near the vehicle), the leg is the shorter of the
continuous-curvature Dubins legs driven forwards or backwards (also taken when shorter):
drivable, never longer than the forward leg, but not always the shortest.

The leg comes as pieces, one per direction of travel: sampled like any path (yaw = the direction
of travel, curvature = d(yaw)/ds), with a flag for the reversed ones (the vehicle's heading is
then the direction of travel + pi). Poses in the planning frame (m, rad).
"""

from __future__ import annotations

import math

import numpy as np
import rsplan

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.clothoid import (
    RAMP_LENGTH_PER_RADIUS,
    cc_dubins,
    curvature_profile,
    integrate,
    polish_lengths,
)
from wheelsim.core.planning.clothoid_turns import TurnShape
from wheelsim.core.planning.path import PathSamples, PlanningError

_KIND = {'left': 'L', 'right': 'R', 'straight': 'S'}
_SAMPLE_SPACING_M = 0.01
_COARSE_RAMP_COUNT = 8
#: Seeds: the Reeds-Shepp paths of these multiples of the turning radius, tried in turn (ramps
#: make a turn reach less far than an arc; a wider arc's word sometimes fits them better).
_SEED_RADIUS_FACTORS = (1.0, 1.15, 1.3, 1.6, 2.0, 2.5, 3.0, 4.0, 6.0)


def reeds_shepp_word(start: Pose2D, goal: Pose2D, radius_m: float) -> tuple[str, FloatArray,
                                                                            FloatArray]:
    """The shortest Reeds-Shepp path: its word (L, R, S per segment), the direction of each
    segment (+1 forwards, -1 backwards) and their lengths (m, > 0)."""
    # The goal in the start's frame, values within 1e-9 radii of zero taken as zero: rsplan
    # misses the straight path to (3, 3e-77, 0) and returns a 7 m four-turn word instead.
    dx, dy = goal.x_m - start.x_m, goal.y_m - start.y_m
    cos_yaw, sin_yaw = math.cos(start.yaw_rad), math.sin(start.yaw_rad)
    relative = [cos_yaw * dx + sin_yaw * dy, -sin_yaw * dx + cos_yaw * dy,
                float(wrap_angle(goal.yaw_rad - start.yaw_rad))]
    relative = tuple(0.0 if abs(v) < 1e-9 * max(radius_m, 1.0) else v for v in relative)
    try:
        path = rsplan.path((0.0, 0.0, 0.0), relative, radius_m, 0.0, radius_m,
                           length_tolerance=0.0)
    except (IndexError, ValueError, ZeroDivisionError) as err:  # no path: start == goal
        raise PlanningError(f'no Reeds-Shepp path from {tuple(start)} to {tuple(goal)}: '
                            f'{err!r}') from None
    kept = [seg for seg in path.segments if abs(seg.length) > 1e-9 * radius_m]
    if not kept:
        raise PlanningError(f'start and goal coincide at {tuple(start)}: no leg to plan')
    return (''.join(_KIND[seg.type] for seg in kept),
            np.array([float(seg.direction) for seg in kept]),
            np.array([abs(float(seg.length)) for seg in kept]))


def reeds_shepp_length(start: Pose2D, goal: Pose2D, radius_m: float) -> float:
    """Length (m) of the shortest Reeds-Shepp path (arcs of ``radius_m`` and straights)."""
    return float(reeds_shepp_word(start, goal, radius_m)[2].sum())


class _Word:
    """A word with ramps: samples and end pose as functions of the segment lengths."""

    def __init__(self, shape: TurnShape, start: Pose2D, word: str, directions: FloatArray):
        self.shape, self.start, self.word, self.directions = shape, start, word, directions

    def samples(self, lengths: FloatArray, ramp_count: int, spacing_m: float = math.inf):
        """Arc length, steering curvature, direction per interval; heading, x, y."""
        s, curvature = curvature_profile(self.shape, self.word, lengths, ramp_count, spacing_m)
        middle = (s[:-1] + s[1:]) / 2.0
        segment = np.minimum(np.searchsorted(np.cumsum(lengths), middle), len(lengths) - 1)
        direction = self.directions[segment]
        return s, curvature, direction, *integrate(self.start, s, curvature, direction)

    def end_error(self, goal: Pose2D, lengths: FloatArray, ramp_count: int) -> FloatArray:
        *_, yaw, x, y = self.samples(lengths, ramp_count)
        radius_m = 1.0 / self.shape.max_curvature_inv_m
        return np.array([(x[-1] - goal.x_m) / radius_m, (y[-1] - goal.y_m) / radius_m,
                         wrap_angle(yaw[-1] - goal.yaw_rad)])

    def solve(self, goal: Pose2D, guess: FloatArray, ramp_count: int) -> FloatArray | None:
        """The segment lengths that end at ``goal``, polished from ``guess``; None if that
        does not converge."""
        return polish_lengths(lambda lengths: self.end_error(goal, lengths, ramp_count), guess,
                              1e-7 / self.shape.max_curvature_inv_m, 60, 1e-4)


def cc_reeds_shepp(
    start: Pose2D, goal: Pose2D, max_curvature_inv_m: float
) -> list[tuple[PathSamples, bool]]:
    """The shortest Reeds-Shepp leg from ``start`` to ``goal`` with continuous curvature (see
    the module doc), as pieces ``(path, reverse)`` in driving order, at most 1 cm apart.

    Raises :class:`PlanningError` if start and goal coincide.
    """
    radius_m = 1.0 / max_curvature_inv_m
    shape = TurnShape(max_curvature_inv_m, max_curvature_inv_m**2 / RAMP_LENGTH_PER_RADIUS)
    fine_count = max(8, math.ceil(RAMP_LENGTH_PER_RADIUS * radius_m / _SAMPLE_SPACING_M))
    for factor in _SEED_RADIUS_FACTORS:
        word, directions, rs_lengths = reeds_shepp_word(start, goal, radius_m * factor)
        guess = np.array([
            length if kind == 'S' else float(shape.turn_length(length / (radius_m * factor)))
            for kind, length in zip(word, rs_lengths, strict=True)])
        ramps = _Word(shape, start, word, directions)
        coarse = ramps.solve(goal, guess, _COARSE_RAMP_COUNT)
        lengths = None if coarse is None else ramps.solve(goal, coarse, fine_count)
        if lengths is not None:
            break
    one_way = _one_way(start, goal, max_curvature_inv_m)
    if lengths is None or one_way[0][0].length_m < lengths.sum():
        return one_way  # (a backward leg's yaw is the flipped heading: the direction of travel)
    s, curvature, direction, yaw, x, y = ramps.samples(lengths, fine_count, _SAMPLE_SPACING_M)
    x[-1], y[-1] = goal.x_m, goal.y_m  # within 1e-7 radii: exactly
    return _pieces(s, curvature, direction, yaw, x, y)


def _flipped(pose: Pose2D) -> Pose2D:
    return Pose2D(pose.x_m, pose.y_m, float(wrap_angle(pose.yaw_rad + math.pi)))


def _one_way(start: Pose2D, goal: Pose2D, max_curvature_inv_m: float
             ) -> list[tuple[PathSamples, bool]]:
    """The shorter of the continuous-curvature Dubins legs forwards and backwards (backwards:
    forwards for a vehicle facing the other way); either may fail to converge, not both."""
    legs = []
    for backwards, ends in ((False, (start, goal)), (True, (_flipped(start), _flipped(goal)))):
        try:
            legs.append((cc_dubins(*ends, max_curvature_inv_m), backwards))
        except PlanningError:
            continue
    if not legs:
        raise PlanningError(f'no continuous-curvature path from {tuple(start)} to '
                            f'{tuple(goal)}, forwards or backwards')
    return [min(legs, key=lambda leg: leg[0].length_m)]


def _pieces(s, curvature, direction, yaw, x, y) -> list[tuple[PathSamples, bool]]:
    """Split the samples where the direction changes; each piece from arc length 0, its yaw the
    direction of travel and its curvature d(yaw)/ds."""
    keep = np.concatenate([[True], np.diff(s) > 0])  # zero-length knots (empty segments)
    s, curvature, yaw, x, y = s[keep], curvature[keep], yaw[keep], x[keep], y[keep]
    direction = direction[keep[1:]]
    changes = np.flatnonzero(np.diff(direction) != 0) + 1  # first interval of each new piece
    bounds = [0, *changes.tolist(), len(direction)]
    pieces = []
    for first, last in zip(bounds[:-1], bounds[1:], strict=True):
        rows = slice(first, last + 1)  # samples of intervals first .. last - 1
        backwards = bool(direction[first] < 0)
        pieces.append((PathSamples(
            s_m=s[rows] - s[first],
            x_m=x[rows],
            y_m=y[rows],
            yaw_rad=yaw[rows] + (math.pi if backwards else 0.0),
            curvature_inv_m=curvature[rows] * (-1.0 if backwards else 1.0),
        ), backwards))
    return pieces
