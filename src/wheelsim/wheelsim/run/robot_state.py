"""robot_state_publisher's transforms, in a headless run.

Live, the launch files run robot_state_publisher on the URDF vehicle_sim gives it: it publishes
the URDF's fixed joints (the laser, the REP-120 footprint frame) on ``/tf_static`` and, from
``joint_states``, its moving joints (wheels, steering) on ``/tf``. A headless run has no
robot_state_publisher: :class:`RobotState` takes its place, so that the run's bag holds the
same transforms and a bag viewer (Foxglove, ``ros2 bag play`` with RViz) places the scan and
turns the wheels. It does what robot_state_publisher (Jazzy 3.3, Kilted 3.4) does with its
default parameters, for the joint types wheelsim's URDFs have (fixed, revolute, continuous):

- the fixed joints, sorted by joint name, whenever ``robot_description`` changes, stamped
  with the time it heard it, transient local, depth 1, through tf2's static broadcaster: its
  one message keeps every child frame it was given, the latest transform of each;
- the moving joints a ``joint_states`` message names (sorted by joint name, the first of a
  repeated name), stamped with its stamp, once its stamp is at least 50 ms (its 20 Hz
  ``publish_frequency``, in whole milliseconds) after the oldest last publication of those
  joints; a message whose positions do not match its names is ignored.

Each pose is computed as robot_state_publisher computes it
(:mod:`wheelsim.core.geometry.rotations`): urdfdom's quaternion of the origin's ``rpy``, KDL's
rotation about the joint's axis in the parent frame (``Rot2``) and KDL's ``GetQuaternion``, so
the quaternion has KDL's sign (w >= 0 unless the rotation is over 120 degrees, then the largest
of x, y, z positive).
"""

from __future__ import annotations

from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from std_msgs.msg import String
from tf2_msgs.msg import TFMessage
from urdf_parser_py.urdf import URDF, Joint

from wheelsim.core.geometry.rotations import (
    Matrix,
    kdl_norm,
    kdl_quaternion,
    product,
    rot2,
    rotated,
    rpy_rotation,
)
from wheelsim.ros import qos
from wheelsim.ros.conversions import stamp_ns, time_msg
from wheelsim.ros.seam import NodeSeam

#: The joints turning about their axis (robot_state_publisher also moves prismatic ones;
#: wheelsim's URDFs have none).
TURNING_JOINT_TYPES = ('revolute', 'continuous')
#: robot_state_publisher's ``publish_frequency`` default [Hz] and the least time between two
#: publications of a joint it makes of it [ns] (whole milliseconds).
PUBLISH_FREQUENCY_HZ = 20.0
PUBLISH_INTERVAL_NS = int(1000.0 / PUBLISH_FREQUENCY_HZ) * 1_000_000


#: Start-up parameter of :class:`RobotState` (not robot_state_publisher's): False leaves the
#: moving joints out, for a run that records no ``/tf`` (no node reads it).
MOVING_JOINTS_PARAMETER = 'publish_moving_joints'


class RobotState:
    """A lock-step node publishing what robot_state_publisher publishes (see the module
    documentation; the moving joints unless :data:`MOVING_JOINTS_PARAMETER` is False). Its
    ``/tf`` messages are filled again for each publication (building them costs more than
    filling them): a published message is valid until the next one."""

    name = 'robot_state_publisher'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self._static_publisher = seam.create_publisher(TFMessage, '/tf_static', qos.LATCHED)
        self._publisher = seam.create_publisher(TFMessage, '/tf', qos.TF)
        self._static: dict[str, TransformStamped] = {}  # child frame -> latest, in order
        self._turning: dict[str, TurningJoint] = {}  # joint name -> in the latest URDF
        self._messages: dict[tuple[str, ...], TFMessage] = {}  # joint names -> their message
        self._published_ns: dict[str, int] = {}  # joint name -> stamp of its last publication
        seam.create_subscription(String, 'robot_description', self._on_description,
                                 qos.LATCHED)
        if seam.parameter_overrides().get(MOVING_JOINTS_PARAMETER, True):
            seam.create_subscription(JointState, 'joint_states', self._on_joint_states,
                                     qos_profile_sensor_data)

    def _on_description(self, msg: String) -> None:
        joints = sorted(URDF.from_xml_string(msg.data).joints, key=lambda joint: joint.name)
        self._turning = {joint.name: TurningJoint(joint) for joint in joints
                         if joint.type in TURNING_JOINT_TYPES}
        self._messages = {}
        stamp = time_msg(self.seam.now_ns())
        for joint in joints:
            if joint.type == 'fixed':
                self._static[joint.child] = origin_transform(joint, stamp)
        self._static_publisher.publish(TFMessage(transforms=list(self._static.values())))

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
        names = tuple(sorted(name for name in positions if name in self._turning))
        message = self._messages.get(names)
        if message is None:
            message = self._messages[names] = TFMessage(
                transforms=[self._turning[name].transform for name in names])
        sec, nanosec = msg.header.stamp.sec, msg.header.stamp.nanosec
        for name in names:
            self._turning[name].turn(positions[name], sec, nanosec)
        self._publisher.publish(message)
        for name in msg.name:
            self._published_ns[name] = time_ns


def origin_transform(joint: Joint, stamp) -> TransformStamped:
    """The transform from ``joint``'s parent link to its child at the joint's zero, stamped
    ``stamp``: its origin (none: the identity)."""
    transform = TransformStamped(child_frame_id=joint.child)
    transform.header.stamp, transform.header.frame_id = stamp, joint.parent
    if joint.origin is not None:
        translation = transform.transform.translation
        translation.x, translation.y, translation.z = joint.origin.xyz
        rotation = transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = kdl_quaternion(
            origin_rotation(joint))
    return transform


class TurningJoint:
    """A revolute or continuous joint's transform, turned to each position it is given."""

    def __init__(self, joint: Joint) -> None:
        self.transform = origin_transform(joint, Time())
        self._origin = origin_rotation(joint)
        # KDL's joint axis: the URDF's (x when none is given) in the parent frame, normalised
        axis = rotated(self._origin, joint.axis or (1.0, 0.0, 0.0))
        norm = kdl_norm(axis)
        self._axis = (axis[0] / norm, axis[1] / norm, axis[2] / norm)

    def turn(self, position_rad: float, sec: int, nanosec: int) -> TransformStamped:
        """:attr:`transform` stamped ``sec``, ``nanosec``, turned by ``position_rad`` about the
        joint's axis: KDL's segment pose ``Rot2(axis, position) * origin``."""
        rotation = self.transform.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = kdl_quaternion(
            product(rot2(self._axis, position_rad), self._origin))
        stamp = self.transform.header.stamp
        stamp.sec, stamp.nanosec = sec, nanosec
        return self.transform


def origin_rotation(joint: Joint) -> Matrix:
    """KDL's rotation of ``joint``'s origin (the identity without one)."""
    return rpy_rotation(*(joint.origin.rpy if joint.origin is not None else (0.0, 0.0, 0.0)))
