"""The localization simulator: from ground truth to odometry, a map pose estimate and map -> odom.

Frames (REP-105): ``map`` fixed; ``odom`` where the odometry started, drifting against ``map``;
``base`` the vehicle body.  Poses are ``(x [m], y [m], yaw [rad])`` (see
:mod:`wheelsim.core.geometry.se2`); ``a_T_b`` places ``b`` in ``a``.

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
odom`` absorbs the jump, and the EKF starts again from a pose fix there.
:meth:`Localization.request_reset` (``initialpose``) re-initialises the estimate at the next
sample: the EKF to the given pose and covariance (also at a teleport, and again at a teleport
to that pose soon after: vehicle_sim moving there, :data:`RESET_TELEPORT_WINDOW_NS`), the map
noise to zero.

Every random draw comes from generators seeded by ``seed`` (independent streams for odometry,
map noise, pose fixes and twist noise), so equal seeds and inputs give equal outputs.  Non-finite
inputs raise ``ValueError`` naming the field; they never reach the state.

The per-sample work runs in one compiled call (:mod:`.step_kernel`) on arrays this class keeps;
mode ``ekf`` adds the filter in Python (:class:`.ekf.PoseEkf`). :meth:`Localization.advance`
leaves the outputs in those arrays (``output``, ``odom_covariance``, ``map_covariance``: what a
node copies into its messages), :meth:`Localization.step` returns them as a
:class:`LocalizationOutput`.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import direct_call
from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Floats3
from wheelsim.core.localization import step_kernel as kernel
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.ekf import (
    PoseEkf,
    checked_covariance,
    checked_floats,
    checked_pose,
    diagonal_covariance,
    invalid_floats,
)
from wheelsim.core.localization.normal_draws import NormalDraws
from wheelsim.core.localization.wheel_encoders import EncoderOdometry

#: A teleport at most this long after an ``initialpose`` reset of the EKF, to within
#: RESET_POSE_TOLERANCE_* of its pose (what the vehicle may drive before its next sample), is
#: vehicle_sim moving the vehicle on that same message (each node handles it at its next
#: sample, in either order): the filter starts again from the message's pose and covariance,
#: not from a fix.
RESET_TELEPORT_WINDOW_NS = 1_000_000_000
RESET_POSE_TOLERANCE_M = 0.5
RESET_POSE_TOLERANCE_RAD = 0.5
#: The event of such a teleport.
TELEPORT_TO_RESET = 'teleport_to_reset'


def next_fix_ns(start_ns: int, stamp_ns: int, rate_hz: float) -> int:
    """The first point of the fix grid ``start_ns + k / rate_hz`` (k whole, each point rounded
    to the nanosecond, not accumulated: no drift) after ``stamp_ns`` [ns]."""
    k = math.floor((stamp_ns - start_ns) * rate_hz / 1e9) + 1
    point_ns = start_ns + round(k * 1e9 / rate_hz)
    while point_ns <= stamp_ns:  # the floor under rounding
        k += 1
        point_ns = start_ns + round(k * 1e9 / rate_hz)
    return point_ns


def _teleported_to(reset: tuple[int, Floats3, FloatArray], stamp_ns: int,
                   truth: Floats3) -> bool:
    """Whether a teleport to ``truth`` at ``stamp_ns`` is vehicle_sim moving to the pose of
    the ``initialpose`` reset ``reset`` (its stamp, pose and covariance; see
    :data:`RESET_TELEPORT_WINDOW_NS`)."""
    reset_ns, (x_m, y_m, yaw_rad), _ = reset
    return (stamp_ns - reset_ns <= RESET_TELEPORT_WINDOW_NS
            and math.hypot(truth[0] - x_m, truth[1] - y_m) <= RESET_POSE_TOLERANCE_M
            and abs(wrap_angle(truth[2] - yaw_rad)) <= RESET_POSE_TOLERANCE_RAD)



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
    event: str | None  # start, time_jump, teleport, teleport_to_reset, reset, ekf_restart, None


def _drift_rates(config: LocalizationConfig) -> Floats3:
    if config.mode == 'perfect':
        return 0.0, 0.0, 0.0
    noise = config.localization
    return (noise.odom_walk_velocity_translation, noise.odom_walk_velocity_rotation,
            noise.odom_walk_turn_rotation)


def _map_noise_density(config: LocalizationConfig) -> Floats3:
    noise = config.localization
    translation, rotation = noise.map_sample_noise_translation, noise.map_sample_noise_rotation
    return translation, translation, rotation


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


def _floats3(values: list[float]) -> Floats3:
    x_m, y_m, yaw_rad = values
    return x_m, y_m, yaw_rad


class Localization:
    """The localization simulator of one vehicle; see the module documentation.

    After each :meth:`advance`, ``output`` holds ``odom_T_base``, ``map_T_base``, ``map_T_odom``
    (each ``x, y, yaw, qz, qw``) and the published twist at the offsets of :mod:`.step_kernel`,
    ``odom_covariance`` and ``map_covariance`` their 3x3 covariances, ``twist_variances`` the
    twist's (a new tuple when they change) and ``pose_fix`` the EKF's fix of the sample (or
    None). The arrays are the same objects from sample to sample. The kernel's machine code is
    called directly (:func:`wheelsim.core.compiled.direct_call`), which cannot be pickled.
    With ``odometry_source: joint_states`` the config's ``encoders.model`` must be a model, not
    auto (:func:`~wheelsim.core.localization.wheel_encoders.with_vehicle` makes it the
    vehicle's); ValueError otherwise.
    """

    def __init__(self, config: LocalizationConfig) -> None:
        # One generator per noise stream, each drawn from by its consumer alone.
        self._draws = NormalDraws(np.random.default_rng(stream)
                                  for stream in np.random.SeedSequence(config.seed).spawn(4))
        self._state = np.zeros(kernel.STATE_SIZE)
        self._clock = np.zeros(kernel.CLOCK_SIZE, dtype=np.int64)
        self.output = np.zeros(kernel.OUTPUT_SIZE)
        self._covariances = np.zeros((2, 3, 3))
        self.odom_covariance = self._covariances[kernel.ODOM_COVARIANCE]  # views
        self.map_covariance = self._covariances[kernel.MAP_COVARIANCE]
        self.pose_fix: Floats3 | None = None
        self._pending_reset: tuple[Floats3, FloatArray] | None = None
        self._ekf: PoseEkf | None = None
        # an initialpose reset no teleport followed yet: its stamp, pose and covariance
        self._reset_before_teleport: tuple[int, Floats3, FloatArray] | None = None
        # the EKF's fix grid: its start, its last fix, its next
        self._fix_start_ns = self._last_fix_ns = self._next_fix_ns = 0
        self.encoders: EncoderOdometry | None = None
        if config.odometry_source == 'joint_states':
            self.encoders = EncoderOdometry(config.encoders, config.frame_prefix)
        self.config = config
        self._ekf_mode = config.mode == 'ekf'  # fixed
        self._apply_settings(config)
        self._reserve_draws()
        # Called without numba's dispatch (loaded now, not at the first sample): the stamp is
        # an int, the pose and twist floats, and the arrays always of these types (the draws
        # are replaced by such arrays only).
        self._step_kernel = direct_call(kernel.localization_step, 0, 0.0, 0.0, 0.0, 0.0, 0.0,
                                        0.0, False, *self._arrays)

    def _apply_settings(self, config: LocalizationConfig) -> None:
        self.twist_variances = _twist_variances(config)
        kernel.write_settings(
            self._state, config.mode, self.encoders is not None, _drift_rates(config),
            _map_noise_density(config), config.localization.map_noise_correlation_time,
            _standard_deviations(self.twist_variances))

    def _reserve_draws(self) -> None:
        self._draws.reserve(kernel.DRAWS_PER_SAMPLE)
        # The kernel's arrays after the stamp, the inputs and the reset flag.
        self._arrays = (self._state, self._clock, self._draws.values, self._draws.cursors,
                        self.output, self._covariances)

    def update_config(self, config: LocalizationConfig, new_vehicle: bool = False) -> None:
        """Apply new noise parameters from the next sample on (``mode`` and ``seed`` are fixed);
        ``new_vehicle``: the encoder geometry is another vehicle's, whose wheels start afresh
        (else the wheel odometry goes on from the wheels' last angles)."""
        if (config.mode, config.seed) != (self.config.mode, self.config.seed):
            raise ValueError('mode and seed cannot change while running')
        if self.encoders is not None and config.encoders != self.config.encoders:
            self.encoders = self.encoders.reconfigured(config.encoders,
                                                       same_wheels=not new_vehicle)
        rate_hz = config.ekf.measurement_rate
        if self._ekf is not None and rate_hz != self.config.ekf.measurement_rate:
            # the next fix on the new rate's grid, not the one the old rate scheduled
            self._next_fix_ns = next_fix_ns(self._fix_start_ns, self._last_fix_ns, rate_hz)
        self.config = config
        self._apply_settings(config)

    def request_reset(self, map_T_base: ArrayLike, covariance: ArrayLike) -> None:
        """Re-initialise the estimate at the next sample (``initialpose``); inputs are validated."""
        self._pending_reset = (
            checked_pose('initial pose', map_T_base),
            checked_covariance('initial pose covariance', covariance),
        )

    @property
    def reset_requested(self) -> bool:
        """Whether :meth:`request_reset` waits for the next sample."""
        return self._pending_reset is not None

    def ready(self, stamp_ns: int) -> bool:
        """Whether a ground-truth sample at ``stamp_ns`` can be processed: always, unless the
        odometry integrates wheel encoders and their sample of that time has not come yet."""
        latest = None if self.encoders is None else self.encoders.latest_stamp_ns
        return self.encoders is None or (latest is not None and latest >= stamp_ns)

    def step(self, stamp_ns: int, map_T_base: ArrayLike, twist: ArrayLike) -> LocalizationOutput:
        """Process one ground-truth sample: time [ns], true pose in map, true body twist. With
        wheel encoders the odometry takes their motion up to ``stamp_ns`` (feed
        ``self.encoders`` first; see :meth:`ready`)."""
        if isinstance(stamp_ns, bool) or not isinstance(stamp_ns, (int, np.integer)) or not (
                -2**63 <= stamp_ns < 2**63):
            raise ValueError(f'stamp_ns = {stamp_ns!r} must be an integer time in nanoseconds')
        stamp = int(stamp_ns)
        event = self.advance(stamp, checked_pose('ground truth pose', map_T_base),
                             checked_twist(twist))
        values = self.output.tolist()
        return LocalizationOutput(
            stamp_ns=stamp,
            odom_T_base=_floats3(values[kernel.ODOM:kernel.ODOM + 3]),
            odom_covariance=self.odom_covariance.copy(),
            twist=_floats3(values[kernel.TWIST:kernel.TWIST + 3]),
            twist_variances=self.twist_variances,
            map_T_base=_floats3(values[kernel.MAP:kernel.MAP + 3]),
            map_covariance=self.map_covariance.copy(),
            map_T_odom=_floats3(values[kernel.MAP_ODOM:kernel.MAP_ODOM + 3]),
            pose_fix=self.pose_fix,
            event=event,
        )

    def advance(self, stamp_ns: int, map_T_base: Floats3, twist: Floats3) -> str | None:
        """:meth:`step` of a stamp given as an ``int`` and a pose and a twist given as three
        floats each (a message's numbers), leaving the outputs in the arrays (see the class);
        return the event."""
        x_m, y_m, yaw_rad = map_T_base
        vx_mps, vy_mps, wz_radps = twist
        if self.encoders is not None:
            wheel_pose = self.encoders.pose_at(stamp_ns)
            at = kernel.WHEEL_POSE
            self._state[at:at + 4] = (0.0, 0.0, 0.0, 0.0) if wheel_pose is None else (
                *wheel_pose, 1.0)
        reset = self._pending_reset is not None
        state, clock, draws, cursors, output, covariances = self._arrays
        code = self._step_kernel(stamp_ns, x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps, reset,
                                 state, clock, draws, cursors, output, covariances)
        if code == kernel.DRAWS_NEEDED:
            self._reserve_draws()
            code = self._step_kernel(stamp_ns, x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps, reset,
                                     *self._arrays)
        if code < 0:
            raise self._refusal(code, map_T_base, twist)
        if self._ekf_mode:
            return self._ekf_step(stamp_ns, (x_m, y_m, wrap_angle(yaw_rad)), code)
        self._pending_reset = None
        return kernel.EVENTS[code]

    def _refusal(self, code: int, map_T_base: Floats3, twist: Floats3) -> ValueError:
        """The error of a sample the kernel refused (``code`` < 0, not DRAWS_NEEDED)."""
        if code == kernel.INVALID_POSE:
            return invalid_floats('ground truth pose', map_T_base, 'x, y, yaw')
        if code == kernel.INVALID_TWIST:
            return invalid_floats('twist', twist, 'vx, vy, wz')
        dx_m, dy_m, dyaw_rad = self._state[kernel.MEASURED:kernel.MEASURED + 3].tolist()
        return invalid_floats('odometry increment', (dx_m, dy_m, dyaw_rad), 'x, y, yaw')

    def _ekf_step(self, stamp_ns: int, truth: Floats3, code: int) -> str | None:
        """Mode ekf after the kernel: predict, reset, correct; the map outputs; the event."""
        try:
            event = kernel.EVENTS[code]
            reset, self._reset_before_teleport = self._reset_before_teleport, None
            if code in (kernel.START, kernel.TIME_JUMP):
                self._ekf = None
                self._fix_start_ns = self._next_fix_ns = stamp_ns
            elif code == kernel.TELEPORT:
                if reset is not None and _teleported_to(reset, stamp_ns, truth):
                    # vehicle_sim moved to the initialpose (fixes since were of the old place)
                    self._ekf = PoseEkf.from_pose(reset[1], reset[2])
                    event = TELEPORT_TO_RESET
                else:
                    # Kept, the estimate would be metres off with the certainty of its fixes:
                    # the filter starts again from the fix at the new place.
                    self._ekf = None
            else:
                self._reset_before_teleport = reset
                if self._ekf is not None:
                    at = kernel.MEASURED
                    dx_m, dy_m, dyaw_rad, translation, rotation = \
                        self._state[at:at + 5].tolist()
                    self._ekf.predict_diagonal((dx_m, dy_m, dyaw_rad),
                                               (translation, translation, rotation))
            if self._pending_reset is not None:
                (pose, covariance), self._pending_reset = self._pending_reset, None
                self._ekf = PoseEkf.from_pose(pose, covariance)
                if code != kernel.TELEPORT:
                    self._reset_before_teleport = (stamp_ns, pose, covariance)
            restarted = self._estimate(stamp_ns, truth)
            if restarted:  # what the reset gave is gone
                self._reset_before_teleport = None
        except ValueError:  # a pose fix beyond the largest magnitude: the twist was not noised
            self._draws.cursors[kernel.TWIST_DRAWS] -= kernel.DRAWS_PER_SAMPLE
            raise
        finally:
            self._state[kernel.EKF_PREDICTS] = float(self._ekf is not None)
        x_m, y_m, yaw_rad = self._ekf.pose.tolist()
        kernel.write_map_outputs(self.output, x_m, y_m, yaw_rad)
        self.map_covariance[:] = self._ekf.covariance
        return 'ekf_restart' if restarted else event

    def _pose_fix(self, truth: Floats3, fix_variances: Floats3) -> Floats3:
        """The truth plus white noise of ``fix_variances``."""
        (x_m, y_m, yaw_rad), (std_x, std_y, std_yaw) = truth, _standard_deviations(fix_variances)
        noise_x, noise_y, noise_yaw = self._draws.take(3, kernel.FIX_DRAWS)
        return (x_m + std_x * noise_x, y_m + std_y * noise_y,
                wrap_angle(yaw_rad + std_yaw * noise_yaw))

    def _estimate(self, stamp_ns: int, truth: Floats3) -> bool:
        """Take a pose fix if one is due (``pose_fix``) and correct the EKF with it; return
        whether the EKF was restarted because its state stopped being finite or a correction
        failed."""
        self.pose_fix = None
        # An extreme initialpose (covariance near the largest float) can overflow the filter:
        # it restarts from a pose fix instead of publishing inf or failing at every sample.
        restarted = self._ekf is not None and not self._ekf.is_finite()
        if restarted:
            self._ekf = None
        if self._ekf is None or stamp_ns >= self._next_fix_ns:
            fix_variances = _fix_variances(self.config)
            fix = self.pose_fix = self._pose_fix(truth, fix_variances)
            if self._ekf is not None:
                try:
                    self._ekf.correct_diagonal(fix, fix_variances)
                except ValueError:  # numerically not positive definite (LinAlgError)
                    self._ekf, restarted = None, True
            if self._ekf is None or not self._ekf.is_finite():
                # The filter starts from its first pose fix.
                restarted = restarted or self._ekf is not None
                self._ekf = PoseEkf.from_pose(fix, diagonal_covariance(fix_variances))
            self._last_fix_ns = stamp_ns
            self._next_fix_ns = next_fix_ns(self._fix_start_ns, stamp_ns,
                                            self.config.ekf.measurement_rate)
        return restarted
