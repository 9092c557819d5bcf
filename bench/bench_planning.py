"""Planning figures: time to plan a route of 10, 100 and 1000 waypoints, old code and new.

Run after ``source env.sh``:  python bench/bench_planning.py [--baseline REV] [--runs 3]

The route is a winding road (waypoints 2 m apart, headings free, its heading swinging by up to
80 degrees), planned from its first point with ``limits.max_curvature`` 0.5 1/m (tight enough
that parts of the smooth curve must be bent), max_speed 1 m/s, max_acceleration 0.5 m/s^2,
as a differential base (no reversing). Both versions run in this one invocation, in turn, each
in a fresh process: the baseline from ``git archive REV src/wheelsim`` (default: the commit
before issue 18's planning work) and the working tree. Printed per route: the median wall time
of ``plan_through`` (CPU of one process, the trajectory included) over ``--runs`` runs, the
plan's length and largest curvature (on its poses), or why it failed; a run over
``--timeout`` seconds is stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
COUNTS = (10, 100, 1000)
BASELINE = '12ae445'


def route(count: int) -> list[list[float]]:
    """``count`` waypoints 2 m apart, the first with its heading."""
    import numpy as np

    t = np.linspace(0.0, 2.0 * np.pi * count / 10.0, count)
    heading = 0.9 * np.sin(0.7 * t) + 0.5 * np.sin(0.23 * t)
    xy = np.cumsum(np.column_stack([2.0 * np.cos(heading), 2.0 * np.sin(heading)]), axis=0)
    xy -= xy[0]
    return [[0.0, 0.0, float(heading[0])]] + [[float(x), float(y)] for x, y in xy[1:]]


def worker(count: int, runs: int) -> dict:
    """Plan the route ``runs`` times with whatever wheelsim is importable."""
    from wheelsim.core.params import from_flat, specs
    from wheelsim.core.planning.config import PlannerConfig
    from wheelsim.core.planning.path import path_shape
    from wheelsim.core.planning.planner import plan_through
    from wheelsim.core.planning.waypoints import waypoints_from_lists

    values = {'limits.max_curvature': 0.5, 'limits.max_speed': 1.0,
              'limits.max_acceleration': 0.5, 'limits.workspace_radius': 5000.0}
    if 'model' in {spec.name for spec in specs(PlannerConfig)}:
        values['model'] = 'differential'
    config = from_flat(PlannerConfig, values)
    waypoints = waypoints_from_lists(route(count))
    times = []
    try:
        for _ in range(runs):
            start = time.perf_counter()
            trajectory = plan_through(waypoints, config)
            times.append(time.perf_counter() - start)
    except ValueError as err:
        return {'count': count, 'error': str(err)[:100]}
    shape = path_shape(trajectory.x_m, trajectory.y_m)
    return {'count': count, 'seconds': statistics.median(times), 'length_m': shape.length_m,
            'max_curvature': shape.max_curvature_inv_m}


def baseline_tree(revision: str, folder: Path) -> Path:
    """The baseline's package, extracted; plus path_shape where it has none (measuring)."""
    archive = subprocess.run(['git', 'archive', revision, 'src/wheelsim'], cwd=REPO,
                             check=True, capture_output=True).stdout
    tarfile.open(fileobj=BytesIO(archive)).extractall(folder)
    package = folder / 'src' / 'wheelsim'
    path_module = package / 'wheelsim' / 'core' / 'planning' / 'path.py'
    if 'def path_shape' not in path_module.read_text():
        current = (REPO / 'src/wheelsim/wheelsim/core/planning/path.py').read_text()
        start = current.index('@dataclass(frozen=True)\nclass PathShape')
        end = current.index('@dataclass(frozen=True)\nclass PathSamples')
        path_module.write_text(path_module.read_text() + '\n\n' + current[start:end])
    return package


def measure(package: Path | None, count: int, runs: int, timeout_s: float) -> dict:
    env = dict(os.environ)
    if package is not None:
        env['PYTHONPATH'] = f'{package}{os.pathsep}{env.get("PYTHONPATH", "")}'
    command = [sys.executable, __file__, '--worker', str(count), '--runs', str(runs)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=timeout_s * runs + 30)
    except subprocess.TimeoutExpired:
        return {'count': count, 'error': f'over {timeout_s:g} s'}
    if done.returncode:
        return {'count': count, 'error': done.stderr.strip().splitlines()[-1][:100]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def cell(result: dict) -> str:
    if 'error' in result:
        return f'{"failed":>10}  {result["error"]}'
    return (f'{result["seconds"]:9.3f}s {result["length_m"]:8.1f} m '
            f'{result["max_curvature"]:6.3f} 1/m')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--baseline', default=BASELINE, help='git revision of the old code')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=300.0, help='per run [s]')
    parser.add_argument('--worker', type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.runs)))
        return
    with tempfile.TemporaryDirectory() as folder:
        old = baseline_tree(args.baseline, Path(folder))
        print(f'route: waypoints 2 m apart, max_curvature 0.5 1/m; median of {args.runs} runs')
        print(f'{"waypoints":>9}  {"old (" + args.baseline + ")":42}  new (working tree)')
        for count in COUNTS:
            before = measure(old, count, args.runs, args.timeout)
            after = measure(None, count, args.runs, args.timeout)
            print(f'{count:9d}  {cell(before):42}  {cell(after)}')


if __name__ == '__main__':
    main()
