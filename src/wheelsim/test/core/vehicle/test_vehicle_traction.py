"""Traction: the friction circle against analytic answers (braking distance, cornering radius,
the acceleration left over by a turn), and wheels that spin and lock in joint_states."""

import math

import numpy as np
import pytest

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle.traction import GRAVITY_MPS2, friction_limited_twist
from wheelsim.testing.vehicles import drive_group, ideal_config

DT = 1e-3
MODELS = ['bicycle', 'differential', 'omni']


def grippy(model, mu, **leaves):
    """Actuators with no dead time, lag or limits (the rims do what they are told at once);
    ``bicycle_dynamic``: the bicycle with its single-track model."""
    extra = {}
    if model.startswith('bicycle'):
        extra['steering_actuator.max_position'] = 1.2
    if model == 'bicycle_dynamic':
        model, extra['dynamics.enabled'] = 'bicycle', True
    return ideal_config(model, friction_coefficient=mu, **extra, **leaves)


def run(vehicle, steps):
    states = []
    for _ in range(steps):
        vehicle.step(1)
        states.append(vehicle.state())
    return states


def driven_wheels(model, vehicle):
    """Indices (in joint order) of the wheels the drive turns."""
    names = vehicle.joint_names
    if model.startswith('bicycle'):
        return [i for i, n in enumerate(names) if n.startswith('fixed_')]
    return [i for i, n in enumerate(names) if 'steering' not in n]


@pytest.mark.parametrize('model', [*MODELS, 'bicycle_dynamic'])
@pytest.mark.parametrize('mu', [0.3, 0.8])
def test_friction_limited_braking_distance_is_v_squared_over_two_mu_g(model, mu):
    v0 = 2.0
    vehicle = Vehicle(grippy(model, mu), DT)
    vehicle.set_command(v0, 0.0, 0.0)
    run(vehicle, 3000)
    assert vehicle.state().vx_mps == pytest.approx(v0, abs=1e-12)
    start = vehicle.state()
    vehicle.set_command(0.0, 0.0, 0.0)  # the rims stop at once: the wheels lock
    states = run(vehicle, 3000)
    stopped = next(k for k, s in enumerate(states) if s.vx_mps == 0.0)
    distance = states[-1].x_m - start.x_m
    expected = v0 ** 2 / (2 * mu * GRAVITY_MPS2)
    assert distance == pytest.approx(expected, abs=v0 * DT)  # end-of-step speeds: -v dt / 2
    assert (stopped + 1) * DT == pytest.approx(v0 / (mu * GRAVITY_MPS2), abs=DT)
    decelerations = -np.diff([s.vx_mps for s in states[:stopped]]) / DT
    np.testing.assert_allclose(decelerations, mu * GRAVITY_MPS2, rtol=1e-9)
    # joint_states show locked driven wheels while the vehicle still slides.
    sliding = states[stopped // 2]
    assert sliding.vx_mps > 0.5
    for i in driven_wheels(model, vehicle):
        assert sliding.joint_velocities_radps[i] == 0.0
    if model.startswith('bicycle'):  # the undriven steered wheels roll with the ground
        radius = vehicle.config.active.wheel_radius_m
        rolling = [sliding.joint_velocities_radps[i] * radius for i, n in
                   enumerate(vehicle.joint_names) if n.startswith('steered_')]
        np.testing.assert_allclose(rolling, sliding.vx_mps, rtol=1e-12)


@pytest.mark.parametrize('model', [*MODELS, 'bicycle_dynamic'])
def test_a_drive_asked_for_more_than_mu_g_spins_its_wheels(model):
    mu = 0.25
    vehicle = Vehicle(grippy(model, mu), DT)
    vehicle.set_command(1.5, 0.0, 0.0)
    states = run(vehicle, 1000)
    speeds = np.array([s.vx_mps for s in states])
    reached = int(np.argmax(speeds >= 1.5))
    assert (reached + 1) * DT == pytest.approx(1.5 / (mu * GRAVITY_MPS2), abs=DT)
    np.testing.assert_allclose(np.diff(speeds[:reached]) / DT, mu * GRAVITY_MPS2, rtol=1e-9)
    radius = vehicle.config.active.wheel_radius_m
    spinning = states[reached // 2]
    for i in driven_wheels(model, vehicle):
        rim = spinning.joint_velocities_radps[i] * radius
        assert rim == pytest.approx(1.5, rel=1e-12)  # the rim runs at the command
    assert spinning.vx_mps < 1.0  # the ground lags


@pytest.mark.parametrize(('model', 'mu', 'speed', 'wz'), [
    ('differential', 0.1, 1.0, 2.0), ('bicycle', 0.2, 2.0, 1.0), ('omni', 0.1, 1.0, 2.0),
])
def test_cornering_beyond_the_friction_limit_slides_onto_radius_v_squared_over_mu_g(
    model, mu, speed, wz
):
    vehicle = Vehicle(grippy(model, mu), DT)
    vehicle.set_command(speed, 0.0, 0.0)
    run(vehicle, 3000)
    vehicle.set_command(speed, 0.0, wz)  # asks for wz * speed > mu g
    run(vehicle, 2000)
    state = vehicle.state()
    assert state.vx_mps == pytest.approx(speed, rel=1e-12)  # no friction left to change speed
    assert state.wz_radps == pytest.approx(mu * GRAVITY_MPS2 / speed, rel=1e-12)
    assert state.vx_mps / state.wz_radps == pytest.approx(speed ** 2 / (mu * GRAVITY_MPS2))


@pytest.mark.parametrize('model', MODELS)
def test_within_the_friction_circle_the_vehicle_moves_as_without_it(model):
    drive = drive_group(model)
    commands = [(0.8, 0.2, 0.3), (0.5, -0.1, -0.4), (-0.3, 0.0, 0.2)]

    def trajectory(mu):
        config = vehicle_config_from_params({
            'model': model, f'model_params.{model}.friction_coefficient': mu,
            f'model_params.{model}.{drive}.max_acceleration': 1.0})
        vehicle = Vehicle(config, DT)
        out = []
        for command in commands:
            vehicle.set_command(*command)
            out.extend(run(vehicle, 1500))
        return out

    assert trajectory(1.0) == trajectory(0.0)


def test_the_turn_comes_first_and_the_rest_of_the_circle_is_left_for_speed():
    limit = 2.0
    # Turning 1 m/s at 1.6 rad/s uses 1.6 m/s^2; 1.2 m/s^2 is left to speed up (3-4-5).
    vx, vy, wz = friction_limited_twist(1.0, 0.0, 2.0, 0.0, 1.6, DT, limit)
    assert (vx - 1.0) / DT == pytest.approx(1.2, rel=1e-9)
    assert (vy, wz) == (0.0, 1.6)
    # Braking the same way.
    vx, _, _ = friction_limited_twist(1.0, 0.0, 0.0, 0.0, 1.6, DT, limit)
    assert (1.0 - vx) / DT == pytest.approx(1.2, rel=1e-9)
    # A turn needing more than the limit: turn at what the friction allows, keep the speed.
    vx, vy, wz = friction_limited_twist(1.0, 0.0, 2.0, 0.0, 3.0, DT, limit)
    assert (vx, vy, wz) == (1.0, 0.0, pytest.approx(2.0))
    # Sideways (omni): the acceleration of R in body axes includes wz x v.
    vx, vy, wz = friction_limited_twist(0.0, 1.0, 0.0, 1.0, 1.0, DT, limit)
    assert (vx, vy, wz) == (0.0, 1.0, 1.0)  # 1 m/s^2 centripetal: inside the circle
    # At rest, rotation about R needs no friction here.
    assert friction_limited_twist(0.0, 0.0, 0.0, 0.0, 5.0, DT, 0.1) == (0.0, 0.0, 5.0)


def test_friction_circle_holds_for_random_requests():
    rng = np.random.default_rng(5)
    for _ in range(2000):
        vx0, vy0, vx, vy, wz = rng.uniform(-3, 3, 5)
        limit = rng.uniform(0.1, 10.0)
        dt = rng.choice([1e-3, 1e-2])
        nx, ny, nwz = friction_limited_twist(vx0, vy0, vx, vy, wz, dt, limit)
        acceleration = math.hypot((nx - vx0) / dt - nwz * vy0, (ny - vy0) / dt + nwz * vx0)
        assert acceleration <= limit * (1 + 1e-9)
        assert all(math.isfinite(value) for value in (nx, ny, nwz))
