"""Command imperfections (resolution, bias, noise, dead band) against analytic answers."""

import math

import numpy as np
import pytest

from wheelsim.core.compiled import plain_function
from wheelsim.core.vehicle import imperfections
from wheelsim.core.vehicle.actuators import round_half_up
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle, VehicleBatch
from wheelsim.core.vehicle.stepping import delay_steps
from wheelsim.testing.vehicles import ideal_config as ideal

DT = 1e-3


def speed_after(config, command, steps=10, seed=0):
    vehicle = Vehicle(config, DT, seed=seed)
    vehicle.set_command(*command)
    vehicle.step(steps)
    return vehicle.state()


@pytest.mark.parametrize('model', ['bicycle', 'differential', 'omni'])
def test_drive_bias_adds_to_every_speed_reference(model):
    drive = 'drive_actuator' if model == 'bicycle' else 'drive_actuators'
    config = ideal(model, **{f'{drive}__bias': 0.1})
    assert speed_after(config, (1.0, 0.0, 0.0)).vx_mps == pytest.approx(1.1, rel=1e-12)
    # With no command the vehicle creeps at the bias, as a robot whose zero is off does.
    assert speed_after(config, (0.0, 0.0, 0.0)).vx_mps == pytest.approx(0.1, rel=1e-12)


def test_differential_bias_acts_on_each_wheel():
    config = ideal('differential', track=1.0, drive_actuators__bias=-0.05)
    state = speed_after(config, (0.5, 0.0, 0.4))  # wheels 0.3 and 0.7 -> 0.25 and 0.65
    assert state.vx_mps == pytest.approx(0.45, rel=1e-12)
    assert state.wz_radps == pytest.approx(0.4, rel=1e-12)


def test_steering_bias_makes_a_straight_command_turn_on_the_circle_it_implies():
    bias = 0.05
    config = ideal('bicycle', wheel_base=2.0, steering_actuator__bias=bias)
    state = speed_after(config, (1.0, 0.0, 0.0), steps=100)
    assert state.steering_angles_rad[0] == pytest.approx(
        math.atan2(math.sin(bias), math.cos(bias) - 0.7 * math.sin(bias) / 2.0))  # Ackermann
    assert state.vx_mps / state.wz_radps == pytest.approx(2.0 / math.tan(bias), rel=1e-12)


@pytest.mark.parametrize(('command', 'expected'), [
    (0.05, 0.0), (-0.1, 0.0), (0.1001, 0.1001), (-0.3, -0.3), (0.0, 0.0),
])
def test_drive_dead_band_stops_small_commands_and_passes_larger_ones(command, expected):
    config = ideal('differential', drive_actuators__dead_band=0.1)
    assert speed_after(config, (command, 0.0, 0.0)).vx_mps == pytest.approx(expected, abs=1e-15)


def test_dead_band_acts_after_the_bias():
    config = ideal('differential', drive_actuators__dead_band=0.15, drive_actuators__bias=0.1)
    assert speed_after(config, (0.0, 0.0, 0.0)).vx_mps == 0.0  # 0.1 is inside the band
    assert speed_after(config, (0.04, 0.0, 0.0)).vx_mps == 0.0  # 0.14 too
    assert speed_after(config, (0.1, 0.0, 0.0)).vx_mps == pytest.approx(0.2, rel=1e-12)


def test_steering_dead_band_keeps_the_wheels_straight_for_small_angles():
    config = ideal('bicycle', wheel_base=2.0, steering_actuator__dead_band=0.1)
    small = speed_after(config, (1.0, 0.0, 0.04), steps=50)  # asks atan(0.08) = 0.0798 rad
    assert small.wz_radps == 0.0 and small.steering_angles_rad == (0.0, 0.0)
    large = speed_after(config, (1.0, 0.0, 0.1), steps=50)  # asks atan(0.2) = 0.197 rad
    assert large.wz_radps == pytest.approx(0.1, rel=1e-12)


@pytest.mark.parametrize(('command', 'expected'), [
    (0.26, 0.3), (0.24, 0.2), (0.25, 0.3), (-0.25, -0.3), (-0.04, 0.0), (1.0, 1.0),
    # halves whose binary quotient falls just below: 0.35 / 0.1 = 3.4999999999999996
    # (review F4: 0.35 -> 0.3 and 0.15 -> 0.1 before the ratio was rounded to 9 decimals)
    (0.35, 0.4), (0.15, 0.2), (-0.35, -0.4), (0.45, 0.5), (1.45, 1.5),
])
def test_resolution_rounds_to_the_nearest_multiple_halves_away_from_zero(command, expected):
    config = ideal('differential', drive_actuators__resolution=0.1)
    assert speed_after(config, (command, 0.0, 0.0)).vx_mps == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize('function', [imperfections.imperfect_reference,
                                      plain_function(imperfections.imperfect_reference)])
def test_resolution_rounds_the_ratio_as_a_dead_time_and_keeps_huge_ones(function):
    """Compiled and plain alike, as delay_steps rounds dead_time / dt; a ratio beyond the
    int64 range stays itself (math.floor, compiled, gave an int64 that wrapped)."""
    assert function(0.35, 0.1, 0.0, 0.0, 0.0, 0.0) == 0.4
    assert function(-0.0045, 0.001, 0.0, 0.0, 0.0, 0.0) == -0.005
    assert delay_steps(0.0045, 0.001) == 5 == round_half_up(0.0045 / 0.001)
    assert function(1e6, 1e-300, 0.0, 0.0, 0.0, 0.0) == pytest.approx(1e6, rel=1e-15)
    assert function(-1e6, 3e-15, 0.0, 0.0, 0.0, 0.0) == pytest.approx(-1e6, rel=1e-15)
    # found in review: a ratio that overflows (2 m/s at 1e-308) gave an infinite command
    assert function(2.0, 1e-308, 0.0, 0.0, 0.0, 0.0) == 2.0
    assert function(-2.0, 5e-324, 0.0, 0.0, 0.0, 0.0) == -2.0


def test_noise_without_lag_has_the_configured_standard_deviation_and_no_mean():
    sigma = 0.05
    config = ideal('differential', drive_actuators__noise_stddev=sigma)
    vehicle = Vehicle(config, DT, seed=7)
    vehicle.set_command(1.0, 0.0, 0.0)
    speeds = []
    for _ in range(40000):
        vehicle.step(1)
        speeds.append(vehicle.state().vx_mps)
    speeds = np.array(speeds)
    # vx is the mean of two independent wheels: standard deviation sigma / sqrt(2).
    assert np.mean(speeds) == pytest.approx(1.0, abs=4 * sigma / math.sqrt(2 * 40000))
    assert np.std(speeds) == pytest.approx(sigma / math.sqrt(2), rel=0.02)
    lag1 = np.corrcoef(speeds[:-1], speeds[1:])[0, 1]
    assert abs(lag1) < 0.02  # white


def test_noise_through_a_low_pass_shrinks_as_the_discrete_filter_predicts():
    sigma, tau = 0.2, 0.05
    config = ideal('differential', drive_actuators__noise_stddev=sigma,
                   drive_actuators__time_constant=tau)
    vehicle = Vehicle(config, DT, seed=3)
    vehicle.set_command(0.5, 0.0, 0.0)
    vehicle.step(500)
    speeds = []
    for _ in range(60000):
        vehicle.step(1)
        speeds.append(vehicle.state().vx_mps)
    alpha = math.exp(-DT / tau)
    wheel_std = sigma * math.sqrt((1 - alpha) / (1 + alpha))  # AR(1) of white input
    assert np.std(speeds) == pytest.approx(wheel_std / math.sqrt(2), rel=0.1)


def noisy_bicycle():
    return vehicle_config_from_params({
        'model': 'bicycle',
        'model_params.bicycle.drive_actuator.noise_stddev': 0.1,
        'model_params.bicycle.steering_actuator.noise_stddev': 0.02,
        'model_params.bicycle.drive_actuator.bias': 0.03,
    })


def test_noise_is_repeatable_from_the_seed_whatever_the_batching():
    config = noisy_bicycle()
    one = Vehicle(config, DT, seed=11)
    one.set_command(1.0, 0.0, 0.3)
    one.step(2000)
    chunks = Vehicle(config, DT, seed=11)
    chunks.set_command(1.0, 0.0, 0.3)
    for _ in range(100):
        chunks.step(20)
    assert one.state() == chunks.state()
    batch = VehicleBatch([config] * 3, DT, seeds=[5, 11, 12])
    batch.set_commands([(1.0, 0.0, 0.3)] * 3)
    batch.step(2000)
    np.testing.assert_array_equal(batch.state_row(1), one._batch.state_row(0))
    assert not np.array_equal(batch.state_row(0), batch.state_row(1))
    other = Vehicle(config, DT, seed=12)
    other.set_command(1.0, 0.0, 0.3)
    other.step(2000)
    assert other.state() != one.state()


def test_reset_replays_the_same_noise():
    vehicle = Vehicle(noisy_bicycle(), DT, seed=4)
    vehicle.set_command(1.0, 0.0, 0.2)
    vehicle.step(700)
    first = vehicle.state()
    vehicle.reset()
    vehicle.set_command(1.0, 0.0, 0.2)
    vehicle.step(700)
    assert vehicle.state() == first


def test_hash_and_normal_draws_are_the_same_compiled_and_in_plain_python():
    mix, normal = imperfections.mix32, imperfections.standard_normal
    values = [0, 1, 2**32 - 1, 2**32, 123456789, 2**62 + 12345]
    assert [mix(v) for v in values] == [mix.py_func(v) for v in values]
    draws = [(s & 0xFFFFFFFF, s >> 32, k, a) for s in (0, 2**40 + 3) for k in (0, 5, 2**33)
             for a in range(5)]
    assert [normal(*d) for d in draws] == [normal.py_func(*d) for d in draws]


def test_seeds_are_checked():
    config = noisy_bicycle()
    for bad in (-1, 2**63, 1.5, True):
        with pytest.raises(ValueError, match='seed'):
            Vehicle(config, DT, seed=bad)
    with pytest.raises(ValueError, match='expected 2 seeds'):
        VehicleBatch([config] * 2, DT, seeds=[1])


@pytest.mark.parametrize('leaf', ['bias', 'dead_band', 'resolution', 'noise_stddev'])
def test_imperfection_parameters_are_validated(leaf):
    key = f'model_params.omni.drive_actuators.{leaf}'
    bad = -1.0 if leaf != 'bias' else 1000.0
    with pytest.raises(ValueError, match=key.replace('.', r'\.')):
        vehicle_config_from_params({'model': 'omni', key: bad})
