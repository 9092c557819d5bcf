"""Command types of a vehicle and the body twist each one is for its actuators.

The Python API's rollouts (:mod:`wheelsim.sim`) take every type; vehicle_sim's ``wheel_commands``
topic takes ``wheel_speeds`` (as joint velocities).

The actuators of every model take the body twist of base_link (what vehicle_sim's cmd_vel
carries); a wheel-level command is mapped to that twist through the model's own kinematics
(:mod:`wheelsim.core.vehicle.kinematics`, the same functions the kernel inverts), so it goes
through the same actuator chains, limits and dead times as a twist:

- ``'twist'``: ``(vx_mps, vy_mps, wz_radps)``, base_link's body twist (x forward, y left).
  Bicycle and differential vehicles ignore vy (docs/core.md, Frames).
- ``'wheel_speeds'`` (differential, omni): rim speeds [m/s] in joint_states order: differential
  ``(left, right)``; omni ``(front_left, front_right, rear_left, rear_right)``. Wheels that
  disagree with rigid motion (omni) are taken in the least-squares sense; slip is the vehicle's
  own (it acts on the rim speeds, as with a twist).
- ``'speed_steering'`` (bicycle): ``(speed_mps, steering_rad)``: the drive speed (the fixed
  axle's, or the steered wheel's with ``drive_on_steered_wheel``) and the angle of the virtual
  centre steered wheel, in (-pi/2, pi/2). At speed 0 the twist is 0 and the steering holds the
  last angle it was sent (the core steers only towards a motion).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from wheelsim.core.compiled import plain_function
from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.joints import wheel_layout
from wheelsim.core.vehicle.kinematics import bicycle_twist, differential_twist, mecanum_twist

_FLOAT_MAX = float(np.finfo(np.float64).max)  # a twist beyond it comes out as it

#: Command type -> {model: number of values per command}.
COMMAND_TYPES = {
    'twist': {'bicycle': 3, 'differential': 3, 'omni': 3},
    'wheel_speeds': {'differential': 2, 'omni': 4},
    'speed_steering': {'bicycle': 2},
}


def command_width(command_type: str, model: str) -> int:
    """Values per command of ``command_type`` for ``model``; ValueError if it has none."""
    widths = COMMAND_TYPES.get(command_type) if isinstance(command_type, str) else None
    if widths is None:
        raise ValueError(f'command_type = {command_type!r} must be one of {list(COMMAND_TYPES)}')
    if model not in widths:
        raise ValueError(f'command_type = {command_type!r} is not for the {model} model: it '
                         f'is for {", ".join(widths)}')
    return widths[model]


def body_twist(config: VehicleConfig, command_type: str, commands: NDArray[np.float64]
               ) -> NDArray[np.float64]:
    """The base_link body twists ``(..., 3)`` (vx_mps, vy_mps, wz_radps) that ``commands``
    ``(..., width)`` of ``command_type`` ask of ``config``'s vehicle (shapes checked before).

    Finite commands give finite twists (:func:`wheel_joint_twist`)."""
    if command_type == 'twist':
        return commands
    return _finite_twist(config, command_type, commands, np.ones(commands.shape[-1]))


def wheel_joint_twist(config: VehicleConfig, joint_radps: NDArray[np.float64]
                      ) -> NDArray[np.float64]:
    """The body twist ``(3,)`` that finite wheel joint velocities [rad/s] (joint_states order)
    ask of ``config``'s differential or omni vehicle: rim speed = velocity x wheel radius.

    The twist is finite: the kinematics are linear in the speeds, so where the plain sums
    overflow (1e308 rad/s on a 2 m wheel is an infinite rim speed; equal ones then give
    inf - inf = NaN as turn rate) the speeds are scaled to at most 1, mapped and scaled back, and
    a twist beyond the float range comes out as +-float max (saturated after, as any absurd
    command)."""
    radii_m = np.array([wheel.radius_m for wheel in wheel_layout(config)])
    return _finite_twist(config, 'wheel_speeds', joint_radps, radii_m)


def _finite_twist(config: VehicleConfig, command_type: str, commands: NDArray[np.float64],
                  gains: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`_twist` of the commands with their speed columns times ``gains``, finite."""
    with np.errstate(over='ignore', invalid='ignore'):
        twist = _twist(config, command_type, commands * _speed_gains(command_type, gains))
    if np.all(np.isfinite(twist)):
        return twist  # the plain sums: bit for bit what they always gave
    speed = np.abs(commands if command_type == 'wheel_speeds' else commands[..., :1])
    scale = np.max(speed, axis=-1, keepdims=True)
    scale = np.where(scale > 0.0, scale, 1.0)
    unit_speeds = commands / _speed_gains(command_type, scale)
    with np.errstate(over='ignore'):
        scaled = _twist(config, command_type, unit_speeds * _speed_gains(command_type, gains))
        scaled = np.clip(scaled * scale, -_FLOAT_MAX, _FLOAT_MAX)
    return np.where(np.isfinite(twist), twist, scaled)


def _speed_gains(command_type: str, gains: NDArray[np.float64]) -> NDArray[np.float64]:
    """``gains`` on the speed columns, 1 on a steering angle (speed_steering's second)."""
    if command_type != 'speed_steering':
        return gains
    ones = np.ones_like(gains[..., :1])
    return np.concatenate([np.broadcast_to(gains[..., :1], ones.shape), ones], axis=-1)


def _twist(config: VehicleConfig, command_type: str, commands: NDArray[np.float64]
           ) -> NDArray[np.float64]:
    """The body twists of wheel_speeds or speed_steering commands, by the plain sums."""
    model = config.active
    values = np.moveaxis(commands, -1, 0)
    zero = np.zeros(commands.shape[:-1])
    if command_type == 'speed_steering':
        speed, steering = values
        if not np.all(np.abs(steering) < 0.5 * math.pi):
            raise ValueError('commands: steering_rad must be in (-pi/2, pi/2)')
        vx, wz = plain_function(bicycle_twist)(
            speed, np.sin(steering), np.cos(steering), model.signed_wheel_base_m,
            model.drive_on_steered_wheel)
        return np.stack([vx, zero, wz], axis=-1)
    if config.model == 'differential':
        vx, wz = plain_function(differential_twist)(*values, 0.0, 0.0, 0.5 * model.track)
        return np.stack([vx, zero, wz], axis=-1)
    vx, vy_reference, wz = plain_function(mecanum_twist)(*values, model.lever_m)
    # base_link is base_link_offset ahead of the wheel centre R: vy_B = vy_R + offset * wz
    return np.stack([vx, vy_reference + model.base_link_offset * wz, wz], axis=-1)
