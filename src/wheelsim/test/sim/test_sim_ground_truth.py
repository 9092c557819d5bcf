"""wheelsim.sim gives what vehicle_sim publishes on ground_truth for the same commands.

The real VehicleSim node class runs in lock-step (wheelsim.run.lockstep, no DDS) with a
commander node publishing one cmd_vel (or one wheel_commands message) every DT_S; its
ground_truth, published at 50 Hz (every DT_S), is compared with ``simulate`` on the same preset
and commands. Positions and twists are copied into the Odometry message as they are: equal bit
for bit. The yaw goes through the message's quaternion and back (atan2 of its z and w): equal to
1e-12 rad.
"""

import math

import numpy as np
import pytest
from geometry_msgs.msg import Twist
from std_msgs.msg import Float64MultiArray

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


def twist_message(command: np.ndarray) -> Twist:
    msg = Twist()
    msg.linear.x, msg.linear.y, msg.angular.z = map(float, command)
    return msg


def wheels_message(command: np.ndarray) -> Float64MultiArray:
    return Float64MultiArray(data=[float(value) for value in command])


TOPICS = {twist_message: (Twist, 'cmd_vel'), wheels_message: (Float64MultiArray, 'wheel_commands')}


def commander_class(sequence: np.ndarray, message=twist_message) -> type:
    msg_type, topic = TOPICS[message]

    class Commander:
        name = 'commander'

        def __init__(self, seam) -> None:
            self._publisher = seam.create_publisher(msg_type, topic, 10)
            self._next = 0
            self._send()  # delivered when the run starts: at the vehicle's first step
            seam.create_timer(DT_S, self._send)

        def _send(self) -> None:
            if self._next < len(sequence):
                self._publisher.publish(message(sequence[self._next]))
                self._next += 1

    return Commander


def node_ground_truth(values: dict, sequence: np.ndarray, message=twist_message) -> np.ndarray:
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
    lockstep.add(commander_class(sequence, message), {})
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


def assert_same_trajectory(trajectory, truth: np.ndarray) -> None:
    assert truth.shape == (len(trajectory.x_m), 6)
    np.testing.assert_array_equal(trajectory.x_m, truth[:, 0])
    np.testing.assert_array_equal(trajectory.y_m, truth[:, 1])
    np.testing.assert_allclose(trajectory.yaw_rad, truth[:, 2], rtol=0, atol=YAW_TOLERANCE_RAD)
    for i, name in enumerate(('vx_mps', 'vy_mps', 'wz_radps'), start=3):
        np.testing.assert_array_equal(getattr(trajectory, name), truth[:, i])


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
    assert_same_trajectory(trajectory, truth)
    if case == 'walled_room':
        assert trajectory.collisions >= 1


@pytest.mark.parametrize('preset', ['indoor_differential', 'mecanum_omni'])
def test_wheel_commands_equal_the_api_s_wheel_speeds_bit_for_bit(preset):
    """vehicle_sim's wheel_commands (joint velocities, rad/s) and simulate's 'wheel_speeds' (rim
    speeds, m/s): the same twists through the same actuators; the omni's wheels disagree with
    rigid motion here (taken in the least-squares sense by both)."""
    vehicle = ws.load_vehicle(preset)
    t = np.arange(150)[:, None] * DT_S
    phases = np.arange(vehicle.wheel_count) * 2.0
    joint_radps = 2.0 + 5.0 * np.sin(0.8 * t + phases) \
        + np.random.default_rng(3).normal(0.0, 0.5, (150, vehicle.wheel_count))
    radius_m = vehicle.config.active.wheel_radius_m
    trajectory = ws.simulate(vehicle, None, joint_radps * radius_m, DT_S,
                             command_type='wheel_speeds')
    truth = node_ground_truth(dict(vehicle.parameters), joint_radps, wheels_message)
    assert_same_trajectory(trajectory, truth)
    assert np.ptp(truth[:, 5]) > 0.2  # it turned


def test_wheel_commands_to_a_car_are_refused_and_it_stays(capsys):
    vehicle = ws.load_vehicle('ackermann_car')
    truth = node_ground_truth(dict(vehicle.parameters), np.full((20, 2), 5.0), wheels_message)
    assert not truth[:, 3:].any()
    assert ('/wheel_commands: rejected a command for the bicycle model, which takes cmd_vel '
            'only (1 rejected so far, for any reason)') in capsys.readouterr().err
