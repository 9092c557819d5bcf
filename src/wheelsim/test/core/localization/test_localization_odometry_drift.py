"""Odometry drift: variance growth per distance and per angle turned, and consistent covariance.

Many seeded trajectories run at once (the helpers broadcast over a leading run axis).  Bounds
are 99.9 % confidence intervals of chi-square distributed statistics.
"""

import numpy as np
import pytest
from scipy import stats

from wheelsim.core.geometry.angles import wrap_angles
from wheelsim.core.geometry.se2 import compose, relative
from wheelsim.core.localization.odometry_drift import (
    DriftingOdometry,
    DriftRates,
    increment_variances,
    measure_increment,
)

RUNS = 4000
Z = stats.norm.ppf(0.9995)
DEFAULT_RATES = DriftRates(0.0025, 0.0076, 0.0025)


def variance_bounds(variance, count):
    return (
        variance * stats.chi2.ppf(0.0005, count) / count,
        variance * stats.chi2.ppf(0.9995, count) / count,
    )


def integrate(increments, rates, seed):
    """Integrate the same true increments ``(steps, 3)`` in RUNS noisy copies; poses per step."""
    rng = np.random.default_rng(seed)
    pose = np.zeros((RUNS, 3))
    poses = []
    for increment in increments:
        measured, _ = measure_increment(np.tile(increment, (RUNS, 1)), rates, rng)
        pose = compose(pose, measured)
        poses.append(pose)
    return np.array(poses)


def test_increment_variances_analytic():
    np.testing.assert_allclose(
        increment_variances([0.3, 0.4, -0.2], DEFAULT_RATES),
        [0.0025 * 0.5, 0.0025 * 0.5, 0.0076 * 0.5 + 0.0025 * 0.2],
    )
    np.testing.assert_allclose(increment_variances([0.0, 0.0, 0.0], DEFAULT_RATES), 0.0)


@pytest.mark.parametrize('step_m', [0.02, 0.1])
def test_position_variance_grows_linearly_with_distance(step_m):
    """Without heading drift the error per axis has variance q_t * d at any sample spacing."""
    rates = DriftRates(0.0025, 0.0, 0.0)
    steps = int(round(4.0 / step_m))
    poses = integrate(np.tile([step_m, 0.0, 0.0], (steps, 1)), rates, seed=3)
    for distance_m in (1.0, 2.0, 4.0):
        k = int(round(distance_m / step_m)) - 1
        error = poses[k] - [distance_m, 0.0, 0.0]
        low, high = variance_bounds(0.0025 * distance_m, RUNS)
        for axis in (0, 1):
            assert low < np.mean(error[:, axis] ** 2) < high, (distance_m, axis)


def test_heading_variance_grows_with_distance_and_with_angle_turned():
    # An arc of 3 m turning by 1.5 rad: heading variance q_r * d + q_w * angle.
    steps = 150
    increment = relative([0.0, 0.0, 0.0], [np.sin(0.01) * 2.0, (1 - np.cos(0.01)) * 2.0, 0.01])
    poses = integrate(np.tile(increment, (steps, 1)), DEFAULT_RATES, seed=4)
    distance_m = steps * np.hypot(*increment[:2])
    expected = 0.0076 * distance_m + 0.0025 * 1.5
    low, high = variance_bounds(expected, RUNS)
    assert low < np.mean(wrap_angles(poses[-1][:, 2] - 1.5) ** 2) < high


def test_turning_on_the_spot_drifts_heading_only():
    poses = integrate(np.tile([0.0, 0.0, 0.05], (60, 1)), DEFAULT_RATES, seed=5)
    low, high = variance_bounds(0.0025 * 3.0, RUNS)
    assert low < np.mean(wrap_angles(poses[-1][:, 2] - 3.0) ** 2) < high
    np.testing.assert_array_equal(poses[-1][:, :2], 0.0)


def errors_and_reported(increment, steps, rates, seed):
    """Final errors of RUNS noisy runs along ``steps`` equal increments, and the reported
    E[e e^T] (from one run: it depends on the true motion only)."""
    increments = np.tile(increment, (steps, 1))
    odometry = DriftingOdometry(rates, np.random.default_rng(0))
    for u in increments:
        odometry.step(u)
    errors = integrate(increments, rates, seed)[-1] - odometry.true_pose
    errors[:, 2] = wrap_angles(errors[:, 2])
    return errors, odometry.covariance


@pytest.mark.parametrize(
    ('rates', 'increment', 'steps'),
    [
        (DEFAULT_RATES, [0.1, 0.0, 0.03], 30),  # 3 m arc: nearly Gaussian error
        (DEFAULT_RATES, [0.1, 0.0, 0.0], 300),  # 30 m line: heading s.d. 0.48 rad, banana
        (DriftRates(0.0, 0.0076, 0.0), [0.1, 0.0, 0.0], 100),  # heading drift only
        (DriftRates(0.0025, 0.0, 0.0), [0.1, 0.05, 0.0], 50),  # translation drift only
        (DriftRates(0.0, 0.0, 0.0025), [0.1, 0.0, 0.1], 60),  # turn drift only
    ],
)
def test_reported_second_moments_match_the_empirical_ones(rates, increment, steps):
    """Every entry of the reported E[e e^T] within 99.9 % bounds of its sample estimate."""
    errors, reported = errors_and_reported(increment, steps, rates, seed=11)
    products = errors[:, :, None] * errors[:, None, :]
    half_width = Z * products.std(axis=0) / np.sqrt(RUNS) + 1e-15
    np.testing.assert_array_less(np.abs(products.mean(axis=0) - reported), half_width)
    assert reported[2, 2] == pytest.approx(
        rates.rotation_rad2_per_m * steps * np.hypot(*increment[:2])
        + rates.turn_rad2_per_rad * steps * abs(increment[2])
    )


@pytest.mark.parametrize(('increment', 'steps'), [([0.1, 0.0, 0.03], 30), ([0.1, 0.0, 0.0], 300)])
def test_nees_of_the_odometry_within_bounds(increment, steps):
    """NEES over seeded runs: mean 3 (chi-square bounds when the error is nearly Gaussian)."""
    errors, reported = errors_and_reported(increment, steps, DEFAULT_RATES, seed=12)
    nees = np.einsum('ni,ij,nj->n', errors, np.linalg.inv(reported), errors)
    if steps <= 30:
        dof = 3 * RUNS
        assert stats.chi2.ppf(0.0005, dof) < nees.sum() < stats.chi2.ppf(0.9995, dof)
    else:  # heavy-tailed banana: the mean is still exactly 3, by construction of E[e e^T]
        assert abs(nees.mean() - 3.0) < Z * nees.std() / np.sqrt(RUNS)


def test_zero_rates_integrate_the_true_motion_exactly():
    odometry = DriftingOdometry(DriftRates(0.0, 0.0, 0.0), np.random.default_rng(0))
    truth = np.zeros(3)
    for increment in ([0.1, 0.02, 0.3], [0.0, 0.0, -1.0], [0.5, 0.0, 0.0]):
        measured, covariance = odometry.step(increment)
        truth = compose(truth, increment)
        np.testing.assert_array_equal(measured, increment)
        np.testing.assert_array_equal(covariance, 0.0)
    np.testing.assert_array_equal(odometry.pose, truth)
    np.testing.assert_array_equal(odometry.covariance, 0.0)
    odometry.restart()
    np.testing.assert_array_equal(odometry.pose, 0.0)


def test_per_sample_step_draws_what_the_batched_model_draws():
    """DriftingOdometry.step (floats, per sample) and measure_increment (arrays, used by the
    statistical tests above) give the same measured increments from the same random stream."""
    increments = [(0.02, 0.0, 0.0), (0.019, 0.001, 0.03), (0.0, 0.0, -0.05), (0.0, 0.0, 0.0)]
    odometry = DriftingOdometry(DEFAULT_RATES, np.random.default_rng(11))
    reference_rng = np.random.default_rng(11)
    for increment in increments:
        measured, variances = odometry.step(increment)
        expected, expected_variances = measure_increment(increment, DEFAULT_RATES, reference_rng)
        np.testing.assert_allclose(measured, expected, rtol=0, atol=1e-15)
        np.testing.assert_allclose(variances, expected_variances, rtol=0, atol=1e-15)
    assert odometry.pose != (0.0, 0.0, 0.0)
