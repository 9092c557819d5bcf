"""First-order Gauss-Markov noise with a given noise density, sampled exactly at given times.

The process is ``n_k = sigma_k * z_k`` per axis.  ``z`` is a unit-variance first-order
Gauss-Markov (Ornstein-Uhlenbeck) process with correlation time ``tau`` [s], discretised exactly
between sample times: ``z_k = phi_k z_{k-1} + sqrt(1 - phi_k^2) w_k`` with
``phi_k = exp(-dt_k / tau)`` and ``w_k`` standard normal.  The amplitude follows from the noise
density ``S`` (two-sided power spectral density at zero frequency, [unit^2 * s]):

    sigma_k^2 = (S / dt_k) * tanh(dt_k / (2 tau))

which makes the zero-frequency density of the sampled sequence equal to ``S`` for regular
sampling (the mean over a long window of T seconds has variance ``S / T``).  Limits:
``tau = 0`` is white noise of variance ``S / dt`` per sample; ``tau >> dt`` is the continuous
process of stationary variance ``S / (2 tau)``.

Initialisation is at a known value (``z = 0``, variance 0), e.g. a localization started at a
known pose; the variance of ``z`` is propagated exactly
(``var_k = phi_k^2 var_{k-1} + 1 - phi_k^2``), so the reported variance is the true one from
the first sample on and tends to the stationary ``sigma^2``.  A sample at the same time as the
previous one (``dt = 0``) repeats it.

The state of ``N`` axes is one float array (:func:`state_size`): the variance of ``z``, then
``z``, the noise and its variance per axis. :func:`advance_gauss_markov` steps it (compiled
code calls it per localization sample); :class:`GaussMarkovNoise` wraps one state for Python.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.localization.normal_draws import NormalDraws, next_normal

Z_VARIANCE = 0  # index of the variance of z in a state; then z, value, variance per axis


def state_size(axes: int) -> int:
    """Length of the state array of ``axes`` axes."""
    return 1 + 3 * axes


@jitable
def sample_variance(density: float | FloatArray, dt_s: float, tau_s: float) -> float | FloatArray:
    """Per-sample variance ``sigma^2 = (S / dt) tanh(dt / (2 tau))`` [unit^2] (``dt > 0``) of a
    density ``S`` (a float, or an array of them from Python)."""
    if tau_s == 0.0:
        return density / dt_s
    return density / dt_s * math.tanh(dt_s / (2.0 * tau_s))


@jitable
def correlation(dt_s: float, tau_s: float) -> float:
    """Correlation ``phi = exp(-dt / tau)`` of two samples ``dt`` apart (0 for white noise)."""
    if tau_s == 0.0:
        return 0.0
    return math.exp(-dt_s / tau_s)


@jitable
def advance_gauss_markov(
    state: FloatArray, density: FloatArray, dt_s: float, tau_s: float,
    draws: FloatArray, cursors: IntArray, stream: int,
) -> None:
    """Advance ``state`` (``len(density)`` axes) by ``dt_s`` [s] (> 0), one standard normal
    draw per axis from ``stream`` of the arrays of a :class:`NormalDraws` (reserved)."""
    axes = len(density)
    phi = correlation(dt_s, tau_s)
    innovation_std = math.sqrt(1.0 - phi * phi)
    z_variance = phi * phi * state[Z_VARIANCE] + (1.0 - phi * phi)
    state[Z_VARIANCE] = z_variance
    for axis in range(axes):
        sigma2 = sample_variance(density[axis], dt_s, tau_s)
        z = phi * state[1 + axis] + innovation_std * next_normal(draws, cursors, stream)
        state[1 + axis] = z
        state[1 + axes + axis] = math.sqrt(sigma2) * z
        state[1 + 2 * axes + axis] = sigma2 * z_variance


_advance_compiled = compiled(advance_gauss_markov)  # for many axes at once from Python


class GaussMarkovNoise:
    """Independent Gauss-Markov noise on each axis; ``density`` [unit^2 * s] per axis.

    ``density`` and ``tau_s`` may be changed between samples (live parameter updates); the unit
    process ``z`` carries on, so the noise stays continuous in correlation.
    """

    def __init__(self, density: ArrayLike, tau_s: float, rng: np.random.Generator) -> None:
        self.density = np.asarray(density, dtype=float).reshape(-1)
        self.tau_s = tau_s
        self.rng = rng
        self._draws = NormalDraws([rng])  # nothing else draws from rng
        self.state = np.zeros(state_size(len(self.density)))

    @property
    def z_variance(self) -> float:
        """Variance of the unit process ``z``."""
        return float(self.state[Z_VARIANCE])

    @property
    def z(self) -> FloatArray:
        return self.state[1:1 + len(self.density)]

    @property
    def value(self) -> FloatArray:
        """The noise of the latest sample, per axis."""
        axes = len(self.density)
        return self.state[1 + axes:1 + 2 * axes]

    @property
    def variance(self) -> FloatArray:
        """Its variance, per axis."""
        axes = len(self.density)
        return self.state[1 + 2 * axes:]

    def reset(self) -> None:
        """Restart at a known value: zero noise with zero variance."""
        self.state[:] = 0.0

    def sample(self, dt_s: float) -> FloatArray:
        """Advance by ``dt_s`` [s] (>= 0) and return the noise (a copy); its variance is in
        ``variance``."""
        if not (math.isfinite(dt_s) and dt_s >= 0.0):
            raise ValueError(f'time step dt_s = {dt_s!r} must be finite and >= 0')
        if dt_s > 0.0:
            self._draws.reserve(len(self.density))
            _advance_compiled(self.state, self.density, dt_s, self.tau_s, self._draws.values,
                              self._draws.cursors, 0)
        return self.value.copy()
