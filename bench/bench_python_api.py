"""Python API figures: rollout and Gymnasium env steps per second, 1, 100 and 10 000 vehicles.

Run after ``source env.sh``:  python bench/bench_python_api.py [--seconds 2.0]

Each batch size runs ``wheelsim.sim.rollout`` on the indoor_differential preset (1 kHz physics
steps) with a 100 Hz control period (``dt_s = 0.01``: 10 steps per command) and a feedback
policy of one numpy expression, repeated until ``--seconds`` of wall time have passed. The
**inner loop** figure is simulated physics steps per wall second summed over the batch
(vehicles x steps / wall time of the rollout calls), and per CPU second of the process (all
threads: calls of 5 000 vehicle-steps or more use every core). A warm-up rollout first loads the
compiled kernel. For comparison, **kernel alone** is the same batch stepped by
``VehicleBatch.step(10)`` with a held command: what the API's per-period work (the policy call,
the command mapping, the record) costs is the difference. The **env** figures are Gymnasium
steps (one control period of ``dt_s = 0.05``, 50 physics steps, of one sub-environment) per wall
second of ``PathTrackingEnv.step`` (one vehicle) and of ``PathTrackingVectorEnv.step`` (summed
over its sub-environments), on the default figure-eight with a held action, autoresets
included. The **whole command** line at the end is the wall and CPU time of everything
(imports, compilation or cache loading, warm-ups, all rollouts and env steps). No ROS needed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

COMMAND_START_WALL = time.perf_counter()
COMMAND_START_CPU = time.process_time()

import wheelsim.sim as ws  # noqa: E402  (timed as part of the whole command)
from wheelsim.core.vehicle.model import VehicleBatch  # noqa: E402

DT_S = 0.01
SIZES = (1, 100, 10_000)


def steer_to_x_axis(state: np.ndarray, t_s: float) -> np.ndarray:
    """(N, 6) states -> (N, 3) body twists: constant speed, turn towards y = 0."""
    return np.column_stack([np.full(len(state), 0.5), np.zeros(len(state)),
                            -2.0 * state[:, 1] - 1.5 * state[:, 2]])


def measure(vehicle: ws.SimVehicle, count: int, seconds: float) -> tuple[float, float]:
    """Physics steps per wall second and per CPU second, summed over ``count`` vehicles."""
    rng = np.random.default_rng(0)
    x0 = np.column_stack([np.zeros(count), rng.uniform(-1, 1, count), np.zeros(count)])
    periods = max(10, round(2_000 / count ** 0.5))  # a rollout call of a few tenths of a s
    steps_per_period = round(DT_S / vehicle.step_period_s)
    ws.rollout(vehicle, x0, steer_to_x_axis, 10, DT_S)  # warm-up
    steps = 0
    wall, cpu = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall < seconds:
        ws.rollout(vehicle, x0, steer_to_x_axis, periods, DT_S)
        steps += count * periods * steps_per_period
    return steps / (time.perf_counter() - wall), steps / (time.process_time() - cpu)


def measure_kernel(vehicle: ws.SimVehicle, count: int, seconds: float) -> float:
    """Physics steps per wall second of the bare batch kernel, summed over ``count``."""
    batch = VehicleBatch([vehicle.config] * count, vehicle.step_period_s)
    batch.set_commands(np.tile([0.5, 0.0, 0.3], (count, 1)))
    batch.step(10)  # warm-up
    steps = 0
    wall = time.perf_counter()
    while time.perf_counter() - wall < seconds:
        batch.step(10)
        steps += 10 * count
    return steps / (time.perf_counter() - wall)


def measure_env(vehicle: ws.SimVehicle, count: int | None, seconds: float) -> float:
    """Environment steps per wall second: a ``PathTrackingEnv`` (``count`` None) or a
    ``PathTrackingVectorEnv`` of ``count`` (summed over its sub-environments)."""
    env = (ws.PathTrackingEnv(vehicle) if count is None
           else ws.PathTrackingVectorEnv(vehicle, count))
    action = np.array([0.5, 0.2]) if count is None else np.tile([0.5, 0.2], (count, 1))
    env.reset(seed=0)
    env.step(action)  # warm-up
    steps = 0
    wall = time.perf_counter()
    while time.perf_counter() - wall < seconds:
        _, _, terminated, truncated, _ = env.step(action)
        if count is None and (terminated or truncated):
            env.reset()
        steps += count or 1
    return steps / (time.perf_counter() - wall)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=2.0, help='wall time per batch size')
    args = parser.parse_args()
    vehicle = ws.load_vehicle('indoor_differential')
    print('inner loop: rollout physics steps (1 kHz) per second, summed over the batch, '
          f'dt_s = {DT_S}')
    for count in SIZES:
        per_wall, per_cpu = measure(vehicle, count, args.seconds)
        kernel = measure_kernel(vehicle, count, 0.5 * args.seconds)
        print(f'  {count:>6} vehicles: {per_wall:>14,.0f} steps/s wall  '
              f'{per_cpu:>14,.0f} steps/s CPU  (kernel alone {kernel:,.0f} steps/s wall)')
    print('env: Gymnasium steps (dt_s = 0.05) per wall second, summed over the sub-environments')
    print(f'  PathTrackingEnv:        {measure_env(vehicle, None, args.seconds):>12,.0f} steps/s')
    for count in SIZES:
        print(f'  PathTrackingVectorEnv {count:>6}: '
              f'{measure_env(vehicle, count, args.seconds):>12,.0f} steps/s')
    print(f'whole command: {time.perf_counter() - COMMAND_START_WALL:.1f} s wall, '
          f'{time.process_time() - COMMAND_START_CPU:.1f} s CPU')


if __name__ == '__main__':
    main()
