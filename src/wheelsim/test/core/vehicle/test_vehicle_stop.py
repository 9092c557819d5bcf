"""Snapshot, restore and stop: what the world's collision guard uses to undo steps and halt."""

import numpy as np
import pytest

from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle

CONFIG = vehicle_config_from_params({
    'model': 'bicycle', 'model_params.bicycle.drive_actuator.dead_time': 0.05,
    'model_params.bicycle.steering_actuator.max_position': 0.5})


def moving_vehicle():
    car = Vehicle(CONFIG, 1e-3, (1.0, 2.0, 0.3))
    car.set_command(2.0, 0.0, 0.4)
    car.step(500)
    return car


def test_restore_returns_to_the_snapshot_and_the_same_steps_follow():
    car = moving_vehicle()
    saved, saved_pose = car.snapshot(), car.pose
    car.step(300)
    after = car.snapshot()
    car.restore(saved)
    assert car.pose == saved_pose
    car.step(300)
    np.testing.assert_array_equal(car.snapshot().state, after.state)
    np.testing.assert_array_equal(car.snapshot().history, after.history)
    assert car.state().elapsed_steps == 800


def test_a_snapshot_taken_before_a_longer_dead_time_restores_as_that_change_would():
    """Found in review: restoring a snapshot taken before a live change to a longer dead time
    put back its shorter history, and the compiled step read outside it (twists of 1e228)."""
    longer = vehicle_config_from_params({
        'model': 'bicycle', 'model_params.bicycle.drive_actuator.dead_time': 0.8,
        'model_params.bicycle.steering_actuator.max_position': 0.5})
    car, same = moving_vehicle(), moving_vehicle()
    saved = car.snapshot()
    car.step(300)
    car.apply_config(longer)
    car.restore(saved)
    same.apply_config(longer)  # the change made at the snapshot's moment instead
    car.step(1500)
    same.step(1500)
    np.testing.assert_array_equal(car.snapshot().state, same.snapshot().state)
    assert abs(car.state().vx_mps) < 3.0


def test_a_snapshot_of_another_batch_s_size_is_refused():
    car = moving_vehicle()
    saved = car.snapshot()
    for wrong in (saved._replace(state=np.vstack([saved.state] * 2)),
                  saved._replace(history=saved.history[0])):
        with pytest.raises(ValueError, match=r'^snapshot: state .* are not of this batch'):
            car.restore(wrong)


def test_stop_zeroes_motion_and_keeps_pose_angles_and_command():
    car = moving_vehicle()
    before = car.snapshot().state[0]
    car.stop()
    row = car.snapshot().state[0]
    state = car.state()
    assert (state.vx_mps, state.vy_mps, state.wz_radps) == (0.0, 0.0, 0.0)
    assert all(v == 0.0 for v in state.joint_velocities_radps)
    assert row[st.S_DRIVE_V] == row[st.S_DRIVE_A] == row[st.S_STEER_RATE] == 0.0
    for column in (st.S_X, st.S_Y, st.S_YAW, st.S_STEER, st.S_CMD_VX, st.S_CMD_WZ,
                   st.S_WHEEL_ANGLE):
        assert row[column] == before[column]
    assert before[st.S_DRIVE_V] > 0.5 and before[st.S_STEER] != 0.0


def test_stop_at_a_given_pose_then_drive_on():
    car = moving_vehicle()
    car.stop((5.0, 6.0, 4.0))
    assert car.pose == (5.0, 6.0, 4.0 - 2 * np.pi)
    car.step(200)
    assert car.state().vx_mps > 0.0  # the command still holds: it accelerates again


def test_stop_also_halts_the_single_track_model():
    """The dynamic bicycle keeps the speed of its centre of mass in its own state: a stop
    zeroes it too, or the vehicle would slide on at its old speed."""
    car = Vehicle(vehicle_config_from_params({
        'model': 'bicycle', 'model_params.bicycle.friction_coefficient': 0.8,
        'model_params.bicycle.dynamics.enabled': True}), 1e-3)
    car.set_command(3.0, 0.0, 0.3)
    car.step(4000)
    assert car.snapshot().state[0][st.S_SPEED_CG] > 1.5
    car.stop()
    car.set_command(0.0, 0.0, 0.0)
    car.step(1)
    row = car.snapshot().state[0]
    assert abs(row[st.S_SPEED_CG]) < 0.01 and abs(car.state().vx_mps) < 0.01
