"""Vehicle core figures: single-vehicle steps per second per model, and batch vehicle-steps/s.

Run after ``source env.sh``:  python bench/bench_core.py [--seconds 1.0] [--vehicles 10000]

1. One vehicle per model (default parameters, 1 kHz steps, a command that keeps every actuator
   busy), stepped as the vehicle_sim node does: ``step(20)`` per 50 Hz publish cycle, with a
   ``state()`` read after each call; and ``step(1)`` per call for comparison.
   Goal: at least 200,000 steps/s, so 1 kHz stepping costs under 0.5 % of a core.
2. ``--vehicles`` vehicles of each model in one VehicleBatch (parameters varied per vehicle),
   stepped 100 at a time on all cores. Goal: at least 10 million vehicle-steps/s on 2 cores.
3. The first figure (``step(20)`` + ``state()``, per CPU second) with each fidelity effect of
   docs/fidelity.md on: command imperfections, the friction circle, the dynamic single-track
   bicycle, and all of them. Goal for the kinematic path (no effect): above 4 million.

``--best`` prints instead, per model with default parameters, the best of 15 windows (thread
CPU time) of the bare kernel (``step(200000)``) and of 5,000 ``step(20)`` + ``state()``, and the
bare kernel of a dynamic bicycle in and above the blend zone (0.8 and 5 m/s): on a
busy machine the best window is what the code costs when it has a core. It uses only the public
API, so it also measures an older tree: ``PYTHONPATH=<old>/src/wheelsim python bench/...``.

Compilation happens before timing (cached on disk after the first run). No ROS needed.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle, VehicleBatch

MODELS = ('bicycle', 'differential', 'omni')
STEP_PERIOD_S = 1e-3
COMMAND = (0.8, 0.3, 0.4)  # vy is ignored by bicycle and differential


def drive_key(model: str, leaf: str) -> str:
    group = 'drive_actuator' if model == 'bicycle' else 'drive_actuators'
    return f'model_params.{model}.{group}.{leaf}'


def timed_rates(run_once, steps_per_call: int, seconds: float) -> tuple[float, float]:
    """Steps per wall second and per CPU second (all threads) of ``run_once``.

    The CPU figure is what a step costs; it does not depend on what else the machine runs.
    """
    calls = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        for _ in range(10):
            run_once()
        calls += 10
    steps = calls * steps_per_call
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def effects(model: str) -> dict[str, dict[str, float | bool]]:
    """Parameters switching on each fidelity effect (and all of them) for ``model``."""
    imperfect = {drive_key(model, 'bias'): 0.02, drive_key(model, 'dead_band'): 0.01,
                 drive_key(model, 'resolution'): 0.001, drive_key(model, 'noise_stddev'): 0.01}
    if model == 'bicycle':
        imperfect.update({f'model_params.bicycle.steering_actuator.{k}': v for k, v in (
            ('bias', 0.01), ('dead_band', 0.005), ('resolution', 0.001),
            ('noise_stddev', 0.005))})
    friction = {f'model_params.{model}.friction_coefficient': 0.5}
    out = {'kinematic (no effect)': {}, 'command imperfections': imperfect,
           'friction circle': friction}
    if model == 'bicycle':
        out['dynamic single-track'] = {**friction, 'model_params.bicycle.dynamics.enabled': True}
    out['all of them'] = {k: v for extra in out.values() for k, v in extra.items()}
    return out


def single_vehicle(model: str, steps_per_call: int, seconds: float,
                   extra: dict | None = None) -> tuple[float, float]:
    config = vehicle_config_from_params(
        {'model': model, drive_key(model, 'max_jerk'): 20.0, **(extra or {})})
    vehicle = Vehicle(config, STEP_PERIOD_S)
    vehicle.step(1)  # compile / load the cached kernel
    toggle = [1.0]

    def run_once() -> None:
        toggle[0] = -toggle[0]  # keep the actuators moving: reverse every call
        vehicle.set_command(COMMAND[0] * toggle[0], COMMAND[1], COMMAND[2])
        vehicle.step(steps_per_call)
        vehicle.state()

    return timed_rates(run_once, steps_per_call, seconds)


def batch(model: str, count: int, seconds: float) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    configs = [
        vehicle_config_from_params({
            'model': model,
            drive_key(model, 'max_acceleration'): float(rng.uniform(0.5, 3.0)),
            drive_key(model, 'max_jerk'): float(rng.choice([0.0, 20.0])),
            drive_key(model, 'dead_time'): float(rng.uniform(0.0, 0.2)),
        })
        for _ in range(count)
    ]
    vehicles = VehicleBatch(configs, STEP_PERIOD_S)
    vehicles.set_commands(rng.uniform(-1.0, 1.0, (count, 3)))
    vehicles.step(1)
    return timed_rates(lambda: vehicles.step(100), 100 * count, seconds)


def best_windows(model: str) -> tuple[float, float]:
    """Best steps per thread CPU second of the bare kernel and of step(20)+state()."""
    vehicle = Vehicle(vehicle_config_from_params(
        {'model': model, drive_key(model, 'max_jerk'): 20.0}), STEP_PERIOD_S)
    vehicle.step(1)
    kernel = node = 0.0
    sign = 1.0
    for _ in range(15):
        sign = -sign
        vehicle.set_command(COMMAND[0] * sign, COMMAND[1], COMMAND[2])
        start = time.thread_time()
        vehicle.step(200_000)
        kernel = max(kernel, 200_000 / (time.thread_time() - start))
        start = time.thread_time()
        for _ in range(5_000):
            sign = -sign
            vehicle.set_command(COMMAND[0] * sign, COMMAND[1], COMMAND[2])
            vehicle.step(20)
            vehicle.state()
        node = max(node, 100_000 / (time.thread_time() - start))
    return kernel, node


def best_single_track(speed_mps: float) -> float:
    """Best steps per thread CPU second of the bare kernel (``step(100000)``, 15 windows) of a
    dynamic bicycle (mu 1) turning at ``speed_mps``: 0.8 m/s is in the blend zone."""
    vehicle = Vehicle(vehicle_config_from_params({
        'model': 'bicycle', 'model_params.bicycle.friction_coefficient': 1.0,
        'model_params.bicycle.dynamics.enabled': True}), STEP_PERIOD_S)
    vehicle.set_command(speed_mps, 0.0, 0.15 * speed_mps)
    vehicle.step(2000)
    best = 0.0
    for _ in range(15):
        start = time.thread_time()
        vehicle.step(100_000)
        best = max(best, 100_000 / (time.thread_time() - start))
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=1.0, help='timing per figure [s]')
    parser.add_argument('--vehicles', type=int, default=10000, help='batch size')
    parser.add_argument('--best', action='store_true', help='best-of-windows figures only')
    args = parser.parse_args()
    if args.best:
        for model in MODELS:
            kernel, node = best_windows(model)
            print(f'  {model:13s} bare kernel {kernel:12,.0f}   step(20)+state() {node:11,.0f}'
                  ' steps per CPU second (best of 15 windows)')
        for speed_mps in (0.8, 5.0):
            print(f'  dynamic bicycle at {speed_mps:g} m/s: bare kernel '
                  f'{best_single_track(speed_mps):12,.0f} steps per CPU second (best of 15)')
        return
    print(f'wheelsim core benchmark: {os.cpu_count()} cores, step period {STEP_PERIOD_S} s, '
          f'load average {os.getloadavg()[0]:.1f} at start')
    print('single vehicle, steps per CPU second (per wall second); goal >= 200,000:')
    for model in MODELS:
        node_wall, node_cpu = single_vehicle(model, 20, args.seconds)
        one_wall, one_cpu = single_vehicle(model, 1, args.seconds)
        print(f'  {model:13s} step(20)+state(): {node_cpu:10,.0f} ({node_wall:10,.0f})   '
              f'step(1)+state(): {one_cpu:8,.0f} ({one_wall:8,.0f})   '
              f'1 kHz costs {100 * 1000 / node_cpu:.3f} % of a core')
    print(f'{args.vehicles} vehicles in one batch, vehicle-steps per wall second '
          f'(per CPU second); goal >= 10,000,000:')
    for model in MODELS:
        wall, cpu = batch(model, args.vehicles, 2 * args.seconds)
        print(f'  {model:13s} {wall:14,.0f} ({cpu:14,.0f})')
    print('fidelity effects, one vehicle, step(20)+state() per CPU second (goal for the '
          'kinematic path: > 4,000,000):')
    for model in MODELS:
        for name, extra in effects(model).items():
            _, cpu = single_vehicle(model, 20, args.seconds, extra)
            print(f'  {model:13s} {name:24s} {cpu:10,.0f}')

if __name__ == '__main__':
    main()
