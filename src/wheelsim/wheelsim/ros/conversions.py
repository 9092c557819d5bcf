"""Messages <-> plain numbers. Planar (SE(2)) quantities in REP-103 units.

Pure functions over message objects: usable and testable without ``rclpy.init()``.
Times are integer nanoseconds (``int``) everywhere in wheelsim; poses are ``(x_m, y_m, yaw_rad)``;
body twists are ``(vx_mps, vy_mps, wz_radps)`` in the body (``base_link``) frame.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Pose, Quaternion, Twist, TwistStamped
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

NS_PER_S = 1_000_000_000


def time_msg(stamp_ns: int) -> Time:
    """``builtin_interfaces/Time`` of a time in integer nanoseconds (>= 0)."""
    sec, nanosec = divmod(int(stamp_ns), NS_PER_S)
    return Time(sec=sec, nanosec=nanosec)


def stamp_ns(stamp: Time) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/Time``."""
    return stamp.sec * NS_PER_S + stamp.nanosec


def clock_msg(stamp_ns_: int) -> Clock:
    """``rosgraph_msgs/Clock`` holding a time in nanoseconds."""
    return Clock(clock=time_msg(stamp_ns_))


def quaternion_from_yaw(yaw_rad: float) -> Quaternion:
    """Rotation about +z by ``yaw_rad``."""
    half = 0.5 * yaw_rad
    return Quaternion(x=0.0, y=0.0, z=math.sin(half), w=math.cos(half))


def yaw_from_quaternion(q: Quaternion) -> float:
    """Heading (rotation about +z) of a quaternion, in (-pi, pi]; roll and pitch are ignored."""
    return math.atan2(2.0 * (q.w * q.z + q.x * q.y), 1.0 - 2.0 * (q.y * q.y + q.z * q.z))


def pose2d(pose: Pose) -> tuple[float, float, float]:
    """``(x_m, y_m, yaw_rad)`` of a 3D pose projected on the ground plane."""
    return pose.position.x, pose.position.y, yaw_from_quaternion(pose.orientation)


def twist2d(twist: Twist) -> tuple[float, float, float]:
    """``(vx_mps, vy_mps, wz_radps)`` of a twist; the other components are ignored."""
    return twist.linear.x, twist.linear.y, twist.angular.z


def twist_is_finite(twist: Twist) -> bool:
    """True if all six components are finite numbers."""
    values = (twist.linear.x, twist.linear.y, twist.linear.z,
              twist.angular.x, twist.angular.y, twist.angular.z)
    return all(math.isfinite(v) for v in values)


def _fill_twist(twist: Twist, vx_mps: float, vy_mps: float, wz_radps: float) -> None:
    twist.linear.x = float(vx_mps)
    twist.linear.y = float(vy_mps)
    twist.angular.z = float(wz_radps)


def odometry(
    stamp: int,
    frame_id: str,
    child_frame_id: str,
    pose_m_rad: Sequence[float],
    twist_body: Sequence[float],
) -> Odometry:
    """``nav_msgs/Odometry``: pose ``(x, y, yaw)`` in ``frame_id``, body twist in the child.

    Covariances stay zero: the values are exact.
    """
    msg = Odometry()
    msg.header.stamp = time_msg(stamp)
    msg.header.frame_id = frame_id
    msg.child_frame_id = child_frame_id
    x_m, y_m, yaw_rad = pose_m_rad
    msg.pose.pose.position.x = float(x_m)
    msg.pose.pose.position.y = float(y_m)
    msg.pose.pose.orientation = quaternion_from_yaw(float(yaw_rad))
    _fill_twist(msg.twist.twist, *twist_body)
    return msg


def twist_stamped(stamp: int, frame_id: str, twist_body: Sequence[float]) -> TwistStamped:
    """``geometry_msgs/TwistStamped`` of a body twist ``(vx, vy, wz)`` in ``frame_id``."""
    msg = TwistStamped()
    msg.header.stamp = time_msg(stamp)
    msg.header.frame_id = frame_id
    _fill_twist(msg.twist, *twist_body)
    return msg


def joint_state(
    stamp: int,
    names: Sequence[str],
    positions_rad: Sequence[float],
    velocities_radps: Sequence[float],
) -> JointState:
    """``sensor_msgs/JointState`` with one position and one velocity per name (no efforts)."""
    msg = JointState()
    msg.header.stamp = time_msg(stamp)
    msg.name = list(names)
    msg.position = [float(v) for v in positions_rad]
    msg.velocity = [float(v) for v in velocities_radps]
    return msg
