"""Fit a vehicle's actuator parameters to a recording by simulating it with wheelsim's own core.

The recorded commands drive a :class:`~wheelsim.core.vehicle.model.VehicleBatch` on the step
grid (``step_period_s``, vehicle_sim's ``1 / step_rate``), starting at rest at the first
measured sample; the simulated body twist (and the steering angle, when measured) is compared
with the measured one at the measured times, each channel scaled by its standard deviation.

- Dead times are whole steps: scanned, all candidates in one batch (a coarse scan up to
  ``MAX_DEAD_TIME_S``, then every step near the best), each candidate judged by what a refit of
  the continuous parameters would leave (its residual projected off the Jacobian's columns).
- The continuous parameters (time constant, velocity and acceleration limits, bias; for the
  bicycle's steering also its angle limit) by ``scipy.optimize.least_squares`` (trust region
  with bounds), its Jacobian by forward differences computed as one batch.
- Alternated until the dead times stay (at most ``MAX_ROUNDS``). A recording longer than
  ``FIRST_PASS_S`` is fitted so on its beginning first, then refined on the whole of it.

Confidence intervals (95 %): the covariance ``s^2 (J^T J)^-1`` of the scaled residuals, inflated
by ``n / n_eff`` for their correlation (``n_eff = n (1 - rho) / (1 + rho)``, ``rho`` their lag-1
autocorrelation); for a dead time the steps whose residual sum of squares is within the
chi-square(1) bound of the best. A parameter whose interval is wider than ``MAX_RELATIVE_CI`` of
its value is not identified by the recording: :class:`CalibrationError` says what to record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy.optimize import least_squares

from wheelsim.core.arrays import FloatArray
from wheelsim.core.calibration.recording import CalibrationError, Estimate, Recording
from wheelsim.core.vehicle import stepping as st
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import VehicleBatch

MAX_DEAD_TIME_S = 1.0
COARSE_DEAD_TIME_S = 0.01
REFINE_STEPS = 15
MAX_ROUNDS = 6
FIRST_PASS_S = 120.0  # a longer recording is first fitted on its beginning
MAX_RELATIVE_CI = 0.1
CHI2_1_95 = 3.841

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
                 step_period_s: float) -> None:
        self.model = model
        self.base = {'model': model, **{f'model_params.{model}.{k}': v for k, v in base.items()}}
        self.dt = step_period_s
        t0 = recording.start_s
        command_steps = np.maximum(np.round((recording.command_t_s - t0) / self.dt), 0)
        sample_steps = np.round((recording.measured_t_s - t0) / self.dt)
        schedule: dict[int, tuple[list[int], list[int]]] = {}
        for i, step in enumerate(command_steps.astype(int)):
            schedule.setdefault(step, ([], []))[0].append(i)
        for j, step in enumerate(sample_steps.astype(int)):
            schedule.setdefault(step, ([], []))[1].append(j)
        self._schedule = sorted(schedule.items())
        self._commands = recording.command
        self.channels = ['vx', 'wz'] + (['vy'] if model == 'omni' else [])
        columns = {'vx': 0, 'vy': 1, 'wz': 2}
        self._columns = [columns[c] for c in self.channels]
        measured = [recording.measured[:, self._columns]]
        steering = recording.measured_steering_at_samples() if model == 'bicycle' else []
        if len(steering):
            self.channels.append('steering')
            measured.append(steering[:, np.newaxis])
        self.measured = np.hstack(measured)
        self.scale = np.maximum(self.measured.std(axis=0), 1e-3)

    def run(self, values: Sequence[Mapping[str, float]]) -> FloatArray:
        """Simulated channels (len(values), M, channels) for each set of parameter values."""
        configs = [vehicle_config_from_params({
            **self.base, **{f'model_params.{self.model}.{k}': v for k, v in one.items()}})
            for one in values]
        batch = VehicleBatch(configs, self.dt)
        out = np.empty((len(configs),) + self.measured.shape)
        steering = 'steering' in self.channels
        done = 0
        for step, (commands, samples) in self._schedule:
            batch.step(step - done)
            done = step
            if samples:
                twists = batch.twists[:, self._columns]
                for j in samples:
                    out[:, j, :len(self._columns)] = twists
                if steering:
                    out[:, samples, -1] = batch.states[:, st.S_STEER][:, np.newaxis]
            if commands:
                batch.set_commands(np.repeat(self._commands[commands[-1]][np.newaxis],
                                             len(configs), axis=0))
        return out

    def residuals(self, simulated: FloatArray) -> FloatArray:
        """Scaled residuals, flattened per candidate: (len, M * channels)."""
        return ((simulated - self.measured) / self.scale).reshape(len(simulated), -1)


def _effective_fraction(residual: FloatArray) -> float:
    """``n_eff / n`` from the lag-1 autocorrelation of the residuals (at most 1)."""
    centred = residual - residual.mean()
    denominator = float(np.dot(centred, centred))
    if denominator == 0.0:
        return 1.0
    rho = float(np.dot(centred[:-1], centred[1:]) / denominator)
    rho = min(max(rho, 0.0), 0.999)
    return (1.0 - rho) / (1.0 + rho)


class Fitter:
    """One calibration: dead-time scans and least squares, see the module documentation."""

    def __init__(self, simulator: Simulator, parameters: Sequence[Parameter],
                 dead_times: Mapping[str, float]) -> None:
        self.sim = simulator
        self.parameters = list(parameters)
        self.values = {p.key: p.initial for p in self.parameters}
        self.dead_steps = {key: round(value / simulator.dt) for key, value in dead_times.items()}
        self.profiles: dict[str, tuple[np.ndarray, FloatArray]] = {}
        self.jacobian: FloatArray | None = None

    def _all_values(self, values: Mapping[str, float] | None = None) -> dict[str, float]:
        dead = {key: steps * self.sim.dt for key, steps in self.dead_steps.items()}
        return {**(self.values if values is None else values), **dead}

    def scan(self, key: str, candidates: np.ndarray) -> None:
        """Set dead time ``key`` to the candidate step count with the smallest residual."""
        candidates = candidates[candidates >= 0]
        values = []
        for steps in candidates:
            one = self._all_values()
            one[key] = steps * self.sim.dt
            values.append(one)
        residual = self.sim.residuals(self.sim.run(values))
        if self.jacobian is not None:
            # what a refit of the continuous parameters would leave (linearised): a wrong dead
            # time must not win by the continuous values that compensated it
            basis, _ = np.linalg.qr(self.jacobian)
            residual = residual - (residual @ basis) @ basis.T
        sse = np.einsum('ij,ij->i', residual, residual)
        self.dead_steps[key] = int(candidates[int(np.argmin(sse))])
        self.profiles[key] = (candidates, sse)

    def fit_continuous(self) -> None:
        keys = [p.key for p in self.parameters]
        lower = np.array([p.lower for p in self.parameters])
        upper = np.array([p.upper for p in self.parameters])
        cache: dict[bytes, FloatArray] = {}

        def values_of(x: FloatArray) -> dict[str, float]:
            return self._all_values(dict(zip(keys, x.tolist(), strict=True)))

        def residual(x: FloatArray) -> FloatArray:
            tag = x.tobytes()
            if tag not in cache:
                cache.clear()
                cache[tag] = self.sim.residuals(self.sim.run([values_of(x)]))[0]
            return cache[tag]

        def jacobian(x: FloatArray) -> FloatArray:
            base = residual(x)
            steps = 1e-4 * np.maximum(np.abs(x), 1e-2)
            steps = np.where(x + steps > upper, -steps, steps)
            shifted = [values_of(x + np.eye(len(x))[i] * steps[i]) for i in range(len(x))]
            columns = self.sim.residuals(self.sim.run(shifted))
            return ((columns - base) / steps[:, np.newaxis]).T

        x0 = np.clip([self.values[k] for k in keys], lower, upper)
        result = least_squares(residual, x0, jac=jacobian, bounds=(lower, upper),
                               x_scale='jac', max_nfev=60, xtol=1e-10, ftol=1e-12)
        self.values = dict(zip(keys, result.x.tolist(), strict=True))
        self.jacobian = result.jac
        self.residual = result.fun

    def _refine(self) -> bool:
        """Scan every dead time near its value; whether any changed."""
        before = dict(self.dead_steps)
        for key, best in before.items():
            self.scan(key, np.arange(best - REFINE_STEPS, best + REFINE_STEPS + 1))
        return self.dead_steps != before

    def refine(self) -> None:
        """From good values: refit, then alternate as :meth:`run` does."""
        self.fit_continuous()
        for _ in range(MAX_ROUNDS):
            if not self._refine():
                break
            self.fit_continuous()

    def run(self) -> None:
        coarse = max(1, round(COARSE_DEAD_TIME_S / self.sim.dt))
        for key in self.dead_steps:
            self.scan(key, np.arange(0, round(MAX_DEAD_TIME_S / self.sim.dt) + 1, coarse))
        self.fit_continuous()
        for _ in range(MAX_ROUNDS):
            if not self._refine():
                break
            self.fit_continuous()

    def estimates(self) -> dict[str, Estimate]:
        n, p = len(self.residual), len(self.parameters)
        sse = float(np.dot(self.residual, self.residual))
        inflation = 1.0 / _effective_fraction(self.residual)
        variance = sse / max(n - p, 1) * inflation
        out: dict[str, Estimate] = {}
        try:
            covariance = variance * np.linalg.inv(self.jacobian.T @ self.jacobian)
            stds = np.sqrt(np.maximum(np.diag(covariance), 0.0))
        except np.linalg.LinAlgError:
            stds = np.full(p, np.inf)
        for parameter, std in zip(self.parameters, stds, strict=True):
            value = self.values[parameter.key]
            out[parameter.key] = Estimate(value, value - 1.96 * std, value + 1.96 * std)
        for key, (candidates, sse_curve) in self.profiles.items():
            within = candidates[sse_curve <= sse_curve.min() + CHI2_1_95 * variance]
            best = self.dead_steps[key] * self.sim.dt
            out[key] = Estimate(best, within.min() * self.sim.dt, within.max() * self.sim.dt)
        return out


def _check_identified(estimates: Mapping[str, Estimate], dt: float) -> None:
    problems = []
    for key, estimate in estimates.items():
        name = key.split('.', 1)[1] if key.startswith('drive_actuator') else key
        if name not in MOTIONS:  # bias: a nuisance parameter, reported, never refused
            continue
        limit = MAX_RELATIVE_CI * abs(estimate.value)
        if name.endswith('dead_time'):
            limit = max(limit, 3 * dt)
        if not math.isfinite(estimate.half_width) or estimate.half_width > limit:
            problems.append(f'{key} ({estimate.value:.4g}, 95 % interval '
                            f'[{estimate.low:.4g}, {estimate.high:.4g}]): record '
                            f'{MOTIONS[name]}')
    if problems:
        raise CalibrationError('the recording does not identify ' + '; '.join(problems))


def initial_parameters(recording: Recording, model: str) -> list[Parameter]:
    """The fitted continuous parameters of ``model`` with initial values from the data."""
    group = drive_group(model)
    speed = np.max(np.abs(recording.measured[:, 0]))
    dt_samples = np.diff(recording.measured_t_s)
    accelerations = np.abs(np.diff(recording.measured[:, 0])) / np.maximum(dt_samples, 1e-9)
    acceleration = max(float(np.percentile(accelerations, 99)), 0.1)
    parameters = [
        Parameter(f'{group}.time_constant', 0.1, 0.0, 5.0),
        Parameter(f'{group}.max_velocity', 1.05 * speed, 0.01, 1000.0),
        Parameter(f'{group}.max_acceleration', acceleration, 0.01, 1000.0),
        Parameter(f'{group}.bias', 0.0, -0.5 * speed, 0.5 * speed),
    ]
    if model == 'bicycle':
        steering = recording.measured_steering_at_samples()
        largest = float(np.max(np.abs(steering))) if len(steering) else 0.5
        parameters += [
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
    dead_times = {f'{group}.dead_time': 0.1}
    if model == 'bicycle':
        dead_times['steering_actuator.dead_time'] = 0.1
    parameters = initial_parameters(recording, model)
    first = recording.head(FIRST_PASS_S)
    fitter = Fitter(Simulator(first, model, base, step_period_s), parameters, dead_times)
    fitter.run()
    simulator = fitter.sim
    if first.duration_s < recording.duration_s:
        simulator = Simulator(recording, model, base, step_period_s)
        values = fitter.values
        starts = [Parameter(p.key, values[p.key], p.lower, p.upper) for p in parameters]
        dead = {key: steps * step_period_s for key, steps in fitter.dead_steps.items()}
        fitter = Fitter(simulator, starts, dead)
        fitter.refine()
    estimates = fitter.estimates()
    _check_identified(estimates, step_period_s)
    values = fitter._all_values()
    simulated = simulator.run([values])[0]
    rms = {c: float(np.sqrt(np.mean((simulated[:, i] - simulator.measured[:, i]) ** 2)))
           for i, c in enumerate(simulator.channels)}
    return Calibration(model, estimates, values, tuple(simulator.channels),
                       simulator.measured, simulated, rms)
