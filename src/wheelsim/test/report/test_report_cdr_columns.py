"""Column-wise CDR reading (wheelsim.report.cdr_columns) against rclpy's serialization."""

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped, Twist
from rclpy.serialization import serialize_message
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import JointState
from test_report_bag_data import odometry, twist_stamped

from wheelsim.report.cdr_columns import NotColumnar, read_columns

TYPESTORE = get_typestore(Stores.ROS2_KILTED)
ODOMETRY = 'nav_msgs/msg/Odometry'


def test_fields_after_strings_of_different_lengths():
    # Frame ids of 0 to 9 characters move every later field, differently in each message.
    messages = [odometry(0.5 * i + 1e-9 * i, 1.0 + i, -2.0 * i, 0.1 * i, vx=0.3 * i,
                         frame='f' * i) for i in range(10)]
    for i, msg in enumerate(messages):
        msg.child_frame_id = 'b' * (9 - i)
    paths = ['header.stamp.sec', 'header.stamp.nanosec', 'pose.pose.position.x',
             'pose.pose.position.y', 'pose.pose.orientation.z', 'twist.twist.linear.x']
    columns = read_columns(TYPESTORE, ODOMETRY, [serialize_message(m) for m in messages], paths)
    assert columns['header.stamp.sec'].dtype == np.int32
    assert columns['header.stamp.nanosec'].dtype == np.uint32
    np.testing.assert_array_equal(columns['header.stamp.sec'],
                                  [m.header.stamp.sec for m in messages])
    np.testing.assert_array_equal(columns['header.stamp.nanosec'],
                                  [m.header.stamp.nanosec for m in messages])
    np.testing.assert_array_equal(columns['pose.pose.position.x'],
                                  [m.pose.pose.position.x for m in messages])
    np.testing.assert_array_equal(columns['pose.pose.position.y'],
                                  [m.pose.pose.position.y for m in messages])
    np.testing.assert_array_equal(columns['pose.pose.orientation.z'],
                                  [m.pose.pose.orientation.z for m in messages])
    # after the 36 covariance doubles of the pose
    np.testing.assert_array_equal(columns['twist.twist.linear.x'],
                                  [m.twist.twist.linear.x for m in messages])


@pytest.mark.parametrize('type_name, msg, path, value', [
    ('geometry_msgs/msg/TwistStamped', twist_stamped(1.0, wz=-0.25), 'twist.angular.z', -0.25),
    ('geometry_msgs/msg/Twist', Twist(), 'linear.y', 0.0),
    ('geometry_msgs/msg/PointStamped', PointStamped(), 'point.y', 0.0),
])
def test_other_fixed_layout_types(type_name, msg, path, value):
    columns = read_columns(TYPESTORE, type_name, [serialize_message(msg)] * 3, [path])
    np.testing.assert_array_equal(columns[path], [value] * 3)


def test_no_messages_give_empty_columns():
    columns = read_columns(TYPESTORE, ODOMETRY, [], ['pose.pose.position.x'])
    assert columns['pose.pose.position.x'].shape == (0,)


def test_what_it_does_not_read_is_refused():
    joints = serialize_message(JointState(name=['a'], position=[1.0]))
    with pytest.raises(NotColumnar, match='name: sequence fields'):
        read_columns(TYPESTORE, 'sensor_msgs/msg/JointState', [joints], ['position'])
    # fields before the first sequence are read
    stamp = read_columns(TYPESTORE, 'sensor_msgs/msg/JointState', [joints], ['header.stamp.sec'])
    assert stamp['header.stamp.sec'].tolist() == [0]
    odom = serialize_message(odometry(1.0, 2.0, 3.0, 0.0))
    with pytest.raises(NotColumnar, match='not little-endian CDR'):
        read_columns(TYPESTORE, ODOMETRY, [b'\x00\x00' + odom[2:]], ['pose.pose.position.x'])
    with pytest.raises(NotColumnar, match='twist.twist.linear.x: a message ends before'):
        # cut inside the twist's linear.x (6 doubles, then 36 of covariance, end the message)
        read_columns(TYPESTORE, ODOMETRY, [odom, odom[:-(36 + 6) * 8 + 4]],
                     ['twist.twist.linear.x'])
    with pytest.raises(KeyError, match='no numeric field pose.pose.height'):
        read_columns(TYPESTORE, ODOMETRY, [odom], ['pose.pose.height'])
