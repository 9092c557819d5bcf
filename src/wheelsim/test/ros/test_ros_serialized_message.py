"""SerializedMessage: rewriting numbers in rclpy's bytes gives what rclpy would serialize."""

import math

import pytest
from geometry_msgs.msg import TwistStamped
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import Odometry
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState

from wheelsim.ros import serialized_message
from wheelsim.ros.conversions import joint_state, odometry, twist_stamped
from wheelsim.ros.serialized_message import LayoutError, SerializedMessage
from wheelsim.ros.vehicle_outputs import (
    GROUND_TRUTH_FIELDS,
    TWIST_ACTUAL_FIELDS,
    joint_state_fields,
)

finite = st.floats(-1e6, 1e6, allow_nan=False)
stamps = st.integers(0, 2**31 * 10**9 - 1)
triples = st.tuples(finite, finite, finite)


def zeros(n: int) -> tuple[float, ...]:
    return (0.0,) * n


@settings(max_examples=200, deadline=None)
@given(stamp=stamps, pose=triples, twist=triples)
def test_odometry_bytes_equal_rclpy_serialization(stamp, pose, twist):
    template = SerializedMessage(
        odometry(0, 'map', 'robot/base_link', zeros(3), zeros(3)), GROUND_TRUTH_FIELDS
    )
    expected = odometry(stamp, 'map', 'robot/base_link', pose, twist)
    orientation = expected.pose.pose.orientation
    values = (*divmod(stamp, 10**9), *pose[:2], orientation.z, orientation.w, *twist)
    packed = template.pack(values)
    assert deserialize_message(packed, Odometry) == expected
    assert len(packed) == len(serialize_message(expected))


@settings(max_examples=200, deadline=None)
@given(stamp=stamps, twist=triples)
def test_twist_stamped_bytes_equal_rclpy_serialization(stamp, twist):
    template = SerializedMessage(twist_stamped(0, 'base_link', zeros(3)), TWIST_ACTUAL_FIELDS)
    packed = template.pack((*divmod(stamp, 10**9), *twist))
    assert deserialize_message(packed, TwistStamped) == twist_stamped(stamp, 'base_link', twist)


@settings(max_examples=200, deadline=None)
@given(stamp=stamps, joints=st.integers(1, 8).flatmap(
    lambda n: st.tuples(st.lists(finite, min_size=n, max_size=n),
                        st.lists(finite, min_size=n, max_size=n))))
def test_joint_state_bytes_equal_rclpy_serialization(stamp, joints):
    positions, velocities = joints
    names = [f'joint_{i}' * (i + 1) for i in range(len(positions))]  # odd string lengths
    template = SerializedMessage(
        joint_state(0, names, zeros(len(names)), zeros(len(names))),
        joint_state_fields(len(names)),
    )
    packed = template.pack((*divmod(stamp, 10**9), *positions, *velocities))
    assert deserialize_message(packed, JointState) == joint_state(
        stamp, names, positions, velocities
    )


def test_adjacent_fields_are_packed_together():
    template = SerializedMessage(
        joint_state(0, ['a', 'b', 'c'], zeros(3), zeros(3)), joint_state_fields(3)
    )
    assert [layout.format for layout, *_ in template._runs] == ['<iI', '<ddd', '<ddd']


def test_the_template_keeps_the_last_values_it_was_not_given():
    template = SerializedMessage(twist_stamped(0, 'base_link', zeros(3)), TWIST_ACTUAL_FIELDS)
    first = deserialize_message(template.pack((1, 2, 0.5, 0.0, 0.25)), TwistStamped)
    again = deserialize_message(template.pack((3, 4, -0.5, 1.0, 0.0)), TwistStamped)
    assert (first.twist.linear.x, first.twist.angular.z) == (0.5, 0.25)
    assert (again.header.stamp.sec, again.twist.linear.y, again.twist.angular.z) == (3, 1.0, 0.0)
    assert again.header.frame_id == 'base_link'


@pytest.mark.parametrize('path, message', [
    ('pose.pose.position.q', 'Odometry has no field pose.pose.position.q'),
    ('header.frame_id', r'Odometry.header.frame_id is a string; only \[.*\] fields can be'),
    ('nothing[2]', 'Odometry has no field nothing'),
])
def test_fields_that_cannot_be_rewritten_are_named(path, message):
    with pytest.raises(LayoutError, match=message):
        SerializedMessage(odometry(0, 'map', 'base_link', zeros(3), zeros(3)), [path])


def test_a_sequence_element_beyond_its_length_is_refused():
    with pytest.raises(LayoutError, match=r'position\[3\]: index out of range .* 1 elements'):
        SerializedMessage(joint_state(0, ['a'], [0.0], [0.0]), ['position[3]'])


def test_the_number_of_values_is_checked():
    template = SerializedMessage(twist_stamped(0, 'base_link', zeros(3)), TWIST_ACTUAL_FIELDS)
    with pytest.raises(ValueError, match='expected 5 values, got 4'):
        template.pack((0, 0, 1.0, math.pi))


def test_a_serializer_error_becomes_a_layout_error(monkeypatch):
    """Whatever a middleware's serializer raises, the caller gets a LayoutError (and
    VehicleOutputs falls back to message objects)."""

    def refuse(message):
        raise RuntimeError('no type support')

    monkeypatch.setattr(serialized_message, 'serialize_message', refuse)
    with pytest.raises(LayoutError, match='TwistStamped could not be serialized: no type'):
        SerializedMessage(twist_stamped(0, 'base_link', zeros(3)), TWIST_ACTUAL_FIELDS)
