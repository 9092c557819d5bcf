"""Regression tests of the fidelity review's bugs B1-B4 (../shared/reviews/fidelity.md, §4).

Each test failed before its fix, with the figures the review measured (quoted per test).
"""

import math

import numpy as np
import pytest

from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.kinematics import bicycle_references
from wheelsim.core.vehicle.model import Vehicle

DT = 1e-3


def bicycle(**leaves):
    values = {'model': 'bicycle'}
    values.update({f'model_params.bicycle.{k}': v for k, v in leaves.items()})
    return Vehicle(vehicle_config_from_params(values), DT)


# --- B1: a steered-drive bicycle whose steering is at its limit keeps vx ------------------------


def test_b1_steered_drive_asked_to_spin_at_full_lock_does_not_drive_forward():
    """Review: (vx 0, wz 0.5) drove forward at 0.866 m/s and moved 4.33 m in 6 s."""
    vehicle = bicycle(drive_on_steered_wheel=True)  # max_position pi/6
    vehicle.set_command(0.0, 0.0, 0.5)
    vehicle.step(6000)
    state = vehicle.state()
    assert math.hypot(state.x_m, state.y_m) < 1e-12
    assert state.vx_mps == 0.0 and state.wz_radps == 0.0
    # It does steer to full lock, ready to turn the way it was asked once it moves.
    assert state.steering_angles_rad[0] > 0.0


@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('vx', [1.0, -0.8])
def test_b1_steered_drive_beyond_the_steering_limit_keeps_the_commanded_vx(vx, reverse):
    """Review: (1, 0, 1) gave vx 1.7321 with steered drive (fixed-axle drive: 1.0)."""
    vehicle = bicycle(drive_on_steered_wheel=True, reverse=reverse)
    vehicle.set_command(vx, 0.0, 1.0)
    vehicle.step(8000)
    state = vehicle.state()
    assert state.vx_mps == pytest.approx(vx, rel=1e-8)
    # At full lock: the tightest circle, L / tan(max_position), turning the way asked.
    assert abs(state.vx_mps / state.wz_radps) == pytest.approx(2.0 / math.tan(math.pi / 6))
    assert state.wz_radps > 0.0


def test_b1_within_the_limit_the_steered_wheel_still_drives_along_its_direction():
    drive, angle = bicycle_references(1.0, 0.2, 0.0, 0.0, 2.0, True, math.pi / 6)
    assert angle == pytest.approx(math.atan2(0.4, 1.0))
    assert drive == pytest.approx(math.hypot(1.0, 0.4))


# --- B2: with no command the steering holds its last reference ----------------------------------


def test_b2_zero_command_while_steering_holds_the_last_reference_without_overshoot():
    """Review: steering toward atan(0.5) = 0.4636, command zeroed at 0.3 s: angle 0.200 at
    0.3 s, peak 0.4542 at 0.5 s, final 0.3957 (the actual angle fed back through the dead
    time)."""
    vehicle = bicycle(vis_track_steered=0.0)
    angles = []
    for k in range(3000):
        vehicle.set_command(*((1.0, 0.0, 0.25) if k < 300 else (0.0, 0.0, 0.0)))
        vehicle.step(1)
        angles.append(vehicle.state().steering_angles_rad[0])
    target = math.atan(0.5)
    assert angles[299] == pytest.approx(0.2, abs=0.01)  # still on its way at 0.3 s
    assert angles[-1] == pytest.approx(target, abs=1e-9)
    assert np.all(np.diff(angles) >= -1e-15)  # never turns back
    assert max(angles) <= target + 1e-12


def test_b2_zero_command_from_rest_keeps_the_wheels_straight():
    vehicle = bicycle()
    vehicle.set_command(0.0, 0.0, 0.0)
    vehicle.step(1000)
    assert vehicle.state().steering_angles_rad == (0.0, 0.0)


# --- B3: wide steering chooses the option by the distance the actuator travels ---------------


def test_b3_limited_steering_picks_the_option_it_reaches_without_going_round():
    """Steering at +3.0 rad asked for the direction -3.0 rad (max_position pi): the forward
    option is 0.28 rad away across +-pi, but limited steering never crosses +-pi and would have
    to travel 6 rad; the reversed option at 0.14 rad is 2.86 rad away. The review saw the first
    choice made, then abandoned halfway: the drive changed sign mid-manoeuvre and the vehicle
    drove forward at 0.18 m/s when asked -0.99."""
    direction = -3.0
    drive, angle = bicycle_references(
        math.cos(direction), math.sin(direction) / 2.0, 3.0, 3.0, 2.0, True, math.pi
    )
    assert angle == pytest.approx(direction + math.pi)
    assert drive == pytest.approx(-1.0)
    # Unlimited steering (max_position 0 -> inf) does go round: the forward option is nearer.
    drive, angle = bicycle_references(
        math.cos(direction), math.sin(direction) / 2.0, 3.0, 3.0, 2.0, True, math.inf
    )
    assert angle == pytest.approx(direction)
    assert drive == pytest.approx(1.0)


def test_b3_vehicle_reverses_its_drive_at_once_and_keeps_that_choice():
    vehicle = bicycle(drive_on_steered_wheel=True, vis_track_steered=0.0,
                      **{'steering_actuator.max_position': math.pi,
                         'steering_actuator.dead_time': 0.0, 'drive_actuator.dead_time': 0.0})

    def direction(phi):
        return (math.cos(phi), 0.0, math.sin(phi) / 2.0)

    for k in range(3000):  # sweep the commanded wheel direction slowly from 0 to 3.0 rad
        vehicle.set_command(*direction(3.0 * (k + 1) / 3000))
        vehicle.step(1)
    vehicle.step(500)
    vehicle.set_command(*direction(-3.0))
    drive = []
    for _ in range(5000):
        vehicle.step(1)
        drive.append(vehicle._batch.state_row(0)[st.S_DRIVE_V])
    assert drive[99] < 0.9  # reversing from the start, not after half the manoeuvre
    assert np.all(np.diff(drive) <= 1e-15)
    assert drive[-1] == pytest.approx(-1.0, abs=1e-4)
    assert vehicle.state().steering_angles_rad[0] == pytest.approx(math.pi - 3.0, abs=1e-6)


# --- B4: dead time rounds half up -----------------------------------------------------------


@pytest.mark.parametrize(('dead_time_s', 'dt', 'steps'), [
    (0.0005, 1e-3, 1), (0.0015, 1e-3, 2), (0.0025, 1e-3, 3), (0.0035, 1e-3, 4),
    (0.0045, 1e-3, 5), (0.0049, 1e-3, 5), (0.2, 1e-3, 200), (0.2, 1 / 300, 60),
    (0.0, 1e-3, 0), (2.5 / 300, 1 / 300, 3),
])
def test_b4_dead_time_in_steps_rounds_half_up(dead_time_s, dt, steps):
    """Review: 0.5 steps gave none, 2.5 gave 2, 4.5 gave 4 (round half to even)."""
    assert st.delay_steps(dead_time_s, dt) == steps


def test_b4_half_step_dead_time_delays_the_output_by_one_step():
    values = {'model': 'differential'}
    for leaf, value in (('dead_time', 0.0005), ('time_constant', 0.0), ('max_acceleration', 0.0)):
        values[f'model_params.differential.drive_actuators.{leaf}'] = value
    vehicle = Vehicle(vehicle_config_from_params(values), DT)
    vehicle.set_command(1.0, 0.0, 0.0)
    speeds = []
    for _ in range(6):
        vehicle.step(1)
        speeds.append(vehicle.state().vx_mps)
    assert speeds == [0.0, 1.0, 1.0, 1.0, 1.0, 1.0]
