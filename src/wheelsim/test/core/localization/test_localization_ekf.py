"""The pose EKF: analytic updates, numerical safety, and consistency over seeded runs."""

import numpy as np
import pytest
from scipy import stats

from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.ekf import PoseEkf, diagonal_covariance
from wheelsim.core.localization.scenario import figure_eight, run
from wheelsim.core.params import from_flat


def test_diagonal_covariance_is_np_diag_bit_for_bit():
    variances = (0.1, 2.5e-5, 3.0)
    matrix = diagonal_covariance(variances)
    assert matrix.dtype == np.float64
    np.testing.assert_array_equal(matrix, np.diag(variances))


def test_correct_is_the_weighted_mean_for_independent_axes():
    ekf = PoseEkf.from_pose([1.0, 2.0, 0.5], np.diag([0.04, 0.01, 0.09]))
    innovation = ekf.correct([1.2, 1.9, 0.2], np.diag([0.04, 0.03, 0.01]))
    np.testing.assert_allclose(innovation, [0.2, -0.1, -0.3])
    # Scalar Kalman update per axis: x + p / (p + r) * (z - x), variance p r / (p + r).
    np.testing.assert_allclose(ekf.pose, [1.1, 2.0 - 0.1 * 0.25, 0.5 - 0.3 * 0.9])
    np.testing.assert_allclose(ekf.covariance, np.diag([0.02, 0.0075, 0.009]), atol=1e-15)


def test_predict_moves_along_the_heading_and_grows_the_covariance():
    ekf = PoseEkf.from_pose([0.0, 0.0, np.pi / 2], np.diag([0.0, 0.0, 0.01]))
    ekf.predict([2.0, 0.0, 0.0], np.diag([0.0, 0.0, 0.0]))
    np.testing.assert_allclose(ekf.pose, [0.0, 2.0, np.pi / 2], atol=1e-15)
    # A heading error d gives a position error (-2 d, 0): variance 4 * 0.01 along x.
    np.testing.assert_allclose(
        ekf.covariance, [[0.04, 0.0, -0.02], [0.0, 0.0, 0.0], [-0.02, 0.0, 0.01]], atol=1e-15
    )


def test_yaw_innovation_is_wrapped():
    ekf = PoseEkf.from_pose([0.0, 0.0, 3.1], np.diag([0.1, 0.1, 0.1]))
    innovation = ekf.correct([0.0, 0.0, -3.1], np.diag([0.1, 0.1, 0.1]))
    assert innovation[2] == pytest.approx(2 * np.pi - 6.2)
    assert abs(ekf.pose[2]) == pytest.approx(3.1 + (np.pi - 3.1), abs=1e-12)  # halfway: +-pi


def test_joseph_update_stays_symmetric_positive_definite():
    ekf = PoseEkf.from_pose([0.0, 0.0, 0.0], np.diag([1e6, 1e6, 10.0]))
    rng = np.random.default_rng(0)
    for _ in range(200):
        ekf.predict([0.5, 0.0, 0.1], np.diag([1e-12, 1e-12, 1e-12]))
        ekf.correct(rng.normal(size=3) * 1e-6, np.diag([1e-12, 1e-12, 1e-12]))
        np.testing.assert_array_equal(ekf.covariance, ekf.covariance.T)
        assert np.min(np.linalg.eigvalsh(ekf.covariance)) > 0.0


@pytest.mark.parametrize(
    ('call', 'args', 'field'),
    [
        ('predict', ([0.1, np.nan, 0.0], np.eye(3)), 'odometry increment'),
        ('predict', ([0.1, 0.0, 0.0], np.full((3, 3), np.inf)), 'odometry increment covariance'),
        ('correct', ([np.inf, 0.0, 0.0], np.eye(3)), 'pose measurement'),
        ('correct', ([0.0, 0.0, 0.0], -np.eye(3)), 'positive semi-definite'),
        (
            'correct',
            ([0.0, 0.0, 0.0], [[1.0, 0.5, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]),
            'symmetric',
        ),
    ],
)
def test_bad_input_is_rejected_and_never_enters_the_state(call, args, field):
    ekf = PoseEkf.from_pose([1.0, 2.0, 0.3], np.eye(3) * 0.1)
    with pytest.raises(ValueError, match=field):
        getattr(ekf, call)(*args)
    np.testing.assert_array_equal(ekf.pose, [1.0, 2.0, 0.3])
    np.testing.assert_array_equal(ekf.covariance, np.eye(3) * 0.1)


RUNS = 100
RATE_HZ = 20.0
CHECK_TIMES_S = (4.0, 7.0, 10.0)


@pytest.fixture(scope='module')
def ekf_runs():
    scenario = figure_eight(duration_s=10.0, rate_hz=RATE_HZ)
    return [
        run(from_flat(LocalizationConfig, {'mode': 'ekf', 'seed': seed}), scenario)
        for seed in range(RUNS)
    ]


@pytest.mark.parametrize('time_s', CHECK_TIMES_S)
def test_ekf_nees_within_chi_square_bounds(ekf_runs, time_s):
    k = int(round(time_s * RATE_HZ))
    total = sum(result.nees('map')[k] for result in ekf_runs)
    dof = 3 * RUNS
    assert stats.chi2.ppf(0.0005, dof) < total < stats.chi2.ppf(0.9995, dof)


def test_ekf_error_is_below_the_raw_measurement_noise(ekf_runs):
    burn_in = int(2.0 * RATE_HZ)
    ekf_sq = np.concatenate([np.sum(r.map_error[burn_in:, :2] ** 2, axis=1) for r in ekf_runs])
    fix_sq = np.concatenate([np.sum(r.fix_error[:, :2] ** 2, axis=1) for r in ekf_runs])
    ekf_rms, fix_rms = np.sqrt(ekf_sq.mean()), np.sqrt(fix_sq.mean())
    # The fixes have exactly the configured noise (per axis 0.05 m: 0.0707 m in the plane).
    assert fix_rms == pytest.approx(np.sqrt(2 * 0.0025), rel=0.05)
    assert ekf_rms < 0.8 * fix_rms
    yaw_rms = np.sqrt(np.mean(np.concatenate([r.map_error[burn_in:, 2] ** 2 for r in ekf_runs])))
    assert yaw_rms < np.sqrt(0.0012)
