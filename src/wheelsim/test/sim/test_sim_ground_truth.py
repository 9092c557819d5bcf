"""wheelsim.sim gives what vehicle_sim publishes on ground_truth for the same commands.

The real VehicleSim node class runs in lock-step (wheelsim.run.lockstep, no DDS) with a
commander node publishing one cmd_vel every DT_S; its ground_truth, published at 50 Hz (every
DT_S), is compared with ``simulate`` on the same preset and commands. Positions and twists are
copied into the Odometry message as they are: equal bit for bit. The yaw goes through the
message's quaternion and back (atan2 of its z and w): equal to 1e-12 rad.
"""

import math

import numpy as np
import pytest
from geometry_msgs.msg import Twist

import wheelsim.sim as ws
from wheelsim.nodes.vehicle_sim import VehicleSim
from wheelsim.run.lockstep import Lockstep
from wheelsim.testing.maps import walled_room, write_map

DT_S = 0.02  # the command period, equal to vehicle_sim's default publish period (50 Hz)
START_NS = 1_000_000_000
YAW_TOLERANCE_RAD = 1e-12  # the quaternion round trip of the message


def commands(count: int) -> np.ndarray:
    """A figure-eight-ish sequence of body twists with steps, reversals and sideways parts."""
    t = np.arange(count) * DT_S
    return np.column_stack([0.6 * np.sin(0.8 * t) + 0.2, 0.3 * np.cos(1.3 * t),
                            0.9 * np.sin(0.5 * t)])


def commander_class(sequence: np.ndarray) -> type:
    class Commander:
        name = 'commander'

        def __init__(self, seam) -> None:
            self._publisher = seam.create_publisher(Twist, 'cmd_vel', 10)
            self._next = 0
            self._send()  # delivered when the run starts: at the vehicle's first step
            seam.create_timer(DT_S, self._send)

        def _send(self) -> None:
            if self._next < len(sequence):
                msg = Twist()
                msg.linear.x, msg.linear.y, msg.angular.z = map(float, sequence[self._next])
                self._publisher.publish(msg)
                self._next += 1

    return Commander


def node_ground_truth(values: dict, sequence: np.ndarray) -> np.ndarray:
    """(K + 1, 6): x, y, yaw, vx, vy, wz that vehicle_sim publishes at every DT_S."""
    samples = []

    def record(topic: str, msg, _time_ns: int) -> None:
        if topic == '/ground_truth':
            pose, twist = msg.pose.pose, msg.twist.twist
            yaw = 2.0 * math.atan2(pose.orientation.z, pose.orientation.w)
            samples.append((pose.position.x, pose.position.y, math.remainder(yaw, 2 * math.pi),
                            twist.linear.x, twist.linear.y, twist.angular.z))

    lockstep = Lockstep(record, START_NS)
    lockstep.add(VehicleSim, {**values, 'use_sim_time': True, 'cmd_vel_type': 'twist'})
    lockstep.add(commander_class(sequence), {})
    lockstep.run_until(START_NS + round(len(sequence) * DT_S * 1e9))
    return np.array(samples)


def walled_map(folder) -> str:
    return str(write_map(folder, walled_room(4.0, 3.0), 0.05, (-2.0, -1.5, 0.0)))


CASES = {
    'indoor_differential': {},
    'mecanum_omni': {},
    'ackermann_car': {},
    'noisy_seeded': {'model_params.differential.drive_actuators.noise_stddev': 0.05,
                     'seed': 7},
    'walled_room': {'world.map_yaml': None},  # filled with the test's map
}


@pytest.mark.parametrize('case', CASES)
def test_simulate_equals_vehicle_sim_ground_truth(case, tmp_path):
    preset = case if case in ws.preset_names() else 'indoor_differential'
    params = dict(CASES[case])
    if 'world.map_yaml' in params:
        params['world.map_yaml'] = walled_map(tmp_path)
    vehicle = ws.load_vehicle(preset, params)
    sequence = commands(250)  # 5 s
    if case == 'walled_room':
        sequence[:, 0] += 0.6  # into the east wall: the collision guard stops it
    trajectory = ws.simulate(vehicle, None, sequence, DT_S)
    truth = node_ground_truth(dict(vehicle.parameters), sequence)

    assert truth.shape == (len(sequence) + 1, 6)
    np.testing.assert_array_equal(trajectory.x_m, truth[:, 0])
    np.testing.assert_array_equal(trajectory.y_m, truth[:, 1])
    np.testing.assert_allclose(trajectory.yaw_rad, truth[:, 2], rtol=0, atol=YAW_TOLERANCE_RAD)
    for i, name in enumerate(('vx_mps', 'vy_mps', 'wz_radps'), start=3):
        np.testing.assert_array_equal(getattr(trajectory, name), truth[:, i])
    if case == 'walled_room':
        assert trajectory.collisions >= 1
