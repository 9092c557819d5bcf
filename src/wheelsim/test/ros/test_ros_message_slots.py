"""wheelsim.ros.message_slots: the same numbers in and out of messages as the properties give."""

import math
from array import array

import pytest
from geometry_msgs.msg import TransformStamped, Twist
from hypothesis import given
from hypothesis import strategies as st
from sensor_msgs.msg import JointState

from wheelsim.ros import message_slots
from wheelsim.ros.conversions import (
    fill_planar,
    fill_twist,
    odometry,
    pose2d,
    pose_with_covariance_stamped,
    stamp_ns,
    time_msg,
    twist2d,
    yaw_quaternion_zw,
)

numbers = st.floats(allow_nan=True, allow_infinity=True)
triples = st.tuples(numbers, numbers, numbers)
poses = st.tuples(numbers, numbers, st.floats(-1e6, 1e6))  # the yaw into a quaternion


@given(stamp=st.integers(0, 2**62), frame=st.text(max_size=8), pose=poses, twist=triples)
def test_odometry_sample_reads_what_the_properties_give(stamp, frame, pose, twist):
    msg = odometry(stamp, frame, 'base_link', pose, twist)
    expected = (frame, stamp_ns(msg.header.stamp), pose2d(msg.pose.pose),
                twist2d(msg.twist.twist))
    got = message_slots.odometry_sample(msg)
    assert repr(got) == repr(expected)  # NaN included


@given(stamp=st.integers(0, 2**62), pose=poses, twist=triples)
def test_writes_give_the_messages_the_setters_give(stamp, pose, twist):
    written, filled = TransformStamped(), TransformStamped()
    message_slots.write_stamp(written.header.stamp, stamp)
    time_msg(stamp, filled.header.stamp)
    transform = written.transform
    message_slots.write_planar(transform.translation, transform.rotation, pose[0], pose[1],
                               *yaw_quaternion_zw(pose[2]))
    fill_planar(filled.transform.translation, filled.transform.rotation, pose)
    assert repr(written) == repr(filled)
    written_twist, filled_twist = Twist(), Twist()
    message_slots.write_twist(written_twist.linear, written_twist.angular, *twist)
    fill_twist(filled_twist, twist)
    assert repr(written_twist) == repr(filled_twist)


class Converting:
    """A message class whose setter does not store what it is given."""

    __slots__ = ('_x',)

    def __init__(self):
        self._x = 0.0

    @property
    def x(self):
        return self._x

    @x.setter
    def x(self, value):
        self._x = float(math.floor(value))


def test_the_import_check_refuses_fields_that_are_not_plain_slots(monkeypatch):
    message_slots.check_slots()  # the messages of this ROS fit
    monkeypatch.setitem(message_slots.FIELDS, Converting, ('x',))
    with pytest.raises(ImportError, match='Converting.x'):
        message_slots.check_slots()


@given(positions=st.lists(numbers, max_size=6), velocities=st.lists(numbers, max_size=6))
def test_write_joints_gives_the_message_the_setters_give(positions, velocities):
    written, filled = JointState(), JointState()
    message_slots.write_joints(written, array('d', positions), array('d', velocities))
    filled.position, filled.velocity = positions, velocities
    assert repr(written) == repr(filled)
    assert written.position.typecode == 'd'


@pytest.mark.parametrize('values', [(12_345_678_901, -1.5, 2.0, 2.5), (0, -0.0, 0.0, -math.pi),
                                    (2**62, math.nan, math.inf, 0.0)])
def test_readers_of_received_messages_give_what_the_field_properties_give(values):
    stamp, x_m, y_m, yaw_rad = values
    msg = pose_with_covariance_stamped(stamp, 'r1/map', (x_m, y_m, yaw_rad))
    msg.pose.pose.orientation.x = 0.25  # not a planar rotation: read whole all the same
    expected = (stamp_ns(msg.header.stamp), msg.header.frame_id, *pose2d(msg.pose.pose))
    assert repr(message_slots.stamped_pose2d(msg)) == repr(expected)  # signed zeros and NaN alike
    odom = odometry(stamp, 'odom', 'base_link', (x_m, y_m, yaw_rad), (x_m, -y_m, yaw_rad))
    assert repr(message_slots.odometry_twist2d(odom)) == repr(twist2d(odom.twist.twist))
