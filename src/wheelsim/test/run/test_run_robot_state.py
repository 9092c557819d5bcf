"""The headless run's robot_state_publisher: fixed joints on /tf_static, moving ones on /tf."""

import copy
import math

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Header, String

from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.urdf import FixedFrame, build_urdf
from wheelsim.ros import qos
from wheelsim.ros.conversions import time_msg
from wheelsim.run.lockstep import Lockstep
from wheelsim.run.robot_state import MOVING_JOINTS_PARAMETER, RobotState


def describer(texts):
    """A node publishing each of ``texts`` on robot_description, one every 0.1 s."""

    class Describer:
        name = 'describer'

        def __init__(self, seam):
            self.publisher = seam.create_publisher(String, 'robot_description', qos.LATCHED)
            self.left = list(texts)
            seam.create_timer(0.1, self.tick)
            self.tick()

        def tick(self):
            if self.left:
                self.publisher.publish(String(data=self.left.pop(0)))

    return Describer


def static_messages(texts, end_ns=1_000_000_000):
    recorded = []
    lockstep = Lockstep(lambda topic, msg, t: recorded.append((topic, msg, t)))
    lockstep.add(describer(texts), {})
    lockstep.add(RobotState, {})
    lockstep.run_until(end_ns)
    return [(msg, t) for topic, msg, t in recorded if topic == '/tf_static'], lockstep


def test_each_description_gives_its_fixed_joints_stamped_when_heard():
    laser = FixedFrame('laser', x_m=0.2, y_m=-0.1, z_m=0.3, yaw_rad=math.pi / 2,
                       visual_radius_m=0.03)
    first = build_urdf(VehicleConfig(), prefix='r1/', fixed_frames=[laser])
    second = build_urdf(VehicleConfig(), fixed_frames=[FixedFrame('base_footprint')])
    messages, lockstep = static_messages([first, second])
    assert [t for _, t in messages] == [0, 100_000_000]
    # tf2's static broadcaster keeps every child frame it was given (found in review)
    (laser_tf,), (kept_tf, footprint_tf) = (msg.transforms for msg, _ in messages)
    assert kept_tf.child_frame_id == 'r1/laser' and kept_tf.header.stamp.nanosec == 0
    assert (laser_tf.header.frame_id, laser_tf.child_frame_id) == ('r1/base_link', 'r1/laser')
    assert laser_tf.header.stamp.sec == 0 and laser_tf.header.stamp.nanosec == 0
    t, r = laser_tf.transform.translation, laser_tf.transform.rotation
    assert (t.x, t.y, t.z) == (0.2, -0.1, 0.3)
    assert (r.x, r.y, r.z, r.w) == pytest.approx((0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5)))
    assert footprint_tf.child_frame_id == 'base_footprint'
    assert footprint_tf.header.stamp.nanosec == 100_000_000
    assert lockstep.offered_qos['/tf_static'] == [qos.LATCHED]


def test_a_urdf_without_fixed_joints_gives_an_empty_message():
    messages, _ = static_messages([build_urdf(VehicleConfig())])
    assert [len(msg.transforms) for msg, _ in messages] == [0]


def test_a_fixed_joint_without_origin_is_the_identity():
    bare = ('<robot name="r"><link name="p"/><link name="c"/><link name="w"/>'
            '<joint name="j" type="fixed"><parent link="p"/><child link="c"/></joint>'
            '<joint name="k" type="continuous"><parent link="p"/><child link="w"/>'
            '<origin xyz="1 2 3"/></joint></robot>')
    ((msg, _),), _ = static_messages([bare])
    (transform,) = msg.transforms
    assert (transform.header.frame_id, transform.child_frame_id) == ('p', 'c')
    assert transform.transform.translation.x == 0.0 and transform.transform.rotation.w == 1.0


#: A URDF with a fixed joint, a revolute one on a turned origin about a long axis, and two
#: continuous ones (one without an axis: x), listed out of name order.
URDF_TEXT = (
    '<robot name="r"><link name="base"/><link name="mast"/><link name="arm"/><link name="hub"/>'
    '<link name="roller"/>'
    '<joint name="z_mast" type="fixed"><parent link="base"/><child link="mast"/>'
    '<origin xyz="0 0 1" rpy="0 0 0.5"/></joint>'
    '<joint name="b_arm" type="revolute"><parent link="base"/><child link="arm"/>'
    '<origin xyz="0.5 -0.25 0.125" rpy="0.3 -0.2 1.0"/><axis xyz="0 0 2"/>'
    '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
    '<joint name="a_hub" type="continuous"><parent link="arm"/><child link="hub"/>'
    '<origin xyz="0 0.75 0"/><axis xyz="0 1 0"/></joint>'
    '<joint name="c_roller" type="continuous"><parent link="hub"/><child link="roller"/>'
    '</joint></robot>')
ALL = ['b_arm', 'a_hub', 'c_roller']


def joint_states(stamp_ns, names, positions):
    return JointState(header=Header(stamp=time_msg(stamp_ns)), name=names, position=positions)


#: joint_states for robot_state_publisher's rules: its first message, one too soon (20 ms),
#: one at exactly 50 ms, one joint alone too soon then in time, all again (the oldest decides),
#: names without positions (ignored), a repeated name (the first taken), a joint the URDF lacks,
#: turns beyond pi.
INPUTS = [
    joint_states(1_000_000_000, ALL, [0.25, 0.5, -0.75]),
    joint_states(1_020_000_000, ALL, [0.3, 0.6, -0.8]),
    joint_states(1_050_000_000, ALL, [0.35, 0.7, -0.9]),
    joint_states(1_060_000_000, ['a_hub'], [1.0]),
    joint_states(1_100_000_000, ['a_hub'], [1.5]),
    joint_states(1_120_000_000, ALL, [0.4, 2.0, -1.0]),
    joint_states(2_000_000_000, ALL, []),
    joint_states(2_500_000_000, ['a_hub', 'a_hub'], [3.0, -3.0]),
    joint_states(3_000_000_000, ['elsewhere'], [1.0]),
    joint_states(4_000_000_000, ALL, [-0.9, 4.0, 7.0]),
]


def lockstep_tf(inputs, parameters=None):
    """RobotState's /tf messages for ``inputs`` on joint_states (one each 0.1 s)."""
    class Driver:
        name = 'driver'

        def __init__(self, seam):
            seam.create_publisher(String, 'robot_description', qos.LATCHED).publish(
                String(data=URDF_TEXT))
            self.publisher = seam.create_publisher(JointState, 'joint_states', qos.DEFAULT)
            self.left = list(inputs)
            seam.create_timer(0.1, self.tick)

        def tick(self):
            if self.left:
                self.publisher.publish(self.left.pop(0))

    recorded = []  # copies: a /tf message is filled again for the next publication
    lockstep = Lockstep(lambda topic, msg, t: recorded.append((topic, copy.deepcopy(msg))))
    lockstep.add(Driver, {})
    lockstep.add(RobotState, parameters or {})
    lockstep.run_until(100_000_000 * (len(inputs) + 1))
    return [msg for topic, msg in recorded if topic == '/tf']


def rotation_matrix(q):
    x, y, z, w = q
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def expected_rotation(rpy, axis, angle_rad):
    """KDL's segment pose as robot_state_publisher computes it: the origin's rotation (URDF
    rpy: Rz(yaw) Ry(pitch) Rx(roll)) times the turn about the normalised axis (Rodrigues)."""
    def about(unit, angle):
        k = np.array([[0, -unit[2], unit[1]], [unit[2], 0, -unit[0]], [-unit[1], unit[0], 0]])
        return np.eye(3) + math.sin(angle) * k + (1 - math.cos(angle)) * k @ k

    roll, pitch, yaw = rpy
    origin = about((0, 0, 1), yaw) @ about((0, 1, 0), pitch) @ about((1, 0, 0), roll)
    unit = np.asarray(axis, float) / np.linalg.norm(axis)
    return origin @ about(unit, angle_rad)


# found in review: the headless bag had no /tf of the wheels and steering, which
# robot_state_publisher publishes live from joint_states. The real robot_state_publisher does not
# run here (../shared/ros-launch has a stand-in): its rules are those of its callbackJointState
# (robot_state_publisher 3.3.4 Jazzy, 3.4.3 Kilted), its poses KDL's.
def test_moving_joints_on_tf_follow_robot_state_publisher_s_rules():
    published = lockstep_tf(INPUTS)
    # first; 20 ms later: too soon; 50 ms: in time; a_hub alone 10 ms after its last: too soon,
    # then 50 ms after: in time; all 20 ms later: b_arm's and c_roller's last 70 ms ago; the
    # names without positions ignored; a_hub repeated; a joint the URDF lacks (an empty message
    # as tf2's broadcaster sends it); turns beyond pi
    assert [[(t.child_frame_id, t.header.stamp.sec, t.header.stamp.nanosec)
             for t in msg.transforms] for msg in published] == [
        [('hub', 1, 0), ('arm', 1, 0), ('roller', 1, 0)],
        [('hub', 1, 50_000_000), ('arm', 1, 50_000_000), ('roller', 1, 50_000_000)],
        [('hub', 1, 100_000_000)],
        [('hub', 1, 120_000_000), ('arm', 1, 120_000_000), ('roller', 1, 120_000_000)],
        [('hub', 2, 500_000_000)],
        [],
        [('hub', 4, 0), ('arm', 4, 0), ('roller', 4, 0)]]
    urdf = {'b_arm': ((0.5, -0.25, 0.125), (0.3, -0.2, 1.0), (0, 0, 2)),
            'a_hub': ((0.0, 0.75, 0.0), (0.0, 0.0, 0.0), (0, 1, 0)),
            'c_roller': ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0), (1, 0, 0))}
    parents = {'arm': ('base', 'b_arm'), 'hub': ('arm', 'a_hub'), 'roller': ('hub', 'c_roller')}
    inputs = {msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec: msg for msg in INPUTS}
    for msg in published:
        for transform in msg.transforms:
            parent, joint = parents[transform.child_frame_id]
            assert transform.header.frame_id == parent
            stamp = transform.header.stamp.sec * 10**9 + transform.header.stamp.nanosec
            given = inputs[stamp]
            position = given.position[list(given.name).index(joint)]  # the first of a name
            xyz, rpy, axis = urdf[joint]
            t, r = transform.transform.translation, transform.transform.rotation
            assert (t.x, t.y, t.z) == xyz
            assert math.isclose(math.hypot(r.x, r.y, r.z, r.w), 1.0, abs_tol=1e-12)
            assert rotation_matrix((r.x, r.y, r.z, r.w)) == pytest.approx(
                expected_rotation(rpy, axis, position), abs=1e-12), (joint, position)


def test_no_joint_states_names_publish_nothing():
    """Without names the oldest publication is the node's time (robot_state_publisher's
    ``now``): a message stamped now is too soon."""
    assert lockstep_tf([joint_states(100_000_000, [], [])]) == []


def test_a_run_recording_no_tf_publishes_no_moving_joints():
    assert lockstep_tf(INPUTS, {MOVING_JOINTS_PARAMETER: False}) == []
    assert len(lockstep_tf(INPUTS, {MOVING_JOINTS_PARAMETER: True})) == 7


# found in review: the quaternion of a wheel turned by more than 120 degrees had the opposite
# sign of robot_state_publisher's (KDL's GetQuaternion: the largest of x, y, z positive)
@pytest.mark.parametrize('axis, angle_rad, expected', [
    ('0 1 0', 1.0, (0.0, math.sin(0.5), 0.0, math.cos(0.5))),
    ('0 1 0', -2.5, (0.0, math.sin(1.25), 0.0, -math.cos(1.25))),
    ('0 0 1', -3.0, (0.0, 0.0, math.sin(1.5), -math.cos(1.5))),
    ('1 0 0', 4.0, (math.sin(2.0), 0.0, 0.0, math.cos(2.0)))])
def test_a_turned_joint_s_quaternion_has_kdl_s_sign(axis, angle_rad, expected):
    from builtin_interfaces.msg import Time
    from urdf_parser_py.urdf import URDF

    from wheelsim.run.robot_state import TurningJoint, origin_transform

    text = ('<robot name="r"><link name="p"/><link name="c"/><link name="f"/>'
            f'<joint name="j" type="continuous"><parent link="p"/><child link="c"/>'
            f'<axis xyz="{axis}"/></joint>'
            f'<joint name="k" type="fixed"><parent link="p"/><child link="f"/>'
            f'<origin rpy="{" ".join(str(angle_rad * float(a)) for a in axis.split())}"/>'
            '</joint></robot>')
    turning, fixed = URDF.from_xml_string(text).joints
    for transform in (TurningJoint(turning).turn(angle_rad, 0, 0),
                      origin_transform(fixed, Time())):
        r = transform.transform.rotation
        assert (r.x, r.y, r.z, r.w) == pytest.approx(expected, abs=1e-12)
