"""The Vehicle and VehicleBatch API: offsets, the seed's example vehicles, resets, live changes."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st_

from wheelsim.core.geometry.se2 import integrate_twist
from wheelsim.core.params import flatten
from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.kinematics import ackermann_angle, ackermann_rate_factor
from wheelsim.core.vehicle.model import (
    COMMAND_LIMIT,
    PARALLEL_FROM_VEHICLE_STEPS,
    Vehicle,
    VehicleBatch,
)

DT = 1e-3
EXAMPLES = {  # the seed README's examples (see test_core_config.py for the full YAML shape)
    'car': {'model': 'bicycle', 'model_params': {'bicycle': {
        'wheel_base': 2.7, 'drive_on_steered_wheel': False, 'vis_track_steered': 1.5,
        'vis_track_fixed': 1.5, 'drive_actuator': {'max_velocity': 15.0, 'max_acceleration': 3.0},
        'steering_actuator': {'max_position': 0.61}}}},
    'forklift': {'model': 'bicycle', 'model_params': {'bicycle': {
        'wheel_base': 2.0, 'reverse': True, 'drive_on_steered_wheel': True,
        'vis_track_fixed': 1.1, 'vis_track_steered': 0.0,
        'drive_actuator': {'max_velocity': 5.0, 'max_acceleration': 3.0},
        'steering_actuator': {'max_position': 0.0}}}},
    'indoor_robot': {'model': 'differential', 'model_params': {'differential': {
        'track': 0.5, 'drive_actuators': {
            'max_velocity': 0.8, 'max_acceleration': 1.0, 'dead_time': 0.05}}}},
}


def config(**flat):
    return vehicle_config_from_params({key.replace('__', '.'): v for key, v in flat.items()})


def example(name, **flat):
    values = flatten(EXAMPLES[name])
    values.update({key.replace('__', '.'): v for key, v in flat.items()})
    return vehicle_config_from_params(values)


def trace(vehicle, steps, every=1):
    """States after each block of ``every`` steps."""
    out = []
    for _ in range(steps // every):
        vehicle.step(every)
        out.append(vehicle.state())
    return out


# --- base_link_offset -------------------------------------------------------------------------

OFFSET_CASES = [
    ('bicycle', {'model_params.bicycle.steering_actuator.max_position': 1.0}),
    ('bicycle', {'model_params.bicycle.drive_on_steered_wheel': True,
                 'model_params.bicycle.reverse': True}),
    ('differential', {}),
    ('omni', {}),
]


@pytest.mark.parametrize(('model', 'extra'), OFFSET_CASES)
def test_base_link_offset_moves_pose_and_twist_as_one_rigid_body(model, extra):
    """Same command, offset b: base_link is b ahead of the offset-0 frame, twist transported."""
    b = 0.8
    values = {'model': model, **extra}
    plain = Vehicle(vehicle_config_from_params(values), DT)
    shifted = Vehicle(vehicle_config_from_params(
        {**values, f'model_params.{model}.base_link_offset': b}), DT, (b, 0.0, 0.0))
    command = (1.0, 0.0, 0.4)
    plain.set_command(*command)
    # The offset vehicle gets the twist its base_link must have for the same body motion.
    shifted.set_command(command[0], command[1] + b * command[2], command[2])
    for a, s in zip(trace(plain, 3000, 100), trace(shifted, 3000, 100), strict=True):
        np.testing.assert_allclose(
            (s.x_m, s.y_m),
            (a.x_m + b * math.cos(a.yaw_rad), a.y_m + b * math.sin(a.yaw_rad)), atol=1e-12)
        assert s.yaw_rad == pytest.approx(a.yaw_rad, abs=1e-12)
        np.testing.assert_allclose((s.vx_mps, s.vy_mps, s.wz_radps),
                                   (a.vx_mps, a.vy_mps + b * a.wz_radps, a.wz_radps), atol=1e-12)


@pytest.mark.parametrize(('model', 'extra'), OFFSET_CASES)
def test_published_twist_is_the_rate_of_the_published_pose(model, extra):
    values = {'model': model, f'model_params.{model}.base_link_offset': -0.6, **extra}
    vehicle = Vehicle(vehicle_config_from_params(values), DT)
    vehicle.set_command(0.7, 0.2, -0.5)
    vehicle.step(1500)
    before = vehicle.state()
    vehicle.step(1)
    after = vehicle.state()
    expected = integrate_twist(before.x_m, before.y_m, before.yaw_rad,
                               after.vx_mps, after.vy_mps, after.wz_radps, DT)
    np.testing.assert_allclose((after.x_m, after.y_m, after.yaw_rad), expected, atol=1e-15)


@pytest.mark.parametrize('model', ['bicycle', 'differential'])
def test_nonholonomic_base_link_slides_sideways_by_offset_times_turn_rate(model):
    vehicle = Vehicle(config(model=model, **{f'model_params.{model}.base_link_offset': 1.2}), DT)
    vehicle.set_command(1.0, 5.0, 0.3)  # vy cannot be commanded
    vehicle.step(10000)
    state = vehicle.state()
    assert state.vy_mps == pytest.approx(1.2 * state.wz_radps, rel=1e-12)
    assert state.vx_mps == pytest.approx(1.0, rel=1e-6)


def test_omni_with_offset_reaches_the_commanded_base_link_twist():
    vehicle = Vehicle(config(model='omni', model_params__omni__base_link_offset=0.5), DT)
    vehicle.set_command(0.4, -0.3, 0.6)
    vehicle.step(10000)
    state = vehicle.state()
    np.testing.assert_allclose((state.vx_mps, state.vy_mps, state.wz_radps), (0.4, -0.3, 0.6),
                               rtol=1e-9)


# --- the seed's example vehicles ---------------------------------------------------------------

def test_car_accelerates_at_3_mps2_to_15_mps_and_turns_no_tighter_than_full_lock():
    car = Vehicle(example('car'), DT)
    car.set_command(30.0, 0.0, 0.0)
    states = trace(car, 12000, 10)
    speeds = np.array([s.vx_mps for s in states])
    assert np.max(np.diff(speeds)) <= 3.0 * 10 * DT * (1 + 1e-9)
    assert speeds.max() == pytest.approx(15.0)
    assert speeds[int(5.0 / (10 * DT))] < 15.0  # needs more than 5 s at 3 m/s^2
    car.set_command(15.0, 0.0, 10.0)
    car.step(3000)
    state = car.state()
    assert state.vx_mps / state.wz_radps == pytest.approx(2.7 / math.tan(0.61), rel=1e-9)
    assert max(state.steering_angles_rad) > 0.61 > min(state.steering_angles_rad)


def test_car_reverses_with_the_steering_inside_its_limits():
    car = Vehicle(example('car'), DT)
    car.set_command(-2.0, 0.0, 0.3)
    car.step(10000)
    state = car.state()
    assert state.vx_mps == pytest.approx(-2.0)
    assert state.wz_radps == pytest.approx(0.3, rel=1e-6)


def test_forklift_turns_on_the_spot_with_its_rear_wheel_across():
    forklift = Vehicle(example('forklift'), DT)
    forklift.set_command(0.0, 0.0, 0.5)
    forklift.step(10000)
    state = forklift.state()
    assert forklift.joint_names[-1] == 'steering_joint'
    assert abs(state.steering_angles_rad[0]) == pytest.approx(math.pi / 2, abs=1e-9)
    assert state.wz_radps == pytest.approx(0.5, rel=1e-9)
    assert abs(state.vx_mps) < 1e-9
    # Straight ahead afterwards: the wheel comes back and drives forward.
    forklift.set_command(2.0, 0.0, 0.0)
    forklift.step(10000)
    state = forklift.state()
    assert (state.vx_mps, state.wz_radps) == pytest.approx((2.0, 0.0), abs=1e-9)


def test_forklift_steering_at_the_rear_turns_the_other_way():
    forklift = Vehicle(example('forklift'), DT)
    forklift.set_command(1.0, 0.0, 0.4)
    forklift.step(10000)
    state = forklift.state()
    assert state.wz_radps == pytest.approx(0.4, rel=1e-9)
    assert state.steering_angles_rad[0] < 0  # rear wheel points right to turn left


def test_indoor_robot_waits_its_dead_time_then_keeps_the_turn_rate_within_wheel_limits():
    robot = Vehicle(example('indoor_robot'), DT)
    robot.set_command(1.0, 0.0, 2.0)
    robot.step(50)
    assert robot.state().vx_mps == 0.0 and robot.state().wz_radps == 0.0
    states = trace(robot, 10000, 10)
    radius = robot.config.active.wheel_radius_m
    for state in states:
        assert np.all(np.abs(state.joint_velocities_radps) * radius <= 0.8 + 1e-12)
    assert (states[-1].vx_mps, states[-1].wz_radps) == pytest.approx((0.3, 2.0), rel=1e-6)


# --- proportional mecanum acceleration -----------------------------------------------------------

def mecanum(proportional, jerk, dead_time=0.2):
    return config(model='omni', model_params__omni__proportional_acceleration=proportional,
                  model_params__omni__drive_actuators__max_jerk=jerk,
                  model_params__omni__drive_actuators__time_constant=0.1,
                  model_params__omni__drive_actuators__max_acceleration=1.0,
                  model_params__omni__drive_actuators__dead_time=dead_time)


@pytest.mark.parametrize('jerk', [0.0, 4.0])
@pytest.mark.parametrize('command', [(1.0, 0.5, 0.0), (0.6, -0.8, 0.4), (0.0, 1.0, 0.0)])
def test_proportional_acceleration_holds_the_direction_of_travel(jerk, command):
    vehicle = Vehicle(mecanum(True, jerk), DT)
    vehicle.set_command(*command)
    vehicle.step(200)  # dead time
    direction = np.array(command) / np.linalg.norm(command)
    for state in trace(vehicle, 4000, 20):
        twist = np.array([state.vx_mps, state.vy_mps, state.wz_radps])
        np.testing.assert_allclose(twist, np.dot(twist, direction) * direction, atol=1e-10)
    assert np.dot(twist, direction) == pytest.approx(np.linalg.norm(command), rel=1e-6)


def test_wheels_limited_one_by_one_drift_off_the_direction():
    vehicle = Vehicle(mecanum(False, 0.0), DT)
    vehicle.set_command(1.0, 0.5, 0.0)
    headings = [math.atan2(s.vy_mps, s.vx_mps) for s in trace(vehicle, 3000, 20) if s.vx_mps]
    assert max(abs(h - math.atan2(0.5, 1.0)) for h in headings) > 0.1


def test_proportional_acceleration_respects_every_wheel_limit():
    vehicle = VehicleBatch([mecanum(True, 4.0, dead_time=0.0)], DT)
    vehicle.set_commands([(0.3, 0.9, -0.6)])
    speeds = []
    for k in range(3000):
        if k == 500:  # still accelerating: ask for exactly the present twist
            vehicle.set_commands(vehicle.twists)
        if k == 1500:
            vehicle.set_commands([(-0.5, 0.2, 0.3)])
        vehicle.step(1)
        row = vehicle.state_row(0)
        speeds.append(row[st.S_DRIVE_V:st.S_DRIVE_V + 4])
    accelerations = np.diff(np.array(speeds), axis=0) / DT
    assert np.abs(accelerations).max() <= 1.0 + 1e-9
    assert np.abs(np.diff(accelerations, axis=0) / DT).max() <= 4.0 * (1 + 1e-6)


@settings(max_examples=40, deadline=None)
@given(
    st_.lists(st_.tuples(st_.floats(-1, 1), st_.floats(-1, 1), st_.floats(-1, 1),
                         st_.integers(1, 300)), min_size=1, max_size=5),
    st_.floats(0.5, 3.0),
    st_.floats(0.5, 3.0),
    st_.one_of(st_.just(0.0), st_.floats(2.0, 50.0)),
)
def test_proportional_wheels_stay_within_their_limits_for_any_commands(sequence, acc, dec, jerk):
    vehicle = VehicleBatch([config(
        model='omni', model_params__omni__drive_actuators__dead_time=0.0,
        model_params__omni__drive_actuators__max_acceleration=acc,
        model_params__omni__drive_actuators__max_deceleration=dec,
        model_params__omni__drive_actuators__max_jerk=jerk)], DT)
    speeds = [np.zeros(4)]
    for vx, vy, wz, hold in sequence:
        vehicle.set_commands([(vx, vy, wz)])
        for _ in range(hold):
            vehicle.step(1)
            speeds.append(vehicle.state_row(0)[st.S_DRIVE_V:st.S_DRIVE_V + 4])
    speeds = np.array(speeds)
    accelerations = np.diff(speeds, axis=0) / DT
    braking = speeds[:-1] * accelerations < 0
    assert np.all(np.abs(accelerations) <= np.where(braking, dec, acc) * (1 + 1e-6) + 1e-9)
    if jerk:
        jerks = np.diff(np.vstack([np.zeros(4), accelerations]), axis=0) / DT
        assert np.all(np.abs(jerks) <= jerk * (1 + 1e-6) + 1e-6)


# --- API -------------------------------------------------------------------------------------

def test_joint_state_vectors_follow_joint_names():
    vehicle = Vehicle(example('car'), DT)
    vehicle.set_command(1.0, 0.0, 0.2)
    vehicle.step(500)
    state = vehicle.state()
    assert len(state.joint_positions_rad) == len(state.joint_velocities_radps) == 6
    assert vehicle.joint_names[-2:] == ('steering_left_joint', 'steering_right_joint')
    np.testing.assert_array_equal(state.joint_positions_rad[-2:], state.steering_angles_rad)
    assert state.elapsed_steps == 500


@pytest.mark.parametrize('name, steps', [('car', 260), ('car', 900), ('forklift', 260)])
def test_steering_joints_point_each_wheel_about_the_centre_of_rotation(name, steps):
    """The kernel's steering joint columns against the kinematics functions, mid-turn (the
    steering still moving) and settled; the forklift has one steered wheel, behind."""
    vehicle = Vehicle(example(name), DT)
    vehicle.set_command(1.5, 0.0, 0.5)
    vehicle.step(steps)
    row = vehicle._batch.state_row(0)
    steering, rate = row[st.S_STEER], row[st.S_STEER_RATE]
    assert rate != 0.0 or steps == 900
    wheel_base = 2.7 if name == 'car' else -2.0
    laterals = (0.75, -0.75) if name == 'car' else (0.0,)
    state = vehicle.state()
    expected = [ackermann_angle(steering, lateral, wheel_base) for lateral in laterals]
    expected_rates = [
        rate * ackermann_rate_factor(steering, lateral, wheel_base) for lateral in laterals
    ]
    assert state.steering_angles_rad == pytest.approx(expected, rel=1e-15, abs=1e-15)
    assert state.joint_positions_rad[-len(laterals):] == state.steering_angles_rad
    assert state.joint_velocities_radps[-len(laterals):] == pytest.approx(
        expected_rates, rel=1e-15, abs=1e-15
    )
    vehicle.teleport((0.0, 0.0, 0.0))  # at rest: straight wheels, no rate
    assert vehicle.state().steering_angles_rad == (0.0,) * len(laterals)
    assert vehicle.state().joint_velocities_radps[-len(laterals):] == (0.0,) * len(laterals)


def test_one_command_of_a_batch_changes_that_vehicle_only_and_is_checked():
    batch = VehicleBatch([config(model='omni')] * 2, DT)
    batch.set_commands([(0.1, 0.2, 0.3), (0.4, 0.5, 0.6)])
    batch.set_command(1, (-1.0, 0.0, 2.0))
    np.testing.assert_array_equal(batch.commands, [(0.1, 0.2, 0.3), (-1.0, 0.0, 2.0)])
    with pytest.raises(ValueError, match=r'command \[1.0, nan, 0.0\] \(row 0\) must be finite'):
        batch.set_command(0, (1.0, math.nan, 0.0))
    np.testing.assert_array_equal(batch.commands, [(0.1, 0.2, 0.3), (-1.0, 0.0, 2.0)])


@pytest.mark.parametrize('bad', [math.nan, math.inf, -math.inf, 2 * COMMAND_LIMIT])
def test_bad_commands_are_refused_and_never_reach_the_state(bad):
    vehicle = Vehicle(config(model='omni'), DT)
    vehicle.set_command(0.5, 0.0, 0.0)
    with pytest.raises(ValueError, match='must be finite'):
        vehicle.set_command(0.5, bad, 0.0)
    vehicle.step(12000)
    state = vehicle.state()
    assert state.vx_mps == pytest.approx(0.5, rel=1e-6) and state.vy_mps == pytest.approx(0.0)


def test_stepping_is_deterministic_and_batches_of_steps_equal_single_steps():
    a, b = Vehicle(example('car'), DT), Vehicle(example('car'), DT)
    for vehicle in (a, b):
        vehicle.set_command(3.0, 0.0, 0.4)
    a.step(2000)
    for _ in range(100):
        b.step(20)
    assert a.state().x_m == b.state().x_m and a.state().yaw_rad == b.state().yaw_rad


def test_teleport_stops_the_vehicle_and_clears_what_is_in_flight():
    vehicle = Vehicle(config(model='differential'), DT, (1.0, 2.0, 0.3))
    vehicle.set_command(1.0, 0.0, 0.5)
    vehicle.step(2000)
    vehicle.teleport((-4.0, 5.0, 4.0))
    state = vehicle.state()
    assert (state.x_m, state.y_m) == (-4.0, 5.0)
    assert state.yaw_rad == pytest.approx(4.0 - 2 * math.pi)
    assert (state.vx_mps, state.wz_radps) == (0.0, 0.0)
    vehicle.step(200)  # the held command re-enters the 0.2 s dead time
    assert vehicle.state().vx_mps == 0.0
    vehicle.step(1)
    assert vehicle.state().vx_mps > 0.0


def test_reset_returns_to_the_construction_pose_with_everything_zeroed():
    vehicle = Vehicle(config(model='bicycle'), DT, (1.0, 2.0, 0.3))
    vehicle.set_command(1.0, 0.0, 0.5)
    vehicle.step(2000)
    vehicle.reset()
    state = vehicle.state()
    assert (state.x_m, state.y_m, state.yaw_rad, state.elapsed_steps) == (1.0, 2.0, 0.3, 0)
    vehicle.step(3000)
    assert vehicle.state().x_m == 1.0  # the command was zeroed too


def test_clear_histories_holds_the_present_output_for_one_dead_time():
    vehicle = Vehicle(config(model='differential',
                             model_params__differential__drive_actuators__time_constant=0.0,
                             model_params__differential__drive_actuators__max_acceleration=0.0),
                      DT)
    vehicle.set_command(1.0, 0.0, 0.0)
    vehicle.step(300)
    vehicle.set_command(0.0, 0.0, 0.0)
    vehicle.step(100)  # the stop is in flight
    vehicle.clear_histories()
    vehicle.set_command(0.5, 0.0, 0.0)
    vehicle.step(200)
    assert vehicle.state().vx_mps == 1.0  # the forgotten stop never arrives
    vehicle.step(1)
    assert vehicle.state().vx_mps == 0.5


def test_apply_config_changes_limits_live_and_refuses_geometry():
    vehicle = Vehicle(config(model='differential'), DT)
    vehicle.set_command(1.5, 0.0, 0.0)
    vehicle.step(5000)
    x_before = vehicle.state().x_m
    vehicle.apply_config(config(model='differential',
                                model_params__differential__drive_actuators__max_velocity=0.5))
    assert vehicle.state().x_m == x_before
    vehicle.step(12000)
    assert vehicle.state().vx_mps == pytest.approx(0.5)
    with pytest.raises(ValueError, match='model_params.differential.track'):
        vehicle.apply_config(config(model='differential', model_params__differential__track=2.0))
    with pytest.raises(ValueError, match="'model'"):
        vehicle.apply_config(config(model='omni'))


@pytest.mark.parametrize('new_dead_time', [0.05, 0.2, 0.35])
def test_live_dead_time_change_outputs_the_command_that_old(new_dead_time):
    """After the change, the output at step k is the input of step k - new delay."""
    def ideal_drive(dead_time):
        return config(model='differential',
                      model_params__differential__drive_actuators__dead_time=dead_time,
                      model_params__differential__drive_actuators__time_constant=0.0,
                      model_params__differential__drive_actuators__max_acceleration=0.0)
    vehicle = Vehicle(ideal_drive(0.2), DT)
    inputs = []
    for k in range(1000):
        if k == 600:
            vehicle.apply_config(ideal_drive(new_dead_time))
        inputs.append(0.001 * k)
        vehicle.set_command(inputs[-1], 0.0, 0.0)
        vehicle.step(1)
        if k >= 600 + 400:
            continue
        delay_steps = round((0.2 if k < 600 else new_dead_time) / DT)
        remembered = max(k - delay_steps, 600 - 201) if k >= 600 else k - delay_steps
        expected = inputs[remembered] if remembered >= 0 else 0.0
        assert vehicle.state().vx_mps == pytest.approx(expected, abs=1e-15), k


# --- batches ---------------------------------------------------------------------------------

@pytest.mark.parametrize('size', [3, 100])  # serial and parallel kernels
def test_a_batch_with_different_parameters_equals_separate_vehicles(size):
    rng = np.random.default_rng(7)
    configs = [
        config(model='bicycle', model_params__bicycle__wheel_base=float(rng.uniform(0.5, 3.0)),
               model_params__bicycle__drive_actuator__max_jerk=float(rng.choice([0.0, 5.0])),
               model_params__bicycle__steering_actuator__dead_time=float(rng.uniform(0, 0.3)))
        for _ in range(size)
    ]
    poses = rng.uniform(-5, 5, (size, 3))
    commands = rng.uniform(-1, 1, (size, 3))
    batch = VehicleBatch(configs, DT, poses)
    batch.set_commands(commands)
    batch.step(700)
    for i in (0, size // 2, size - 1):
        single = Vehicle(configs[i], DT, tuple(poses[i]))
        single.set_command(*commands[i])
        single.step(700)
        state = single.state()
        np.testing.assert_array_equal(batch.poses[i], (state.x_m, state.y_m, state.yaw_rad))
        np.testing.assert_array_equal(batch.twists[i],
                                      (state.vx_mps, state.vy_mps, state.wz_radps))


REPLAY_CONFIGS = {
    'bicycle': {'model_params.bicycle.drive_actuator.noise_stddev': 0.1,
                'model_params.bicycle.steering_actuator.dead_time': 0.05,
                'model_params.bicycle.drive_actuator.bias': 0.03},
    'differential': {'model_params.differential.drive_actuators.dead_time': 0.12,
                     'model_params.differential.drive_actuators.noise_stddev': 0.05},
    'omni': {'model_params.omni.wheel_actuators.max_jerk': 5.0},
}


@pytest.mark.parametrize('model, size', [(m, 3) for m in sorted(REPLAY_CONFIGS)]
                         + [('differential', 70)])  # step's parallel kernel from 64 on
def test_replaying_a_schedule_equals_stepping_and_commanding_step_by_step(model, size):
    """What calibration replays, bit for bit: commands and samples at random steps, several
    at one step, at step 0 and after the last sample; noise drawn by step (seeds)."""
    rng = np.random.default_rng(3)
    configs = [vehicle_config_from_params({'model': model, **REPLAY_CONFIGS[model]})] * size
    seeds = list(range(1, size + 1))
    command_steps = np.sort(np.concatenate([[0, 0], rng.integers(0, 3000, 40), [1500, 3100]]))
    commands = rng.uniform(-1.0, 1.0, (len(command_steps), 3))
    sample_steps = np.sort(np.concatenate([[0], rng.integers(0, 3000, 60), [1500, 1500]]))
    columns = [st.S_VX, st.S_VY, st.S_WZ, st.S_STEER, st.S_X, st.S_CMD_VX]  # read, then held
    replayed = VehicleBatch(configs, DT, seeds=seeds)
    stepped = VehicleBatch(configs, DT, seeds=seeds)
    samples = replayed.replay(command_steps, commands, sample_steps, columns)
    expected = np.empty_like(samples)
    events = sorted([(step, 0, j) for j, step in enumerate(sample_steps)]
                    + [(step, 1, i) for i, step in enumerate(command_steps)])
    for step, is_command, index in events:  # at one step: samples first, then commands
        stepped.step(step - stepped.elapsed_steps)
        if is_command:
            stepped.set_commands(np.repeat(commands[index][np.newaxis], size, axis=0))
        else:
            expected[:, index] = stepped.states[:, columns]
    np.testing.assert_array_equal(samples, expected)
    np.testing.assert_array_equal(replayed.states, stepped.states)
    assert replayed.elapsed_steps == stepped.elapsed_steps == 3100


def test_only_calls_of_many_vehicle_steps_start_the_threads():
    """Found in review: every call of a batch of 64 or more vehicles ran on all cores, and ten
    steps of 64 vehicles cost more in starting and joining threads than they saved: half the
    speed of one thread on an idle machine, 1/25 on a busy one. A call of fewer than
    PARALLEL_FROM_VEHICLE_STEPS runs on the calling thread; the results are the same."""
    config = vehicle_config_from_params({'model': 'differential'})
    batch = VehicleBatch([config] * 100, DT, seeds=list(range(100)))
    serial = VehicleBatch([config] * 100, DT, seeds=list(range(100)))
    commands = np.tile([0.8, 0.0, 0.4], (100, 1))
    batch.set_commands(commands)
    serial.set_commands(commands)
    batch.step(PARALLEL_FROM_VEHICLE_STEPS // 100 - 1)
    assert batch._parallel_kernel is None
    batch.step(PARALLEL_FROM_VEHICLE_STEPS // 100)
    assert batch._parallel_kernel is not None
    for _ in range(2 * PARALLEL_FROM_VEHICLE_STEPS // 100 - 1):
        serial.step(1)
    np.testing.assert_array_equal(batch.states, serial.states)


@pytest.mark.parametrize('set_by_user, expected', [(None, 'PASSIVE'), ('ACTIVE', 'ACTIVE')])
def test_the_parallel_kernel_lets_waiting_threads_sleep_unless_told_otherwise(set_by_user,
                                                                               expected):
    """OpenMP threads spinning at the end of a call held a core that other work needed."""
    env = {k: v for k, v in os.environ.items() if k != 'OMP_WAIT_POLICY'}
    if set_by_user is not None:
        env['OMP_WAIT_POLICY'] = set_by_user
    done = subprocess.run(
        [sys.executable, '-c', 'import os, wheelsim.core.vehicle.parallel_stepping; '
         'print(os.environ["OMP_WAIT_POLICY"])'], env=env, capture_output=True, text=True,
        check=True)
    assert done.stdout.strip() == expected


@pytest.mark.parametrize('args, message', [
    (([5, 3], np.ones((2, 3)), [1], [0]), r'command_steps\[1\] = 3 is before'),
    (([0, 3], np.ones((2, 3)), [-1, 2], [0]), r'sample_steps\[0\] = -1: steps must be >= 0'),
    (([0, 1.5], np.ones((2, 3)), [1], [0]), 'command_steps must be a 1-D array of whole'),
    (([0, 3], np.ones((3, 3)), [1], [0]), r'commands has shape \(3, 3\): expected \(2, 3\)'),
    (([0, 3], [(0.5, 0, 0), (math.nan, 0, 0)], [1], [0]), r'command \[nan, 0.0, 0.0\] \(row 1\)'),
    (([0, 3], [(0.5, 0, 0), (2 * COMMAND_LIMIT, 0, 0)], [1], [0]), r'command .* \(row 1\)'),
    (([0, 3], np.ones((2, 3)), [1], [st.N_STATE]), r'state_columns \[\d+\] must be whole'),
    (([0, 3], np.ones((2, 3)), [1], [0.5]), r'state_columns \[0.5\] must be whole'),
])
def test_a_replay_refuses_bad_schedules_naming_the_argument_and_changes_nothing(args, message):
    batch = VehicleBatch([config(model='differential')], DT)
    with pytest.raises(ValueError, match=message):
        batch.replay(*args)
    assert batch.elapsed_steps == 0 and batch.commands.tolist() == [[0.0, 0.0, 0.0]]


def test_batch_teleports_chosen_vehicles_only():
    batch = VehicleBatch([config(model='omni')] * 3, DT)
    batch.set_commands([(1.0, 0.0, 0.0)] * 3)
    batch.step(1000)
    moving = batch.poses
    batch.teleport([(5.0, 5.0, 0.0)], indices=[1])
    np.testing.assert_array_equal(batch.poses[[0, 2]], moving[[0, 2]])
    np.testing.assert_array_equal(batch.poses[1], (5.0, 5.0, 0.0))
    assert batch.twists[1].tolist() == [0.0, 0.0, 0.0] and batch.twists[0][0] > 0.0
    np.testing.assert_array_equal(batch.commands, [(1.0, 0.0, 0.0)] * 3)


def test_batch_refuses_mixed_models_and_bad_step_periods():
    with pytest.raises(ValueError, match='one model'):
        VehicleBatch([config(model='omni'), config(model='bicycle')], DT)
    with pytest.raises(ValueError, match='step_period_s'):
        VehicleBatch([config(model='omni')], 0.0)
    with pytest.raises(ValueError, match='n_steps'):
        VehicleBatch([config(model='omni')], DT).step(-1)


def test_a_batch_packs_each_configuration_once_and_each_seed_as_pack_params_does(monkeypatch):
    """Rows equal to pack_params' for every vehicle, also with repeated and distinct configs
    and seeds up to 2^63 - 1; a config repeated N times is packed once."""
    first, second = example('car'), example('forklift')
    configs = [first, second, first, first, second]
    seeds = [0, 1, 2**32 - 1, 2**32 + 7, 2**63 - 1]
    expected = np.stack([st.pack_params(c, DT, s) for c, s in zip(configs, seeds, strict=True)])
    assert np.array_equal(st.pack_batch_params(configs, DT, seeds), expected)
    assert np.array_equal(VehicleBatch(configs, DT, seeds=seeds)._params, expected)
    calls = []
    original = st.pack_params
    monkeypatch.setattr(st, 'pack_params', lambda *args: calls.append(args) or original(*args))
    st.pack_batch_params(configs, DT, seeds)
    assert len(calls) == 2
