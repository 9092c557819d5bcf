"""robot_state_publisher's transforms, in a headless run.

Live, the launch files run robot_state_publisher on the URDF vehicle_sim gives it: it publishes
the URDF's fixed joints (the laser, the REP-120 footprint frame) on ``/tf_static`` and, from
``joint_states``, its moving joints (wheels, steering) on ``/tf``. A headless run has no
robot_state_publisher: :class:`RobotState` takes its place, so that the run's bag holds the
same transforms and a bag viewer (Foxglove, ``ros2 bag play`` with RViz) places the scan and
turns the wheels. It does what robot_state_publisher (Jazzy 3.3, Kilted 3.4) does with its
default parameters, for the joint types wheelsim's URDFs have (fixed, revolute, continuous):

- the fixed joints, sorted by joint name, again whenever ``robot_description`` changes,
  stamped with the time it heard it, transient local, depth 1 (tf2's static broadcaster);
- the moving joints a ``joint_states`` message names (sorted by joint name, the first of a
  repeated name), stamped with its stamp, once its stamp is at least 50 ms (its 20 Hz
  ``publish_frequency``, in whole milliseconds) after the oldest last publication of those
  joints; a message whose positions do not match its names is ignored.
"""

from __future__ import annotations

import math

from geometry_msgs.msg import Quaternion, TransformStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from urdf_parser_py.urdf import URDF, Joint

from wheelsim.ros import qos
from wheelsim.ros.conversions import quaternion_from_rpy, stamp_ns, time_msg
from wheelsim.ros.seam import NodeSeam

#: The joints turning about their axis (robot_state_publisher also moves prismatic ones;
#: wheelsim's URDFs have none).
TURNING_JOINT_TYPES = ('revolute', 'continuous')
#: robot_state_publisher's ``publish_frequency`` default [Hz] and the least time between two
#: publications of a joint it makes of it [ns] (whole milliseconds).
PUBLISH_FREQUENCY_HZ = 20.0
PUBLISH_INTERVAL_NS = int(1000.0 / PUBLISH_FREQUENCY_HZ) * 1_000_000


class RobotState:
    """A lock-step node publishing what robot_state_publisher publishes (see the module
    documentation)."""

    name = 'robot_state_publisher'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self._static_publisher = seam.create_publisher(TFMessage, '/tf_static', qos.LATCHED)
        self._publisher = seam.create_publisher(TFMessage, '/tf', qos.TF)
        self._turning: dict[str, Joint] = {}  # joint name -> its joint in the latest URDF
        self._published_ns: dict[str, int] = {}  # joint name -> stamp of its last publication
        seam.create_subscription(String, 'robot_description', self._on_description,
                                 qos.LATCHED)
        seam.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                 qos_profile_sensor_data)

    def _on_description(self, msg: String) -> None:
        joints = sorted(URDF.from_xml_string(msg.data).joints, key=lambda joint: joint.name)
        self._turning = {joint.name: joint for joint in joints
                         if joint.type in TURNING_JOINT_TYPES}
        stamp = time_msg(self.seam.now_ns())
        self._static_publisher.publish(TFMessage(transforms=[
            joint_transform(joint, 0.0, stamp) for joint in joints if joint.type == 'fixed']))

    def _on_joint_states(self, msg: JointState) -> None:
        if len(msg.name) != len(msg.position):
            return
        oldest_ns = min((self._published_ns.get(name, 0) for name in msg.name),
                        default=self.seam.now_ns())
        time_ns = stamp_ns(msg.header.stamp)
        if time_ns < oldest_ns + PUBLISH_INTERVAL_NS:
            return
        positions: dict[str, float] = {}
        for name, position in zip(msg.name, msg.position, strict=True):
            positions.setdefault(name, position)
        self._publisher.publish(TFMessage(transforms=[
            joint_transform(self._turning[name], position, msg.header.stamp)
            for name, position in sorted(positions.items()) if name in self._turning]))
        for name in msg.name:
            self._published_ns[name] = time_ns


def joint_transform(joint: Joint, position: float, stamp) -> TransformStamped:
    """The transform from ``joint``'s parent link to its child at ``position`` [rad] (a fixed
    joint takes none), stamped ``stamp``: its origin (none: the identity), then the turn about
    its axis (URDF: in the joint's frame, x when none is given)."""
    transform = TransformStamped(child_frame_id=joint.child)
    transform.header.stamp, transform.header.frame_id = stamp, joint.parent
    rotation = Quaternion()
    if joint.origin is not None:
        translation = transform.transform.translation
        translation.x, translation.y, translation.z = joint.origin.xyz
        rotation = quaternion_from_rpy(*joint.origin.rpy)
    if joint.type in TURNING_JOINT_TYPES:
        rotation = _product(rotation, _turn(joint.axis or (1.0, 0.0, 0.0), position))
    transform.transform.rotation = rotation
    return transform


def _turn(axis, angle_rad: float) -> Quaternion:
    """The rotation by ``angle_rad`` about ``axis`` (any length but zero)."""
    norm = math.hypot(*axis)
    scale = math.sin(0.5 * angle_rad) / norm
    return Quaternion(x=axis[0] * scale, y=axis[1] * scale, z=axis[2] * scale,
                      w=math.cos(0.5 * angle_rad))


def _product(a: Quaternion, b: Quaternion) -> Quaternion:
    """The rotation ``a`` then ``b`` in ``a``'s frame (Hamilton product ``a b``)."""
    return Quaternion(x=a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                      y=a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x,
                      z=a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w,
                      w=a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z)
