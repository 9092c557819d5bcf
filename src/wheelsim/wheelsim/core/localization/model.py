"""The localization simulator: from ground truth to odometry, a map pose estimate and map -> odom.

Frames (REP-105): ``map`` fixed; ``odom`` where the odometry started, drifting against ``map``;
``base`` the vehicle body.  Poses are ``(x [m], y [m], yaw [rad])`` (see
:mod:`wheelsim.core.localization_se2`); ``a_T_b`` places ``b`` in ``a``.  Per sample, poses,
twists and variances are tuples of three floats and only the 3x3 covariances are arrays: numpy
objects for 3-vectors would cost more than the arithmetic on them.

Per ground-truth sample (true ``map_T_base`` and the true body twist) :meth:`Localization.step`
returns ``odom_T_base`` (wheel odometry), the map-frame estimate ``map_T_base`` and
``map_T_odom = map_T_base * inverse(odom_T_base)``, so the chain ``map -> odom -> base`` always
composes exactly to the estimate.  Covariances are the ones the models imply:

- ``perfect``: odometry equals the true motion since the start, the estimate is the truth, both
  covariances are zero, ``map_T_odom`` is constant.
- ``noisy``: odometry drifts (:mod:`.odometry_drift`); the estimate is the truth plus
  Gauss-Markov map noise (:mod:`.gauss_markov`) on ``x``, ``y``, ``yaw``.
- ``ekf``: the same drifting odometry drives the prediction of :class:`.ekf.PoseEkf`,
  corrected by pose fixes (truth plus white noise) at ``ekf.measurement_rate``.

Events: the first sample starts the odom frame at the vehicle (odom = identity).  A stamp older
than the previous one (a bag loop, a simulation reset) restarts everything as at the start.  A
jump of the true pose that the twist cannot explain (a teleport, e.g. ``initialpose`` sent to
vehicle_sim) is not integrated by the odometry, which keeps the wheels' view (no motion); ``map ->
odom`` absorbs the jump.  :meth:`Localization.request_reset` (``initialpose``) re-initialises the
estimate at the next sample: the EKF to the given pose and covariance, the map noise to zero.

Every random draw comes from generators seeded by ``seed`` (independent streams for odometry,
map noise, pose fixes and twist noise), so equal seeds and inputs give equal outputs.  Non-finite
inputs raise ``ValueError`` naming the field; they never reach the state.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Floats3, compose_floats, inverse_floats
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.ekf import (
    PoseEkf,
    checked_covariance,
    checked_floats,
    checked_pose,
    diagonal_covariance,
)
from wheelsim.core.localization.gauss_markov import GaussMarkovNoise
from wheelsim.core.localization.normal_draws import NormalDraws
from wheelsim.core.localization.odometry_drift import (
    DriftingOdometry,
    DriftRates,
    add_normal_noise,
)
from wheelsim.core.localization.wheel_encoders import EncoderOdometry

#: Pose jumps larger than what the twist explains by more than these are teleports.
TELEPORT_TOLERANCE_M = 0.1
TELEPORT_TOLERANCE_RAD = 0.2


class LocalizationOutput(NamedTuple):
    """Everything published for one ground-truth sample (frames in the field names): poses
    ``(x [m], y [m], yaw [rad])``, the body twist ``(vx [m/s], vy [m/s], wz [rad/s])`` and its
    variances as floats, the 3x3 covariances (x, y, yaw) as arrays."""

    stamp_ns: int
    odom_T_base: Floats3
    odom_covariance: FloatArray
    twist: Floats3
    twist_variances: Floats3
    map_T_base: Floats3
    map_covariance: FloatArray
    map_T_odom: Floats3
    pose_fix: Floats3 | None
    event: str | None  # start, time_jump, teleport, reset, ekf_restart or None


def _drift_rates(config: LocalizationConfig) -> DriftRates:
    if config.mode == 'perfect':
        return DriftRates(0.0, 0.0, 0.0)
    noise = config.localization
    return DriftRates(
        noise.odom_walk_velocity_translation,
        noise.odom_walk_velocity_rotation,
        noise.odom_walk_turn_rotation,
    )


def _map_noise_density(config: LocalizationConfig) -> FloatArray:
    noise = config.localization
    translation, rotation = noise.map_sample_noise_translation, noise.map_sample_noise_rotation
    return np.array([translation, translation, rotation])


def _fix_variances(config: LocalizationConfig) -> Floats3:
    ekf = config.ekf
    translation, rotation = ekf.measurement_noise_translation, ekf.measurement_noise_rotation
    return translation, translation, rotation


def _twist_variances(config: LocalizationConfig) -> Floats3:
    if config.mode == 'perfect':
        return 0.0, 0.0, 0.0
    noise = config.localization
    linear, angular = noise.odom_twist_noise_linear, noise.odom_twist_noise_angular
    return linear, linear, angular


def _standard_deviations(variances: Floats3) -> Floats3:
    first, second, third = variances
    return math.sqrt(first), math.sqrt(second), math.sqrt(third)


def checked_twist(value: ArrayLike) -> Floats3:
    """``value`` as a finite body twist ``(vx [m/s], vy [m/s], wz [rad/s])``, else ValueError."""
    return checked_floats('twist', value, 'vx, vy, wz')


def is_teleport(
    increment: Floats3, twist_before: Floats3, twist_after: Floats3, dt_s: float
) -> bool:
    """Whether the body-frame ``increment`` over ``dt_s`` is larger than the twists can explain."""
    (dx, dy, dyaw), (vx0, vy0, wz0), (vx1, vy1, wz1) = increment, twist_before, twist_after
    speed_bound = math.hypot(vx0, vy0) + math.hypot(vx1, vy1)
    turn_bound = abs(wz0) + abs(wz1)
    return (
        math.hypot(dx, dy) > speed_bound * dt_s + TELEPORT_TOLERANCE_M
        or abs(dyaw) > turn_bound * dt_s + TELEPORT_TOLERANCE_RAD
    )


class Localization:
    """The localization simulator of one vehicle; see the module documentation."""

    def __init__(self, config: LocalizationConfig) -> None:
        # One generator per noise stream, each drawn from by its consumer alone.
        odometry_rng, map_noise_rng, fix_rng, twist_rng = (
            np.random.default_rng(stream)
            for stream in np.random.SeedSequence(config.seed).spawn(4))
        self._fix_draws = NormalDraws(fix_rng)
        self._twist_draws = NormalDraws(twist_rng)
        self.config = config
        self._twist_variances = _twist_variances(config)
        self._twist_std = _standard_deviations(self._twist_variances)
        self._previous: tuple[int, Floats3, Floats3] | None = None
        self._pending_reset: tuple[Floats3, FloatArray] | None = None
        self._odometry = DriftingOdometry(_drift_rates(config), odometry_rng)
        self._map_noise = GaussMarkovNoise(
            _map_noise_density(config),
            config.localization.map_noise_correlation_time,
            map_noise_rng,
        )
        self._ekf: PoseEkf | None = None
        self._next_fix_ns = 0
        self.encoders: EncoderOdometry | None = None
        if config.odometry_source == 'joint_states':
            self.encoders = EncoderOdometry(config.encoders, config.frame_prefix)
        self._wheel_pose: Floats3 | None = None  # the encoders' pose at the previous sample

    def update_config(self, config: LocalizationConfig) -> None:
        """Apply new noise parameters from the next sample on (``mode`` and ``seed`` are fixed)."""
        if (config.mode, config.seed) != (self.config.mode, self.config.seed):
            raise ValueError('mode and seed cannot change while running')
        if self.encoders is not None and config.encoders != self.config.encoders:
            self.encoders = EncoderOdometry(config.encoders, config.frame_prefix)
            self._wheel_pose = None
        self.config = config
        self._twist_variances = _twist_variances(config)
        self._twist_std = _standard_deviations(self._twist_variances)
        self._odometry.rates = _drift_rates(config)
        self._map_noise.density = _map_noise_density(config)
        self._map_noise.tau_s = config.localization.map_noise_correlation_time

    def request_reset(self, map_T_base: ArrayLike, covariance: ArrayLike) -> None:
        """Re-initialise the estimate at the next sample (``initialpose``); inputs are validated."""
        self._pending_reset = (
            checked_pose('initial pose', map_T_base),
            checked_covariance('initial pose covariance', covariance),
        )

    def ready(self, stamp_ns: int) -> bool:
        """Whether a ground-truth sample at ``stamp_ns`` can be processed: always, unless the
        odometry integrates wheel encoders and their sample of that time has not come yet."""
        latest = None if self.encoders is None else self.encoders.latest_stamp_ns
        return self.encoders is None or (latest is not None and latest >= stamp_ns)

    def step(self, stamp_ns: int, map_T_base: ArrayLike, twist: ArrayLike) -> LocalizationOutput:
        """Process one ground-truth sample: time [ns], true pose in map, true body twist. With
        wheel encoders the odometry takes their motion up to ``stamp_ns`` (feed
        ``self.encoders`` first; see :meth:`ready`)."""
        if isinstance(stamp_ns, bool) or not isinstance(stamp_ns, (int, np.integer)):
            raise ValueError(f'stamp_ns = {stamp_ns!r} must be an integer time in nanoseconds')
        truth = checked_pose('ground truth pose', map_T_base)
        true_twist = checked_twist(twist)
        event = None
        wheel_pose = None if self.encoders is None else self.encoders.pose_at(stamp_ns)
        measured_twist = true_twist
        if self._previous is None or stamp_ns < self._previous[0]:
            event = 'start' if self._previous is None else 'time_jump'
            self._start(stamp_ns)
            dt_s = 0.0
        else:
            previous_stamp_ns, previous_truth, previous_twist = self._previous
            dt_s = (stamp_ns - previous_stamp_ns) * 1e-9
            # The true motion since the previous sample, seen from the previous pose.
            increment = compose_floats(inverse_floats(previous_truth), truth)
            wheels = self._wheel_increment(wheel_pose)
            if wheels is not None and dt_s > 0.0:
                measured_twist = (wheels[0] / dt_s, wheels[1] / dt_s, wheels[2] / dt_s)
            if is_teleport(increment, previous_twist, true_twist, dt_s):
                event = 'teleport'
            else:
                self._predict(increment, wheels)
        self._previous = (int(stamp_ns), truth, true_twist)
        self._wheel_pose = wheel_pose
        if self._pending_reset is not None:
            reset, self._pending_reset = self._pending_reset, None
            self._apply_reset(*reset)
            event = event or 'reset'
        map_T_base_estimate, map_covariance, fix, restarted = self._estimate(stamp_ns, dt_s, truth)
        event = 'ekf_restart' if restarted else event
        odom_T_base = self._odometry.pose
        return LocalizationOutput(
            stamp_ns=int(stamp_ns),
            odom_T_base=odom_T_base,
            odom_covariance=self._odometry.covariance,
            twist=add_normal_noise(measured_twist, self._twist_std, self._twist_draws),
            twist_variances=self._twist_variances,
            map_T_base=map_T_base_estimate,
            map_covariance=map_covariance,
            map_T_odom=compose_floats(map_T_base_estimate, inverse_floats(odom_T_base)),
            pose_fix=fix,
            event=event,
        )

    def _start(self, stamp_ns: int) -> None:
        self._odometry.restart()
        self._map_noise.reset()
        self._ekf = None
        self._next_fix_ns = stamp_ns

    def _wheel_increment(self, wheel_pose: Floats3 | None) -> Floats3 | None:
        """The encoders' motion since the previous sample (None without encoders)."""
        if wheel_pose is None or self._wheel_pose is None:
            return None if self.encoders is None else (0.0, 0.0, 0.0)
        return compose_floats(inverse_floats(self._wheel_pose), wheel_pose)

    def _predict(self, increment: Floats3, wheels: Floats3 | None = None) -> None:
        measured, increment_variances = self._odometry.step(increment, wheels)
        if self._ekf is not None:
            self._ekf.predict_diagonal(measured, increment_variances)

    def _apply_reset(self, map_T_base: Floats3, covariance: FloatArray) -> None:
        self._map_noise.reset()
        if self.config.mode == 'ekf':
            self._ekf = PoseEkf.from_pose(map_T_base, covariance)

    def _pose_fix(self, truth: Floats3, fix_variances: Floats3) -> Floats3:
        std = _standard_deviations(fix_variances)
        x_m, y_m, yaw_rad = add_normal_noise(truth, std, self._fix_draws)
        return x_m, y_m, wrap_angle(yaw_rad)

    def _estimate(
        self, stamp_ns: int, dt_s: float, truth: Floats3
    ) -> tuple[Floats3, FloatArray, Floats3 | None, bool]:
        """The map pose estimate, its covariance, the pose fix taken now (EKF) and whether the
        EKF was restarted because its state stopped being finite or a correction failed."""
        if self.config.mode == 'perfect':
            return truth, np.zeros((3, 3)), None, False
        if self.config.mode == 'noisy':
            noise_x, noise_y, noise_yaw = self._map_noise.sample(dt_s)
            x_m, y_m, yaw_rad = truth
            estimate = (x_m + noise_x, y_m + noise_y, wrap_angle(yaw_rad + noise_yaw))
            return estimate, diagonal_covariance(self._map_noise.variance), None, False
        fix = None
        # An extreme initialpose (covariance near the largest float) can overflow the filter:
        # it restarts from a pose fix instead of publishing inf or failing at every sample.
        restarted = self._ekf is not None and not self._ekf.is_finite()
        if restarted:
            self._ekf = None
        if self._ekf is None or stamp_ns >= self._next_fix_ns:
            fix_variances = _fix_variances(self.config)
            fix = self._pose_fix(truth, fix_variances)
            if self._ekf is not None:
                try:
                    self._ekf.correct_diagonal(fix, fix_variances)
                except ValueError:  # numerically not positive definite (LinAlgError)
                    self._ekf, restarted = None, True
            if self._ekf is None or not self._ekf.is_finite():
                # The filter starts from its first pose fix.
                restarted = restarted or self._ekf is not None
                self._ekf = PoseEkf.from_pose(fix, diagonal_covariance(fix_variances))
            # Fixes on the grid start + k * period, each at the first sample at or after it.
            period_ns = round(1e9 / self.config.ekf.measurement_rate)
            self._next_fix_ns += period_ns
            if self._next_fix_ns <= stamp_ns:
                self._next_fix_ns = stamp_ns + period_ns
        x_m, y_m, yaw_rad = self._ekf.pose.tolist()
        return (x_m, y_m, yaw_rad), self._ekf.covariance.copy(), fix, restarted
