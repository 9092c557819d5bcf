"""The three models against analytic kinematics (actuator dynamics switched off unless tested)."""

import math

import numpy as np
import pytest

from wheelsim.core.vehicle.kinematics import (
    ackermann_angle,
    differential_wheel_speeds,
    mecanum_twist,
    mecanum_wheel_speeds,
)
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.testing.vehicles import ideal_config as ideal

DT = 1e-3


def drive(config, command, steps, dt=DT):
    vehicle = Vehicle(config, dt)
    vehicle.set_command(*command)
    vehicle.step(steps)
    return vehicle


@pytest.mark.parametrize('reverse', [False, True])
@pytest.mark.parametrize('steered_drive', [False, True])
@pytest.mark.parametrize('wheel_base', [0.5, 2.7])
def test_bicycle_turning_radius_is_wheel_base_over_tan_delta(reverse, steered_drive, wheel_base):
    config = ideal('bicycle', wheel_base=wheel_base, reverse=reverse,
                   drive_on_steered_wheel=steered_drive,
                   **{'steering_actuator.max_position': 1.2})
    vehicle = drive(config, (1.5, 0.0, 0.4), 1)
    start = vehicle.state()
    vehicle.step(4000)
    state = vehicle.state()
    # The fixed axle (= base_link here) runs on a circle of radius L / tan(delta).
    delta = math.atan2(config.active.wheel_base * 0.4, 1.5)
    radius = wheel_base / math.tan(delta)
    assert state.vx_mps / state.wz_radps == pytest.approx(radius, rel=1e-12)
    chord = math.hypot(state.x_m - start.x_m, state.y_m - start.y_m)
    swept = state.wz_radps * 4000 * DT
    assert chord == pytest.approx(2 * radius * math.sin(swept / 2), rel=1e-9)


def test_bicycle_clamped_steering_gives_the_tightest_circle():
    config = ideal('bicycle', wheel_base=2.7, **{'steering_actuator.max_position': 0.61})
    state = drive(config, (2.0, 0.0, 5.0), 10).state()
    assert state.vx_mps / state.wz_radps == pytest.approx(2.7 / math.tan(0.61), rel=1e-12)


def test_ackermann_wheels_share_one_centre_of_rotation():
    wheel_base, half_track = 2.7, 0.75
    config = ideal('bicycle', wheel_base=wheel_base, vis_track_steered=2 * half_track,
                   **{'steering_actuator.max_position': 0.6})
    state = drive(config, (1.0, 0.0, 0.3), 5).state()
    left, right = state.steering_angles_rad
    radius = state.vx_mps / state.wz_radps  # centre at (0, radius) from the fixed axle
    assert math.tan(left) == pytest.approx(wheel_base / (radius - half_track), rel=1e-12)
    assert math.tan(right) == pytest.approx(wheel_base / (radius + half_track), rel=1e-12)
    assert left > right > 0


def test_ackermann_angle_of_the_centre_wheel_is_the_steering_angle():
    assert ackermann_angle(0.4, 0.0, 2.0) == pytest.approx(0.4)
    assert ackermann_angle(-0.4, 0.5, -2.0) == pytest.approx(-ackermann_angle(0.4, 0.5, 2.0))


def test_bicycle_drives_backwards_with_the_wheel_flipped_not_turned_around():
    config = ideal('bicycle', drive_on_steered_wheel=True,
                   **{'steering_actuator.max_position': 0.0})
    state = drive(config, (-1.0, 0.0, 0.2), 2000).state()
    assert state.vx_mps == pytest.approx(-1.0, rel=1e-12)
    assert state.wz_radps == pytest.approx(0.2, rel=1e-12)
    assert abs(state.steering_angles_rad[0]) < math.pi / 2


@pytest.mark.parametrize('model', ['differential', 'omni'])
def test_spin_in_place(model):
    state = drive(ideal(model), (0.0, 0.0, 1.0), 3000).state()
    assert (state.x_m, state.y_m) == (0.0, 0.0)
    assert state.yaw_rad == pytest.approx(3.0, rel=1e-12)


def test_forklift_geometry_spins_about_its_fixed_axle():
    config = ideal('bicycle', reverse=True, drive_on_steered_wheel=True, vis_track_steered=0.0,
                   **{'steering_actuator.max_position': 0.0})
    state = drive(config, (0.0, 0.0, 0.5), 2000).state()
    assert abs(state.x_m) < 1e-15 and abs(state.y_m) < 1e-15
    assert state.yaw_rad == pytest.approx(1.0, rel=1e-12)
    assert abs(state.steering_angles_rad[0]) == pytest.approx(math.pi / 2)


@pytest.mark.parametrize(('command', 'expected'), [
    ((0.0, 0.7, 0.0), (0.0, 1.4)),
    ((0.5, 0.5, 0.0), (1.0, 1.0)),
    ((-0.3, 0.6, 0.0), (-0.6, 1.2)),
])
def test_omni_moves_sideways_and_diagonally(command, expected):
    state = drive(ideal('omni'), command, 2000).state()
    np.testing.assert_allclose((state.x_m, state.y_m, state.yaw_rad), (*expected, 0.0),
                               atol=1e-12)


@pytest.mark.parametrize('twist', [(1.0, 0.0, 0.0), (0.3, -0.8, 1.2), (0.0, 0.0, -2.0)])
def test_mecanum_forward_kinematics_inverts_the_inverse(twist):
    lever = 1.3
    wheels = mecanum_wheel_speeds(*twist, lever, math.inf)
    np.testing.assert_allclose(mecanum_twist(*wheels, lever), twist, atol=1e-15)


def test_mecanum_saturation_scales_all_wheels_together():
    lever = 1.3
    wheels = mecanum_wheel_speeds(1.0, 2.0, 0.5, lever, 1.0)
    assert max(abs(w) for w in wheels) == pytest.approx(1.0)
    vx, vy, wz = mecanum_twist(*wheels, lever)
    assert (vy / vx, wz / vx) == pytest.approx((2.0, 0.5))


@pytest.mark.parametrize(('vx', 'wz', 'expected'), [
    (1.0, 2.0, (0.3, 2.0)),  # forward speed gives way, turn rate kept
    (-1.0, 2.0, (-0.3, 2.0)),
    (0.5, 0.4, (0.5, 0.4)),  # within limits: unchanged
    (1.0, 5.0, (0.0, 3.2)),  # turn rate alone too fast: spin at the limit
])
def test_differential_saturation_keeps_the_turn_rate(vx, wz, expected):
    half_track = 0.25
    left, right = differential_wheel_speeds(vx, wz, half_track, 0.8)
    assert max(abs(left), abs(right)) <= 0.8 + 1e-15
    assert ((left + right) / 2, (right - left) / (2 * half_track)) == pytest.approx(expected)


def test_differential_max_velocity_zero_means_unlimited():
    state = drive(ideal('differential'), (25.0, 0.0, 3.0), 10).state()
    assert (state.vx_mps, state.wz_radps) == pytest.approx((25.0, 3.0), rel=1e-15)


@pytest.mark.parametrize('slip', [0.1, 0.3, 0.5])
def test_slip_shortens_the_distance_by_the_slip_fraction(slip):
    config = ideal('differential', slip_left=slip, slip_right=slip, vis_tire_diameter=0.2)
    state = drive(config, (1.0, 0.0, 0.0), 1000).state()
    assert state.x_m == pytest.approx(1.0 * (1 - slip), rel=1e-12)
    # The wheels still turn at the commanded rim speed.
    np.testing.assert_allclose(state.joint_velocities_radps, [10.0, 10.0])


def test_unequal_slip_turns_towards_the_slipping_wheel():
    config = ideal('differential', track=0.5, slip_left=0.2, slip_right=0.0)
    state = drive(config, (1.0, 0.0, 0.0), 10).state()
    assert (state.vx_mps, state.wz_radps) == pytest.approx((0.9, 0.2 / 0.5))


@pytest.mark.parametrize('model', ['differential', 'omni', 'bicycle'])
def test_constant_twist_circle_closes_after_100_laps(model):
    """1000 steps per lap, 100 laps: back at the start to 1e-9 m."""
    bicycle = {'wheel_base': 0.2, 'steering_actuator.max_position': 1.0}
    config = ideal(model, **(bicycle if model == 'bicycle' else {}))
    vehicle = Vehicle(config, DT, (3.0, -2.0, 0.7))
    vehicle.set_command(1.0, 0.0, 2 * math.pi)
    vehicle.step(1)
    first = vehicle.state()
    vehicle.step(100 * 1000)
    last = vehicle.state()
    assert first.wz_radps == pytest.approx(2 * math.pi, rel=1e-12)
    assert math.hypot(last.x_m - first.x_m, last.y_m - first.y_m) < 1e-9
    assert abs(math.remainder(last.yaw_rad - first.yaw_rad, 2 * math.pi)) < 1e-9


@pytest.mark.parametrize('model', ['differential', 'omni', 'bicycle'])
def test_wheel_joints_roll_without_slipping(model):
    config = ideal(model, **({'steering_actuator.max_position': 1.0} if model == 'bicycle'
                             else {}))
    vehicle = drive(config, (0.8, 0.0, 0.0), 1000)
    radius = config.active.wheel_radius_m
    state = vehicle.state()
    wheels = [n for n in vehicle.joint_names if n.endswith('wheel_joint')]
    rates = state.joint_velocities_radps[:len(wheels)]
    np.testing.assert_allclose(rates, 0.8 / radius, rtol=1e-12)
    angles = state.joint_positions_rad[:len(wheels)]
    np.testing.assert_allclose(np.cos(angles), math.cos(0.8 / radius), atol=1e-9)
