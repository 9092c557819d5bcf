"""wheel_teleop: a gamepad's sticks to ``wheel_commands``, in the tank or arcade mapping.

Input: ``joy`` (sensor_msgs/Joy, as joy_node publishes it) and ``vehicle_description`` (which
wheels, their radius and the top speed). Output: ``wheel_commands`` (std_msgs/Float64MultiArray,
one joint velocity [rad/s] per wheel in joint_states order), which vehicle_sim takes beside
cmd_vel. Each Joy message gives one command: the sides' shares of the top speed
(:mod:`wheelsim.core.teleop.two_stick`) times ``max_wheel_velocity`` (or the vehicle's top
speed over its wheel radius: :func:`~wheelsim.core.vehicle.description.top_speed_mps`, with a
warning for a vehicle without a speed limit), every wheel of a side alike. A description that
parse_description refuses (a negative limit among others) is ignored with a warning saying why
(the vehicle described before, if any, stays). A description whose URDF gives no wheel radius
(:func:`~wheelsim.core.vehicle.description.wheel_radius_m`; the URDF is optional) is taken
with a warning: its sticks then need ``max_wheel_velocity``, and each Joy message without it
gives no command and a warning. With ``enable_button`` set, nothing is sent while it is up but
one zero command when it is released. A Joy message without the configured axis or button, or a
vehicle that is not driven side by side (the bicycle), gives no command and a warning naming the
parameter; an axis that is not finite gives a zero command and a warning. Warnings are throttled
per reason (:class:`~wheelsim.ros.inputs.InputWarnings`). vehicle_sim stops the vehicle when
commands stop coming (``twist_reference_max_oldness``): joy_node repeats a held stick
(``autorepeat_rate``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NoReturn

from sensor_msgs.msg import Joy
from std_msgs.msg import Float64MultiArray, String

from wheelsim.core.params import ParamSpec, from_flat, specs
from wheelsim.core.teleop.config import WheelTeleopConfig
from wheelsim.core.teleop.two_stick import WHEEL_SIDES, side_shares, wheel_shares
from wheelsim.core.vehicle.description import (
    DescriptionError,
    parse_description,
    top_speed_mps,
    wheel_radius_m,
)
from wheelsim.ros import qos
from wheelsim.ros.inputs import InputWarnings
from wheelsim.ros.node_main import run_node
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import NodeSeam
from wheelsim.ros.vehicle_description import TOPIC as DESCRIPTION_TOPIC
from wheelsim.ros.wheel_commands import TOPIC as WHEEL_COMMANDS_TOPIC


def parameter_specs() -> list[ParamSpec]:
    """Every parameter the node declares (for the docs)."""
    return specs(WheelTeleopConfig)


def check_parameters(values: Mapping[str, Any]) -> None:
    """Raise ParameterError unless ``values`` (dotted names) make a valid configuration."""
    from_flat(WheelTeleopConfig, values)


class WheelTeleop:
    """The wheel_teleop node, on ``seam`` (:mod:`wheelsim.ros.seam`)."""

    name = 'wheel_teleop'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self.params = NodeParameters(seam)
        self._settings = self.params.declare_config(WheelTeleopConfig)
        self.params.report_unknown()
        self._model: str | None = None
        # the vehicle's top speed over its wheel radius; None: the description gave no radius
        self._top_wheel_velocity_radps: float | None = None
        self._no_radius = ''  # why the description gave no wheel radius
        self._enabled = False  # the enable button was down at the last message
        self._warnings = InputWarnings(seam)
        self._publisher = seam.create_publisher(Float64MultiArray, WHEEL_COMMANDS_TOPIC,
                                                qos.DEFAULT)
        seam.create_subscription(String, DESCRIPTION_TOPIC, self._on_description, qos.LATCHED)
        seam.create_subscription(Joy, 'joy', self._on_joy, qos.DEFAULT)
        config = self.config
        seam.logger.info(f'{config.mapping} mapping; waiting for vehicle_description')

    @property
    def config(self) -> WheelTeleopConfig:
        return self._settings.config

    def _on_description(self, msg: String) -> None:
        try:
            description = parse_description(msg.data)
        except DescriptionError as err:  # the vehicle described before, if any, stays
            self._warnings.warn('description refused', f'vehicle_description ignored: {err}')
            return
        self._model = description.model
        self._top_wheel_velocity_radps = None
        if self._model not in WHEEL_SIDES:
            self._warnings.warn('not side by side', (
                f'a {self._model} vehicle: wheel_teleop drives vehicles driven side by side '
                f'({", ".join(WHEEL_SIDES)}); drive this one on cmd_vel'))
            return
        try:
            radius_m = wheel_radius_m(description.urdf)
        except DescriptionError as err:
            self._no_radius = str(err)
            self._warnings.warn('no wheel radius', (
                f'{self._model} vehicle without a wheel radius ({err}): full stick is '
                'max_wheel_velocity, which must not be 0 then'))
            return
        speed_mps = top_speed_mps(description)
        if not math.isfinite(speed_mps / radius_m):
            self._no_radius = (f'limits.max_speed {speed_mps:g} m/s over a wheel radius of '
                               f'{radius_m:g} m is no finite wheel speed')
            self._warnings.warn('no finite speed', f'{self._model} vehicle: {self._no_radius}: '
                                'full stick is max_wheel_velocity, which must not be 0 then')
            return
        self._top_wheel_velocity_radps = speed_mps / radius_m
        full_stick = (f'full stick is {self._top_wheel_velocity_radps:.3g} rad/s unless '
                      'max_wheel_velocity is set')
        if description.max_speed is None:
            self._warnings.warn('no speed limit', (
                f'{self._model} vehicle without a speed limit: {full_stick} (a top speed of '
                f'{speed_mps:g} m/s, as the controller takes for such a vehicle)'))
        else:
            self.seam.logger.info(f'{self._model} vehicle: {full_stick}')

    def _on_joy(self, msg: Joy) -> None:
        config = self.config
        if self._model not in WHEEL_SIDES:
            self._warnings.warn('no vehicle', 'joy ignored: ' + (
                'no vehicle described on vehicle_description yet' if self._model is None else
                f'a {self._model} vehicle is not driven side by side; drive it on cmd_vel'))
            return
        button = config.enable_button
        if button >= 0:
            if button >= len(msg.buttons):
                self._warnings.warn('buttons', f'joy ignored: enable_button = {button} but the '
                                    f'joystick has {len(msg.buttons)} buttons')
                return
            pressed = bool(msg.buttons[button])
            was_pressed, self._enabled = self._enabled, pressed
            if not pressed:
                if was_pressed:  # released: stop now, not when vehicle_sim's command expires
                    self._publish([0.0] * len(WHEEL_SIDES[self._model]))
                return
        names = ('axis_left', 'axis_right') if config.mapping == 'tank' else (
            'axis_throttle', 'axis_turn')
        axes = [getattr(config, name) for name in names]
        missing = [f'{name} = {axis}' for name, axis in zip(names, axes, strict=True)
                   if axis >= len(msg.axes)]
        if missing:
            self._warnings.warn('axes', f'joy ignored: {", ".join(missing)} but the joystick '
                                f'has {len(msg.axes)} axes')
            return
        top = config.max_wheel_velocity or self._top_wheel_velocity_radps
        if top is None:
            self._warnings.warn('no top speed', (
                'joy ignored: max_wheel_velocity = 0 and the vehicle_description gives no top '
                f'wheel speed ({self._no_radius}): set max_wheel_velocity'))
            return
        values = [msg.axes[axis] for axis in axes]
        if not all(math.isfinite(value) for value in values):  # NaN would pass np.clip
            self._warnings.warn('not finite', ', '.join(
                f'{name} = {axis}' for name, axis in zip(names, axes, strict=True))
                + f': axes {values} not finite: stopping the wheels')
            self._publish([0.0] * len(WHEEL_SIDES[self._model]))
            return
        left, right = side_shares(config.mapping, *values)
        self._publish([float(share) * top for share in wheel_shares(self._model, left, right)])

    def _publish(self, joint_velocities_radps: list[float]) -> None:
        self._publisher.publish(Float64MultiArray(data=joint_velocities_radps))


def main(args=None) -> NoReturn:
    run_node(WheelTeleop, args)


if __name__ == '__main__':  # python -m wheelsim.nodes.wheel_teleop
    main()
