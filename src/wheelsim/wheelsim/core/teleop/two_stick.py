"""Two-stick driving: the tank and arcade mappings of stick positions to the speeds of a
vehicle's left and right sides.

Stick positions are in [-1, 1], as ``sensor_msgs/Joy`` gives them (forward and left positive);
larger magnitudes are clipped. Each mapping gives each side's share of the top wheel speed, in
[-1, 1], positive forward:

- tank: each side follows the forward axis of its own stick;
- arcade: one stick, its forward axis the throttle and its sideways axis the turn (left
  positive): ``left = throttle - turn``, ``right = throttle + turn``, both divided by the larger
  magnitude when that exceeds 1, so the ratio of the sides (the turning radius) is kept.

The wheels of a side all turn with it: :func:`wheel_sides` gives each wheel's side in the joint
order of vehicle_sim's ``joint_states``. Scalars or arrays (broadcast) alike.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

MAPPINGS = ('arcade', 'tank')
#: Per model with wheels driven side by side: each wheel's side in joint order (0 left, 1 right).
WHEEL_SIDES = {'differential': (0, 1), 'omni': (0, 1, 0, 1)}


def _stick(value: ArrayLike) -> NDArray[np.float64]:
    return np.clip(np.asarray(value, dtype=float), -1.0, 1.0)


def tank(left_forward: ArrayLike, right_forward: ArrayLike
         ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(left, right) shares of the top speed from each side's stick."""
    return np.broadcast_arrays(_stick(left_forward), _stick(right_forward))


def arcade(throttle: ArrayLike, turn: ArrayLike
           ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(left, right) shares of the top speed from one stick's throttle and turn (left
    positive)."""
    throttle, turn = np.broadcast_arrays(_stick(throttle), _stick(turn))
    left, right = throttle - turn, throttle + turn
    scale = np.maximum(1.0, np.maximum(np.abs(left), np.abs(right)))
    return left / scale, right / scale


def side_shares(mapping: str, first: ArrayLike, second: ArrayLike
                ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """``tank(first, second)`` or ``arcade(first, second)`` by name; ValueError for another
    name."""
    if mapping == 'tank':
        return tank(first, second)
    if mapping == 'arcade':
        return arcade(first, second)
    raise ValueError(f'mapping = {mapping!r} must be one of {list(MAPPINGS)}')


def wheel_sides(model: str) -> tuple[int, ...]:
    """Each wheel's side (0 left, 1 right) in joint order; ValueError for a model whose wheels
    are not driven side by side (the bicycle)."""
    if model not in WHEEL_SIDES:
        raise ValueError(f'model = {model!r}: two-stick driving needs a vehicle driven side by '
                         f'side ({", ".join(WHEEL_SIDES)})')
    return WHEEL_SIDES[model]


def wheel_shares(model: str, left: ArrayLike, right: ArrayLike) -> NDArray[np.float64]:
    """``(..., wheel count)``: each wheel's share of the top speed, in joint order."""
    sides = np.stack(np.broadcast_arrays(np.asarray(left, float), np.asarray(right, float)),
                     axis=-1)
    return sides[..., list(wheel_sides(model))]
