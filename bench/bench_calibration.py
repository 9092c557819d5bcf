"""Calibration figures: how long ``wheelsim calibrate`` takes on a 10-minute bag, and what it
recovers.

Run after ``source env.sh``:  python bench/bench_calibration.py [--minutes 10] [--models ...]

For each model, vehicle_sim (a real node, lock-step, in this process) is driven through the
excitation schedule of ``wheelsim.core.calibration.excitation`` repeated for ``--minutes`` of
simulated time, with known actuator values, command noise and bias, and recorded into an MCAP
bag; then ``calibrate_bag`` (what ``wheelsim calibrate`` runs) fits it. Printed: the recording
time, the calibration's CPU and wall time (inner: ``calibrate_bag`` in this process), the whole
``wheelsim calibrate BAG -o FILE`` command's (process start to exit, CPU of the process from
``wait4``) on the same bag, and each fitted value against the truth.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wheelsim.core.calibration.excitation import excitation
from wheelsim.core.calibration.fit import drive_group
from wheelsim.report.calibration_report import flat_params
from wheelsim.run.calibration import calibrate_bag, record_excitation_bag


def truth(model: str) -> dict[str, float]:
    group = drive_group(model)
    values = {f'{group}.dead_time': 0.137, f'{group}.time_constant': 0.23,
              f'{group}.max_velocity': 1.3, f'{group}.max_acceleration': 1.7}
    if model == 'bicycle':
        values.update({'steering_actuator.dead_time': 0.081,
                       'steering_actuator.time_constant': 0.07,
                       'steering_actuator.max_velocity': 0.9,
                       'steering_actuator.max_position': 0.45})
    return values


def whole_command(bag: Path, output: Path) -> tuple[float, float]:
    """``wheelsim calibrate bag -o output`` as a new process: its (CPU, wall) seconds."""
    wall = time.perf_counter()
    process = subprocess.Popen([sys.executable, '-m', 'wheelsim.cli', 'calibrate', str(bag),
                                '-o', str(output)], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall_s = time.perf_counter() - wall
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f'wheelsim calibrate {bag} failed')
    return usage.ru_utime + usage.ru_stime, wall_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--minutes', type=float, default=10.0, help='simulated bag length')
    parser.add_argument('--models', nargs='+', default=['differential', 'bicycle', 'omni'])
    args = parser.parse_args()
    print(f'wheelsim calibrate benchmark: {os.cpu_count()} cores, load average '
          f'{os.getloadavg()[0]:.1f} at start, {args.minutes:g} min bags')
    for model in args.models:
        group = drive_group(model)
        values = truth(model)
        prefix = f'model_params.{model}.'
        parameters = {'model': model, 'seed': 5, prefix + f'{group}.bias': 0.03,
                      prefix + f'{group}.noise_stddev': 0.01,
                      **{prefix + k: v for k, v in values.items()}}
        once = excitation(model, 1.3)
        repeats = max(1, round(args.minutes * 60.0 / sum(hold for hold, _ in once)))
        with tempfile.TemporaryDirectory() as folder:
            bag = Path(folder) / 'bag'
            wall = time.perf_counter()
            record_excitation_bag(bag, parameters, once * repeats)
            recorded_s = time.perf_counter() - wall
            wall, cpu = time.perf_counter(), time.process_time()
            outputs = calibrate_bag(bag, Path(folder) / 'params.yaml')
            cpu_s, wall_s = time.process_time() - cpu, time.perf_counter() - wall
            fitted = flat_params(outputs.params)
            command_cpu_s, command_wall_s = whole_command(bag, Path(folder) / 'command.yaml')
        duration_min = repeats * sum(hold for hold, _ in once) / 60.0
        errors = []
        for key, value in values.items():
            got = fitted[prefix + key]
            if key.endswith('dead_time'):
                errors.append(f'{key} {got:.3f} s ({round((got - value) * 1000):+d} steps)')
            else:
                errors.append(f'{key} {100 * (got - value) / value:+.2f} %')
        print(f'  {model:12s} {duration_min:.1f} min bag: recorded in {recorded_s:.1f} s; '
              f'calibrated in {cpu_s:.1f} s CPU ({wall_s:.1f} s wall); whole command '
              f'{command_cpu_s:.1f} s CPU ({command_wall_s:.1f} s wall)')
        print('    ' + '; '.join(errors))


if __name__ == '__main__':
    main()
