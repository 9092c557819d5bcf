"""The whole ``wheelsim run --no-plots`` command, process start to exit, side by side with a
baseline revision.

Run after ``source env.sh``:  python bench/bench_run_command.py [--runs 5] [--baseline REV]
[--one-core] [--instructions] [--record none|TOPIC,...]

Each run starts ``python -m wheelsim.cli run --no-plots --quiet`` on the built-in default
scenario (90 s simulated, every topic recorded) into a new output folder, under
``strace -f -e trace=socket`` (``strace`` must be installed), and reports per run:

- ``wall`` and ``cpu``: the whole command, process start to exit (CPU: user + system of the
  process and its children, from ``wait4``); this is what a user, a sweep worker or a CI job
  waits for;
- ``rtf``: the ``real_time_factor`` of the run's ``timing.json`` (simulated time over the wall
  time from the start of node construction to the end of the bag: the inner figure);
- ``sockets``: network sockets the command opened (``socket(AF_INET...)`` and ``AF_INET6``
  calls seen by strace; strace's own cost makes ``wall`` and ``cpu`` of this pass larger, so
  they are taken from a second run of the same command without strace).

``--baseline REV`` also runs the code of git revision REV (its ``src/wheelsim/wheelsim``
exported with ``git archive`` into a temporary folder first on ``PYTHONPATH``), alternating run
by run with the working tree's, and prints both with the ratio. Its bytecode is compiled first,
and its kernel warm-ups run, as set-up does for the working tree (they compile its kernels
beside the exported code, and build its modules compiled ahead of time where it has them); its
first run is left out of the figures.
``--one-core`` pins each command to CPU 0 (``taskset``), the ``>= 300x on one core`` goal.
``--instructions`` also runs the command once per variant under valgrind's callgrind
(``valgrind`` must be installed; about 50 times slower) and gives the instructions the whole
command executed in user space, summed over its processes: a count that hardly depends on the
machine's load. ``--record`` runs the default scenario with that ``record`` instead of
``all`` (``none``: no bag; or the topics to record, comma-separated): what recording costs the
figures. The table gives the median and the best of the runs and the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import yaml
from bench_runner import baseline_tree, set_up_baseline, timed_command

NETWORK_SOCKET = re.compile(r'socket\((AF_INET|AF_INET6),')


#: The built-in default scenario (``wheelsim run`` without a scenario file runs it).
DEFAULT_SCENARIO = (Path(__file__).resolve().parents[1] / 'src' / 'wheelsim' / 'wheelsim' / 'run'
                    / 'scenarios' / 'default.yaml')


def default_recording(record: str, folder: Path) -> Path:
    """A copy of the default scenario in ``folder`` recording ``record`` (``all``, ``none`` or
    comma-separated topics)."""
    tree = yaml.safe_load(DEFAULT_SCENARIO.read_text())
    tree['record'] = record if record in ('all', 'none') else record.split(',')
    path = folder / 'default.yaml'  # the same name: its output folder is default/ too
    path.write_text(yaml.safe_dump(tree, sort_keys=False))
    return path


def command_and_env(pythonpath: Path | None, output: Path,
                    scenario: Path | None) -> tuple[list[str], dict[str, str]]:
    """The command running ``scenario`` (None: the built-in default) into ``output``, and its
    environment (``pythonpath`` first)."""
    env = dict(os.environ)
    if pythonpath is not None:
        env['PYTHONPATH'] = f'{pythonpath}:{env.get("PYTHONPATH", "")}'
    scenario_file = [] if scenario is None else [str(scenario)]
    return [sys.executable, '-m', 'wheelsim.cli', 'run', *scenario_file, '--no-plots', '--quiet',
            '--output', str(output)], env


def run_or_exit(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``command``; its wall and CPU seconds, process start to exit (the bench ends if it
    fails)."""
    returncode, wall_s, cpu_s, stderr = timed_command(command, env)
    if returncode != 0:
        sys.exit(f'the command failed ({returncode}): {" ".join(command)}\n{stderr}')
    return wall_s, cpu_s


def instructions(pythonpath: Path | None, output: Path, scenario: Path | None) -> int:
    """Instructions one whole command executes: callgrind's totals of its processes, summed.

    numba files the kernels it compiles under the CPU it compiles for, and valgrind's CPU is
    not the machine's: code that compiles its kernels with numba's JIT (not ahead of time)
    would compile them all again under valgrind. So the command first runs without valgrind,
    both runs for numba's generic CPU (``NUMBA_CPU_NAME``), and the second loads what the first
    compiled. (valgrind runs no AVX-512 code: on a CPU with it, the modules built ahead of time
    for it may stop the command.)"""
    warm_up, env = command_and_env(pythonpath, output.with_suffix('.warm-up'), scenario)
    env['NUMBA_CPU_NAME'] = 'generic'
    run_or_exit(warm_up, env)
    command, _ = command_and_env(pythonpath, output, scenario)
    logs = output.with_suffix('.callgrind')
    logs.mkdir()
    run_or_exit(['valgrind', '--tool=callgrind', '--trace-children=yes', '--fair-sched=yes', '-q',
               f'--callgrind-out-file={logs}/callgrind.%p', *command], env)
    totals = [int(line.split()[1]) for path in logs.iterdir()
              for line in path.read_text(errors='replace').splitlines()
              if line.startswith('totals:')]
    if not totals:
        sys.exit(f'callgrind wrote no totals into {logs}')
    return sum(totals)


def one_run(pythonpath: Path | None, output: Path, one_core: bool, traced: bool,
            scenario: Path | None = None) -> dict:
    """Run the command once; its figures."""
    command, env = command_and_env(pythonpath, output, scenario)
    if one_core:
        command = ['taskset', '-c', '0', *command]
    trace = output.with_suffix('.strace')
    if traced:
        command = ['strace', '-f', '-qq', '-e', 'trace=socket', '-o', str(trace), *command]
    wall_s, cpu_s = run_or_exit(command, env)
    timing = json.loads((output / 'default' / 'timing.json').read_text())
    figures = {'wall_s': wall_s, 'cpu_s': cpu_s,
               'rtf': timing['real_time_factor']}
    if traced:
        figures['sockets'] = len(NETWORK_SOCKET.findall(trace.read_text()))
    return figures


def summary(runs: list[dict], key: str, best: str) -> str:
    values = [run[key] for run in runs]
    pick = max if best == 'max' else min
    return f'{statistics.median(values):8.3g} ({pick(values):.3g})'


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--runs', type=int, default=5)
    parser.add_argument('--baseline', metavar='REV')
    parser.add_argument('--one-core', action='store_true')
    parser.add_argument('--instructions', action='store_true')
    parser.add_argument('--record', metavar='all|none|TOPIC,...',
                        help="the default scenario's record (default: all)")
    args = parser.parse_args()
    if shutil.which('strace') is None:
        sys.exit('error: strace is needed to count the sockets (apt install strace)')
    if args.instructions and shutil.which('valgrind') is None:
        sys.exit('error: --instructions needs valgrind (apt install valgrind)')
    with tempfile.TemporaryDirectory(prefix='bench-run-command-') as scratch, \
            baseline_tree(args.baseline) as baseline:
        scratch = Path(scratch)
        scenario = None if args.record is None else default_recording(args.record, scratch)
        variants: dict[str, Path | None] = {'working tree': None}
        if baseline is not None:
            set_up_baseline(baseline)
            one_run(baseline, scratch / 'warm-up', args.one_core, False, scenario)
            variants = {args.baseline: baseline, **variants}
        results: dict[str, list[dict]] = {name: [] for name in variants}
        for k in range(args.runs):
            for v, (name, path) in enumerate(variants.items()):
                traced = one_run(path, scratch / f'{v}-{k}-traced', args.one_core, True, scenario)
                run = one_run(path, scratch / f'{v}-{k}', args.one_core, False, scenario)
                run['sockets'] = traced['sockets']
                results[name].append(run)
        counted = {}
        if args.instructions:
            for v, (name, path) in enumerate(variants.items()):
                counted[name] = instructions(path, scratch / f'{v}-callgrind', scenario)
    print(f'wheelsim run --no-plots, default scenario (90 s simulated, record '
          f'{args.record or "all"}), {args.runs} runs'
          f'{" on one core" if args.one_core else ""}; load average {os.getloadavg()[0]:.2f}')
    print('median (best)             whole command: wall [s]  cpu [s]   | timing.json RTF  '
          '| network sockets')
    for name, runs in results.items():
        print(f'{name:26s}{summary(runs, "wall_s", "min")}  {summary(runs, "cpu_s", "min")}'
              f' | {summary(runs, "rtf", "max")} | {max(run["sockets"] for run in runs)}')
    if args.baseline:
        old, new = (statistics.median(run['cpu_s'] for run in results[name])
                    for name in variants)
        print(f'CPU of the whole command: {old / new:.2f}x less than {args.baseline}')
    for name, count in counted.items():
        print(f'instructions of the whole command (callgrind), {name}: {count:.4g}')


if __name__ == '__main__':
    main()
