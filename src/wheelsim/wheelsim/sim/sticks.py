"""Two sticks to wheel speeds: a gamepad's tank or arcade driving as a command sequence."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.teleop.two_stick import side_shares, wheel_shares
from wheelsim.core.vehicle.description import NO_LIMIT_TOP_SPEED_MPS
from wheelsim.sim.rollout import real_floats
from wheelsim.sim.vehicle import SimVehicle, check_vehicle


def stick_wheel_speeds(vehicle: SimVehicle, mapping: str, first: ArrayLike, second: ArrayLike
                       ) -> NDArray[np.float64]:
    """Rim speeds [m/s], shape ``(..., wheel count)`` in joint order, for
    ``simulate(..., command_type='wheel_speeds')``: each side's share of the vehicle's top
    wheel speed (its drive's ``max_velocity``; 2 m/s for a drive without a speed limit, as the
    wheel_teleop node takes) from two stick axes in [-1, 1]
    (:mod:`wheelsim.core.teleop.two_stick`): ``mapping`` ``'tank'`` (``first``, ``second``: the
    left and right sticks' forward axes) or ``'arcade'`` (throttle, turn left positive).
    One of them may be a single value, held while the other moves. ValueError for another
    mapping, a bicycle, or axes that are not finite, in [-1, 1] and of one shape."""
    check_vehicle(vehicle)
    axes = []
    for name, axis in (('first', first), ('second', second)):
        try:  # no text, bool, complex or masked value, one array
            axes.append(real_floats(axis, name, 'stick axes'))
        except ValueError:
            raise ValueError(f'{name} must be stick axes: real numbers in [-1, 1], as one '
                             'array') from None
    if axes[0].shape != axes[1].shape and axes[0].ndim and axes[1].ndim:
        raise ValueError(f'first and second must have one shape (or one be a single value), '
                         f'got {axes[0].shape} and {axes[1].shape}')
    for name, axis in zip(('first', 'second'), axes, strict=True):
        if not np.all(np.abs(axis) <= 1.0):  # NaN fails too
            raise ValueError(f'{name} must be stick axes: real numbers in [-1, 1]')
    left, right = side_shares(mapping, *axes)
    top_speed_mps = vehicle.config.drive.max_velocity or NO_LIMIT_TOP_SPEED_MPS
    return wheel_shares(vehicle.model, left, right) * top_speed_mps
