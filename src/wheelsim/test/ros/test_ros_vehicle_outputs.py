"""VehicleOutputs over DDS: CDR bytes arrive as the same messages as message objects."""

import pytest
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.ros.seam import LiveSeam
from wheelsim.ros.vehicle_outputs import VehicleOutputs
from wheelsim.testing.processes import Probe

TOPICS = (('ground_truth', Odometry), ('twist_actual', TwistStamped),
          ('joint_states', JointState))


@pytest.fixture
def probe(ros_domain_id):
    probe = Probe('outputs_probe')
    yield probe
    probe.close()


def outputs_in(probe: Probe, namespace: str, vehicle: Vehicle, serialized: bool):
    """A publisher node in the probe's context, and the lists its three topics arrive in."""
    seam = LiveSeam('outputs', namespace=namespace, context=probe.context)
    node = seam.rclpy_node
    names = [f'robot/{name}' for name in vehicle.joint_names]
    outputs = VehicleOutputs(seam, 'robot/map', 'robot/base_link', names, serialized)
    received = [probe.record(msg_type, f'{namespace}/{topic}') for topic, msg_type in TOPICS]
    # ready when each side has discovered the other: the first publication reaches the probe
    assert probe.spin_until(lambda: all(
        probe.node.count_publishers(f'{namespace}/{topic}')
        and node.count_subscribers(f'{namespace}/{topic}') for topic, _ in TOPICS), 30.0)
    return node, outputs, received


@pytest.mark.parametrize('model', ['bicycle', 'differential', 'omni'])
def test_bytes_and_objects_deliver_the_same_messages(probe, model):
    vehicle = Vehicle(VehicleConfig(model=model), 1e-3, (1.0, -2.0, 3.0))
    vehicle.set_command(1.2, 0.4, -0.7)
    node_b, as_bytes, got_bytes = outputs_in(probe, '/bytes', vehicle, serialized=True)
    node_o, as_objects, got_objects = outputs_in(probe, '/objects', vehicle, serialized=False)
    assert as_bytes.serialized and not as_objects.serialized
    stamps = [1_000_000_001 + 23_456_789 * k for k in range(10)]
    for stamp in stamps:
        vehicle.step(37)
        state = vehicle.state()
        as_bytes.publish_state(stamp, state)
        as_objects.publish_state(stamp, state)
    assert probe.spin_until(
        lambda: all(len(r) == len(stamps) for r in got_bytes + got_objects), 10.0)
    for from_bytes, from_objects in zip(got_bytes, got_objects, strict=True):
        assert from_bytes == from_objects
    for received in got_bytes:  # one stamp for the three outputs of a publication
        assert [msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec
                for msg in received] == stamps
    last = got_bytes[0][-1]
    assert last.pose.pose.position.x == state.x_m and last.child_frame_id == 'robot/base_link'
    assert list(got_bytes[2][-1].position) == list(state.joint_positions_rad)
    node_b.destroy_node()
    node_o.destroy_node()

