"""Dubins paths: the shortest forward-only path between two poses with a minimum turning radius.

A Dubins path is three segments, each a left arc (L), right arc (R) or straight line (S), in
one of six words LSL, RSR, LSR, RSL, RLR, LRL (Dubins 1957; formulas as in Shkel and Lumelsky
2001). Every candidate is integrated forward and kept only if it ends at the goal, so a
numerically degenerate candidate can never be returned.

Poses are in the planning frame (metres, radians); arcs turn with radius ``radius_m``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.path import PlanningError

_TWO_PI = 2.0 * math.pi
_END_TOLERANCE = 1e-6  # relative to the radius
_ROUNDING = 1e-9  # a squared length or cosine this far outside its range is rounding
_ROUNDING_LENGTH = 1e-6  # unit-radius lengths this small are rounding (sqrt of _ROUNDING)
_Lengths = tuple[float, float, float] | None


def _mod2pi(angle: float) -> float:
    return angle % _TWO_PI


def _lsl(a: float, b: float, d: float) -> _Lengths:
    p_sq = 2 + d * d - 2 * math.cos(a - b) + 2 * d * (math.sin(a) - math.sin(b))
    if p_sq < -_ROUNDING:
        return None
    tmp = math.atan2(math.cos(b) - math.cos(a), d + math.sin(a) - math.sin(b))
    return _mod2pi(tmp - a), math.sqrt(max(p_sq, 0.0)), _mod2pi(b - tmp)


def _rsr(a: float, b: float, d: float) -> _Lengths:
    p_sq = 2 + d * d - 2 * math.cos(a - b) + 2 * d * (math.sin(b) - math.sin(a))
    if p_sq < -_ROUNDING:
        return None
    tmp = math.atan2(math.cos(a) - math.cos(b), d - math.sin(a) + math.sin(b))
    return _mod2pi(a - tmp), math.sqrt(max(p_sq, 0.0)), _mod2pi(tmp - b)


def _lsr(a: float, b: float, d: float) -> _Lengths:
    p_sq = -2 + d * d + 2 * math.cos(a - b) + 2 * d * (math.sin(a) + math.sin(b))
    if p_sq < -_ROUNDING:
        return None
    p = math.sqrt(max(p_sq, 0.0))
    tmp = math.atan2(-math.cos(a) - math.cos(b), d + math.sin(a) + math.sin(b)) - math.atan2(-2, p)
    return _mod2pi(tmp - a), p, _mod2pi(tmp - b)


def _rsl(a: float, b: float, d: float) -> _Lengths:
    p_sq = -2 + d * d + 2 * math.cos(a - b) - 2 * d * (math.sin(a) + math.sin(b))
    if p_sq < -_ROUNDING:
        return None
    p = math.sqrt(max(p_sq, 0.0))
    tmp = math.atan2(math.cos(a) + math.cos(b), d - math.sin(a) - math.sin(b)) - math.atan2(2, p)
    return _mod2pi(a - tmp), p, _mod2pi(b - tmp)


def _rlr(a: float, b: float, d: float) -> _Lengths:
    cos_p = (6 - d * d + 2 * math.cos(a - b) + 2 * d * (math.sin(a) - math.sin(b))) / 8
    if abs(cos_p) > 1 + _ROUNDING:
        return None
    p = _mod2pi(_TWO_PI - math.acos(max(-1.0, min(1.0, cos_p))))
    t = _mod2pi(a - math.atan2(math.cos(a) - math.cos(b), d - math.sin(a) + math.sin(b)) + p / 2)
    return t, p, _mod2pi(a - b - t + p)


def _lrl(a: float, b: float, d: float) -> _Lengths:
    cos_p = (6 - d * d + 2 * math.cos(a - b) + 2 * d * (math.sin(b) - math.sin(a))) / 8
    if abs(cos_p) > 1 + _ROUNDING:
        return None
    p = _mod2pi(_TWO_PI - math.acos(max(-1.0, min(1.0, cos_p))))
    t = _mod2pi(-a - math.atan2(math.cos(a) - math.cos(b), d + math.sin(a) - math.sin(b)) + p / 2)
    return t, p, _mod2pi(b - a - t + p)


_WORDS: dict[str, Callable[[float, float, float], _Lengths]] = {
    'LSL': _lsl,
    'RSR': _rsr,
    'LSR': _lsr,
    'RSL': _rsl,
    'RLR': _rlr,
    'LRL': _lrl,
}
#: The six Dubins words.
WORDS = tuple(_WORDS)
_TURN = {'L': 1.0, 'S': 0.0, 'R': -1.0}


def advance(pose: Pose2D, kind: str, length_m: float, radius_m: float) -> Pose2D:
    """The pose after driving ``length_m`` forward on segment ``kind`` ('L', 'S' or 'R')."""
    x, y, yaw = pose
    if kind == 'S':
        return Pose2D(x + length_m * math.cos(yaw), y + length_m * math.sin(yaw), yaw)
    turn = _TURN[kind]
    new_yaw = yaw + turn * length_m / radius_m
    return Pose2D(
        x + turn * radius_m * (math.sin(new_yaw) - math.sin(yaw)),
        y - turn * radius_m * (math.cos(new_yaw) - math.cos(yaw)),
        new_yaw,
    )


@dataclass(frozen=True)
class DubinsPath:
    """A Dubins path: ``word`` like 'LSR', segment lengths in metres, start pose, turn radius."""

    start: Pose2D
    word: str
    lengths_m: tuple[float, float, float]
    radius_m: float

    @property
    def length_m(self) -> float:
        """Total length in metres."""
        return sum(self.lengths_m)

    def end(self) -> Pose2D:
        """The pose at the end of the path."""
        pose = self.start
        for kind, length in zip(self.word, self.lengths_m, strict=True):
            pose = advance(pose, kind, length, self.radius_m)
        return pose


def _normalised(word: str, unit_lengths: tuple[float, float, float]) -> tuple[float, ...]:
    """Segment lengths without rounding artefacts: two arcs of the same sense joined by a
    vanishing straight merge into one (their split is ill-conditioned), and an arc within
    rounding of a full circle (a no-op) becomes empty."""
    t, p, q = unit_lengths
    if word[0] == word[2] and word[1] == 'S' and p < _ROUNDING_LENGTH:
        t, p, q = 0.0, 0.0, _mod2pi(t + q)
    return tuple(
        0.0 if kind != 'S' and _TWO_PI - v < _ROUNDING_LENGTH else v
        for kind, v in zip(word, (t, p, q), strict=True)
    )


def _word_lengths(
    start: Pose2D, goal: Pose2D, radius_m: float, word: str
) -> tuple[float, float, float] | None:
    """Segment lengths (m) of the Dubins path of ``word`` from ``start`` to ``goal``, or None
    when that word cannot connect them."""
    if not radius_m > 0:
        raise PlanningError(f'Dubins turning radius must be > 0 m, got {radius_m}')
    dx, dy = goal.x_m - start.x_m, goal.y_m - start.y_m
    phi = math.atan2(dy, dx)
    unit_lengths = _WORDS[word](
        _mod2pi(start.yaw_rad - phi), _mod2pi(goal.yaw_rad - phi), math.hypot(dx, dy) / radius_m
    )
    if unit_lengths is None:
        return None
    t, p, q = (v * radius_m for v in _normalised(word, unit_lengths))
    lengths = (t, p, q)
    end = DubinsPath(start, word, lengths, radius_m).end()
    miss = math.hypot(end.x_m - goal.x_m, end.y_m - goal.y_m) / radius_m
    if miss > _END_TOLERANCE or abs(wrap_angle(end.yaw_rad - goal.yaw_rad)) > _END_TOLERANCE:
        return None
    return lengths


def dubins_path(start: Pose2D, goal: Pose2D, radius_m: float) -> DubinsPath:
    """The shortest Dubins path from ``start`` to ``goal`` turning with ``radius_m``."""
    best: DubinsPath | None = None
    for word in WORDS:
        lengths = _word_lengths(start, goal, radius_m, word)
        if lengths is not None and (best is None or sum(lengths) < best.length_m):
            best = DubinsPath(start, word, lengths, radius_m)
    if best is None:  # cannot happen for finite poses: some word always connects two poses
        raise PlanningError(f'no Dubins path from {start} to {goal} with radius {radius_m} m')
    return best
