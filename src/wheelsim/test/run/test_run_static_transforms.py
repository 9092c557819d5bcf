"""The headless run's stand-in for robot_state_publisher's fixed joints on /tf_static."""

import math

import pytest
from std_msgs.msg import String

from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.urdf import FixedFrame, build_urdf
from wheelsim.ros import qos
from wheelsim.run.lockstep import Lockstep
from wheelsim.run.static_transforms import StaticTransforms


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
    lockstep.add(StaticTransforms, {})
    lockstep.run_until(end_ns)
    return [(msg, t) for topic, msg, t in recorded if topic == '/tf_static'], lockstep


def test_each_description_gives_its_fixed_joints_stamped_when_heard():
    laser = FixedFrame('laser', x_m=0.2, y_m=-0.1, z_m=0.3, yaw_rad=math.pi / 2,
                       visual_radius_m=0.03)
    first = build_urdf(VehicleConfig(), prefix='r1/', fixed_frames=[laser])
    second = build_urdf(VehicleConfig(), fixed_frames=[FixedFrame('base_footprint')])
    messages, lockstep = static_messages([first, second])
    assert [t for _, t in messages] == [0, 100_000_000]
    (laser_tf,), (footprint_tf,) = (msg.transforms for msg, _ in messages)
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
