"""The report of ``wheelsim sweep`` (tables, one plot per metric, worst runs): the whole command
and the plots alone, side by side with a baseline revision.

Run after ``source env.sh``:  python bench/bench_sweep_report.py [--runs 3] [--baseline REV]

- ``whole command``: ``python -m wheelsim.cli sweep`` of the built-in default scenario cut to
  10 s without a bag, over ``controller.feedforward.k_x=1.0,3.0`` x ``seed=1..2`` (4 points,
  2 parameters, every metric) on 2 Ray workers, into a new output folder; wall and CPU from
  process start to exit (CPU: user + system of the process and every child it waited for,
  from ``wait4``; Ray's own services are not all waited for, so CPU is a lower bound). This is
  what the user waits for;
- ``plots``: the inner figure, :func:`wheelsim.run.tables.plot_metrics` alone on the rows of
  that sweep (CPU of a fresh process, from the call to its return, matplotlib's import
  included).

numpy's OpenBLAS starts a thread per core, and after large array operations those threads spin
in system time (the plots before ``4534553``: 3.8 s of system time in one run). Run with
``OPENBLAS_NUM_THREADS=1`` in the environment, as the tests run, to leave that out.

``--baseline REV`` also runs the code of git revision REV (its ``src/wheelsim/wheelsim``
exported with ``git archive``, first on ``PYTHONPATH``), alternating run by run with the working
tree's, and prints both with the ratio. The table gives the median and the best of the runs.
"""

from __future__ import annotations

import argparse
import csv
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_runner import alternated, baseline_tree, set_up_baseline, timed_command, variant_codes

from wheelsim.report.metrics import METRIC_NAMES

DEFAULT_SCENARIO = (Path(__file__).resolve().parents[1] / 'src' / 'wheelsim' / 'wheelsim' / 'run'
                    / 'scenarios' / 'default.yaml')
GRID = ['--param', 'controller.feedforward.k_x=1.0,3.0', '--param', 'seed=1..2']
PLOTS_ALONE = """
import csv, sys, time
from pathlib import Path
t0 = time.process_time()
from wheelsim.run.tables import metric_columns, plot_metrics
def number(text):
    try:
        return float(text)
    except ValueError:
        return text
rows = [{k: number(v) for k, v in row.items()} for row in csv.DictReader(open(sys.argv[1]))]
plot_metrics(rows, ['controller.feedforward.k_x', 'seed'], metric_columns(rows), Path(sys.argv[2]))
print(time.process_time() - t0)
"""


def short_scenario(folder: Path) -> Path:
    """The default scenario, 10 s long, without a bag."""
    text = DEFAULT_SCENARIO.read_text()
    text = text.replace('duration: 90.0', 'duration: 10.0').replace('record: all', 'record: none')
    if 'duration: 10.0' not in text or 'record: none' not in text:
        sys.exit(f'{DEFAULT_SCENARIO} changed: cannot cut it short')
    path = folder / 'short.yaml'
    path.write_text(text)
    return path


def one_run(code: Path | None, scenario: Path, output: Path) -> dict:
    """The sweep once, then its plots alone; their figures."""
    env = dict(os.environ)
    if code is not None:
        env['PYTHONPATH'] = os.pathsep.join(filter(None, [str(code), env.get('PYTHONPATH')]))
    command = [sys.executable, '-m', 'wheelsim.cli', 'sweep', str(scenario), *GRID,
               '--workers', '2', '--quiet', '--output', str(output)]
    returncode, wall_s, cpu_s, stderr = timed_command(command, env)
    root = output / 'default' / 'sweep'
    table = root / 'sweep.csv'
    rows = []
    if table.is_file():
        with table.open() as handle:
            rows = list(csv.DictReader(handle))
    metrics = [m for m in METRIC_NAMES if any(r.get(m) for r in rows)]  # each with a plot
    # exit 1: cut short, the runs fail the scenario's pass criteria; nothing else may fail
    finished = (returncode in (0, 1) and 'Traceback' not in stderr and len(rows) == 4
                and not any(r['error'] for r in rows) and (root / 'worst_runs.md').is_file()
                and len(list((root / 'plots').glob('*.png'))) == len(metrics) > 0)
    if not finished:
        sys.exit(f'the sweep failed ({returncode}): {" ".join(command)}\n{stderr}')
    plots = subprocess.run([sys.executable, '-c', PLOTS_ALONE, str(table), str(output / 'plots')],
                           env=env, capture_output=True, text=True, check=True)
    return {'wall_s': wall_s, 'cpu_s': cpu_s,
            'plots_cpu_s': float(plots.stdout)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--baseline', metavar='REV')
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix='bench-sweep-report-') as scratch, \
            baseline_tree(args.baseline) as baseline:
        scratch = Path(scratch)
        scenario = short_scenario(scratch)
        if baseline is not None:
            set_up_baseline(baseline)
        variants = variant_codes(args.baseline, baseline)
        count = itertools.count()
        results = alternated(variants, args.runs, lambda code: one_run(
            code, scenario, scratch / f'out{next(count)}'))
    print(f'wheelsim sweep, 4 points of the default scenario cut to 10 s, 2 workers, '
          f'{args.runs} runs; load average {os.getloadavg()[0]:.2f}')
    print(f'{"median (best)":28s}{"whole command wall [s]":>24s}{"cpu [s]":>16s}'
          f'{"plots alone cpu [s]":>22s}')
    for name, runs in results.items():
        cells = [f'{statistics.median(r[k] for r in runs):.2f} ({min(r[k] for r in runs):.2f})'
                 for k in ('wall_s', 'cpu_s', 'plots_cpu_s')]
        print(f'{name:28s}{cells[0]:>24s}{cells[1]:>16s}{cells[2]:>22s}')


if __name__ == '__main__':
    main()
