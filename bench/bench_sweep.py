"""`wheelsim sweep` figures: points per minute of the old process pool and of the Ray path with
1 and 2 workers, side by side in one run.

Run after ``source env.sh``:  python bench/bench_sweep.py [--seeds 8] [--gains 0.5,1,2]

The sweep: the built-in default scenario (90 s simulated, a differential robot on a
figure-eight with noisy localization, every topic recorded) over
``controller.feedforward.k_x`` x ``seed`` (3 x 8 = 24 points by default), no plots, each point a
full run with its metrics; the old pool's points write their bags (as that sweep did), Ray's do
not (as ``wheelsim sweep`` without ``--bags``).

- ``old pool``: what ``wheelsim sweep`` did before issue 20, kept here as the baseline: a
  ``concurrent.futures.ProcessPoolExecutor`` of 2 spawned processes, each point
  ``run_scenario`` in a pool process;
- ``ray N``: :func:`wheelsim.run.sweep.run_sweep` on a :class:`wheelsim.run.execution.RayRunner`
  with N workers (a fresh local Ray instance each), as ``wheelsim sweep --workers N`` runs it
  (point records written, no tables).

Each figure counts everything from the start of the pool or of ``ray.init`` to the last point,
so worker start-up (interpreters, imports, Ray's own services) is included and spread over the
points. ``run s`` is the median wall time of one point inside a worker; ``overhead s`` = wall -
points x run s / workers, the time the runs themselves do not explain (start-up, scheduling,
idle workers at the end); ``ray.init s`` is Ray's own start; ``shutdown s`` the end of the pool
or ``ray.shutdown`` after the last point (not in the wall time: the results are all written).
``steady points/min``: the rate once every worker is up, from the moment the first ``workers``
points had finished to the last one (the points' result files' times): what the sweep gains per
point once start-up is amortised over many points. Scaling efficiency = rate(2 workers) /
(2 x rate(1 worker)), for both rates. Goal: at least 120 points/min on 2
cores, efficiency at least 0.9. The load average is printed: on a machine shared with other
work the figures are lower bounds.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import statistics
import tempfile
import time
from pathlib import Path


def _old_pool_point(scenario, root: Path) -> float:
    from wheelsim.run.runner import run_scenario

    start = time.perf_counter()
    run_scenario(scenario, root, show_progress=False, make_plots=False)
    return time.perf_counter() - start


def steady_rate(finish_times_s: list[float], workers: int) -> float:
    """Points per minute from the moment ``workers`` points had finished to the last one (NaN
    with no more points than workers)."""
    times = sorted(finish_times_s)
    if len(times) <= workers:
        return float('nan')  # every point finished while the workers started
    return (len(times) - workers) / (times[-1] - times[workers - 1]) * 60


def old_pool(planned, root: Path, workers: int) -> tuple[float, float, float, float, float]:
    """(total wall s, median run s, 0, shutdown s, steady points/min) of the old engine."""
    start = time.perf_counter()
    context = multiprocessing.get_context('spawn')
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        runs = list(pool.map(_old_pool_point, [p.job.scenario for p in planned],
                             [root / f'{p.index:03d}' for p in planned]))
        total = time.perf_counter() - start
    finished = [p.stat().st_mtime for p in root.glob('*/*/metrics.json')]
    return (total, statistics.median(runs), 0.0, time.perf_counter() - start - total,
            steady_rate(finished, workers))


def ray_path(planned, root: Path, workers: int) -> tuple[float, float, float, float, float]:
    """(total wall s, median run s, ray.init s, ray.shutdown s, steady points/min) of the Ray
    path."""
    from wheelsim.run.execution import RayRunner
    from wheelsim.run.sweep import RECORD, load_record, run_sweep

    start = time.perf_counter()
    with RayRunner(workers) as runner:
        init_s = time.perf_counter() - start
        outcome = run_sweep(planned, root, runner, show_progress=False)
        total = time.perf_counter() - start
    assert not outcome.errors, outcome.errors
    runs = [load_record(root, p.job)['wall_s'] for p in planned]
    finished = [p.stat().st_mtime for p in (root / 'runs').glob(f'*/{RECORD}')]
    return (total, statistics.median(runs), init_s, time.perf_counter() - start - total,
            steady_rate(finished, workers))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seeds', type=int, default=8, help='seeds per gain (default 8)')
    parser.add_argument('--gains', default='0.5,1,2', help='k_x values (default 0.5,1,2)')
    args = parser.parse_args()

    from wheelsim.cli import _load, _override_check
    from wheelsim.run.sampling import parse_axes, plan_points
    from wheelsim.run.sweep import plan_sweep

    scenario, specs = _load(None)
    axes = parse_axes([f'controller.feedforward.k_x={args.gains}', f'seed=1..{args.seeds}'])
    planned = plan_sweep(scenario, plan_points(axes), _override_check(specs))
    count = len(planned)
    print(f'{count}-point sweep of the default scenario ({scenario.duration_s:g} s simulated, '
          f'noisy figure-eight; k_x {args.gains} x seeds 1..{args.seeds}), '
          f'{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f} at the start')
    print(f'  {"engine":10s} {"points/min":>10s} {"wall s":>7s} {"run s":>6s} '
          f'{"overhead s":>10s} {"ray.init s":>10s} {"shutdown s":>10s} {"steady points/min":>17s}')
    rates, steady = {}, {}
    for label, engine, workers in (('old pool 2', old_pool, 2), ('ray 1', ray_path, 1),
                                   ('ray 2', ray_path, 2)):
        with tempfile.TemporaryDirectory(prefix='bench_sweep_') as tmp:
            total, run_s, init_s, shutdown_s, steady[label] = engine(planned, Path(tmp), workers)
        rates[label] = count / total * 60
        print(f'  {label:10s} {rates[label]:10.1f} {total:7.1f} {run_s:6.2f} '
              f'{total - count * run_s / workers:10.1f} {init_s:10.1f} {shutdown_s:10.1f} '
              f'{steady[label]:17.1f}')
    print(f'  scaling efficiency 1 -> 2 Ray workers: '
          f'{rates["ray 2"] / (2 * rates["ray 1"]):.2f} (steady '
          f'{steady["ray 2"] / (2 * steady["ray 1"]):.2f}); load average '
          f'{os.getloadavg()[0]:.1f} at the end')


if __name__ == '__main__':
    main()
