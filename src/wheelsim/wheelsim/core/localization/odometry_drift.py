"""Drifting wheel odometry: a random walk per distance driven and per angle turned.

Odometry integrates measured body-frame motion increments ``u = (dx, dy, dyaw)`` (the motion
from one ground-truth sample to the next, seen from the earlier pose).  Each measured increment
carries independent zero-mean Gaussian errors with the diagonal covariance

    Q(u) = diag(q_t ds, q_t ds, q_r ds + q_w |dyaw|),   ds = hypot(dx, dy)

(q_t [m^2/m], q_r [rad^2/m], q_w [rad^2/rad]; see :mod:`wheelsim.core.localization.config`).
The variances add linearly over increments, so the heading error after a path of length d that
turns by a total angle A has variance exactly ``q_r d + q_w A``, and without heading error the
position error has variance ``q_t d`` per axis, independent of the sample rate.

:class:`DriftingOdometry` integrates the noisy increments into the odometry pose
``odom_T_base``; :class:`DriftErrorMoments` propagates the exact second moments of its error
(no linearisation), so the reported covariance describes the simulated error at any distance.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import Floats3, compose_floats
from wheelsim.core.localization.normal_draws import NormalDraws


@dataclass(frozen=True)
class DriftRates:
    """Random-walk rates of the odometry error."""

    translation_m2_per_m: float
    rotation_rad2_per_m: float
    turn_rad2_per_rad: float

    def variances(self, distance_m: ArrayLike, turn_rad: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        """Error variances ``(q_t ds [m^2], q_r ds + q_w |dyaw| [rad^2])`` of an increment of
        length ``distance_m`` turning by ``turn_rad`` (floats or arrays alike)."""
        translation = self.translation_m2_per_m * distance_m
        rotation = self.rotation_rad2_per_m * distance_m + self.turn_rad2_per_rad * abs(turn_rad)
        return translation, rotation


def increment_variances(increment: ArrayLike, rates: DriftRates) -> FloatArray:
    """Diagonal of ``Q(u)`` for body-frame increments of shape ``(..., 3)``; shape ``(..., 3)``."""
    u = np.asarray(increment, dtype=float)
    translation, rotation = rates.variances(np.hypot(u[..., 0], u[..., 1]), u[..., 2])
    return np.stack([translation, translation, rotation], axis=-1)


def add_normal_noise(values: Floats3, std: Floats3, draws: NormalDraws) -> Floats3:
    """``values + std * n`` per component, ``n`` the next three standard normal ``draws`` (those
    of ``rng.standard_normal(3)`` from their generator)."""
    noise_0, noise_1, noise_2 = draws.take(3)
    return values[0] + std[0] * noise_0, values[1] + std[1] * noise_1, values[2] + std[2] * noise_2


def measure_increment(
    increment: ArrayLike, rates: DriftRates, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """The measured increment ``u + e``, ``e ~ N(0, Q(u))``, and the diagonal of ``Q(u)``.

    ``increment`` may hold many increments ``(..., 3)``; both results have its shape.
    """
    u = np.asarray(increment, dtype=float)
    variances = increment_variances(u, rates)
    return u + np.sqrt(variances) * rng.standard_normal(u.shape), variances


class DriftErrorMoments:
    """Exact first and second moments of the odometry error under the drift model.

    The error is ``e = (x_hat - x, y_hat - y, yaw_hat - yaw)`` of the noisy odometry against the
    noise-free integration of the same true increments, in the odom frame.  With complex
    positions (``eps = ex + i ey``), the heading error ``delta`` (Gaussian, variance ``v``) and
    the true position increment ``g = exp(i yaw) (dx + i dy)``, one increment maps

        eps' = eps + g (exp(i delta) - 1) + exp(i (yaw + delta)) w,    delta' = delta + w_yaw

    with ``w`` isotropic complex Gaussian (``E|w|^2 = 2 q_t ds``).  The Gaussian characteristic
    function ``E exp(i k delta) = exp(-k^2 v / 2)`` closes the recursion over ``mean = E eps``,
    ``power = E|eps|^2``, ``square = E eps^2``, ``rot = E eps exp(i delta)``,
    ``conj_rot = E conj(eps) exp(i delta)``, ``cross = E eps delta`` and ``v``: no linearisation,
    so the reported matrix stays right when the heading error is large (the position error then
    bends into a banana that a first-order covariance misses).
    """

    def __init__(self) -> None:
        self.mean = 0j
        self.power = 0.0
        self.square = 0j
        self.rot = 0j
        self.conj_rot = 0j
        self.cross = 0j
        self.heading_variance = 0.0

    def step(self, true_yaw: float, increment: Sequence[float], variances: Sequence[float]) -> None:
        """Advance by one true ``increment`` taken at odom-frame heading ``true_yaw``, with the
        diagonal ``variances`` of its error."""
        g = complex(math.cos(true_yaw), math.sin(true_yaw)) * complex(increment[0], increment[1])
        v = self.heading_variance
        c1, c4 = math.exp(-0.5 * v), math.exp(-2.0 * v)  # E exp(i delta), E exp(2 i delta)
        damping = math.exp(-0.5 * variances[2])  # E exp(i w_yaw)
        self.power += (
            2.0 * (g * (self.conj_rot - self.mean.conjugate())).real
            + abs(g) ** 2 * (2.0 - 2.0 * c1)
            + variances[0]
            + variances[1]
        )
        self.square += 2.0 * g * (self.rot - self.mean) + g * g * (c4 - 2.0 * c1 + 1.0)
        self.cross += g * 1j * v * c1
        self.rot = damping * (self.rot + g * (c4 - c1))
        self.conj_rot = damping * (self.conj_rot + g.conjugate() * (1.0 - c1))
        self.mean += g * (c1 - 1.0)
        self.heading_variance = v + variances[2]

    def matrix(self) -> FloatArray:
        """``E[e e^T]`` (3x3): the error covariance plus the outer product of its small mean."""
        xx = 0.5 * (self.power + self.square.real)
        yy = 0.5 * (self.power - self.square.real)
        xy = 0.5 * self.square.imag
        x_yaw, y_yaw = self.cross.real, self.cross.imag
        return np.array([[xx, xy, x_yaw], [xy, yy, y_yaw], [x_yaw, y_yaw, self.heading_variance]])


@dataclass
class DriftingOdometry:
    """Integrated noisy odometry ``odom_T_base`` (odom frame) with its error second moments.

    The odom frame is where the odometry started (``odom_T_base`` = identity, zero error).
    ``true_pose`` integrates the same increments without error: the motion the wheels saw.
    Poses are plain floats ``(x [m], y [m], yaw [rad])``.
    """

    rates: DriftRates
    rng: np.random.Generator
    pose: Floats3 = (0.0, 0.0, 0.0)
    true_pose: Floats3 = (0.0, 0.0, 0.0)
    moments: DriftErrorMoments = field(default_factory=DriftErrorMoments)
    draws: NormalDraws = field(init=False)  # those of rng, which nothing else draws from

    def __post_init__(self) -> None:
        self.draws = NormalDraws(self.rng)

    @property
    def covariance(self) -> FloatArray:
        """``E[e e^T]`` of the error of ``pose`` against ``true_pose`` (x, y, yaw; 3x3)."""
        return self.moments.matrix()

    def restart(self) -> None:
        """Start a new odom frame at the vehicle: identity pose, zero error."""
        self.pose = (0.0, 0.0, 0.0)
        self.true_pose = (0.0, 0.0, 0.0)
        self.moments = DriftErrorMoments()

    def step(
        self, true_increment: Sequence[float], measured: Floats3 | None = None
    ) -> tuple[Floats3, Floats3]:
        """Integrate one true body-frame increment ``(dx [m], dy [m], dyaw [rad])`` with its error;
        return the measured increment and the diagonal of its covariance ``Q`` (the prediction
        input of an EKF fed by this odometry).  Draws as :func:`measure_increment` does, unless
        the ``measured`` increment is given (wheel encoders): then it is integrated as it is and
        ``Q`` is the drift model's variance of the true increment (what the robot believes)."""
        u = tuple(true_increment)
        dx, dy, dyaw = u
        # np.hypot as in increment_variances (math.hypot may differ in the last bit)
        translation, rotation = self.rates.variances(float(np.hypot(dx, dy)), dyaw)
        variances = (translation, translation, rotation)
        if measured is None:
            translation_std, rotation_std = math.sqrt(translation), math.sqrt(rotation)
            measured = add_normal_noise(
                u, (translation_std, translation_std, rotation_std), self.draws
            )
        self.moments.step(self.true_pose[2], u, variances)
        self.pose = compose_floats(self.pose, measured)
        self.true_pose = compose_floats(self.true_pose, u)
        return measured, variances
