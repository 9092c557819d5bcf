"""The plant's outputs: ``ground_truth``, ``twist_actual``, ``joint_states``, ``robot_description``.

Every message of one publication carries the same stamp: the simulated time of the state.
``ground_truth`` is the true pose in the map frame with the true body twist in the body frame;
``twist_actual`` repeats that twist (after the actuator dynamics) for plotting against the
command; ``joint_states`` has every wheel and steering joint of the URDF. No ``/tf``: the
localization node owns ``map -> odom -> base_link``.

Two ways to publish the same messages, both filling the same three message objects in place
for every publication:

- ``serialized=True`` (wall-clock and reference-clock modes, which always publish through the
  middleware, never in-process) publishes their CDR bytes (:mod:`wheelsim.ros.cdr`: rclpy's
  bytes, several times faster than rclpy's own conversion of a message object), which keeps
  vehicle_sim's CPU share low (docs/vehicle_sim.md, "Figures");
- ``serialized=False`` (use_sim_time) publishes the objects. A lock-step run hands the
  published object itself to the subscribers in the same process; bytes would have to be
  deserialized for them, which costs more than it saves.
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence

from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import String

from wheelsim.core.geometry.angles import yaw_quaternion_zw
from wheelsim.core.vehicle.model import VehicleState
from wheelsim.ros import qos
from wheelsim.ros.cdr import serializer
from wheelsim.ros.conversions import (
    fill_planar_zw,
    fill_twist_parts,
    joint_state,
    odometry,
    time_msg,
    twist_stamped,
)
from wheelsim.ros.seam import NodeSeam


class VehicleOutputs:
    """Publishers of the vehicle state; frame and joint names are given fully prefixed.

    The same three objects are filled for every publication (building them costs about as much
    as filling and publishing them): a published object is only valid until the next one.
    """

    def __init__(
        self,
        seam: NodeSeam,
        map_frame: str,
        base_frame: str,
        joint_names: Sequence[str],
        serialized: bool,
    ) -> None:
        # Fixed for the node's life: written into the messages once.
        self._map_frame = map_frame
        self._base_frame = base_frame
        self._joint_names = tuple(joint_names)
        self._ground_truth = seam.create_publisher(Odometry, 'ground_truth', qos.DEFAULT)
        #: The resolved ground truth topic (namespace and remapping applied).
        self.ground_truth_topic: str = self._ground_truth.topic_name
        self._twist_actual = seam.create_publisher(TwistStamped, 'twist_actual', qos.DEFAULT)
        self._joint_states = seam.create_publisher(JointState, 'joint_states', qos.DEFAULT)
        self._description = seam.create_publisher(String, 'robot_description', qos.LATCHED)
        # Frames and joint names are written here once; per publication only the stamp and
        # the numbers change. The three headers share one stamp object: one to fill.
        self._messages = odom, twist_msg, joints = self._new_messages()
        self._stamp = odom.header.stamp
        twist_msg.header.stamp = joints.header.stamp = self._stamp
        self._pose_parts = (odom.pose.pose.position, odom.pose.pose.orientation)
        self._twist_parts = (odom.twist.twist.linear, odom.twist.twist.angular,
                             twist_msg.twist.linear, twist_msg.twist.angular)
        self._serializers = tuple(serializer(type(msg)) for msg in self._messages) \
            if serialized else None

    @property
    def map_frame(self) -> str:
        return self._map_frame

    @property
    def base_frame(self) -> str:
        return self._base_frame

    @property
    def joint_names(self) -> tuple[str, ...]:
        return self._joint_names

    @property
    def serialized(self) -> bool:
        """True when CDR bytes are published, False for message objects."""
        return self._serializers is not None

    def publish_state(self, stamp_ns: int, state: VehicleState) -> None:
        """Publish ``state`` stamped ``stamp_ns``."""
        x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps, positions_rad, velocities_radps = state[:8]
        qz, qw = yaw_quaternion_zw(yaw_rad)
        odom, twist_msg, joints = self._messages
        time_msg(stamp_ns, self._stamp)
        position, orientation = self._pose_parts
        fill_planar_zw(position, orientation, x_m, y_m, qz, qw)
        odom_linear, odom_angular, twist_linear, twist_angular = self._twist_parts
        fill_twist_parts(odom_linear, odom_angular, vx_mps, vy_mps, wz_radps)
        fill_twist_parts(twist_linear, twist_angular, vx_mps, vy_mps, wz_radps)
        joints.position = array('d', positions_rad)
        joints.velocity = array('d', velocities_radps)
        if self._serializers is not None:
            serialize_odom, serialize_twist, serialize_joints = self._serializers
            odom, twist_msg, joints = (serialize_odom(odom), serialize_twist(twist_msg),
                                       serialize_joints(joints))
        self._ground_truth.publish(odom)
        self._twist_actual.publish(twist_msg)
        self._joint_states.publish(joints)

    def publish_description(self, urdf: str) -> None:
        """Publish the URDF (transient local: late subscribers get it too)."""
        self._description.publish(String(data=urdf))

    def _new_messages(self) -> tuple[Odometry, TwistStamped, JointState]:
        """New ``(Odometry, TwistStamped, JointState)`` with the frames and joint names, every
        number zero."""
        zero3, zeros = (0.0,) * 3, (0.0,) * len(self.joint_names)
        return (odometry(0, self.map_frame, self.base_frame, zero3, zero3),
                twist_stamped(0, self.base_frame, zero3),
                joint_state(0, self.joint_names, zeros, zeros))
