"""The ``wheel_commands`` input: wheel joint velocities, as ros2_control's velocity controllers
take them.

``std_msgs/Float64MultiArray`` with one value per wheel joint [rad/s], in the order of the wheel
joints in vehicle_sim's ``joint_states``: differential (left, right), omni (front_left,
front_right, rear_left, rear_right); the layout is not read, as ros2_control's
``forward_command_controller`` does not read it. Positive rolls the wheel forward.

Each command becomes the body twist its wheels ask of the vehicle (rim speed = joint velocity x
wheel radius, through the model's kinematics; an omni whose wheels disagree with rigid motion in
the least-squares sense: :func:`wheelsim.core.vehicle.command_types.wheel_joint_twist`; finite
joint velocities give a finite twist, however large) and goes on as
a ``cmd_vel`` command: the same limits (``cmd_vel_limits``, saturated), the same expiry
(``twist_reference_max_oldness``, from its arrival: the message has no stamp), the same
actuators. A message of another length or with a non-finite value is rejected with a warning
(ros2_control drops them too), as is every message for the bicycle model, which takes ``cmd_vel``
(its wheels are not driven one by one); the previous command stays in force.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from std_msgs.msg import Float64MultiArray

from wheelsim.core.vehicle.command_types import COMMAND_TYPES, wheel_joint_twist
from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.joints import wheel_layout
from wheelsim.ros import qos
from wheelsim.ros.cmd_vel import WARN_PERIOD_S, CmdVelInput
from wheelsim.ros.seam import NodeSeam

TOPIC = 'wheel_commands'


class WheelCommandInput:
    """Subscribes ``wheel_commands`` and hands each command on through ``cmd_vel``'s checks
    (``vehicle_config()`` gives the vehicle now; ``joint_prefix`` goes before the joint names
    in warnings, as in joint_states)."""

    def __init__(self, seam: NodeSeam, cmd_vel: CmdVelInput,
                 vehicle_config: Callable[[], VehicleConfig], joint_prefix: str = '') -> None:
        self._cmd_vel, self._logger = cmd_vel, seam.logger
        self._vehicle_config = vehicle_config
        self._joint_prefix = joint_prefix
        self._subscription = seam.create_subscription(Float64MultiArray, TOPIC, self._on_message,
                                                      qos.DEFAULT)
        #: The resolved topic name (namespace and remapping applied).
        self.topic_name: str = self._subscription.topic_name

    def _on_message(self, msg: Float64MultiArray) -> None:
        config, reject, log = self._vehicle_config(), self._cmd_vel.reject, self._logger
        if config.model not in COMMAND_TYPES['wheel_speeds']:
            log.warning(reject(self.topic_name, f'for the {config.model} model, which takes '
                               'cmd_vel only'), throttle_duration_sec=WARN_PERIOD_S)
            return
        wheels = wheel_layout(config)
        values = list(msg.data)
        if len(values) != len(wheels):
            names = ', '.join(self._joint_prefix + wheel.joint for wheel in wheels)
            log.warning(reject(self.topic_name, f'of {len(values)} values: it takes one velocity '
                               f'[rad/s] per wheel joint, in this order: {names}'),
                        throttle_duration_sec=WARN_PERIOD_S)
            return
        if not all(math.isfinite(value) for value in values):
            log.warning(reject(self.topic_name, 'with a non-finite value'),
                        throttle_duration_sec=WARN_PERIOD_S)
            return
        vx, vy, wz = (float(v) for v in wheel_joint_twist(config, np.array(values)))
        self._cmd_vel.accept(self.topic_name, vx, vy, wz, None)
