"""The plant's outputs: ``ground_truth``, ``twist_actual``, ``joint_states``, ``robot_description``.

Every message of one publication carries the same stamp: the simulated time of the state.
``ground_truth`` is the true pose in the map frame with the true body twist in the body frame;
``twist_actual`` repeats that twist (after the actuator dynamics) for plotting against the
command; ``joint_states`` has every wheel and steering joint of the URDF. No ``/tf``: the
localization node owns ``map -> odom -> base_link``.
"""

from __future__ import annotations

from collections.abc import Sequence

from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rclpy.node import Node
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from wheelsim.ros import qos
from wheelsim.ros.conversions import joint_state, odometry, twist_stamped


class VehicleOutputs:
    """Publishers of the vehicle state; frame and joint names are given fully prefixed.

    The same three message objects are filled for every publication (building them costs about
    as much as filling and publishing them): a message is only valid until the next one.
    """

    def __init__(self, node: Node, map_frame: str, base_frame: str) -> None:
        self.map_frame = map_frame
        self.base_frame = base_frame
        self._ground_truth = node.create_publisher(Odometry, 'ground_truth', qos.DEFAULT)
        self._twist_actual = node.create_publisher(TwistStamped, 'twist_actual', qos.DEFAULT)
        self._joint_states = node.create_publisher(JointState, 'joint_states', qos.DEFAULT)
        self._description = node.create_publisher(String, 'robot_description', qos.LATCHED)
        self._messages = (Odometry(), TwistStamped(), JointState())

    def publish_state(self, stamp_ns: int, state, joint_names: Sequence[str]) -> None:
        """Publish a ``VehicleState`` stamped ``stamp_ns``."""
        odom, twist_msg, joints = self._messages
        pose = (state.x_m, state.y_m, state.yaw_rad)
        twist = (state.vx_mps, state.vy_mps, state.wz_radps)
        self._ground_truth.publish(
            odometry(stamp_ns, self.map_frame, self.base_frame, pose, twist, odom)
        )
        self._twist_actual.publish(twist_stamped(stamp_ns, self.base_frame, twist, twist_msg))
        self._joint_states.publish(
            joint_state(
                stamp_ns, joint_names, state.joint_positions_rad, state.joint_velocities_radps,
                joints,
            )
        )

    def publish_description(self, urdf: str) -> None:
        """Publish the URDF (transient local: late subscribers get it too)."""
        self._description.publish(String(data=urdf))
