"""`wheelsim run` figures: real-time factor of the default scenario, start-up and report times.

Run after ``source env.sh``:  python bench/bench_runner.py [--runs 3] [--no-plots]

Each run is a fresh process doing what ``wheelsim run`` does with the built-in default scenario
(differential robot, noisy localization, planner and feedforward controller, 90 s simulated,
every topic recorded), timed by phase:

- start-up: ``imports`` (wheelsim, rclpy, the node modules and their parameter specs, as
  ``wheelsim run`` loads a scenario) and ``nodes`` (rclpy context, node construction including
  the vehicle's compiled kernel);
- ``loop``: the lock-step simulation, recording included. The real-time factor is given per
  wall second (``RTF wall``: what the user sees, which on a shared machine depends on its load)
  and per CPU second of the thread running it (``RTF cpu``: what the loop costs, whatever else
  the machine does; DDS threads are idle in a lock-step run and not counted). The bag is
  written by a child process beside the loop (``wheelsim.run.bag_writer``, on the second core of a
  2-core machine); its CPU time over the whole run is given as ``bag writer``;
- ``close`` (the end of the bag, node destruction), then the report: ``load_run`` (decoding the
  bag), ``metrics`` and ``plots``.

Goal: a real-time factor of at least 50 on a 2-core machine (RTF wall on a quiet machine;
RTF cpu is the same figure without the machine's other load). The table gives the best and the
median of the runs (the best is the least disturbed by other processes) and the load average
while they ran.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PHASES = ('imports', 'nodes', 'loop', 'close', 'load_run', 'metrics', 'plots')


def one_run(output: Path, plots: bool) -> dict[str, tuple[float, float]]:
    """Time one run of the default scenario in this process; ``{phase: (cpu_s, wall_s)}``."""
    cpu_s, wall_s = time.thread_time(), time.perf_counter()
    import rclpy  # noqa: F401  (timed with the rest of the imports)

    from wheelsim.cli import _load
    from wheelsim.run.runner import run_scenario

    scenario, _ = _load(None)
    imports = (time.thread_time() - cpu_s, time.perf_counter() - wall_s)
    outcome = run_scenario(scenario, output, show_progress=False, make_plots=plots)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bag writer, waited for
    return {'imports': imports, **outcome.phases.seconds,
            'bag_writer': (children.ru_utime + children.ru_stime, 0.0),
            'simulated_s': (outcome.timing['simulated_time_s'], 0.0)}


def spawn(plots: bool) -> dict[str, tuple[float, float]]:
    """One run in a fresh process (so that the imports are timed too)."""
    with tempfile.TemporaryDirectory(prefix='bench_runner_') as tmp:
        args = [sys.executable, __file__, '--child', tmp] + ([] if plots else ['--no-plots'])
        result = subprocess.run(args, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise SystemExit(f'run failed:\n{result.stdout}\n{result.stderr}')
        return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=3, help='fresh processes (default 3)')
    parser.add_argument('--no-plots', action='store_true', help='skip the plots')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(Path(args.child), not args.no_plots)))
        return

    load_before = os.getloadavg()[0]
    runs = [spawn(not args.no_plots) for _ in range(args.runs)]
    load_after = os.getloadavg()[0]
    simulated_s = runs[0]['simulated_s'][0]
    print(f'default scenario, {simulated_s:g} s simulated, {len(runs)} runs, load average '
          f'{load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} CPUs)')
    loop_cpu = [r['loop'][0] for r in runs]
    loop_wall = [r['loop'][1] for r in runs]
    print(f'  RTF wall  best {simulated_s / min(loop_wall):6.1f}x   median '
          f'{simulated_s / statistics.median(loop_wall):6.1f}x')
    print(f'  RTF cpu   best {simulated_s / min(loop_cpu):6.1f}x   median '
          f'{simulated_s / statistics.median(loop_cpu):6.1f}x   (loop CPU time best '
          f'{min(loop_cpu):.2f} s)')
    print('  phase        CPU s (best / median)    wall s (best / median)')
    for phase in PHASES:
        if phase not in runs[0]:
            continue
        cpu = [r[phase][0] for r in runs]
        wall = [r[phase][1] for r in runs]
        print(f'  {phase:10s} {min(cpu):8.2f} / {statistics.median(cpu):5.2f}       '
              f'{min(wall):8.2f} / {statistics.median(wall):5.2f}')
    writer = [r['bag_writer'][0] for r in runs]
    print(f'  bag writer process CPU (whole run, beside the loop) best {min(writer):.2f} s, '
          f'median {statistics.median(writer):.2f} s')
    for label, names in (('start-up', ('imports', 'nodes')),
                         ('report', ('close', 'load_run', 'metrics', 'plots'))):
        total = [sum(r[n][0] for n in names if n in r) for r in runs]
        print(f'  {label} total CPU best {min(total):.2f} s, '
              f'median {statistics.median(total):.2f} s')


if __name__ == '__main__':
    main()
