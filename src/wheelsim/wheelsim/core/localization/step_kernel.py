"""The localization's per-sample work, compiled: one call per ground-truth sample.

:func:`localization_step` does what :meth:`.model.Localization.step` describes for one sample
(checks, events, drifting odometry and its error moments, twist noise and, in modes
``perfect`` and ``noisy``, the map estimate and ``map_T_odom``) on plain arrays:

- ``state`` (:data:`STATE_SIZE` floats): the settings (:func:`write_settings`, from the
  configuration), the previous sample, the wheel encoders' poses, the measured increment of
  the sample (an EKF's prediction input), the odometry (:mod:`.odometry_drift`) and the map
  noise (:mod:`.gauss_markov`), at the offsets below;
- ``clock`` (int64): the previous stamp [ns] and whether there was one;
- ``draws``, ``cursors``: the arrays of a :class:`.normal_draws.NormalDraws` of the streams
  below (the kernel asks for more with :data:`DRAWS_NEEDED` instead of running out);
- outputs: ``output`` (:data:`OUTPUT_SIZE` floats: ``odom_T_base``, ``map_T_base``,
  ``map_T_odom`` as ``(x [m], y [m], yaw [rad], qz, qw)``, ``qz, qw`` the quaternion of the
  yaw, and the published body twist) and ``covariances`` (2, 3, 3): the covariances (x, y, yaw)
  of the odometry and of the map estimate.

It returns the event code (``EVENTS``), or a negative code for a sample it refused without
changing anything (:data:`INVALID_POSE`, :data:`INVALID_TWIST`, :data:`DRAWS_NEEDED`) or
:data:`INVALID_INCREMENT` (a measured increment the EKF would refuse, the odometry having
integrated it, as before such a prediction). Every function it calls is plain Python for
Python callers, so the kernel's ``py_func`` is the whole computation in plain Python (the
tests compare the two).
"""

from __future__ import annotations

import numpy as np

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.compiled import compiled, jitable
from wheelsim.core.geometry.angles import wrap_angle, yaw_quaternion_zw
from wheelsim.core.geometry.se2 import Floats3, compose_floats, inverse_floats
from wheelsim.core.localization import gauss_markov, odometry_drift
from wheelsim.core.localization.ekf import is_within_magnitude
from wheelsim.core.localization.gauss_markov import advance_gauss_markov
from wheelsim.core.localization.normal_draws import next_normal
from wheelsim.core.localization.odometry_drift import advance_odometry, write_error_covariance

#: Pose jumps larger than what the twist explains by more than these are teleports.
TELEPORT_TOLERANCE_M = 0.1
TELEPORT_TOLERANCE_RAD = 0.2

PERFECT, NOISY, EKF = 0, 1, 2
MODE_CODES = {'perfect': PERFECT, 'noisy': NOISY, 'ekf': EKF}
# Noise streams: rows of the draws, in the order of the generators a seed spawns.
ODOMETRY_DRAWS, MAP_NOISE_DRAWS, FIX_DRAWS, TWIST_DRAWS = 0, 1, 2, 3
STREAMS = 4
DRAWS_PER_SAMPLE = 3  # at most, per stream

# state: settings
MODE = 0
ENCODERS = 1  # 1.0: the odometry integrates the wheel encoders' poses
RATES = 2  # the three DriftRates
DENSITY = 5  # map noise density x, y, yaw
TAU = 8  # map noise correlation time [s]
TWIST_STD = 9  # standard deviations of the twist noise vx, vy, wz
# state: per sample
PREVIOUS_TRUTH = 12  # map_T_base of the previous sample
PREVIOUS_TWIST = 15
WHEEL_POSE = 18  # the encoders' pose at this sample (written before the call), then 1.0 if known
PREVIOUS_WHEEL_POSE = 22  # the same at the previous sample
MEASURED = 26  # the sample's measured increment, then its translation and rotation variances
EKF_PREDICTS = 31  # 1.0 while an EKF (mode ekf) predicts with the measured increments
ODOMETRY = 32
MAP_NOISE = ODOMETRY + odometry_drift.STATE_SIZE
MAP_AXES = 3
STATE_SIZE = MAP_NOISE + gauss_markov.state_size(MAP_AXES)
NOISE_VALUE = MAP_NOISE + 1 + MAP_AXES  # the map noise x, y, yaw, then their variances
NOISE_VARIANCE = NOISE_VALUE + MAP_AXES

# clock
PREVIOUS_STAMP = 0
STARTED = 1
CLOCK_SIZE = 2

# output
ODOM = 0
MAP = 5
MAP_ODOM = 10
TWIST = 15
OUTPUT_SIZE = 18
# covariances
ODOM_COVARIANCE, MAP_COVARIANCE = 0, 1

NO_EVENT, START, TIME_JUMP, TELEPORT, RESET = 0, 1, 2, 3, 4
EVENTS = (None, 'start', 'time_jump', 'teleport', 'reset')
INVALID_POSE, INVALID_TWIST, DRAWS_NEEDED, INVALID_INCREMENT = -1, -2, -3, -4


def write_settings(
    state: FloatArray, mode: str, encoders: bool, rates: Floats3, density: Floats3,
    tau_s: float, twist_std: Floats3,
) -> None:
    """Write the settings of a configuration into ``state`` (from the next sample on)."""
    state[MODE] = MODE_CODES[mode]
    state[ENCODERS] = float(encoders)
    state[RATES:RATES + 3] = rates
    state[DENSITY:DENSITY + 3] = density
    state[TAU] = tau_s
    state[TWIST_STD:TWIST_STD + 3] = twist_std


@jitable
def is_teleport(
    increment: Floats3, twist_before: Floats3, twist_after: Floats3, dt_s: float
) -> bool:
    """Whether the body-frame ``increment`` over ``dt_s`` is larger than the twists can explain
    (np.hypot: libm's, the same compiled and in plain Python)."""
    (dx, dy, dyaw), (vx0, vy0, wz0), (vx1, vy1, wz1) = increment, twist_before, twist_after
    speed_bound = np.hypot(vx0, vy0) + np.hypot(vx1, vy1)
    turn_bound = abs(wz0) + abs(wz1)
    return bool(
        np.hypot(dx, dy) > speed_bound * dt_s + TELEPORT_TOLERANCE_M
        or abs(dyaw) > turn_bound * dt_s + TELEPORT_TOLERANCE_RAD
    )


@jitable
def write_pose(output: FloatArray, at: int, x_m: float, y_m: float, yaw_rad: float) -> None:
    """``(x, y, yaw, qz, qw)`` of a pose into ``output[at:at + 5]``."""
    qz, qw = yaw_quaternion_zw(yaw_rad)
    output[at], output[at + 1], output[at + 2], output[at + 3], output[at + 4] = (
        x_m, y_m, yaw_rad, qz, qw)


@jitable
def write_map_outputs(output: FloatArray, x_m: float, y_m: float, yaw_rad: float) -> None:
    """The map estimate ``map_T_base`` and ``map_T_odom = map_T_base * inverse(odom_T_base)``
    (``odom_T_base`` already in ``output``) into ``output``."""
    write_pose(output, MAP, x_m, y_m, yaw_rad)
    odom_T_base = (output[ODOM], output[ODOM + 1], output[ODOM + 2])
    map_x_m, map_y_m, map_yaw_rad = compose_floats((x_m, y_m, yaw_rad),
                                                   inverse_floats(odom_T_base))
    write_pose(output, MAP_ODOM, map_x_m, map_y_m, map_yaw_rad)


@jitable
def _wheel_increment(state: FloatArray) -> Floats3:
    """The encoders' motion since the previous sample, zero unless both poses are known."""
    if state[WHEEL_POSE + 3] == 0.0 or state[PREVIOUS_WHEEL_POSE + 3] == 0.0:
        return 0.0, 0.0, 0.0
    before = (state[PREVIOUS_WHEEL_POSE], state[PREVIOUS_WHEEL_POSE + 1],
              state[PREVIOUS_WHEEL_POSE + 2])
    now = (state[WHEEL_POSE], state[WHEEL_POSE + 1], state[WHEEL_POSE + 2])
    return compose_floats(inverse_floats(before), now)


@compiled
def localization_step(
    stamp_ns: int, x_m: float, y_m: float, yaw_rad: float, vx_mps: float, vy_mps: float,
    wz_radps: float, reset: bool, state: FloatArray, clock: IntArray, draws: FloatArray,
    cursors: IntArray, output: FloatArray, covariances: FloatArray,
) -> int:
    """One ground-truth sample: stamp [ns], true ``map_T_base``, true body twist, and whether
    ``initialpose`` asked for a reset; see the module documentation."""
    for stream in (ODOMETRY_DRAWS, MAP_NOISE_DRAWS, TWIST_DRAWS):
        if cursors[stream] + DRAWS_PER_SAMPLE > draws.shape[1]:
            return DRAWS_NEEDED
    if not is_within_magnitude(x_m, y_m, yaw_rad):
        return INVALID_POSE
    if not is_within_magnitude(vx_mps, vy_mps, wz_radps):
        return INVALID_TWIST
    truth = (x_m, y_m, wrap_angle(yaw_rad))
    twist = (vx_mps, vy_mps, wz_radps)
    encoders = state[ENCODERS] != 0.0
    mode = state[MODE]
    odometry = state[ODOMETRY:MAP_NOISE]
    event = NO_EVENT
    # with encoders, what they measured: nothing without an increment (start, time jump,
    # repeated stamp), never the true twist
    measured_twist = (0.0, 0.0, 0.0) if encoders else twist
    if clock[STARTED] == 0 or stamp_ns < clock[PREVIOUS_STAMP]:
        event = START if clock[STARTED] == 0 else TIME_JUMP
        state[ODOMETRY:STATE_SIZE] = 0.0  # odometry and map noise restart
        dt_s = 0.0
    else:
        dt_s = (stamp_ns - clock[PREVIOUS_STAMP]) * 1e-9
        previous_truth = (state[PREVIOUS_TRUTH], state[PREVIOUS_TRUTH + 1],
                          state[PREVIOUS_TRUTH + 2])
        previous_twist = (state[PREVIOUS_TWIST], state[PREVIOUS_TWIST + 1],
                          state[PREVIOUS_TWIST + 2])
        # The true motion since the previous sample, seen from the previous pose.
        dx_m, dy_m, dyaw_rad = compose_floats(inverse_floats(previous_truth), truth)
        wheels_dx_m, wheels_dy_m, wheels_dyaw_rad = _wheel_increment(state)
        if encoders and dt_s > 0.0:
            measured_twist = (wheels_dx_m / dt_s, wheels_dy_m / dt_s, wheels_dyaw_rad / dt_s)
        if is_teleport((dx_m, dy_m, dyaw_rad), previous_twist, twist, dt_s):
            event = TELEPORT
        else:
            measured_x_m, measured_y_m, measured_yaw_rad, translation, rotation = (
                advance_odometry(odometry, state[RATES:RATES + 3], dx_m, dy_m, dyaw_rad,
                                 encoders, wheels_dx_m, wheels_dy_m, wheels_dyaw_rad,
                                 draws, cursors, ODOMETRY_DRAWS))
            state[MEASURED], state[MEASURED + 1], state[MEASURED + 2] = (
                measured_x_m, measured_y_m, measured_yaw_rad)
            state[MEASURED + 3], state[MEASURED + 4] = translation, rotation
            if state[EKF_PREDICTS] != 0.0 and not is_within_magnitude(
                    measured_x_m, measured_y_m, measured_yaw_rad):
                return INVALID_INCREMENT
    clock[PREVIOUS_STAMP] = stamp_ns
    clock[STARTED] = 1
    state[PREVIOUS_TRUTH], state[PREVIOUS_TRUTH + 1], state[PREVIOUS_TRUTH + 2] = truth
    state[PREVIOUS_TWIST], state[PREVIOUS_TWIST + 1], state[PREVIOUS_TWIST + 2] = twist
    state[PREVIOUS_WHEEL_POSE:PREVIOUS_WHEEL_POSE + 4] = state[WHEEL_POSE:WHEEL_POSE + 4]
    if reset:
        state[MAP_NOISE:STATE_SIZE] = 0.0
        if event == NO_EVENT:
            event = RESET
    write_pose(output, ODOM, odometry[odometry_drift.POSE], odometry[odometry_drift.POSE + 1],
               odometry[odometry_drift.POSE + 2])
    write_error_covariance(odometry, covariances[ODOM_COVARIANCE])
    for axis in range(3):
        output[TWIST + axis] = measured_twist[axis] + state[TWIST_STD + axis] * next_normal(
            draws, cursors, TWIST_DRAWS)
    if mode == EKF:
        return event
    if mode == NOISY:
        if dt_s > 0.0:  # a sample at the previous time repeats the previous noise
            advance_gauss_markov(state[MAP_NOISE:STATE_SIZE], state[DENSITY:DENSITY + 3], dt_s,
                                 state[TAU], draws, cursors, MAP_NOISE_DRAWS)
        x_m, y_m, yaw_rad = truth
        write_map_outputs(output, x_m + state[NOISE_VALUE], y_m + state[NOISE_VALUE + 1],
                          wrap_angle(yaw_rad + state[NOISE_VALUE + 2]))
        map_covariance = covariances[MAP_COVARIANCE]
        map_covariance[:, :] = 0.0
        for axis in range(3):
            map_covariance[axis, axis] = state[NOISE_VARIANCE + axis]
    else:
        write_map_outputs(output, truth[0], truth[1], truth[2])
        covariances[MAP_COVARIANCE, :, :] = 0.0
    return event


def load_kernel() -> None:
    """Compile or load :func:`localization_step` now, on scratch arrays, as numba does at the
    first call (the warm-up before a first run; a ``Localization`` loads it when built)."""
    localization_step(
        0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, False, np.zeros(STATE_SIZE),
        np.zeros(CLOCK_SIZE, dtype=np.int64), np.zeros((STREAMS, DRAWS_PER_SAMPLE)),
        np.zeros(STREAMS, dtype=np.int64), np.zeros(OUTPUT_SIZE), np.zeros((2, 3, 3)))
