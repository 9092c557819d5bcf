"""`wheelsim run` figures: real-time factor of the default scenario, start-up and report times.

Run after ``source env.sh``:  python bench/bench_runner.py [--runs 3] [--no-plots]
[--baseline REV] [--one-core] [--profile N] [--floor]

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
  written in the process (code up to ``c4f76bb``: by a child process beside the loop, on the
  second core of a 2-core machine, whose CPU time over the whole run is given as
  ``bag writer``); ``RTF one core`` counts the loop, ``close`` and that child: what one core
  would take to simulate and record;
- ``close`` (the end of the bag, node destruction), then the report: ``report_data`` (the
  run's series decoded from the recorded messages; code up to ``c4f76bb``: ``load_run``,
  reading the bag back), ``metrics`` and ``plots``.

``--baseline REV`` (a git revision, e.g. ``main``) also runs the code of REV (its
``src/wheelsim/wheelsim`` exported with ``git archive`` into a temporary folder put first on
``PYTHONPATH``, bag writer included), alternating with the working tree's run by run, and prints
both side by side with the ratio (REV's first run compiles the vehicle kernel, whose numba
cache lives beside the exported code: compare REV's start-up by its best, not its median).
``--one-core`` pins each run (and so a bag writer process) to one CPU,
so the writer's time counts in ``RTF wall``. ``--profile N`` runs each variant once more under
cProfile (the lock-step loop only, ``Lockstep.run_until``) and prints its top N
functions by own time (cProfile adds a cost per Python call, so its shares lean towards code
making many small calls).

``--floor``: each run's process then runs the loop three times more, warm (no imports, no
kernel loads, no first calls): ``loop, warm CPU s``, as the run (its bag and the metrics'
reader); ``loop, no bag CPU s``, what a sweep point or tune trial runs (the reader given every
message, no bag); ``loop, nothing read CPU s``, the nodes' work and the in-process message path
(no bag, no reader): no run that records or computes metrics can be faster. Their differences
are what the bag and the reader cost. It needs the code of ``a3e23b0`` or later
(``simulate``'s ``reader``).

Goal: a real-time factor of at least 50 on a 2-core machine (RTF wall on a quiet machine;
RTF cpu is the same figure without the machine's other load). The table gives the best and the
median of the runs (the best is the least disturbed by other processes) and the load average
while they ran.
"""

from __future__ import annotations

import argparse
import compileall
import contextlib
import cProfile
import io
import json
import os
import pstats
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

PHASES = ('imports', 'nodes', 'loop', 'close', 'report_data', 'metrics', 'plots')
FLOOR_PHASES = ('loop, warm', 'loop, no bag', 'loop, nothing read')


def one_run(output: Path, plots: bool, profile_top: int = 0, floor: bool = False) -> dict:
    """Time one run of the default scenario in this process; ``{phase: (cpu_s, wall_s)}``
    (and ``profile``: the loop's top ``profile_top`` functions, when asked; the
    :data:`FLOOR_PHASES` when ``floor``)."""
    cpu_s, wall_s = time.thread_time(), time.perf_counter()
    import rclpy  # noqa: F401  (timed with the rest of the imports)

    from wheelsim.cli import _load
    from wheelsim.run import lockstep
    from wheelsim.run.runner import run_scenario

    scenario, _ = _load(None)
    imports = (time.thread_time() - cpu_s, time.perf_counter() - wall_s)
    profiler = cProfile.Profile() if profile_top else None
    if profiler is not None:
        # Lockstep, or LockstepExecutor in a baseline from before the seam (1d52afd and older)
        engine = getattr(lockstep, 'Lockstep', None) or lockstep.LockstepExecutor
        run_until = engine.run_until

        def profiled(*args, **kwargs):
            with profiler:
                return run_until(*args, **kwargs)

        engine.run_until = profiled
    outcome = run_scenario(scenario, output, show_progress=False, make_plots=plots)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)  # the bag writer, waited for
    seconds = dict(outcome.phases.seconds)
    if 'load_run' in seconds:  # the code before the report read the recorded messages
        seconds['report_data'] = seconds.pop('load_run')
    result = {'imports': imports, **seconds,
              'bag_writer': (children.ru_utime + children.ru_stime, 0.0),
              'simulated_s': (outcome.timing['simulated_time_s'], 0.0)}
    if floor:
        result.update(floor_loops(scenario, output / 'floor_bag'))
    if profiler is not None:
        text = io.StringIO()
        stats = pstats.Stats(profiler, stream=text)
        stats.sort_stats('tottime').print_stats(profile_top)
        result['profile'] = text.getvalue()
    return result


def floor_loops(scenario: Any, bag_dir: Path) -> dict[str, tuple[float, float]]:
    """The loop of ``scenario`` again in this warm process: as the run (a bag in ``bag_dir``,
    the metrics' reader), without the bag, then with nothing reading the messages;
    ``{phase: (cpu_s, wall_s)}``."""
    from wheelsim.report.bag_data import RunReader
    from wheelsim.run.runner import Phases, simulate

    times = {}
    for phase, bag, reader in zip(FLOOR_PHASES, (bag_dir, None, None),
                                  (RunReader().take, RunReader().take, None), strict=True):
        phases = Phases()
        simulate(scenario, bag, show_progress=False, phases=phases, reader=reader)
        times[phase] = phases.seconds['loop']
    return times


@contextlib.contextmanager
def baseline_tree(revision: str | None) -> Iterator[Path | None]:
    """``src/wheelsim/wheelsim`` of ``revision`` in a temporary folder (None: no baseline)."""
    if revision is None:
        yield None
        return
    repo = Path(__file__).resolve().parents[1]
    with tempfile.TemporaryDirectory(prefix='bench_runner_baseline_') as tmp:
        archive = subprocess.run(['git', '-C', str(repo), 'archive', revision,
                                  'src/wheelsim/wheelsim'], capture_output=True)
        if archive.returncode != 0:
            raise SystemExit(f'--baseline {revision}: not a git revision of {repo} with '
                             f'src/wheelsim/wheelsim ({archive.stderr.decode().strip()})')
        subprocess.run(['tar', '-x', '-C', tmp, '--strip-components=2'], input=archive.stdout,
                       check=True)
        yield Path(tmp)


def set_up_baseline(code: Path) -> None:
    """What set-up does for the code in ``code`` (the folder holding its ``wheelsim``): its
    bytecode compiled, and its kernel warm-ups run, which compile its kernels into a numba
    cache beside it and build its modules compiled ahead of time where it has them."""
    compileall.compile_dir(code, quiet=1)
    env = {**os.environ, 'PYTHONPATH': f'{code}:{os.environ.get("PYTHONPATH", "")}'}
    for module in ('wheelsim.core.warm_up', 'wheelsim.report.warm_up'):
        if (code / Path(*module.split('.'))).with_suffix('.py').exists():
            subprocess.run([sys.executable, '-m', module], env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def variant_codes(revision: str | None, old_code: Path | None) -> dict[str, Path | None]:
    """Variant name -> code folder (None: this tree), the baseline first when there is one."""
    return {'this tree': None} if old_code is None else \
        {f'{revision} (before)': old_code, 'this tree (after)': None}


def alternated(variants: dict[str, Path | None], runs: int,
               run_one: Callable[[Path | None], dict]) -> dict[str, list[dict]]:
    """``runs`` results of ``run_one(code)`` per variant, the variants taking turns run by run
    (so that both see the same phases of a shared machine)."""
    results: dict[str, list[dict]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, code in variants.items():
            results[name].append(run_one(code))
    return results


def timed_command(command: list[str], env: dict[str, str]) -> tuple[int, float, float, str]:
    """Run ``command`` with its output discarded; its exit code, wall and CPU seconds from process
    start to exit (CPU: user + system of the process and the children it waited for, from
    ``wait4``) and its standard error (kept in a file: a pipe could fill up, or be held open by
    a child that outlives the command)."""
    with tempfile.TemporaryFile('w+', errors='replace') as stderr:
        started = time.monotonic()
        process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        wall_s = time.monotonic() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        return process.returncode, wall_s, usage.ru_utime + usage.ru_stime, stderr.read()


def spawn(plots: bool, code: Path | None = None, one_core: bool = False,
          profile_top: int = 0, floor: bool = False) -> dict:
    """One run in a fresh process (so that the imports are timed too), with the package in
    ``code`` first on the path if given, pinned to one CPU if asked."""
    env = dict(os.environ)
    if code is not None:
        env['PYTHONPATH'] = os.pathsep.join([str(code), env.get('PYTHONPATH', '')])
    with tempfile.TemporaryDirectory(prefix='bench_runner_') as tmp:
        args = [sys.executable, __file__, '--child', tmp] + ([] if plots else ['--no-plots'])
        args += ['--profile', str(profile_top)] if profile_top else []
        args += ['--floor'] if floor else []
        pin = (lambda: os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})) if one_core \
            else None
        result = subprocess.run(args, capture_output=True, text=True, check=False, env=env,
                                preexec_fn=pin)
        if result.returncode != 0:
            raise SystemExit(f'run failed:\n{result.stdout}\n{result.stderr}')
        return json.loads(result.stdout.strip().splitlines()[-1])


def _one_core_s(run: dict) -> float:
    """CPU seconds one core would take to simulate and record: loop, close, writer process."""
    return run['loop'][0] + run['close'][0] + run['bag_writer'][0]


def summary(runs: list[dict]) -> dict[str, tuple[float, float]]:
    """Per figure: (best, median) over the runs."""
    simulated_s = runs[0]['simulated_s'][0]
    figures = {
        'RTF wall': [simulated_s / r['loop'][1] for r in runs],
        'RTF cpu': [simulated_s / r['loop'][0] for r in runs],
        'loop + close + writer CPU s': [_one_core_s(r) for r in runs],
        'RTF one core (loop + close + writer CPU)': [simulated_s / _one_core_s(r) for r in runs],
    }
    for phase in PHASES + FLOOR_PHASES:
        if phase in runs[0]:
            figures[f'{phase} CPU s'] = [r[phase][0] for r in runs]
    figures['bag writer CPU s'] = [r['bag_writer'][0] for r in runs]
    best = {name: max(values) if name.startswith('RTF') else min(values)
            for name, values in figures.items()}
    return {name: (best[name], statistics.median(values)) for name, values in figures.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=3, help='fresh processes (default 3)')
    parser.add_argument('--no-plots', action='store_true', help='skip the plots')
    parser.add_argument('--baseline', metavar='REV',
                        help='also run the code of this git revision, alternating')
    parser.add_argument('--one-core', action='store_true',
                        help='pin each run (and a bag writer process) to one CPU')
    parser.add_argument('--profile', type=int, default=0, metavar='N',
                        help='print the top N functions of the loop under cProfile')
    parser.add_argument('--floor', action='store_true',
                        help='also time the loop warm: as the run, without a bag, and with '
                             'nothing reading')
    parser.add_argument('--child', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(one_run(Path(args.child), not args.no_plots, args.profile, args.floor)))
        return

    load_before = os.getloadavg()[0]
    with baseline_tree(args.baseline) as old_code:
        variants = variant_codes(args.baseline, old_code)
        runs = alternated(variants, args.runs,
                          lambda code: spawn(not args.no_plots, code, args.one_core,
                                             floor=args.floor))
        profiles = {name: spawn(not args.no_plots, code, args.one_core, args.profile)
                    for name, code in variants.items()} if args.profile else {}
    load_after = os.getloadavg()[0]
    simulated_s = next(iter(runs.values()))[0]['simulated_s'][0]
    print(f'default scenario, {simulated_s:g} s simulated, {args.runs} runs per variant'
          f'{" (alternating)" if len(variants) > 1 else ""}'
          f'{", each pinned to one CPU" if args.one_core else ""}, load average '
          f'{load_before:.1f} before, {load_after:.1f} after ({os.cpu_count()} CPUs)')
    tables = {name: summary(variant_runs) for name, variant_runs in runs.items()}
    names = list(tables)
    header = ''.join(f'{name:>26s}' for name in names)
    print(f'  {"figure (best / median)":34s}{header}' + ('     after/before' if len(names) > 1
                                                           else ''))
    for figure in tables[names[0]]:
        cells = ''.join(f'{tables[n][figure][0]:12.2f} / {tables[n][figure][1]:8.2f}'
                        for n in names)
        ratio = (f'   {tables[names[1]][figure][0] / tables[names[0]][figure][0]:6.2f}x'
                 if len(names) > 1 and tables[names[0]][figure][0] else '')
        print(f'  {figure:34s}{cells}{ratio}')
    print('  (RTF: simulated s per wall s of the loop, per CPU s of its thread, and per CPU s of '
          'the loop, the close and a bag writer process: what one core would take)')
    for name, result in profiles.items():
        print(f'\ncProfile of the loop, {name}:')
        print(result['profile'].split('Ordered by')[0].strip())
        print(result['profile'].split('\n\n', 2)[-1].rstrip())


if __name__ == '__main__':
    main()
