"""Messages <-> plain numbers. Planar (SE(2)) quantities in REP-103 units.

Pure functions over message objects: usable and testable without ``rclpy.init()``.
Times are integer nanoseconds (``int``) everywhere in wheelsim; poses are ``(x_m, y_m, yaw_rad)``;
body twists are ``(vx_mps, vy_mps, wz_radps)`` in the body (``base_link``) frame.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import (
    Point,
    Pose,
    PoseWithCovarianceStamped,
    Quaternion,
    TransformStamped,
    Twist,
    TwistStamped,
    Vector3,
)
from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from wheelsim.core.geometry.angles import (  # also the core's, compiled too
    quaternion_yaw,
    yaw_quaternion_zw,
)
from wheelsim.core.units import NS_PER_S


def time_msg(stamp_ns: int, out: Time | None = None) -> Time:
    """``builtin_interfaces/Time`` of a time in integer nanoseconds (>= 0)."""
    out = Time() if out is None else out
    out.sec, out.nanosec = divmod(int(stamp_ns), NS_PER_S)
    return out


def stamp_ns(stamp: Time) -> int:
    """Integer nanoseconds of a ``builtin_interfaces/Time``."""
    return stamp.sec * NS_PER_S + stamp.nanosec


def clock_msg(stamp_ns_: int, out: Clock | None = None) -> Clock:
    """``rosgraph_msgs/Clock`` holding a time in nanoseconds."""
    out = Clock() if out is None else out
    time_msg(stamp_ns_, out.clock)
    return out


def quaternion_from_yaw(yaw_rad: float) -> Quaternion:
    """Rotation about +z by ``yaw_rad``."""
    z, w = yaw_quaternion_zw(yaw_rad)
    return Quaternion(x=0.0, y=0.0, z=z, w=w)


def quaternion_from_rpy(roll_rad: float, pitch_rad: float, yaw_rad: float) -> Quaternion:
    """Rotation by roll about x, then pitch about y, then yaw about z, all about the fixed axes
    (URDF's ``rpy``)."""
    cr, sr = math.cos(0.5 * roll_rad), math.sin(0.5 * roll_rad)
    cp, sp = math.cos(0.5 * pitch_rad), math.sin(0.5 * pitch_rad)
    cy, sy = math.cos(0.5 * yaw_rad), math.sin(0.5 * yaw_rad)
    return Quaternion(x=sr * cp * cy - cr * sp * sy, y=cr * sp * cy + sr * cp * sy,
                      z=cr * cp * sy - sr * sp * cy, w=cr * cp * cy + sr * sp * sy)


def yaw_from_quaternion(q: Quaternion) -> float:
    """Heading (rotation about +z) of a quaternion, in (-pi, pi] (see
    :func:`wheelsim.core.geometry.angles.quaternion_yaw`: roll and pitch ignored, not unit
    length allowed, NaN for a zero or non-finite one)."""
    return quaternion_yaw(q.x, q.y, q.z, q.w)


def pose2d(pose: Pose) -> tuple[float, float, float]:
    """``(x_m, y_m, yaw_rad)`` of a 3D pose projected on the ground plane."""
    return pose.position.x, pose.position.y, yaw_from_quaternion(pose.orientation)


def twist2d(twist: Twist) -> tuple[float, float, float]:
    """``(vx_mps, vy_mps, wz_radps)`` of a twist; the other components are ignored."""
    return twist.linear.x, twist.linear.y, twist.angular.z


def stamped_pose2d(msg: PoseWithCovarianceStamped) -> tuple[int, str, float, float, float]:
    """``(stamp_ns, frame_id, x_m, y_m, yaw_rad)`` of a ``PoseWithCovarianceStamped``: its
    header's stamp and frame, and :func:`pose2d` of its pose."""
    header = msg.header
    return (stamp_ns(header.stamp), header.frame_id, *pose2d(msg.pose.pose))


def planar_standard_deviations(covariance: Sequence[float]) -> tuple[float, float]:
    """``(position_sd_m, yaw_sd_rad)`` of a pose covariance (6x6, row-major, over ``x, y, z,
    roll, pitch, yaw``): the square root of the larger eigenvalue of its ``x, y`` block (the
    standard deviation along the worst direction) and of its yaw variance. A block that is not
    finite or not positive semi-definite (to rounding) counts as 0 (unknown: taken as exact)."""
    xx, xy, yx, yy, yaw = (float(covariance[i]) for i in (0, 1, 6, 7, 35))
    half_trace, half_gap = 0.5 * (xx + yy), 0.5 * (xx - yy)
    cross = 0.5 * (xy + yx)
    largest = half_trace + math.hypot(half_gap, cross)
    smallest = half_trace - math.hypot(half_gap, cross)
    semi_definite = math.isfinite(largest) and smallest >= -1e-12 * largest
    position = math.sqrt(largest) if semi_definite else 0.0
    return position, math.sqrt(yaw) if math.isfinite(yaw) and yaw >= 0.0 else 0.0


def odometry_sample(msg: Odometry) -> tuple[str, int, tuple[float, float, float],
                                             tuple[float, float, float]]:
    """The header's frame, the stamp [ns], the planar pose ``(x_m, y_m, yaw_rad)``
    (:func:`pose2d`) and the body twist ``(vx_mps, vy_mps, wz_radps)`` (:func:`twist2d`) of an
    ``Odometry``."""
    header = msg.header
    return (header.frame_id, stamp_ns(header.stamp), pose2d(msg.pose.pose),
            twist2d(msg.twist.twist))


def twist_is_finite(twist: Twist) -> bool:
    """True if all six components are finite numbers."""
    values = (twist.linear.x, twist.linear.y, twist.linear.z,
              twist.angular.x, twist.angular.y, twist.angular.z)
    return all(math.isfinite(v) for v in values)


def fill_planar(
    position: Point | Vector3, orientation: Quaternion, pose_m_rad: Sequence[float]
) -> None:
    """Set the planar pose ``(x, y, yaw)`` in the ``position`` (a ``Point``, or a transform's
    ``Vector3`` translation) and ``orientation`` of one message (new ones or ones only ever
    filled by this function: z, roll and pitch stay 0). A node filling the same message for
    every publication can look the two parts up once and hand them here each time."""
    x_m, y_m, yaw_rad = pose_m_rad
    fill_planar_zw(position, orientation, float(x_m), float(y_m), *yaw_quaternion_zw(yaw_rad))


def fill_planar_zw(position: Point | Vector3, orientation: Quaternion, x_m: float, y_m: float,
                   qz: float, qw: float) -> None:
    """:func:`fill_planar` of a pose whose yaw is given by its quaternion's ``qz``, ``qw``
    (:func:`wheelsim.core.geometry.angles.yaw_quaternion_zw`), all four floats."""
    position.x = x_m
    position.y = y_m
    orientation.z = qz
    orientation.w = qw


def fill_pose(pose: Pose, pose_m_rad: Sequence[float]) -> Pose:
    """Set the planar pose ``(x, y, yaw)`` in ``pose`` (a new ``geometry_msgs/Pose`` or one only
    ever filled by this function: z, roll and pitch stay 0); returns it."""
    fill_planar(pose.position, pose.orientation, pose_m_rad)
    return pose


def fill_twist(twist: Twist, twist_body: Sequence[float]) -> Twist:
    """Set the body twist ``(vx, vy, wz)`` in ``twist`` (a new ``geometry_msgs/Twist`` or one
    only ever filled by this function: the other components stay 0); returns it."""
    vx_mps, vy_mps, wz_radps = twist_body
    fill_twist_parts(twist.linear, twist.angular, float(vx_mps), float(vy_mps), float(wz_radps))
    return twist


def fill_twist_parts(linear: Vector3, angular: Vector3, vx_mps: float, vy_mps: float,
                     wz_radps: float) -> None:
    """:func:`fill_twist` into the linear and angular parts of a twist, all three floats."""
    linear.x = vx_mps
    linear.y = vy_mps
    angular.z = wz_radps


def odometry(
    stamp: int,
    frame_id: str,
    child_frame_id: str,
    pose_m_rad: Sequence[float],
    twist_body: Sequence[float],
    out: Odometry | None = None,
) -> Odometry:
    """``nav_msgs/Odometry``: pose ``(x, y, yaw)`` in ``frame_id``, body twist in the child.

    Covariances stay zero: the values are exact. Like every builder here, it fills ``out`` in
    place when given (a message reused from one publish to the next) instead of a new message.
    """
    out = Odometry() if out is None else out
    header = out.header
    time_msg(stamp, header.stamp)
    header.frame_id = frame_id
    out.child_frame_id = child_frame_id
    fill_pose(out.pose.pose, pose_m_rad)
    fill_twist(out.twist.twist, twist_body)
    return out


def pose_with_covariance_stamped(
    stamp: int,
    frame_id: str,
    pose_m_rad: Sequence[float],
    out: PoseWithCovarianceStamped | None = None,
) -> PoseWithCovarianceStamped:
    """``geometry_msgs/PoseWithCovarianceStamped`` of a planar pose in ``frame_id``; the
    covariance is left to the caller."""
    out = PoseWithCovarianceStamped() if out is None else out
    time_msg(stamp, out.header.stamp)
    out.header.frame_id = frame_id
    fill_pose(out.pose.pose, pose_m_rad)
    return out


def transform_stamped(
    stamp: int,
    frame_id: str,
    child_frame_id: str,
    pose_m_rad: Sequence[float],
    out: TransformStamped | None = None,
) -> TransformStamped:
    """``geometry_msgs/TransformStamped`` ``frame_id -> child_frame_id`` of the planar pose
    ``(x, y, yaw)`` of the child in the parent."""
    out = TransformStamped() if out is None else out
    time_msg(stamp, out.header.stamp)
    out.header.frame_id = frame_id
    out.child_frame_id = child_frame_id
    transform = out.transform
    fill_planar(transform.translation, transform.rotation, pose_m_rad)
    return out


def twist_stamped(
    stamp: int, frame_id: str, twist_body: Sequence[float], out: TwistStamped | None = None
) -> TwistStamped:
    """``geometry_msgs/TwistStamped`` of a body twist ``(vx, vy, wz)`` in ``frame_id``."""
    out = TwistStamped() if out is None else out
    time_msg(stamp, out.header.stamp)
    out.header.frame_id = frame_id
    fill_twist(out.twist, twist_body)
    return out


def joint_state(
    stamp: int,
    names: Sequence[str],
    positions_rad: Sequence[float],
    velocities_radps: Sequence[float],
    out: JointState | None = None,
) -> JointState:
    """``sensor_msgs/JointState`` with one position and one velocity per name (no efforts)."""
    out = JointState() if out is None else out
    time_msg(stamp, out.header.stamp)
    out.name = list(names)
    out.position = array('d', positions_rad)
    out.velocity = array('d', velocities_radps)
    return out


#: Rows/columns of x, y and yaw (pose) or vx, vy and wz (twist) in a ROS 6x6 covariance, and
#: the positions of that 3x3 block and of its diagonal in the row-major 36 numbers.
PLANAR_INDICES = (0, 1, 5)
PLANAR_FLAT = np.array([6 * row + col for row in PLANAR_INDICES for col in PLANAR_INDICES])
PLANAR_BLOCK = PLANAR_FLAT.reshape(3, 3)
PLANAR_DIAGONAL_FLAT = PLANAR_FLAT[::4]


def covariance6(planar: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Row-major 6x6 covariance with the 3x3 ``planar`` one in the x, y, yaw rows and columns.

    ``out``: the 36 numbers of a message to fill in place (the entries outside the block keep
    their zeros when only this function ever writes them), else a new array.
    """
    full = np.zeros(36) if out is None else out
    full[PLANAR_BLOCK] = planar
    return full


def planar_covariance(covariance: Sequence[float]) -> np.ndarray:
    """The x, y, yaw 3x3 block of a row-major 6x6 covariance."""
    return np.asarray(covariance, dtype=float)[PLANAR_FLAT].reshape(3, 3)
