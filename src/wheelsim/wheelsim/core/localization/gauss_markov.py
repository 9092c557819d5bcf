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
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.localization.normal_draws import NormalDraws


def sample_variance(density: ArrayLike, dt_s: float, tau_s: float) -> FloatArray:
    """Per-sample variance ``sigma^2 = (S / dt) tanh(dt / (2 tau))`` [unit^2] (``dt > 0``)."""
    density = np.asarray(density, dtype=float)
    if tau_s == 0.0:
        return density / dt_s
    return density / dt_s * math.tanh(dt_s / (2.0 * tau_s))


def correlation(dt_s: float, tau_s: float) -> float:
    """Correlation ``phi = exp(-dt / tau)`` of two samples ``dt`` apart (0 for white noise)."""
    if tau_s == 0.0:
        return 0.0
    return math.exp(-dt_s / tau_s)


class GaussMarkovNoise:
    """Independent Gauss-Markov noise on each axis; ``density`` [unit^2 * s] per axis.

    Per axis values (``z``, ``value``, ``variance``) are lists of floats, the same numbers an
    array computation gives element by element: the localization samples three axes per
    ground-truth message, where numpy objects would cost more than the arithmetic on them.

    ``density`` and ``tau_s`` may be changed between samples (live parameter updates); the unit
    process ``z`` carries on, so the noise stays continuous in correlation. The coefficients of
    a time step are kept until the step, ``density`` or ``tau_s`` changes (with regular samples
    they are computed once).
    """

    def __init__(self, density: ArrayLike, tau_s: float, rng: np.random.Generator) -> None:
        self.density = density
        self.tau_s = tau_s
        self.rng = rng
        self._draws = NormalDraws(rng)  # nothing else draws from rng
        self.reset()

    @property
    def density(self) -> FloatArray:
        return self._density

    @density.setter
    def density(self, value: ArrayLike) -> None:
        self._density = np.asarray(value, dtype=float).reshape(-1)
        self._coefficients = None

    @property
    def tau_s(self) -> float:
        return self._tau_s

    @tau_s.setter
    def tau_s(self, value: float) -> None:
        self._tau_s = value
        self._coefficients = None

    def reset(self) -> None:
        """Restart at a known value: zero noise with zero variance."""
        axes = len(self.density)
        self.z = [0.0] * axes
        self.z_variance = 0.0
        self.value = [0.0] * axes
        self.variance = [0.0] * axes

    def _step_coefficients(
        self, dt_s: float
    ) -> tuple[float, float, float, list[float], list[float]]:
        """``(dt_s, phi, sqrt(1 - phi^2), sigma^2, sigma)`` of a step of ``dt_s`` [s] (> 0)."""
        if self._coefficients is None or self._coefficients[0] != dt_s:
            phi = correlation(dt_s, self.tau_s)
            sigma2 = sample_variance(self.density, dt_s, self.tau_s).tolist()
            sigma = [math.sqrt(variance) for variance in sigma2]
            self._coefficients = (dt_s, phi, math.sqrt(1.0 - phi * phi), sigma2, sigma)
        return self._coefficients

    def sample(self, dt_s: float) -> list[float]:
        """Advance by ``dt_s`` [s] (>= 0) and return the noise; its variance is in ``variance``."""
        if not (math.isfinite(dt_s) and dt_s >= 0.0):
            raise ValueError(f'time step dt_s = {dt_s!r} must be finite and >= 0')
        if dt_s == 0.0:
            return self.value
        _, phi, innovation_std, sigma2, sigma = self._step_coefficients(dt_s)
        draws = self._draws.take(len(self.z))
        self.z = [phi * z + innovation_std * draw for z, draw in zip(self.z, draws, strict=True)]
        self.z_variance = z_variance = phi * phi * self.z_variance + (1.0 - phi * phi)
        self.value = [scale * z for scale, z in zip(sigma, self.z, strict=True)]
        self.variance = [variance * z_variance for variance in sigma2]
        return self.value
