"""Two sticks to wheel speeds: a gamepad's tank or arcade driving as a command sequence."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.teleop.two_stick import side_shares, wheel_shares
from wheelsim.sim.vehicle import SimVehicle


def stick_wheel_speeds(vehicle: SimVehicle, mapping: str, first: ArrayLike, second: ArrayLike
                       ) -> NDArray[np.float64]:
    """Rim speeds [m/s], shape ``(..., wheel count)`` in joint order, for
    ``simulate(..., command_type='wheel_speeds')``: each side's share of the vehicle's top
    wheel speed (its drive's ``max_velocity``) from two stick axes in [-1, 1]
    (:mod:`wheelsim.core.teleop.two_stick`): ``mapping`` ``'tank'`` (``first``, ``second``: the
    left and right sticks' forward axes) or ``'arcade'`` (throttle, turn left positive).
    ValueError for another mapping or a bicycle."""
    left, right = side_shares(mapping, first, second)
    return wheel_shares(vehicle.model, left, right) * vehicle.config.drive.max_velocity
