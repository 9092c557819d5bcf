"""What a calibration is fitted to: commands and the measured response of one vehicle, and the
checks that a recording excites every parameter to be fitted.

Times are seconds on one clock (the bag's header stamps, or log times for unstamped messages).
Commands are body twists ``(vx [m/s], vy [m/s], wz [rad/s])`` held from their time on, as
vehicle_sim holds ``cmd_vel``; the response is the measured body twist of base_link (``odom``'s
twist or ``twist_actual``) and, when the bag has ``joint_states``, the wheel joint velocities
[rad/s] and the steering angle [rad] of the virtual centre wheel (bicycle).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wheelsim.core.arrays import FloatArray

MIN_DURATION_S = 10.0
# the geometry the fitted response depends on, per model (keys below model_params.<model>)
FIT_GEOMETRY = {'differential': ('track',), 'bicycle': ('wheel_base',),
                'omni': ('wheel_base', 'track')}
MIN_STEPS = 4  # command changes of at least STEP_FRACTION of the largest command
STEP_FRACTION = 0.2
HOLD_S = 1.0  # how long a step must be held for its response to show
AT_REST_MPS = 0.05


class CalibrationError(ValueError):
    """The recording cannot give the parameters: says what is missing and what to record."""


def _empty() -> FloatArray:
    return np.empty(0)


@dataclass(frozen=True)
class Recording:
    """Commands and measured response; see the module documentation."""

    command_t_s: FloatArray
    command: FloatArray  # (N, 3)
    measured_t_s: FloatArray
    measured: FloatArray  # (M, 3)
    joints_t_s: FloatArray = field(default_factory=_empty)
    wheel_velocity_radps: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    wheel_names: tuple[str, ...] = ()
    steering_rad: FloatArray = field(default_factory=_empty)  # (J,) or empty

    @property
    def start_s(self) -> float:
        """The simulation starts at the first measured sample (the vehicle at rest)."""
        return float(self.measured_t_s[0])

    @property
    def duration_s(self) -> float:
        return float(self.measured_t_s[-1] - self.measured_t_s[0])

    def head(self, seconds: float) -> Recording:
        """The first ``seconds`` of the recording (all of it if shorter)."""
        end = self.start_s + seconds
        commands = self.command_t_s <= end
        measured = self.measured_t_s <= end
        joints = self.joints_t_s <= end
        return Recording(
            self.command_t_s[commands], self.command[commands], self.measured_t_s[measured],
            self.measured[measured], self.joints_t_s[joints],
            self.wheel_velocity_radps[joints] if len(self.joints_t_s) else
            self.wheel_velocity_radps, self.wheel_names,
            self.steering_rad[joints] if len(self.steering_rad) else self.steering_rad,
        )

    def measured_steering_at_samples(self) -> FloatArray:
        """The steering angle at each measured sample (nearest joint sample), or empty."""
        if not len(self.steering_rad):
            return _empty()
        index = np.clip(np.searchsorted(self.joints_t_s, self.measured_t_s), 0,
                        len(self.joints_t_s) - 1)
        return self.steering_rad[index]


def _steps(values: FloatArray, times: FloatArray, size: float) -> int:
    """How many times ``values`` change by at least ``size`` and then hold HOLD_S."""
    changes = np.flatnonzero(np.abs(np.diff(values)) >= size) + 1
    held = 0
    for i, index in enumerate(changes):
        end = times[changes[i + 1]] if i + 1 < len(changes) else times[-1]
        held += end - times[index] >= HOLD_S
    return held


def check_excitation(recording: Recording, model: str) -> None:
    """Raise :class:`CalibrationError` unless the recording can identify the actuators: finite,
    long enough, starting at rest, with held steps of the commands the model's actuators
    follow."""
    if len(recording.measured_t_s) < 20 or len(recording.command_t_s) < 2:
        raise CalibrationError(
            f'{len(recording.command_t_s)} commands and {len(recording.measured_t_s)} measured '
            'samples: record cmd_vel and odom (or twist_actual) while driving')
    for name, times, values in (('command', recording.command_t_s, recording.command),
                                ('measured sample', recording.measured_t_s, recording.measured)):
        bad = np.flatnonzero(~np.isfinite(values).all(axis=1))
        if bad.size:
            raise CalibrationError(
                f'the {name} at {times[bad[0]]:.3f} s is not finite '
                f'({values[bad[0]].tolist()}): {bad.size} such, record without them')
    if recording.duration_s < MIN_DURATION_S:
        raise CalibrationError(
            f'the recording lasts {recording.duration_s:.1f} s: record at least '
            f'{MIN_DURATION_S:g} s of step commands')
    if np.max(np.abs(recording.measured[0])) > AT_REST_MPS:
        raise CalibrationError(
            f'the vehicle moves at the first measured sample ({recording.measured[0].tolist()}): '
            'start recording with the vehicle at rest')
    vx = recording.command[:, 0]
    largest = np.max(np.abs(vx))
    if largest < 0.05 or _steps(vx, recording.command_t_s, STEP_FRACTION * largest) < MIN_STEPS:
        raise CalibrationError(
            f'too few steps in the speed command (at least {MIN_STEPS} changes of 20 % of the '
            f'largest speed, each held {HOLD_S:g} s): record steps in vx such as 0 -> 0.3 -> 0 '
            '-> full speed -> beyond the top speed -> 0 m/s, each held 2-3 s')
    if model == 'bicycle':
        wz = recording.command[:, 2]
        moving = np.abs(vx) > 0.1 * largest
        turns = wz[moving]
        if not len(turns) or np.max(np.abs(turns)) < 1e-3 or _steps(
            wz * moving, recording.command_t_s, STEP_FRACTION * np.max(np.abs(turns))
        ) < MIN_STEPS // 2:
            raise CalibrationError(
                'too few steering steps while driving: record steps in wz at a constant speed, '
                'such as straight -> left -> straight -> full lock right -> straight, each held '
                '2-3 s')


@dataclass(frozen=True)
class Estimate:
    """A fitted value with its 95 % confidence interval ``[low, high]``."""

    value: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return 0.5 * (self.high - self.low)


def line_through_origin(x: FloatArray, y: FloatArray) -> Estimate:
    """Least-squares slope of ``y = slope * x`` with its 95 % confidence interval."""
    slope = float(np.dot(x, y) / np.dot(x, x))
    residual = y - slope * x
    dof = max(len(x) - 1, 1)
    std = float(np.sqrt(np.dot(residual, residual) / dof / np.dot(x, x)))
    return Estimate(slope, slope - 1.96 * std, slope + 1.96 * std)


def fit_geometry(recording: Recording, model: str, tyre_slip: bool = False
                 ) -> dict[str, Estimate]:
    """Wheel radius and track / wheel base from ``joint_states`` and the measured twist, where
    the recording has the joints (wheelsim's joint names); empty otherwise.

    Rolling without slip: ``vx = r * mean(wheel rates)``; differential ``wz * track = r *
    (right - left)``; omni ``wz * (wheel_base + track) / 2 = r * (-fl + fr - rl + rr) / 4``
    (the lever, reported as such); bicycle ``vx tan(delta) = wheel_base * wz``, unless
    ``tyre_slip`` (the dynamic bicycle, which understeers or oversteers: no wheel base).
    """
    if not len(recording.joints_t_s) or not recording.wheel_names:
        return {}
    index = np.clip(np.searchsorted(recording.joints_t_s, recording.measured_t_s), 0,
                    len(recording.joints_t_s) - 1)
    rates = recording.wheel_velocity_radps[index]
    vx, wz = recording.measured[:, 0], recording.measured[:, 2]
    names = recording.wheel_names
    driven = [i for i, n in enumerate(names) if not n.startswith('steered')]
    rolling = np.abs(vx) > 0.1 * np.max(np.abs(vx))
    out: dict[str, Estimate] = {}
    if rolling.sum() < 10:
        return out
    # the mean of the driven wheels (a fixed axle's pair too) turns at vx / r
    out['wheel_radius'] = line_through_origin(rates[rolling][:, driven].mean(axis=1), vx[rolling])
    turning = np.abs(wz) > 0.05 * max(np.max(np.abs(wz)), 1e-9)
    radius = out['wheel_radius'].value

    def rate(name: str) -> FloatArray:
        return rates[turning, names.index(name)]

    if model == 'differential' and turning.sum() >= 10:
        difference = radius * (rate('left_wheel_joint') - rate('right_wheel_joint'))
        out['track'] = line_through_origin(wz[turning], -difference)
    elif model == 'omni' and turning.sum() >= 10:
        fl, fr, rl, rr = (rate(f'{n}_wheel_joint') for n in (
            'front_left', 'front_right', 'rear_left', 'rear_right'))
        out['lever'] = line_through_origin(wz[turning], radius * (-fl + fr - rl + rr) / 4.0)
    elif model == 'bicycle' and len(recording.steering_rad) and not tyre_slip:
        steering = recording.measured_steering_at_samples()
        useful = rolling & turning & (np.abs(steering) > 0.02)
        if useful.sum() >= 10:
            out['wheel_base'] = line_through_origin(wz[useful], vx[useful] * np.tan(
                steering[useful]))
    return out


def geometry_for_fit(model: str, measured: Mapping[str, Estimate],
                     given: Mapping[str, Any]) -> dict[str, float]:
    """The geometry the fit holds fixed (keys below ``model_params.<model>``, metres): what
    ``joint_states`` gave (``measured``, from :func:`fit_geometry`), else what the params file
    gives (``given``). Only the omni's lever ``(wheel_base + track) / 2`` enters its fit, so a
    measured lever gives a wheel_base and a track whose mean it is: in the proportion of the
    params file's pair if it gives both, else both the lever (rounded to 6 digits, as written).
    Raises :class:`CalibrationError` naming every parameter neither gives: a default would
    bias the fit silently."""
    out: dict[str, float] = {}
    if model == 'omni' and 'lever' in measured:
        lever = measured['lever'].value
        pair = (given['wheel_base'], given['track']) if 'wheel_base' in given and \
            'track' in given else (lever, lever)
        scale = 2.0 * lever / (pair[0] + pair[1])
        out = {'wheel_base': round(pair[0] * scale, 6), 'track': round(pair[1] * scale, 6)}
    out.update({key: measured[key].value for key in FIT_GEOMETRY[model] if key in measured})
    missing = [key for key in FIT_GEOMETRY[model] if key not in out and key not in given]
    if missing:
        names = ' and '.join(f'model_params.{model}.{key}' for key in missing)
        it = 'it' if len(missing) == 1 else 'them'
        raise CalibrationError(
            f'{names}: the bag cannot give {it} (no joint_states, or no turning in them) and no '
            f'params file does: give {it} with --params FILE (a vehicle_sim params file, e.g. '
            'the preset), or record joint_states while turning')
    return out
