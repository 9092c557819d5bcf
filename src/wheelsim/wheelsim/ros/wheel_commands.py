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
(its wheels are not driven one by one); the previous command stays in force. Live, publishers of
another type on the topic (``Float32MultiArray``, say), whose messages DDS never delivers here,
are warned of by name (:meth:`WheelCommandInput.check_publishers`).
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
from wheelsim.ros.other_publishers import UNDISCOVERED_NODE_NAME
from wheelsim.ros.seam import NodeSeam

TOPIC = 'wheel_commands'
TYPE_NAME = 'std_msgs/msg/Float64MultiArray'


class WheelCommandInput:
    """Subscribes ``wheel_commands`` and hands each command on through ``cmd_vel``'s checks
    (``vehicle_config()`` gives the vehicle now; ``joint_prefix`` goes before the joint names
    in warnings, as in joint_states)."""

    def __init__(self, seam: NodeSeam, cmd_vel: CmdVelInput,
                 vehicle_config: Callable[[], VehicleConfig], joint_prefix: str = '') -> None:
        self._seam, self._cmd_vel, self._logger = seam, cmd_vel, seam.logger
        self._other_types: tuple[str, ...] = ()  # the publishers of another type warned of
        self._waited = False  # the last check waited for a publisher's node name
        self._vehicle_config = vehicle_config
        self._joint_prefix = joint_prefix
        self._subscription = seam.create_subscription(Float64MultiArray, TOPIC, self._on_message,
                                                      qos.DEFAULT)
        #: The resolved topic name (namespace and remapping applied).
        self.topic_name: str = self._subscription.topic_name

    def check_publishers(self) -> None:
        """Live (from a wall-clock timer): warn, each time that set changes, naming the nodes
        that publish another type on the topic; a node not discovered yet is given one more
        check to be named."""
        found = [(info.node_namespace, info.node_name, info.topic_type) for info in
                 self._seam.rclpy_node.get_publishers_info_by_topic(self.topic_name)
                 if info.topic_type != TYPE_NAME]
        if not self._waited and any(name == UNDISCOVERED_NODE_NAME for _, name, _ in found):
            self._waited = True
            return
        self._waited = False
        others = tuple(sorted(f'{namespace.rstrip("/")}/{name} ({topic_type})'
                              for namespace, name, topic_type in found))
        if others and others != self._other_types:
            self._logger.warning(f'{self.topic_name}: ignoring {", ".join(others)}: this node '
                                 f'takes {TYPE_NAME} (one velocity per wheel joint), and DDS '
                                 'delivers no other type')
        self._other_types = others

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
