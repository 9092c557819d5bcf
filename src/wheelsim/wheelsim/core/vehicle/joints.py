"""Where the wheels are and what their joints are called: shared by the vehicle and the URDF.

Joint names carry no prefix here; ``Vehicle.joint_names`` lists the wheel joints in the order
of :func:`wheel_layout`, then the steering joints, and :mod:`wheelsim.core.vehicle.urdf` names its
joints the same way (with the optional frame prefix).
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelsim.core.vehicle.config import BicycleConfig, DifferentialConfig, VehicleConfig
from wheelsim.core.vehicle.kinematics import ackermann_angle


@dataclass(frozen=True)
class Steering:
    """A revolute steering joint above a wheel; limits None = turns all around (continuous).

    ``lateral_m`` (left of the steered axle's middle) and ``signed_wheel_base_m`` give the
    joint's angle from the steering angle (:func:`.kinematics.ackermann_angle`).
    """

    joint: str
    lateral_m: float
    signed_wheel_base_m: float
    limits_rad: tuple[float, float] | None


@dataclass(frozen=True)
class Wheel:
    """A wheel on a continuous joint (axis +y of the wheel, positive rolls forward)."""

    joint: str
    link: str
    column: int  # wheel slot in the kernel state
    x_m: float  # position in base_link
    y_m: float
    radius_m: float
    steering: Steering | None = None


def _steering_limits(
    config: BicycleConfig, lateral_m: float, signed_base: float
) -> tuple[float, float] | None:
    limit = config.steering_actuator.max_position
    if limit == 0.0:
        return None
    ends = (
        ackermann_angle(-limit, lateral_m, signed_base),
        ackermann_angle(limit, lateral_m, signed_base),
    )
    return min(ends), max(ends)


def _axle(
    name: str, x_m: float, track_m: float, columns: tuple[int, int]
) -> list[tuple[str, int, float, float]]:
    """(name, column, x, y) of one wheel (track 0) or a left/right pair on an axle."""
    if track_m == 0.0:
        return [(name, columns[0], x_m, 0.0)]
    half = 0.5 * track_m
    return [(f'{name}_left', columns[0], x_m, half), (f'{name}_right', columns[1], x_m, -half)]


def _bicycle(config: BicycleConfig) -> tuple[Wheel, ...]:
    offset = config.base_link_offset
    signed_base = config.signed_wheel_base_m
    radius = config.wheel_radius_m
    wheels = [
        Wheel(f'{name}_wheel_joint', f'{name}_wheel', column, x, y, radius)
        for name, column, x, y in _axle('fixed', -offset, config.track_fixed_m, (0, 1))
    ]
    steered = _axle('steered', signed_base - offset, config.track_steered_m, (2, 3))
    for name, column, x, y in steered:
        limits = _steering_limits(config, y, signed_base)
        steering = Steering(name.replace('steered', 'steering') + '_joint', y, signed_base, limits)
        wheels.append(Wheel(f'{name}_wheel_joint', f'{name}_wheel', column, x, y, radius, steering))
    return tuple(wheels)


def wheel_layout(config: VehicleConfig) -> tuple[Wheel, ...]:
    """Every wheel of the selected model, with its joint name and position in base_link."""
    model = config.active
    if isinstance(model, BicycleConfig):
        return _bicycle(model)
    radius = model.wheel_radius_m
    offset = model.base_link_offset
    if isinstance(model, DifferentialConfig):
        half = 0.5 * model.track
        places = [('left', 0, -offset, half), ('right', 1, -offset, -half)]
    else:
        half_base = 0.5 * model.wheel_base
        half = 0.5 * model.track
        places = [
            ('front_left', 0, half_base - offset, half),
            ('front_right', 1, half_base - offset, -half),
            ('rear_left', 2, -half_base - offset, half),
            ('rear_right', 3, -half_base - offset, -half),
        ]
    return tuple(
        Wheel(f'{name}_wheel_joint', f'{name}_wheel', column, x, y, radius)
        for name, column, x, y in places
    )

