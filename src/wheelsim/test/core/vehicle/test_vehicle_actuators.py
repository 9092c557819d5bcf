"""Actuators: exact dead time, exact low pass, limits that hold for any command sequence."""

import math

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wheelsim.core.vehicle.actuators import delay, limit_speed_change, saturate, steering_step
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle

INF = math.inf
TOL = 1e-9


def run_drive(commands, dt, alpha, acc, dec, jerk, v_max=INF):
    """Speeds (len(commands) + 1, starting at rest) of the drive chain after the dead time."""
    v, a = 0.0, 0.0
    speeds = [v]
    for u in commands:
        v, a = limit_speed_change(v, a, saturate(u, v_max), alpha, dt, acc, dec, jerk, jerk)
        speeds.append(v)
    return np.array(speeds)


def check_limits(speeds, dt, acc, dec, jerk):
    """Assert every step's acceleration and jerk are within the limits (rest before start)."""
    accelerations = np.diff(speeds) / dt
    before = speeds[:-1]
    braking = (before * accelerations) < 0.0
    crossing = (before * speeds[1:] < 0.0) & (np.abs(speeds[1:]) > 1e-12)  # not rounding
    bound = np.where(braking, dec, acc)
    bound = np.where(crossing, min(acc, dec), bound)
    assert np.all(np.abs(accelerations) <= bound * (1 + TOL) + TOL)
    jerks = np.diff(np.concatenate([[0.0], accelerations])) / dt
    assert np.all(np.abs(jerks) <= jerk * (1 + TOL) + 1e-12 / dt**2)


@pytest.mark.parametrize('delay_steps', [0, 1, 7, 200])
def test_dead_time_delays_by_exactly_the_configured_steps(delay_steps):
    history = np.zeros(delay_steps + 1)
    outputs = [delay(history, k % (delay_steps + 1), delay_steps, float(k + 1)) for k in range(300)]
    expected = [0.0 if k < delay_steps else float(k - delay_steps + 1) for k in range(300)]
    assert outputs == expected


@pytest.mark.parametrize(('dead_time', 'dt'), [(0.0, 1e-3), (0.001, 1e-3), (0.2, 1e-3),
                                               (0.05, 0.01), (0.1, 1 / 300)])
def test_vehicle_dead_time_is_exact_at_step_resolution(dead_time, dt):
    """A command set at t = 0 moves the vehicle from t = dead_time on, not one step later."""
    config = vehicle_config_from_params({
        'model': 'differential',
        'model_params.differential.drive_actuators.dead_time': dead_time,
        'model_params.differential.drive_actuators.time_constant': 0.0,
        'model_params.differential.drive_actuators.max_acceleration': 0.0,
    })
    vehicle = Vehicle(config, dt)
    vehicle.set_command(1.0, 0.0, 0.0)
    steps = round(dead_time / dt)
    vehicle.step(steps)
    assert vehicle.state().vx_mps == 0.0 and vehicle.state().x_m == 0.0
    vehicle.step(1)
    assert vehicle.state().vx_mps == 1.0
    vehicle.step(99)
    assert vehicle.state().x_m == pytest.approx(100 * dt, rel=1e-12)


@pytest.mark.parametrize('tau', [0.05, 0.4, 2.0])
@pytest.mark.parametrize('dt', [1e-3, 0.01])
def test_low_pass_reaches_63_2_percent_at_one_time_constant(tau, dt):
    steps = round(tau / dt)
    speeds = run_drive([2.0] * steps, dt, math.exp(-dt / tau), INF, INF, INF)
    assert speeds[-1] == pytest.approx(2.0 * (1 - math.exp(-steps * dt / tau)), rel=1e-12)
    assert speeds[-1] / 2.0 == pytest.approx(0.632, abs=5e-4 if steps * dt == tau else 1e-2)


def test_no_limits_and_no_lag_pass_the_command_through():
    commands = [1.0, -3.0, 0.5, 0.5, 7.0]
    np.testing.assert_array_equal(run_drive(commands, 1e-3, 0.0, INF, INF, INF)[1:], commands)


def test_saturation_and_acceleration_limit_give_a_ramp():
    speeds = run_drive([5.0] * 2000, 1e-3, 0.0, 2.0, INF, INF, v_max=1.5)
    np.testing.assert_allclose(speeds[:751], np.arange(751) * 2e-3, atol=1e-12)
    assert np.all(speeds[751:] == 1.5)


def test_braking_uses_max_deceleration():
    up = run_drive([1.0] * 500, 1e-3, 0.0, 2.0, 4.0, INF)
    v, a = up[-1], 0.0
    down = []
    for _ in range(300):
        v, a = limit_speed_change(v, a, 0.0, 0.0, 1e-3, 2.0, 4.0, INF, INF)
        down.append(v)
    np.testing.assert_allclose(down[:250], 1.0 - 4e-3 * np.arange(1, 251), atol=1e-12)
    assert down[250:] == [0.0] * 50


def test_jerk_limited_step_is_an_s_curve_that_lands_without_overshoot():
    dt, acc, jerk = 1e-3, 2.0, 10.0
    speeds = run_drive([1.0] * 2000, dt, 0.0, acc, INF, jerk)
    check_limits(speeds, dt, acc, acc, jerk)
    accelerations = np.diff(speeds) / dt
    assert np.all(np.diff(speeds) >= -1e-12)
    assert speeds.max() <= 1.0 + 1e-12
    assert speeds[-1] == 1.0
    # Ramp up at full jerk, hold the acceleration limit, ramp down: t = v/a + a/j = 0.7 s.
    assert accelerations[100] == pytest.approx(jerk * 0.101, rel=1e-9)
    assert accelerations[400] == pytest.approx(acc)
    assert np.argmax(speeds >= 1.0) == pytest.approx(700, abs=2)


def test_reversal_with_stronger_braking_stops_at_zero_first():
    dt = 1e-3
    speeds = run_drive([1.0] * 1500 + [-1.0] * 3000, dt, 0.0, 1.0, 5.0, 20.0)
    check_limits(speeds, dt, 1.0, 5.0, 20.0)
    passes_zero = (speeds[:-1] * speeds[1:] < 0.0) & (np.abs(speeds[1:]) > 1e-12)
    assert not np.any(passes_zero)
    assert speeds[-1] == -1.0


command_sequences = st.lists(
    st.tuples(st.floats(-3.0, 3.0), st.integers(1, 400)), min_size=1, max_size=6
)
limits = st.one_of(st.just(INF), st.floats(0.5, 8.0))


@settings(max_examples=150, deadline=None)
@example(sequence=[(1.0, 9), (-1.0, 19), (0.0, 1)], acc=INF, dec=INF, jerk=2.0, tau=0.0,
         dt=0.001)  # accelerating towards the command, too fast to stop at it: 3.8e-5 m/s past
@given(
    command_sequences,
    limits,
    limits,
    st.one_of(st.just(INF), st.floats(2.0, 200.0)),
    st.one_of(st.just(0.0), st.floats(0.01, 0.2)),
    st.sampled_from([1e-3, 0.01]),
)
def test_limits_hold_for_any_command_sequence_and_the_last_command_is_met(
    sequence, acc, dec, jerk, tau, dt
):
    commands = [value for value, hold in sequence for _ in range(hold)]
    limit = min(acc, dec, 100.0)
    settle_s = 6.0 / limit + limit / jerk + 2 * math.sqrt(6.0 / jerk) + 25 * tau + 1.0
    settle = math.ceil(settle_s / dt)
    speeds = run_drive(commands + [commands[-1]] * settle, dt, math.exp(-dt / tau) if tau else
                       0.0, acc, dec, jerk)
    check_limits(speeds, dt, acc, dec, jerk)
    final = commands[-1]
    assert speeds[-1] == pytest.approx(final, abs=1e-9)
    # Once the command is held, the speed passes it only as far as the jerk limit forces:
    # an acceleration a towards the command needs a^2 / 2j of speed change to fade out, so it
    # passes a command |e| away by a^2 / 2j - |e| (plus one step of a); an acceleration away
    # from the command never has to pass it.
    start = len(commands)
    a_then = (speeds[start] - speeds[start - 1]) / dt
    error = final - speeds[start]
    side = np.sign(error)
    unavoidable = (max(0.0, a_then**2 / (2 * jerk) - abs(error)) + abs(a_then) * dt
                   if a_then * side > 0 else 0.0)
    overshoot = np.max(side * (speeds[start:] - final)) if side else 0.0
    assert overshoot <= unavoidable + 1e-9


@settings(max_examples=60, deadline=None)
@given(st.floats(-3.0, 3.0), st.floats(0.5, 8.0), st.floats(0.5, 8.0), st.floats(2.0, 200.0))
def test_from_rest_the_speed_never_passes_the_command(command, acc, dec, jerk):
    speeds = run_drive([command] * 5000, 0.01, 0.0, acc, dec, jerk)
    assert np.all(np.abs(speeds) <= abs(command) + 1e-12)
    assert np.all(np.sign(command) * np.diff(speeds) >= -1e-12)


@pytest.mark.parametrize(('angle', 'reference', 'max_position', 'expected'), [
    (0.0, 0.3, INF, 0.3),
    (0.0, 0.3, 0.2, 0.2),
    (0.0, -0.9, 0.5, -0.5),
    (3.0, -3.0, INF, 3.0 + (2 * math.pi - 6.0)),  # the short way, across +-pi
    (-2.0, 2.0, 2.5, 2.0),  # limited: never through +-pi, even if shorter
])
def test_steering_position_limit_and_wrapping(angle, reference, max_position, expected):
    assert steering_step(angle, reference, 0.0, 1e-3, max_position, INF) == pytest.approx(
        math.remainder(expected, 2 * math.pi))


def test_steering_rate_limit_and_low_pass():
    assert steering_step(0.0, 1.0, 0.0, 1e-3, INF, 2.0) == pytest.approx(2e-3)
    alpha = math.exp(-1e-3 / 0.05)
    angle = 0.0
    for _ in range(50):
        angle = steering_step(angle, 0.4, alpha, 1e-3, INF, INF)
    assert angle == pytest.approx(0.4 * (1 - math.exp(-1.0)), rel=1e-12)
