"""The wheel_teleop node's parameters (docs/teleop.md)."""

from __future__ import annotations

from dataclasses import dataclass

from wheelsim.core.params import param
from wheelsim.core.teleop.two_stick import MAPPINGS
from wheelsim.core.vehicle.description import NO_LIMIT_TOP_SPEED_MPS


@dataclass(frozen=True)
class WheelTeleopConfig:
    mapping: str = param(
        'arcade', 'arcade: one stick, throttle and turn; tank: one stick per side.',
        choices=MAPPINGS,
    )
    axis_throttle: int = param(
        1, 'Joy axis of the arcade throttle (forward positive): the left stick, up and down, '
        'on common gamepads.', min_value=0,
    )
    axis_turn: int = param(
        0, 'Joy axis of the arcade turn (left positive): the left stick, sideways.', min_value=0,
    )
    axis_left: int = param(
        1, 'Joy axis driving the left side in the tank mapping (forward positive).', min_value=0,
    )
    axis_right: int = param(
        4, 'Joy axis driving the right side in the tank mapping: the right stick, up and down, '
        'on an Xbox pad under joy_node.', min_value=0,
    )
    enable_button: int = param(
        -1, 'Joy button to hold while driving (released: one zero command); -1: none.',
        min_value=-1,
    )
    max_wheel_velocity: float = param(
        0.0, 'Wheel joint velocity at full stick; 0: the vehicle\'s top speed over its wheel '
        f'radius, from vehicle_description ({NO_LIMIT_TOP_SPEED_MPS:g} m/s for a vehicle without '
        'a speed limit, as the controller takes, with a warning).', unit='rad/s', min_value=0.0,
    )
