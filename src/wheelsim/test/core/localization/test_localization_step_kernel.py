"""The compiled per-sample step against its own plain-Python version, bit for bit.

``localization_step.py_func`` is the kernel's Python source run by CPython, calling the same
functions as plain Python: random sample sequences with every event (start, teleports, time
jumps, repeated stamps, resets, live parameter changes, refused input, wheel encoders) must give
the same bytes in every output, in every mode. The pieces where compiled code most easily
departs from CPython are tested on their own: ``x ** 2`` (libm pow, not ``x * x``), complex
arithmetic and ``abs`` of complex numbers in the drift moments.
"""

import math
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelsim.core.compiled import compiled
from wheelsim.core.localization import odometry_drift, step_kernel
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.model import Localization
from wheelsim.core.params import from_flat

WHEELS = ['left_wheel_joint', 'right_wheel_joint']
small = st.floats(-3.0, 3.0)
steps = st.one_of(
    st.tuples(st.just('move'), st.sampled_from([20_000_000, 10_000_000, 33_333_333, 0,
                                                1_000_000_000]), st.tuples(small, small, small)),
    st.tuples(st.just('teleport'), st.tuples(st.floats(-50, 50), st.floats(-50, 50), small)),
    st.tuples(st.just('back'), st.integers(1, 3_000_000_000)),
    st.tuples(st.just('reset'), st.tuples(small, small, small), st.floats(0.0, 1.0)),
    st.tuples(st.just('params'), st.floats(0.0, 0.01), st.floats(0.0, 1e-4),
              st.sampled_from([0.0, 0.1, 1.0]), st.floats(0.0, 0.01)),
    st.tuples(st.just('refused'), st.sampled_from([
        ((math.nan, 0.0, 0.0), (0.0, 0.0, 0.0)), ((0.0, 0.0, 0.0), (0.0, math.inf, 0.0)),
        ((2e9, 0.0, 0.0), (0.0, 0.0, 0.0))])),
)


def _config(mode, seed, encoders, rate=0.0025, density=2.5e-5, tau=0.0, twist=0.0):
    return from_flat(LocalizationConfig, {
        'mode': mode, 'seed': seed,
        'odometry_source': 'joint_states' if encoders else 'ground_truth',
        'encoders.model': 'differential',  # the reference vehicle's geometry (the defaults)
        'localization.odom_walk_velocity_translation': rate,
        'localization.odom_walk_turn_rotation': rate,
        'localization.map_sample_noise_translation': density,
        'localization.map_noise_correlation_time': tau,
        'localization.odom_twist_noise_linear': twist,
    })


def _outputs(mode, seed, encoders, script):
    """Every output of a model fed ``script``, as bytes (errors as their messages)."""
    localization = Localization(_config(mode, seed, encoders))
    stamp, pose, twist, wheels = 1_000_000_000, (0.0, 0.0, 0.0), (0.5, 0.0, 0.2), [0.0, 0.0]
    outputs = []
    for kind, *args in script:
        inputs = None
        if kind == 'move':
            dt_ns, twist = args
            dt_s, (x, y, yaw) = dt_ns * 1e-9, pose
            pose = (x + dt_s * (math.cos(yaw) * twist[0] - math.sin(yaw) * twist[1]),
                    y + dt_s * (math.sin(yaw) * twist[0] + math.cos(yaw) * twist[1]),
                    yaw + dt_s * twist[2])
            stamp += dt_ns
            wheels = [wheels[0] + dt_s * (twist[0] - twist[2]), wheels[1] + dt_s * twist[0]]
        elif kind == 'teleport':
            (pose,) = args
        elif kind == 'back':
            stamp -= args[0]
        elif kind == 'reset':
            reset_pose, variance = args
            localization.request_reset(reset_pose, np.diag([variance, variance, 0.5 * variance]))
        elif kind == 'params':
            rate, density, tau, twist_noise = args
            localization.update_config(_config(mode, seed, encoders, rate, density, tau,
                                               twist_noise))
        else:
            inputs = args[0]
        if encoders:
            localization.encoders.update(stamp, WHEELS, [math.remainder(w, 2 * math.pi)
                                                         for w in wheels])
        try:
            out = localization.step(stamp, *(inputs or (pose, twist)))
        except ValueError as err:
            outputs.append(str(err))
            continue
        outputs.append((out.stamp_ns, out.event, out.pose_fix, out.twist_variances) + tuple(
            np.asarray(value, dtype=float).tobytes() for value in (
                out.odom_T_base, out.odom_covariance, out.twist, out.map_T_base,
                out.map_covariance, out.map_T_odom)))
    return outputs


def _random_script(rng, length):
    """A script of ``length`` steps with random numbers: mostly motion, every event now and
    then (hypothesis prefers simple numbers, for which more operations happen to agree)."""
    script = []
    for _ in range(length):
        kind = rng.choice(['move'] * 90 + ['teleport', 'back', 'reset', 'params', 'refused'])
        if kind == 'move':
            script.append(('move', int(rng.choice([20_000_000, 33_333_333, 0])),
                           tuple(rng.normal(0.0, 1.0, 3).tolist())))
        elif kind == 'teleport':
            script.append(('teleport', tuple(rng.normal(0.0, 20.0, 3).tolist())))
        elif kind == 'back':
            script.append(('back', int(rng.integers(1, 10**9))))
        elif kind == 'reset':
            script.append(('reset', tuple(rng.normal(0.0, 3.0, 3).tolist()), rng.random()))
        elif kind == 'params':
            script.append(('params', 0.01 * rng.random(), 1e-4 * rng.random(),
                           float(rng.choice([0.0, 0.5])), 0.01 * rng.random()))
        else:
            script.append(('refused', ((math.nan, 1.0, 2.0), (0.0, 0.0, 0.0))))
    return script


def _assert_compiled_is_plain(mode, seed, encoders, script):
    compiled_outputs = _outputs(mode, seed, encoders, script)
    plain = step_kernel.localization_step.py_func
    with mock.patch.object(step_kernel, 'localization_step', plain):
        plain_outputs = _outputs(mode, seed, encoders, script)
    assert compiled_outputs == plain_outputs


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(['perfect', 'noisy', 'ekf']), seed=st.integers(0, 2**32),
       encoders=st.booleans(), script=st.lists(steps, min_size=1, max_size=300))
def test_compiled_step_is_the_plain_python_step_for_any_events(mode, seed, encoders, script):
    _assert_compiled_is_plain(mode, seed, encoders and mode != 'perfect', script)


@pytest.mark.parametrize(('mode', 'encoders'), [
    ('perfect', False), ('noisy', False), ('ekf', False), ('noisy', True), ('ekf', True)])
def test_compiled_step_is_the_plain_python_step_over_long_random_runs(mode, encoders):
    _assert_compiled_is_plain(mode, 7, encoders, _random_script(np.random.default_rng(3), 1500))


#: Values whose libm pow(x, 2.0) (CPython's x ** 2) and x * x differ in the last bit.
POW_DIFFERS = (2.9149119078430483, 0.12547564467338135, 2.5621150314408547, 1.1875474368906027)


def test_squares_are_cpythons_also_compiled():
    square = compiled(odometry_drift.square_as_python)
    for value in POW_DIFFERS:
        assert value * value != value ** 2  # what a compiler would make of value ** 2
        assert square(value) == value ** 2 == odometry_drift.square_as_python(value)


_advance_moments = compiled(odometry_drift.advance_error_moments)


def test_error_moments_compiled_are_the_plain_python_ones():
    """Complex products, conjugates and abs (libm hypot) give CPython's bits compiled, for
    random moments and increments (about one square in 1200 tells pow from a product)."""
    rng = np.random.default_rng(5)
    for _ in range(20_000):
        state = np.zeros(odometry_drift.STATE_SIZE)
        yaw = rng.uniform(-math.pi, math.pi)
        state[odometry_drift.MEAN:] = rng.normal(0.0, 1.0, 12)
        state[odometry_drift.HEADING_VARIANCE] = rng.exponential()
        dx, dy = rng.normal(0.0, 1.0, 2).tolist()
        translation, rotation = rng.exponential(0.01, 2).tolist()
        plain = state.copy()
        _advance_moments(state, dx, dy, translation, rotation, yaw)
        odometry_drift.advance_error_moments(plain, dx, dy, translation, rotation, yaw)
        assert state.tobytes() == plain.tobytes()
