"""wheelsim.core.vehicle.command_types: finite wheel-level commands give finite body twists.

Review F1: 1e308 rad/s on both wheels of a 2 m radius differential overflowed to infinite rim
speeds, inf - inf gave a NaN turn rate, and saturating NaN (max/min) spun the vehicle at the
angular limit instead of driving it straight."""

import itertools
import math

import numpy as np
import pytest

from wheelsim.core.vehicle.command_types import body_twist, wheel_joint_twist
from wheelsim.testing.vehicles import ideal_config

BIG = (0.0, 1.0, -1.0, 1e308, -1e308, 1.7976931348623157e308, 5e-324)
FLOAT_MAX = float(np.finfo(np.float64).max)


BIG_WHEELS = {'differential': {'vis_tire_diameter': 4.0}, 'omni': {'vis_wheel_diameter': 4.0}}


@pytest.mark.parametrize('model, wheels', [('differential', 2), ('omni', 4)])
def test_finite_joint_velocities_give_finite_twists(model, wheels):
    config = ideal_config(model, **BIG_WHEELS[model])
    for values in itertools.product(BIG, repeat=wheels):
        twist = wheel_joint_twist(config, np.array(values))
        assert np.all(np.isfinite(twist)), (values, twist)
        assert twist.shape == (3,)


@pytest.mark.parametrize('model, wheels', [('differential', 2), ('omni', 4)])
def test_equal_huge_joint_velocities_drive_straight(model, wheels):
    config = ideal_config(model, **BIG_WHEELS[model])
    vx, vy, wz = wheel_joint_twist(config, np.full(wheels, 1e308))
    assert (vx, vy, wz) == (FLOAT_MAX, 0.0, 0.0)  # beyond the float range: its largest value
    vx, vy, wz = wheel_joint_twist(config, np.full(wheels, -1e300))
    assert (vx, vy, wz) == (pytest.approx(-2e300), 0.0, 0.0)  # representable: exact


def test_huge_opposite_joint_velocities_turn_on_the_spot():
    config = ideal_config('differential', vis_tire_diameter=4.0)
    vx, vy, wz = wheel_joint_twist(config, np.array([-1e308, 1e308]))
    assert (vx, vy, wz) == (0.0, 0.0, FLOAT_MAX)


def test_ordinary_commands_give_the_plain_sums_bit_for_bit():
    config = ideal_config('differential')
    radius_m = config.active.wheel_radius_m
    joint = np.array([[0.3, 1.7], [-2.0, 5.0]])
    assert np.array_equal(wheel_joint_twist(config, joint[0]),
                          body_twist(config, 'wheel_speeds', joint[0] * radius_m))
    half_track = 0.5 * config.active.track
    rims = joint * radius_m
    expected = np.stack([0.5 * (rims[:, 0] + rims[:, 1]), np.zeros(2),
                         (rims[:, 1] - rims[:, 0]) / (2.0 * half_track)], axis=-1)
    assert np.array_equal(body_twist(config, 'wheel_speeds', rims), expected)


def test_rollout_commands_rim_speeds_and_speed_steering_stay_finite():
    """The Python API's rollouts map batches through body_twist too."""
    omni = ideal_config('omni')
    rims = np.array([[1e308, 1e308, 1e308, 1e308], [1e308, -1e308, 1e308, -1e308], [1.0] * 4])
    twists = body_twist(omni, 'wheel_speeds', rims)
    assert np.all(np.isfinite(twists))
    assert twists[0, 1:].tolist() == [0.0, 0.0]
    assert twists[2].tolist() == [1.0, 0.0, 0.0]
    bicycle = ideal_config('bicycle')
    steering_rad = math.nextafter(0.5 * math.pi, 0.0)
    commands = np.array([[1e308, steering_rad], [-1e308, 0.0], [1e308, 0.1], [0.0, 1.0]])
    twists = body_twist(bicycle, 'speed_steering', commands)
    assert np.all(np.isfinite(twists)), twists
    assert twists[1].tolist() == [-1e308, 0.0, 0.0]
    assert twists[3].tolist() == [0.0, 0.0, 0.0]
