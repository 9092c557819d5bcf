"""Gauss-Markov map noise: variance, correlation time and noise density within confidence bounds.

Many independent chains run at once (the noise is per axis, so an axis array of length N is N
chains).  Bounds are 99.9 % confidence intervals; the seeds are fixed, so results are repeatable.
"""

import math

import numpy as np
import pytest
from scipy import stats

from wheelsim.core.localization.gauss_markov import GaussMarkovNoise, correlation, sample_variance

CHAINS = 4000
DENSITY = 2.5e-5  # m^2*s, the default map_sample_noise_translation
Z = stats.norm.ppf(0.9995)


def run_chains(tau_s, dt_s, steps, chains=CHAINS, seed=1):
    noise = GaussMarkovNoise(np.full(chains, DENSITY), tau_s, np.random.default_rng(seed))
    samples = np.empty((steps, chains))
    variances = np.empty((steps, chains))
    for k in range(steps):
        samples[k] = noise.sample(dt_s)
        variances[k] = noise.variance
    return samples, variances


def variance_bounds(variance, count):
    """99.9 % interval of the sample variance of ``count`` zero-mean normal draws."""
    return (
        variance * stats.chi2.ppf(0.0005, count) / count,
        variance * stats.chi2.ppf(0.9995, count) / count,
    )


def test_sample_variance_limits():
    dt = 0.02
    assert sample_variance(DENSITY, dt, 0.0) == pytest.approx(DENSITY / dt)  # the reference
    assert sample_variance(DENSITY, dt, 100.0) == pytest.approx(DENSITY / 200.0, rel=1e-6)
    assert sample_variance(DENSITY, dt, 0.5) == pytest.approx(DENSITY / dt * math.tanh(0.02))
    assert correlation(dt, 0.0) == 0.0
    assert correlation(dt, 0.5) == pytest.approx(math.exp(-0.04))


@pytest.mark.parametrize('tau_s', [0.0, 0.1, 1.0])
def test_stationary_variance_and_correlation_time(tau_s):
    dt = 0.02
    steps = 300 if tau_s < 1.0 else 700  # reach stationarity: phi^(2k) negligible
    samples, variances = run_chains(tau_s, dt, steps)
    expected = float(sample_variance(DENSITY, dt, tau_s))
    # Reported variance has converged to the stationary one.
    np.testing.assert_allclose(variances[-1], expected, rtol=1e-9)
    # Empirical variance of the last sample over the chains.
    low, high = variance_bounds(expected, CHAINS)
    assert low < np.mean(samples[-1] ** 2) < high
    # Lag-1 correlation over the chains against exp(-dt / tau).
    lag1 = np.corrcoef(samples[-2], samples[-1])[0, 1]
    phi = correlation(dt, tau_s)
    half_width = Z * (1.0 - phi * phi) / math.sqrt(CHAINS)  # Fisher's large-sample s.d.
    assert abs(lag1 - phi) < half_width
    if tau_s > 0.0:
        # Correlation time from the correlation at a lag near tau (best conditioned there).
        lag = round(tau_s / dt)
        measured = np.corrcoef(samples[-1 - lag], samples[-1])[0, 1]
        rho = correlation(lag * dt, tau_s)
        rho_half = Z * (1.0 - rho * rho) / math.sqrt(CHAINS)
        tau_low = -lag * dt / math.log(rho - rho_half)
        tau_high = -lag * dt / math.log(rho + rho_half)
        assert tau_low < -lag * dt / math.log(measured) < tau_high
        assert tau_high / tau_low < 1.3  # resolves the correlation time to +-13 %


@pytest.mark.parametrize(('tau_s', 'dt_s'), [(0.0, 0.02), (0.0, 0.1), (0.2, 0.02), (0.2, 0.1)])
def test_long_window_mean_has_variance_density_over_time(tau_s, dt_s):
    """The defining property: var(mean over T) = S / T whatever the rate and correlation time."""
    window_s = 20.0
    burn_in = 50
    steps = burn_in + int(round(window_s / dt_s))
    samples, _ = run_chains(tau_s, dt_s, steps, chains=2000, seed=7)
    means = samples[burn_in:].mean(axis=0)
    # Finite-window correction of an AR(1) mean: exact for the sampled sequence.
    n = steps - burn_in
    phi = correlation(dt_s, tau_s)
    sigma2 = float(sample_variance(DENSITY, dt_s, tau_s))
    exact = sigma2 / n * ((1 + phi) / (1 - phi) - 2 * phi * (1 - phi**n) / (n * (1 - phi) ** 2))
    assert exact == pytest.approx(DENSITY / window_s, rel=0.03)
    low, high = variance_bounds(exact, 2000)
    assert low < np.mean(means**2) < high


def test_starts_known_and_reports_the_transient_variance():
    samples, variances = run_chains(1.0, 0.02, 60)
    assert np.all(samples[0] != 0.0)
    for k in (0, 9, 59):
        low, high = variance_bounds(variances[k, 0], CHAINS)
        assert low < np.mean(samples[k] ** 2) < high
    assert variances[0, 0] < variances[9, 0] < variances[59, 0]


def test_same_time_repeats_and_bad_time_step_is_rejected():
    noise = GaussMarkovNoise(np.full(3, DENSITY), 0.0, np.random.default_rng(0))
    first = noise.sample(0.02).copy()
    np.testing.assert_array_equal(noise.sample(0.0), first)
    for bad in (-0.01, math.nan, math.inf):
        with pytest.raises(ValueError, match='dt_s'):
            noise.sample(bad)
    np.testing.assert_array_equal(noise.value, first)
