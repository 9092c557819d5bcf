"""wheelsim.ros.conversions: messages built directly, no rclpy.init()."""

import math

import numpy as np
import pytest
from geometry_msgs.msg import Pose, Quaternion, Twist
from hypothesis import given
from hypothesis import strategies as st

from wheelsim.ros.conversions import (
    fill_planar,
    joint_state,
    odometry,
    odometry_sample,
    planar_standard_deviations,
    pose2d,
    pose_with_covariance_stamped,
    quaternion_from_rpy,
    quaternion_from_yaw,
    stamp_ns,
    stamped_pose2d,
    time_msg,
    transform_stamped,
    twist_is_finite,
    twist_stamped,
    yaw_from_quaternion,
)


@given(st.integers(0, 2**62))
def test_time_round_trip_is_exact(t_ns):
    msg = time_msg(t_ns)
    assert 0 <= msg.nanosec < 1_000_000_000
    assert stamp_ns(msg) == t_ns


@given(st.floats(-math.pi, math.pi, exclude_min=True))
def test_yaw_round_trip(yaw):
    assert yaw_from_quaternion(quaternion_from_yaw(yaw)) == pytest.approx(yaw, abs=1e-12)


def test_pose2d_projects_a_pose():
    pose = Pose()
    pose.position.x, pose.position.y, pose.position.z = 1.5, -2.0, 7.0
    pose.orientation = quaternion_from_yaw(2.5)
    assert pose2d(pose) == pytest.approx((1.5, -2.0, 2.5))


def test_twist_is_finite_checks_all_six_components():
    twist = Twist()
    assert twist_is_finite(twist)
    twist.angular.x = math.nan
    assert not twist_is_finite(twist)


def test_state_messages_carry_stamp_frames_and_values():
    stamp = 12_345_678_901
    msg = odometry(stamp, 'r1/map', 'r1/base_link', (1.0, 2.0, math.pi / 2), (0.5, 0.1, -0.2))
    assert stamp_ns(msg.header.stamp) == stamp
    assert (msg.header.frame_id, msg.child_frame_id) == ('r1/map', 'r1/base_link')
    assert (msg.pose.pose.position.x, msg.pose.pose.position.y) == (1.0, 2.0)
    assert yaw_from_quaternion(msg.pose.pose.orientation) == pytest.approx(math.pi / 2)
    assert (msg.twist.twist.linear.x, msg.twist.twist.linear.y) == (0.5, 0.1)
    assert msg.twist.twist.angular.z == -0.2
    assert not any(msg.pose.covariance) and not any(msg.twist.covariance)
    twist = twist_stamped(stamp, 'base_link', (0.5, 0.0, 0.3))
    assert (twist.header.frame_id, twist.twist.linear.x, twist.twist.angular.z) == (
        'base_link', 0.5, 0.3)
    joints = joint_state(stamp, ['a', 'b'], [0.1, 0.2], [1.0, 2.0])
    assert (list(joints.name), list(joints.position), list(joints.velocity)) == (
        ['a', 'b'], [0.1, 0.2], [1.0, 2.0])


def test_pose_and_transform_messages_of_a_planar_pose():
    stamp, pose = 7_000_000_001, (1.5, -2.0, -3.0)
    estimate = pose_with_covariance_stamped(stamp, 'map', pose)
    assert (stamp_ns(estimate.header.stamp), estimate.header.frame_id) == (stamp, 'map')
    assert pose2d(estimate.pose.pose) == pytest.approx(pose)
    assert estimate.pose.pose.orientation == quaternion_from_yaw(-3.0)
    assert not any(estimate.pose.covariance)
    transform = transform_stamped(stamp, 'map', 'odom', pose)
    assert (transform.header.frame_id, transform.child_frame_id) == ('map', 'odom')
    assert stamp_ns(transform.header.stamp) == stamp
    translation = transform.transform.translation
    assert (translation.x, translation.y, translation.z) == (1.5, -2.0, 0.0)
    assert transform.transform.rotation == quaternion_from_yaw(-3.0)


def test_refilling_stamps_and_planar_parts_gives_the_messages_built_anew():
    first, second = 5_999_999_999, 7_000_000_001
    pose, transform = (pose_with_covariance_stamped(first, 'map', (1.0, 2.0, 0.5)),
                       transform_stamped(first, 'map', 'odom', (3.0, 4.0, -1.0)))
    time_msg(second, pose.header.stamp)
    time_msg(second, transform.header.stamp)
    fill_planar(pose.pose.pose.position, pose.pose.pose.orientation, (1.5, -2.0, -3.0))
    fill_planar(transform.transform.translation, transform.transform.rotation, (0.5, 0.25, 3.0))
    assert pose == pose_with_covariance_stamped(second, 'map', (1.5, -2.0, -3.0))
    assert transform == transform_stamped(second, 'map', 'odom', (0.5, 0.25, 3.0))


def test_received_messages_read_as_stamp_frame_pose_and_twist():
    odom = odometry(12_345_678_901, 'odom', 'base_link', (1.5, -2.0, 0.5), (0.25, -0.5, 1.0))
    assert odometry_sample(odom) == ('odom', 12_345_678_901, pytest.approx((1.5, -2.0, 0.5)),
                                     (0.25, -0.5, 1.0))
    pose = pose_with_covariance_stamped(7, 'r1/map', (3.0, 4.0, -3.0))
    assert stamped_pose2d(pose) == (7, 'r1/map', 3.0, 4.0, pytest.approx(-3.0))


@pytest.mark.parametrize(('xyzw', 'yaw'), [
    ((0.0, 0.0, 3.0, 4.0), 2 * math.atan2(3.0, 4.0)),  # not unit: 1.287 rad, not 2.187
    ((0.0, 0.0, 0.3, 0.4), 2 * math.atan2(0.3, 0.4)),
    ((0.0, 0.0, -2.0, 0.0), math.pi),
])
def test_yaw_of_a_non_unit_quaternion_is_the_rotation_it_represents(xyzw, yaw):
    q = Quaternion(x=xyzw[0], y=xyzw[1], z=xyzw[2], w=xyzw[3])
    assert math.remainder(yaw_from_quaternion(q) - yaw, 2 * math.pi) == pytest.approx(0, abs=1e-12)


@pytest.mark.parametrize('xyzw', [(0.0, 0.0, 0.0, 0.0), (math.nan, 0.0, 0.0, 1.0),
                                  (0.0, 0.0, math.inf, 1.0), (1e-9, 0.0, 0.0, 0.0)])
def test_a_zero_or_non_finite_quaternion_has_no_yaw(xyzw):
    q = Quaternion(x=xyzw[0], y=xyzw[1], z=xyzw[2], w=xyzw[3])
    assert math.isnan(yaw_from_quaternion(q))


@pytest.mark.parametrize('rpy', [(0.0, 0.0, 0.0), (0.3, 0.0, 0.0), (0.0, -1.2, 0.0),
                                 (0.0, 0.0, 2.5), (0.4, -0.7, 3.0), (-3.1, 1.5, -0.2)])
def test_quaternion_from_rpy_is_scipys_rotation_about_the_fixed_axes(rpy):
    from scipy.spatial.transform import Rotation

    q = quaternion_from_rpy(*rpy)
    expected = Rotation.from_euler('xyz', rpy).as_quat()  # lower case: fixed (URDF's) axes
    got = [q.x, q.y, q.z, q.w]
    assert got in (pytest.approx(list(expected), abs=1e-12),  # q and -q: the same rotation
                   pytest.approx(list(-expected), abs=1e-12))


@given(st.floats(0.0, 10.0), st.floats(0.0, 10.0), st.floats(-1.0, 1.0),
       st.floats(0.0, 5.0))
def test_planar_standard_deviations_are_those_of_the_covariance(sx, sy, correlation, syaw):
    cross = correlation * sx * sy
    covariance = [0.0] * 36
    covariance[0], covariance[1], covariance[6], covariance[7] = sx * sx, cross, cross, sy * sy
    covariance[35] = syaw * syaw
    position_sd_m, yaw_sd_rad = planar_standard_deviations(covariance)
    largest = np.linalg.eigvalsh([[sx * sx, cross], [cross, sy * sy]])[-1]
    assert position_sd_m == pytest.approx(math.sqrt(max(largest, 0.0)), rel=1e-9, abs=1e-12)
    assert yaw_sd_rad == pytest.approx(syaw, rel=1e-12)


@pytest.mark.parametrize(('entries', 'expected'), [
    ({0: math.nan, 7: 1.0, 35: math.inf}, (0.0, 0.0)),
    ({0: -1.0, 7: 1.0, 35: -1e-9}, (0.0, 0.0)),
    ({0: 1.0, 1: 2.0, 6: 2.0, 7: 1.0, 35: 4.0}, (0.0, 2.0)),  # not positive semi-definite
])
def test_planar_standard_deviations_of_a_bad_covariance_are_zero(entries, expected):
    covariance = [0.0] * 36
    for index, value in entries.items():
        covariance[index] = value
    assert planar_standard_deviations(covariance) == expected
