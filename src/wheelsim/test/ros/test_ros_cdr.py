"""The compiled CDR serializer gives rclpy's bytes (padding as zeros) for every kind of member."""

import itertools
import math

import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticStatus, KeyValue
from geometry_msgs.msg import (
    Point32,
    PolygonStamped,
    PoseStamped,
    PoseWithCovariance,
    PoseWithCovarianceStamped,
    Transform,
    TransformStamped,
    TwistStamped,
    Vector3,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from nav_msgs.msg import OccupancyGrid, Odometry, Path
from rclpy.serialization import deserialize_message, serialize_message
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore
from sensor_msgs.msg import (
    CameraInfo,
    ChannelFloat32,
    JointState,
    LaserScan,
    MultiDOFJointState,
    PointCloud,
    PointCloud2,
    PointField,
)
from std_msgs.msg import (
    Bool,
    ColorRGBA,
    Empty,
    Float64MultiArray,
    Int16,
    MultiArrayDimension,
    String,
    UInt8,
)
from std_srvs.srv import Trigger
from tf2_msgs.msg import TFMessage

from wheelsim.ros import cdr

ROSBAGS_TYPES = get_typestore(Stores.ROS2_JAZZY)


def assert_same_as_rclpy(msg):
    """Equal length, equal bytes except where rclpy leaves padding uninitialised (zero here),
    and the same message when read back; without rmw_fastrtps's trailing padding, the same
    bytes up to where the data ends (zeros cut off), which rclpy and rosbags read."""
    expected, actual = bytes(serialize_message(msg)), cdr.serialize(msg)
    assert len(actual) == len(expected), (expected.hex(' '), actual.hex(' '))
    differing = [i for i, (a, b) in enumerate(zip(expected, actual, strict=True)) if a != b]
    assert all(actual[i] == 0 for i in differing), (expected.hex(' '), actual.hex(' '))
    assert deserialize_message(actual, type(msg)) == deserialize_message(expected, type(msg))
    short = cdr.serializer(type(msg), rmw_padding=False)(msg)
    assert short == actual[:len(short)] and not any(actual[len(short):]), (actual, short)
    assert deserialize_message(short, type(msg)) == deserialize_message(expected, type(msg))
    type_name = f'{type(msg).__module__.split(".")[0]}/{type(msg).__module__.split(".")[1]}/' \
        f'{type(msg).__name__}'
    if type_name in ROSBAGS_TYPES.types:  # its reader takes at most 3 bytes after the data
        ROSBAGS_TYPES.deserialize_cdr(short, type_name)


def test_a_joint_state_without_efforts_ends_where_its_data_ends_for_strict_readers():
    """rmw_fastrtps counts 4 bytes after an empty float64[] at the end; rosbags refuses them."""
    msg = JointState(name=['left', 'right'], position=[1.0, 2.0], velocity=[3.0, 4.0])
    rclpy_bytes = bytes(serialize_message(msg))
    with pytest.raises(SerdeError, match='size mismatch'):
        ROSBAGS_TYPES.deserialize_cdr(rclpy_bytes, 'sensor_msgs/msg/JointState')
    short = cdr.serializer(JointState, rmw_padding=False)(msg)
    assert len(short) == len(rclpy_bytes) - 4
    read = ROSBAGS_TYPES.deserialize_cdr(short, 'sensor_msgs/msg/JointState')
    assert read.name == msg.name and list(read.velocity) == msg.velocity.tolist()
    assert len(read.effort) == 0


def odometry():
    msg = Odometry()
    msg.header.stamp = Time(sec=12, nanosec=345)
    msg.header.frame_id, msg.child_frame_id = 'odom', 'base_link'
    msg.pose.pose.position.x, msg.pose.pose.orientation.w = 1.5, math.cos(0.2)
    msg.pose.covariance[7], msg.twist.covariance[35] = 0.25, 1e-9
    msg.twist.twist.angular.z = -0.3
    return msg


def transforms():
    msg = TFMessage(transforms=[TransformStamped(child_frame_id='odom'),
                                TransformStamped(child_frame_id='base_link_2')])
    msg.transforms[0].header.frame_id = 'map'
    msg.transforms[1].transform.rotation.w = 0.5
    return msg


def path():
    msg = Path(poses=[PoseStamped() for _ in range(3)])
    msg.header.frame_id, msg.poses[2].header.frame_id = 'map', 'ab'
    msg.poses[1].pose.position.y = 3.0
    return msg


def long_path():
    """Poses whose frame ids take every length modulo 8 (their structures are walked once per
    alignment and length: the padding must follow each)."""
    msg = Path(poses=[PoseStamped() for _ in range(40)])
    for i, pose in enumerate(msg.poses):
        pose.header.frame_id = 'f' * (i % 11)
        pose.pose.position.x = float(i)
    return msg


def polygon():
    msg = PolygonStamped()
    msg.polygon.points = [Point32(x=1.0), Point32(y=-2.5)]
    return msg


def point_cloud():
    """Structures in a sequence holding a string and a sequence of 4-byte numbers each."""
    return PointCloud(points=[Point32(x=1.0)], channels=[
        ChannelFloat32(name='ab', values=[1.0, 2.0]), ChannelFloat32(name='abc')])


def array_after_labels(data):
    """Strings in structures in a sequence, then a sequence of doubles (maybe empty)."""
    msg = Float64MultiArray(data=data)
    msg.layout.dim = [MultiArrayDimension(label='xy', size=3), MultiArrayDimension(label='t')]
    return msg


def grid():
    msg = OccupancyGrid(data=[0, 100, -1])
    msg.info.width, msg.info.height, msg.info.resolution = 3, 1, 0.05
    return msg


@pytest.mark.parametrize('msg', [
    odometry(), transforms(), TFMessage(), path(), Path(), long_path(),
    PoseWithCovarianceStamped(), TwistStamped(), PolygonStamped(),
    polygon(), grid(), point_cloud(), array_after_labels([]), array_after_labels([0.5]),
    MultiDOFJointState(joint_names=['a', 'bc'], transforms=[Transform(), Transform()]),
    PointCloud2(fields=[PointField(name='x', count=1)], data=[1, 2, 3], is_dense=True),
    # float64[] d, empty or not, then fixed arrays of doubles and a structure
    CameraInfo(distortion_model='plumb_bob'), CameraInfo(d=[0.1, -0.2], height=480),
    LaserScan(ranges=[1.0, 2.5], angle_min=-1.2), String(data='abc'), String(),
    # fixed-size messages: rmw_fastrtps rounds their length up to 4 bytes
    Bool(data=True), Int16(data=-3), UInt8(data=7), ColorRGBA(r=1.0), Time(sec=3), Vector3(x=1.0),
    Empty(), Trigger.Request(),  # no fields: rosidl's one uint8
], ids=lambda msg: type(msg).__name__)
def test_messages_of_a_run_and_fixed_size_ones(msg):
    assert_same_as_rclpy(msg)


def test_a_structure_without_fields_is_one_zero_byte_every_time():
    """rclpy leaves that byte (``structure_needs_at_least_one_member``) uninitialised, so its
    bytes for an Empty differ from call to call; a bag must not."""
    assert {cdr.serialize(Empty()) for _ in range(100)} == {b'\x00\x01\x00\x00' + bytes(4)}


names = st.lists(st.text(alphabet='abc_', max_size=5), max_size=3)
doubles = st.lists(st.floats(allow_nan=False), max_size=3)


@settings(max_examples=200, deadline=None)
@given(frame_id=st.text(alphabet='xyz/', max_size=9), name=names, position=doubles,
       velocity=doubles, effort=doubles)
def test_joint_states_with_any_strings_and_empty_sequences(frame_id, name, position, velocity,
                                                           effort):
    # Empty float64[] sequences are unpadded in the data but counted padded in the length.
    msg = JointState(name=name, position=position, velocity=velocity, effort=effort)
    msg.header.frame_id = frame_id
    assert_same_as_rclpy(msg)


def test_a_fixed_array_of_the_wrong_length_is_refused():
    msg = Odometry(pose=PoseWithCovariance(check_fields=False))
    msg.pose.covariance = [0.0] * 35  # rclpy's setter takes it as it is without check_fields
    with pytest.raises(ValueError, match='pose.covariance: 35 items, not 36'):
        cdr.serialize(msg)


def test_a_type_the_compiler_leaves_is_serialized_by_rclpy():
    # DiagnosticStatus.level is a `byte`; KeyValue has only strings and is compiled
    assert cdr.serializer(DiagnosticStatus) is serialize_message
    assert cdr.serializer(DiagnosticStatus, rmw_padding=False) is serialize_message
    assert cdr.serializer(KeyValue) is not serialize_message


def test_refilled_messages_are_serialized_with_their_new_values():
    msg = odometry()
    first = cdr.serialize(msg)
    msg.pose.pose.position.x = 2.0
    assert cdr.serialize(msg) != first
    assert deserialize_message(cdr.serialize(msg), Odometry).pose.pose.position.x == 2.0


@settings(max_examples=100, deadline=None)
@given(labels=names, data=doubles, sizes=st.lists(st.integers(0, 2**32 - 1), max_size=3))
def test_labelled_arrays_with_any_labels_and_data(labels, data, sizes):
    msg = Float64MultiArray(data=data)
    msg.layout.dim = [MultiArrayDimension(label=label, size=size)
                      for label, size in zip(labels, sizes, strict=False)]
    assert_same_as_rclpy(msg)


def test_a_type_meeting_more_layouts_than_it_keeps_starts_its_table_again(monkeypatch):
    # One layout per combination of string lengths: the table is bounded.
    monkeypatch.setattr(cdr, 'MAX_LAYOUTS', 3)
    layouts = cdr.serializer(JointState).__globals__['layouts']
    layouts.clear()  # other tests met other layouts
    for length in range(8):
        assert_same_as_rclpy(JointState(name=['w' * length], position=[1.0]))
        assert len(layouts) <= 3
    assert (0, 1, 1, 1, 0, 0) not in layouts and (0, 1, 7, 1, 0, 0) in layouts


@pytest.mark.parametrize(('cls', 'key'), [(Vector3, ()), (PoseStamped, (3,)), (Point32, ()),
                                          (TransformStamped, (0, 5))])
def test_a_structure_walked_once_gives_the_layout_of_a_full_walk(cls, key):
    # Its codes depend on where it starts (position and rmw's length, which differ after an
    # empty sequence of doubles) modulo 8 only.
    for position, length in itertools.product(range(16), range(16)):
        remembered = cdr._Layout(iter(key), position, length)
        remembered.structure(cls)
        walked = cdr._Layout(iter(key), position, length)
        walked.members(cls)
        assert (remembered.codes, remembered.position, remembered.length, remembered.fixed) == (
            [''.join(walked.codes)], walked.position, walked.length, walked.fixed)

