"""stick_wheel_speeds: a gamepad's tank or arcade driving as the API's wheel speeds."""

import numpy as np
import pytest

import wheelsim.sim as ws


def test_full_stick_is_the_drive_top_speed_on_every_wheel_of_its_side():
    omni = ws.load_vehicle('mecanum_omni')
    top_mps = omni.config.drive.max_velocity
    np.testing.assert_allclose(ws.stick_wheel_speeds(omni, 'tank', [1.0, 0.5], [-1.0, 0.5]),
                               [[top_mps, -top_mps, top_mps, -top_mps], [top_mps / 2] * 4])
    robot = ws.load_vehicle('indoor_differential')
    spin = ws.stick_wheel_speeds(robot, 'arcade', 0.0, 1.0)
    np.testing.assert_allclose(spin, [-robot.config.drive.max_velocity,
                                      robot.config.drive.max_velocity])
    trajectory = ws.simulate(robot, None, np.tile(spin, (200, 1)), 0.01,
                             command_type='wheel_speeds')
    assert trajectory.wz_radps[-1] > 0.5 and abs(trajectory.x_m[-1]) < 1e-9


def test_full_stick_without_a_speed_limit_is_2_m_per_s_as_wheel_teleop_takes():
    """Found in review: every speed was 0 (0 x the unlimited max_velocity)."""
    unlimited = ws.load_vehicle('indoor_differential', {
        'model_params.differential.drive_actuators.max_velocity': 0.0})
    np.testing.assert_allclose(ws.stick_wheel_speeds(unlimited, 'tank', 1.0, -0.5), [2.0, -1.0])


def test_a_car_or_an_unknown_mapping_is_refused_by_name():
    with pytest.raises(ValueError, match="model = 'bicycle'"):
        ws.stick_wheel_speeds(ws.load_vehicle('ackermann_car'), 'tank', 1.0, 1.0)
    with pytest.raises(ValueError, match="mapping = 'skid'"):
        ws.stick_wheel_speeds(ws.load_vehicle('indoor_differential'), 'skid', 1.0, 1.0)


@pytest.mark.parametrize('first, second, message', [
    ([np.nan], [0.1], 'first must be stick axes: real numbers in'),
    ([0.5], [1.5], 'second must be stick axes: real numbers in'),
    ([0.5, 0.5], [0.1], r'first and second must have one shape \(or one be a single value\), '
                        r'got \(2,\) and \(1,\)'),
    (['up'], [0.1], 'first must be stick axes'),
    ([0.1], [[0.1, 0.2], [0.3]], 'second must be stick axes: real numbers in .*one array'),
    # found in review: the value under a mask, and a bool among numbers, were taken
    (np.ma.masked_array([0.9, 0.1], mask=[True, False]), 0.0, 'first must be stick axes'),
    ([True, 0.5], 0.0, 'first must be stick axes'),
    (0.0, [0.5, np.complex128(0.5)], 'second must be stick axes'),
])
def test_axes_that_are_not_sticks_are_refused_by_name(first, second, message):
    """Found in review: NaN gave NaN speeds, and [0.5, 0.5] against [0.1] was broadcast."""
    with pytest.raises(ValueError, match=message):
        ws.stick_wheel_speeds(ws.load_vehicle('indoor_differential'), 'arcade', first, second)


def test_one_stick_may_be_held_while_the_other_moves():
    """Found in review of the check above: a single value against a series was refused."""
    robot = ws.load_vehicle('indoor_differential')
    held = ws.stick_wheel_speeds(robot, 'arcade', np.linspace(0.0, 1.0, 5), 0.3)
    np.testing.assert_array_equal(held, ws.stick_wheel_speeds(
        robot, 'arcade', np.linspace(0.0, 1.0, 5), np.full(5, 0.3)))
