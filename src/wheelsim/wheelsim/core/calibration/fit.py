"""Fit a vehicle's actuator parameters to a recording by simulating it with wheelsim's own core.

The recorded commands drive a :class:`~wheelsim.core.vehicle.model.VehicleBatch` on the step
grid (``step_period_s``, vehicle_sim's ``1 / step_rate``), starting at rest at the first
measured sample, each command held from its time on; the simulated body twist (and the
steering angle, when measured) is compared with the measured one at the measured times, each
channel scaled as said below.

- A dead time is a real number of seconds: between two whole steps the response is the linear
  interpolation of the two whole-step responses around it (each dead time's pair of steps,
  simulated in the same batch), so the residual is continuous in it and a robot's dead time
  need not be a whole step.
- Initial dead times from a coarse scan (every ``COARSE_DEAD_TIME_S`` up to
  ``MAX_DEAD_TIME_S``, all candidates in one batch) with initial values from the data; then all
  parameters together, dead times included (time constant, velocity and acceleration limits,
  bias; for the bicycle's steering also its angle limit), by ``scipy.optimize.least_squares``
  (trust region with bounds), its Jacobian by forward differences computed as one batch.
  Fitting them together lets a dead time and the lag it trades off with move as one (a scan of
  the dead time with the others held, or alternated with their fit, stops a command period or
  more off).
- That first fit (on the first ``FIRST_PASS_S`` of the recording) weights each channel by its
  spread; the final fit, on the whole recording from the first one's values, by its noise (the
  first fit's residual RMS), so that a noisy channel does not outweigh a clean one and the
  scaled residuals share one variance, as the intervals assume.

Confidence intervals (95 %), dead times included: the covariance ``s^2 (J^T J)^-1`` of the
scaled residuals, inflated by ``n / n_eff`` for their correlation
(``n_eff = n (1 - rho) / (1 + rho)``, ``rho`` their lag-1 autocorrelation), over the parameters
the residuals depend on (one they do not, a limit never reached, has none). A parameter whose
interval is wider than ``MAX_RELATIVE_CI`` of its value (3 steps for a dead time) is not
identified by the recording: :class:`CalibrationError` says what to record.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.calibration.recording import CalibrationError, Estimate, Recording
from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import VehicleBatch

MAX_DEAD_TIME_S = 1.0
COARSE_DEAD_TIME_S = 0.01
# vehicles simulated in one batch (replayed on one thread: between two stops a few steps,
# too few for the parallel kernel's threads to pay)
BATCH_VEHICLES = 32
FIRST_PASS_S = 120.0  # a longer recording is first fitted on its beginning
MAX_RELATIVE_CI = 0.1

#: Each fitted channel's unit.
CHANNEL_UNITS = {'vx': 'm/s', 'vy': 'm/s', 'wz': 'rad/s', 'steering': 'rad'}
MOTIONS = {
    'time_constant': 'small speed steps (0 -> 30 % of the top speed and back) held 2-3 s, '
                     'whose response the acceleration limit does not bound',
    'max_velocity': 'a speed command above the top speed, held 2-3 s',
    'max_acceleration': 'large speed steps (0 -> top speed -> 0) that the acceleration limit '
                        'bounds',
    'dead_time': 'sharp speed steps from rest, held 2-3 s',
    'steering_actuator.time_constant': 'small steering steps at a constant speed',
    'steering_actuator.max_velocity': 'large steering steps (straight -> full lock) at a '
                                      'constant speed',
    'steering_actuator.max_position': 'turn commands tighter than full lock at a constant '
                                      'speed, held 2-3 s',
    'steering_actuator.dead_time': 'sharp steering steps at a constant speed',
}


def drive_group(model: str) -> str:
    return 'drive_actuator' if model == 'bicycle' else 'drive_actuators'


@dataclass(frozen=True)
class Parameter:
    """One fitted continuous parameter: its key below ``model_params.<model>``, bounds."""

    key: str
    initial: float
    lower: float
    upper: float


@dataclass
class Calibration:
    """The result: values (keys below ``model_params.<model>``) with 95 % intervals, the
    simulated response at the measured samples and the residual RMS per channel."""

    model: str
    estimates: dict[str, Estimate]
    values: dict[str, float]
    channels: tuple[str, ...]
    measured: FloatArray  # (M, channels)
    simulated: FloatArray  # (M, channels)
    rms: dict[str, float] = field(default_factory=dict)


class Simulator:
    """Replays a recording's commands through a batch of vehicles (see the module doc)."""

    def __init__(self, recording: Recording, model: str, base: Mapping[str, Any],
                 step_period_s: float, dead_time_keys: Sequence[str],
                 noise: FloatArray | None = None) -> None:
        """``noise``: each channel's residual RMS from an earlier fit, to weight the channels
        by (default: their spread); at least 1e-3 of the spread."""
        self.model = model
        self.base = {'model': model, **{f'model_params.{model}.{k}': v for k, v in base.items()}}
        self.dt = step_period_s
        self.dead_time_keys = tuple(dead_time_keys)
        t0 = recording.start_s
        command_steps = np.maximum(np.round((recording.command_t_s - t0) / self.dt), 0)
        sample_steps = np.round((recording.measured_t_s - t0) / self.dt)
        self._command_steps = command_steps.astype(np.int64)
        self._sample_steps = sample_steps.astype(np.int64)
        self._commands = recording.command
        self.channels = ['vx', 'wz'] + (['vy'] if model == 'omni' else [])
        columns = {'vx': 0, 'vy': 1, 'wz': 2}
        twist_columns = [columns[c] for c in self.channels]
        self._state_columns = [st.S_VX + c for c in twist_columns]
        measured = [recording.measured[:, twist_columns]]
        steering = recording.measured_steering_at_samples() if model == 'bicycle' else []
        if len(steering):
            self.channels.append('steering')
            self._state_columns.append(st.S_STEER)
            measured.append(steering[:, np.newaxis])
        self.measured = np.hstack(measured)
        spread = np.maximum(self.measured.std(axis=0), 1e-3)
        self.scale = spread if noise is None else np.maximum(noise, 1e-3 * spread)

    def _corners(self, one: Mapping[str, float]) -> list[tuple[dict[str, float], float]]:
        """The whole-step dead times around ``one``'s and their interpolation weights."""
        corners = [(dict(one), 1.0)]
        for key in self.dead_time_keys:
            steps = round(max(one[key], 0.0) / self.dt, 9)  # a whole step stays one
            low = math.floor(steps)
            fraction = steps - low
            pairs = ((low, 1.0 - fraction), (low + 1, fraction)) if fraction else ((low, 1.0),)
            corners = [({**values, key: step * self.dt}, weight * share)
                       for values, weight in corners for step, share in pairs]
        return corners

    def run(self, values: Sequence[Mapping[str, float]]) -> FloatArray:
        """Simulated channels (len(values), M, channels) for each set of parameter values
        (dead times in seconds, interpolated between whole steps)."""
        corners = [self._corners(one) for one in values]
        flat = [corner for group in corners for corner, _ in group]
        simulated = np.concatenate([self._run_whole_steps(flat[i:i + BATCH_VEHICLES])
                                    for i in range(0, len(flat), BATCH_VEHICLES)])
        out = np.zeros((len(values),) + self.measured.shape)
        row = 0
        for i, group in enumerate(corners):
            for _, weight in group:
                out[i] += weight * simulated[row]
                row += 1
        return out

    def _run_whole_steps(self, values: Sequence[Mapping[str, float]]) -> FloatArray:
        configs = [vehicle_config_from_params({
            **self.base, **{f'model_params.{self.model}.{k}': v for k, v in one.items()}})
            for one in values]
        batch = VehicleBatch(configs, self.dt)
        return batch.replay(self._command_steps, self._commands, self._sample_steps,
                            self._state_columns)

    def residuals(self, simulated: FloatArray) -> FloatArray:
        """Scaled residuals, flattened per candidate: (len, M * channels)."""
        return ((simulated - self.measured) / self.scale).reshape(len(simulated), -1)

    def rms(self, residual: FloatArray) -> FloatArray:
        """Each channel's RMS (its units) of one flattened scaled residual."""
        by_channel = residual.reshape(self.measured.shape) * self.scale
        return np.sqrt(np.mean(by_channel ** 2, axis=0))


def _effective_fraction(residual: FloatArray) -> float:
    """``n_eff / n`` from the lag-1 autocorrelation in time of the residuals (M, channels),
    pooled over the channels (at most 1)."""
    centred = residual - residual.mean(axis=0)
    denominator = float(np.sum(centred * centred))
    if denominator == 0.0:
        return 1.0
    rho = float(np.sum(centred[:-1] * centred[1:]) / denominator)
    rho = min(max(rho, 0.0), 0.999)
    return (1.0 - rho) / (1.0 + rho)


class Fitter:
    """One calibration: a dead-time scan, then least squares, see the module documentation."""

    def __init__(self, simulator: Simulator, parameters: Sequence[Parameter]) -> None:
        self.sim = simulator
        self.parameters = list(parameters)
        self.values = {p.key: p.initial for p in self.parameters}
        self.jacobian: FloatArray | None = None
        self.residual: FloatArray | None = None
        self.unmoved: set[str] = set()  # keys the residuals do not depend on (estimates)

    def scan(self, key: str) -> None:
        """Set dead time ``key`` to the coarse candidate with the smallest residual, the other
        values held."""
        candidates = np.arange(0.0, MAX_DEAD_TIME_S + 1e-9, max(COARSE_DEAD_TIME_S, self.sim.dt))
        residual = self.sim.residuals(self.sim.run([{**self.values, key: float(candidate)}
                                                    for candidate in candidates]))
        self.values[key] = float(candidates[int(np.argmin(np.einsum('ij,ij->i', residual,
                                                                    residual)))])

    def fit(self) -> None:
        """Least squares of every parameter from the present values."""
        keys = [p.key for p in self.parameters]
        lower = np.array([p.lower for p in self.parameters])
        upper = np.array([p.upper for p in self.parameters])
        minimum_steps = np.array([self.sim.dt if k in self.sim.dead_time_keys else 0.0
                                  for k in keys])
        cache: dict[bytes, FloatArray] = {}

        def values_of(x: FloatArray) -> dict[str, float]:
            return dict(zip(keys, x.tolist(), strict=True))

        def residual(x: FloatArray) -> FloatArray:
            tag = x.tobytes()
            if tag not in cache:
                cache.clear()
                cache[tag] = self.sim.residuals(self.sim.run([values_of(x)]))[0]
            return cache[tag]

        def jacobian(x: FloatArray) -> FloatArray:
            base = residual(x)
            steps = np.maximum(1e-4 * np.maximum(np.abs(x), 1e-2), minimum_steps)
            steps = np.where(x + steps > upper, -steps, steps)
            shifted = [values_of(x + np.eye(len(x))[i] * steps[i]) for i in range(len(x))]
            columns = self.sim.residuals(self.sim.run(shifted))
            return ((columns - base) / steps[:, np.newaxis]).T

        from scipy.optimize import least_squares  # on first use: docs/architecture.md

        x0 = np.clip([self.values[k] for k in keys], lower, upper)
        result = least_squares(residual, x0, jac=jacobian, bounds=(lower, upper),
                               x_scale='jac', max_nfev=60, xtol=1e-10, ftol=1e-12)
        self.values = values_of(result.x)
        self.jacobian = result.jac
        self.residual = result.fun

    def run(self) -> None:
        """From initial values: scan each dead time, then fit everything."""
        for key in self.sim.dead_time_keys:
            self.scan(key)
        self.fit()

    def estimates(self) -> dict[str, Estimate]:
        n, p = len(self.residual), len(self.parameters)
        sse = float(np.dot(self.residual, self.residual))
        inflation = 1.0 / _effective_fraction(self.residual.reshape(self.sim.measured.shape))
        variance = sse / max(n - p, 1) * inflation
        # A parameter the residuals do not move with at all (a limit the motion never reached)
        # has an infinite interval; the others' covariance is that of the rest.
        moving = np.any(self.jacobian != 0.0, axis=0)
        self.unmoved = {parameter.key for parameter, moves in zip(self.parameters, moving,
                                                                   strict=True) if not moves}
        stds = np.full(p, np.inf)
        try:
            moved = self.jacobian[:, moving]
            covariance = variance * np.linalg.inv(moved.T @ moved)
            stds[moving] = np.sqrt(np.maximum(np.diag(covariance), 0.0))
        except np.linalg.LinAlgError:
            pass
        out: dict[str, Estimate] = {}
        for parameter, std in zip(self.parameters, stds, strict=True):
            value = self.values[parameter.key]
            out[parameter.key] = Estimate(value, value - 1.96 * std, value + 1.96 * std)
        return out


def _check_identified(estimates: Mapping[str, Estimate], dt: float,
                      unmoved: Collection[str] = (), rms: Mapping[str, float] | None = None
                      ) -> None:
    """CalibrationError naming each parameter the recording does not identify and the motion
    to record, then the fit's residual RMS per channel (``rms``, in :data:`CHANNEL_UNITS`);
    ``unmoved``: those the residuals do not depend on at all."""
    problems = []
    for key, estimate in estimates.items():
        name = key.split('.', 1)[1] if key.startswith('drive_actuator') else key
        if name not in MOTIONS:  # bias: a nuisance parameter, reported, never refused
            continue
        limit = MAX_RELATIVE_CI * abs(estimate.value)
        if name.endswith('dead_time'):
            limit = max(limit, 3 * dt)
        if key in unmoved:
            problems.append(f'{key} (the recorded motion never depended on it: a limit never '
                            f'reached, or none): record {MOTIONS[name]}')
        elif not math.isfinite(estimate.half_width) or estimate.half_width > limit:
            problems.append(f'{key} ({estimate.value:.4g}, 95 % interval '
                            f'[{estimate.low:.4g}, {estimate.high:.4g}]): record '
                            f'{MOTIONS[name]}')
    if problems:
        residual = '' if not rms else '; the fit\'s residual RMS: ' + ', '.join(
            f'{channel} {value:.3g} {CHANNEL_UNITS[channel]}' for channel, value in rms.items())
        raise CalibrationError('the recording does not identify ' + '; '.join(problems)
                               + residual)


def initial_parameters(recording: Recording, model: str) -> list[Parameter]:
    """The fitted parameters of ``model`` with initial values from the data (dead times: placed
    by :meth:`Fitter.scan`)."""
    group = drive_group(model)
    speed = np.max(np.abs(recording.measured[:, 0]))
    dt_samples = np.diff(recording.measured_t_s)
    accelerations = np.abs(np.diff(recording.measured[:, 0])) / np.maximum(dt_samples, 1e-9)
    acceleration = max(float(np.percentile(accelerations, 99)), 0.1)
    parameters = [
        Parameter(f'{group}.dead_time', 0.0, 0.0, MAX_DEAD_TIME_S),
        Parameter(f'{group}.time_constant', 0.1, 0.0, 5.0),
        Parameter(f'{group}.max_velocity', 1.05 * speed, 0.01, 1000.0),
        Parameter(f'{group}.max_acceleration', acceleration, 0.01, 1000.0),
        Parameter(f'{group}.bias', 0.0, -0.5 * speed, 0.5 * speed),
    ]
    if model == 'bicycle':
        steering = recording.measured_steering_at_samples()
        largest = float(np.max(np.abs(steering))) if len(steering) else 0.5
        parameters += [
            Parameter('steering_actuator.dead_time', 0.0, 0.0, MAX_DEAD_TIME_S),
            Parameter('steering_actuator.time_constant', 0.05, 0.0, 5.0),
            Parameter('steering_actuator.max_velocity', 1.0, 0.01, 100.0),
            Parameter('steering_actuator.max_position', min(max(largest, 0.05), 1.5), 0.01,
                      1.5607),
            Parameter('steering_actuator.bias', 0.0, -0.3, 0.3),
        ]
    return parameters


def calibrate(recording: Recording, model: str, base: Mapping[str, Any] | None = None,
              step_period_s: float = 1e-3) -> Calibration:
    """Fit ``model``'s actuators to ``recording``; ``base``: other parameters of the vehicle
    (keys below ``model_params.<model>``, e.g. the geometry), held fixed. Raises
    :class:`CalibrationError` when the recording does not identify a parameter."""
    base = dict(base or {})
    group = drive_group(model)
    for key in ('max_jerk', 'noise_stddev', 'dead_band', 'resolution'):
        base.setdefault(f'{group}.{key}', 0.0)
    base.setdefault(f'{group}.max_deceleration', -1.0)
    parameters = initial_parameters(recording, model)
    dead_times = [p.key for p in parameters if p.key.endswith('dead_time')]
    first = recording.head(FIRST_PASS_S)
    fitter = Fitter(Simulator(first, model, base, step_period_s, dead_times), parameters)
    fitter.run()
    simulator = Simulator(recording, model, base, step_period_s, dead_times,
                          noise=fitter.sim.rms(fitter.residual))
    starts = [Parameter(p.key, fitter.values[p.key], p.lower, p.upper) for p in parameters]
    fitter = Fitter(simulator, starts)
    fitter.fit()
    estimates = fitter.estimates()
    rms = dict(zip(simulator.channels, simulator.rms(fitter.residual).tolist(), strict=True))
    _check_identified(estimates, step_period_s, fitter.unmoved, rms)
    values = fitter.values
    simulated = simulator.run([values])[0]
    return Calibration(model, estimates, values, tuple(simulator.channels),
                       simulator.measured, simulated, rms)
