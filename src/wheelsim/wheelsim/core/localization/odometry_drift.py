"""Drifting wheel odometry: a random walk per distance driven and per angle turned.

Odometry integrates measured body-frame motion increments ``u = (dx, dy, dyaw)`` (the motion
from one ground-truth sample to the next, seen from the earlier pose).  Each measured increment
carries independent zero-mean Gaussian errors with the diagonal covariance

    Q(u) = diag(q_t ds, q_t ds, q_r ds + q_w |dyaw|),   ds = hypot(dx, dy)

(q_t [m^2/m], q_r [rad^2/m], q_w [rad^2/rad]; see :mod:`wheelsim.core.localization.config`).
The variances add linearly over increments, so the heading error after a path of length d that
turns by a total angle A has variance exactly ``q_r d + q_w A``, and without heading error the
position error has variance ``q_t d`` per axis, independent of the sample rate.

:func:`advance_odometry` integrates one noisy increment into the odometry pose ``odom_T_base``
and propagates the exact second moments of its error (:func:`advance_error_moments`, no
linearisation), so the reported covariance describes the simulated error at any distance. Its
state is one float array (layout below), stepped per localization sample by compiled code;
:class:`DriftingOdometry` wraps one state for Python. :func:`measure_increment` draws many
increments at once (arrays; the statistical tests).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.compiled import jitable
from wheelsim.core.geometry.se2 import Floats3, compose_floats
from wheelsim.core.localization.normal_draws import NormalDraws, next_normal

# The odometry state: poses (x [m], y [m], yaw [rad]) in the odom frame, then the error moments
# of DriftErrorMoments' recursion, complex ones as (real, imaginary).
POSE = 0  # odom_T_base: the integrated noisy increments
TRUE_POSE = 3  # the same increments without error: the motion the wheels saw
MEAN = 6  # E eps
POWER = 8  # E |eps|^2
SQUARE = 9  # E eps^2
ROT = 11  # E eps exp(i delta)
CONJ_ROT = 13  # E conj(eps) exp(i delta)
CROSS = 15  # E eps delta
HEADING_VARIANCE = 17  # v = E delta^2
STATE_SIZE = 18


@jitable
def drift_variances(
    translation_m2_per_m: float, rotation_rad2_per_m: float, turn_rad2_per_rad: float,
    distance_m: float, turn_rad: float,
) -> tuple[float, float]:
    """Error variances ``(q_t ds [m^2], q_r ds + q_w |dyaw| [rad^2])`` of an increment of length
    ``distance_m`` turning by ``turn_rad`` (floats, or arrays from Python)."""
    translation = translation_m2_per_m * distance_m
    rotation = rotation_rad2_per_m * distance_m + turn_rad2_per_rad * abs(turn_rad)
    return translation, rotation


@dataclass(frozen=True)
class DriftRates:
    """Random-walk rates of the odometry error."""

    translation_m2_per_m: float
    rotation_rad2_per_m: float
    turn_rad2_per_rad: float

    def variances(self, distance_m: ArrayLike, turn_rad: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
        """:func:`drift_variances` with these rates."""
        return drift_variances(self.translation_m2_per_m, self.rotation_rad2_per_m,
                               self.turn_rad2_per_rad, distance_m, turn_rad)


def increment_variances(increment: ArrayLike, rates: DriftRates) -> FloatArray:
    """Diagonal of ``Q(u)`` for body-frame increments of shape ``(..., 3)``; shape ``(..., 3)``."""
    u = np.asarray(increment, dtype=float)
    translation, rotation = rates.variances(np.hypot(u[..., 0], u[..., 1]), u[..., 2])
    return np.stack([translation, translation, rotation], axis=-1)


def measure_increment(
    increment: ArrayLike, rates: DriftRates, rng: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """The measured increment ``u + e``, ``e ~ N(0, Q(u))``, and the diagonal of ``Q(u)``.

    ``increment`` may hold many increments ``(..., 3)``; both results have its shape.
    """
    u = np.asarray(increment, dtype=float)
    variances = increment_variances(u, rates)
    return u + np.sqrt(variances) * rng.standard_normal(u.shape), variances


@jitable
def square_as_python(value: float) -> float:
    """``value ** 2`` as CPython computes it for a finite float: libm's ``pow(value, 2.0)``,
    which differs from ``value * value`` in the last bit for about one value in 1200. Compilers
    turn a constant exponent 2 into that product, so the exponent is computed at run time
    (``2.0 + 0.0 * value`` is 2.0 for every finite value)."""
    return value ** (2.0 + 0.0 * value)


@jitable
def advance_error_moments(
    state: FloatArray, dx_m: float, dy_m: float, translation_variance: float,
    rotation_variance: float, yaw_rad: float,
) -> None:
    """Advance the exact first and second moments of the odometry error in ``state`` by one
    true increment ``(dx, dy)`` taken at the heading ``yaw_rad`` (odom frame: the true pose's,
    or with encoders the odometry's own: the robot's belief), with the error variances of
    :func:`drift_variances`.

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
    g = complex(math.cos(yaw_rad), math.sin(yaw_rad)) * complex(dx_m, dy_m)
    mean = complex(state[MEAN], state[MEAN + 1])
    square = complex(state[SQUARE], state[SQUARE + 1])
    rot = complex(state[ROT], state[ROT + 1])
    conj_rot = complex(state[CONJ_ROT], state[CONJ_ROT + 1])
    cross = complex(state[CROSS], state[CROSS + 1])
    v = state[HEADING_VARIANCE]
    c1, c4 = math.exp(-0.5 * v), math.exp(-2.0 * v)  # E exp(i delta), E exp(2 i delta)
    damping = math.exp(-0.5 * rotation_variance)  # E exp(i w_yaw)
    state[POWER] += (
        2.0 * (g * (conj_rot - mean.conjugate())).real
        + square_as_python(abs(g)) * (2.0 - 2.0 * c1)
        + translation_variance
        + translation_variance
    )
    square += 2.0 * g * (rot - mean) + g * g * (c4 - 2.0 * c1 + 1.0)
    cross += g * 1j * v * c1
    new_rot = damping * (rot + g * (c4 - c1))
    conj_rot = damping * (conj_rot + g.conjugate() * (1.0 - c1))
    mean += g * (c1 - 1.0)
    state[MEAN], state[MEAN + 1] = mean.real, mean.imag
    state[SQUARE], state[SQUARE + 1] = square.real, square.imag
    state[ROT], state[ROT + 1] = new_rot.real, new_rot.imag
    state[CONJ_ROT], state[CONJ_ROT + 1] = conj_rot.real, conj_rot.imag
    state[CROSS], state[CROSS + 1] = cross.real, cross.imag
    state[HEADING_VARIANCE] = v + rotation_variance


@jitable
def write_error_covariance(state: FloatArray, out: FloatArray) -> None:
    """``E[e e^T]`` (x, y, yaw) of the error moments of ``state`` into the 3x3 ``out``: the
    error covariance plus the outer product of its small mean."""
    power, square_real, square_imag = state[POWER], state[SQUARE], state[SQUARE + 1]
    xx = 0.5 * (power + square_real)
    yy = 0.5 * (power - square_real)
    xy = 0.5 * square_imag
    x_yaw, y_yaw = state[CROSS], state[CROSS + 1]
    out[0, 0], out[0, 1], out[0, 2] = xx, xy, x_yaw
    out[1, 0], out[1, 1], out[1, 2] = xy, yy, y_yaw
    out[2, 0], out[2, 1], out[2, 2] = x_yaw, y_yaw, state[HEADING_VARIANCE]


@jitable
def advance_odometry(
    state: FloatArray, rates: FloatArray, dx_m: float, dy_m: float, dyaw_rad: float,
    wheels: bool, wheels_dx_m: float, wheels_dy_m: float, wheels_dyaw_rad: float,
    draws: FloatArray, cursors: IntArray, stream: int,
) -> tuple[float, float, float, float, float]:
    """Integrate one true body-frame increment ``(dx [m], dy [m], dyaw [rad])`` with its error
    into ``state``; ``rates`` are the three of :class:`DriftRates`. Return the measured
    increment and the error variances ``(translation [m^2], rotation [rad^2])`` of its
    covariance ``Q`` (the prediction input of an EKF fed by this odometry).

    The measured increment is the true one plus ``sqrt(Q)`` times the next three draws of
    ``stream`` (reserved) of the arrays of a :class:`NormalDraws`, as
    :func:`measure_increment` draws, unless ``wheels``: then the wheels' increment is
    integrated as it is, and ``Q`` and the error moments are the drift model's of that
    increment (what the robot believes of the motion it measured: a robot does not know its
    true motion, and wheels spinning on the spot are motion to it).
    """
    believed = (wheels_dx_m, wheels_dy_m, wheels_dyaw_rad) if wheels else (dx_m, dy_m, dyaw_rad)
    # np.hypot as in increment_variances (math.hypot may differ in the last bit)
    translation, rotation = drift_variances(
        rates[0], rates[1], rates[2], float(np.hypot(believed[0], believed[1])), believed[2])
    if wheels:
        measured = believed
    else:
        translation_std, rotation_std = math.sqrt(translation), math.sqrt(rotation)
        measured = (dx_m + translation_std * next_normal(draws, cursors, stream),
                    dy_m + translation_std * next_normal(draws, cursors, stream),
                    dyaw_rad + rotation_std * next_normal(draws, cursors, stream))
    advance_error_moments(state, believed[0], believed[1], translation, rotation,
                          state[(POSE if wheels else TRUE_POSE) + 2])
    pose = compose_floats((state[POSE], state[POSE + 1], state[POSE + 2]), measured)
    true_pose = compose_floats(
        (state[TRUE_POSE], state[TRUE_POSE + 1], state[TRUE_POSE + 2]), (dx_m, dy_m, dyaw_rad))
    state[POSE], state[POSE + 1], state[POSE + 2] = pose
    state[TRUE_POSE], state[TRUE_POSE + 1], state[TRUE_POSE + 2] = true_pose
    return measured[0], measured[1], measured[2], translation, rotation


class DriftingOdometry:
    """Integrated noisy odometry ``odom_T_base`` (odom frame) with its error second moments.

    The odom frame is where the odometry started (``odom_T_base`` = identity, zero error).
    ``true_pose`` integrates the same increments without error: the motion the wheels saw.
    Poses are plain floats ``(x [m], y [m], yaw [rad])``.
    """

    def __init__(self, rates: DriftRates, rng: np.random.Generator) -> None:
        self.rates = rates
        self.rng = rng
        self.draws = NormalDraws([rng])  # nothing else draws from rng
        self.state = np.zeros(STATE_SIZE)

    @property
    def pose(self) -> Floats3:
        x_m, y_m, yaw_rad = self.state[POSE:POSE + 3].tolist()
        return x_m, y_m, yaw_rad

    @property
    def true_pose(self) -> Floats3:
        x_m, y_m, yaw_rad = self.state[TRUE_POSE:TRUE_POSE + 3].tolist()
        return x_m, y_m, yaw_rad

    @property
    def covariance(self) -> FloatArray:
        """``E[e e^T]`` of the error of ``pose`` against ``true_pose`` (x, y, yaw; 3x3)."""
        covariance = np.empty((3, 3))
        write_error_covariance(self.state, covariance)
        return covariance

    def restart(self) -> None:
        """Start a new odom frame at the vehicle: identity pose, zero error."""
        self.state[:] = 0.0

    def step(
        self, true_increment: Sequence[float], measured: Floats3 | None = None
    ) -> tuple[Floats3, Floats3]:
        """:func:`advance_odometry` by one true increment, with the wheels' ``measured`` one if
        given; return the measured increment and the diagonal of ``Q``."""
        dx_m, dy_m, dyaw_rad = (float(value) for value in true_increment)
        rates = self.rates
        self.draws.reserve(3)
        *increment, translation, rotation = advance_odometry(
            self.state,
            np.array([rates.translation_m2_per_m, rates.rotation_rad2_per_m,
                      rates.turn_rad2_per_rad]),
            dx_m, dy_m, dyaw_rad, measured is not None, *(measured or (0.0, 0.0, 0.0)),
            self.draws.values, self.draws.cursors, 0)
        return tuple(float(value) for value in increment), (translation, translation, rotation)
