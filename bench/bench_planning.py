"""Planning figures: time to plan a route of many waypoints, old code and new.

Run after ``source env.sh``:  python bench/bench_planning.py [--route road|zigzag]
[--baseline REV] [--runs 3]

``road`` (10, 100, 1000 waypoints): a winding road (waypoints 2 m apart, headings free, its
heading swinging by up to 80 degrees) with ``limits.max_curvature`` 0.5 1/m (tight enough that
parts of the smooth curve must be bent). ``zigzag`` (10, 20, 50 waypoints): legs of 1 m
turning by 165 degrees left and right in turn with ``limits.max_curvature`` 1 1/m, so that every
leg falls back to a Reeds-Shepp leg. Both planned from their first point, max_speed 1 m/s,
max_acceleration 0.5 m/s^2, as a differential base (``allow_reverse`` at its default, true).
Both versions run in this one invocation, in turn, each in a fresh process: the baseline
from ``git archive REV src/wheelsim`` (default: the commit before issue 18's planning work) and
the working tree. Printed per route: the median wall time of ``plan_through`` (CPU of one
process, the trajectory included) over ``--runs`` runs, the plan's length and largest curvature
(on its poses), or why it failed; a run over ``--timeout`` seconds is stopped.
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
BASELINE = '12ae445'


def road(count: int) -> list[list[float]]:
    """``count`` waypoints 2 m apart, the first with its heading."""
    import numpy as np

    t = np.linspace(0.0, 2.0 * np.pi * count / 10.0, count)
    heading = 0.9 * np.sin(0.7 * t) + 0.5 * np.sin(0.23 * t)
    xy = np.cumsum(np.column_stack([2.0 * np.cos(heading), 2.0 * np.sin(heading)]), axis=0)
    xy -= xy[0]
    return [[0.0, 0.0, float(heading[0])]] + [[float(x), float(y)] for x, y in xy[1:]]


def zigzag(count: int) -> list[list[float]]:
    """``count`` waypoints 1 m apart turning by 165 degrees left and right in turn."""
    import math

    points, heading = [[0.0, 0.0, 0.0]], 0.0
    for i in range(count - 1):
        x, y = points[-1][:2]
        points.append([x + math.cos(heading), y + math.sin(heading)])
        heading += math.radians(165.0) * (1 if i % 2 == 0 else -1)
    return points


#: Per route: the waypoints, the waypoint counts, the planner's values besides the limits below.
ROUTES = {
    'road': (road, (10, 100, 1000), {'limits.max_curvature': 0.5}),
    'zigzag': (zigzag, (10, 20, 50), {'limits.max_curvature': 1.0}),
}


def worker(route: str, count: int, runs: int) -> dict:
    """Plan the route ``runs`` times with whatever wheelsim is importable."""
    from wheelsim.core.params import from_flat, specs
    from wheelsim.core.planning.config import PlannerConfig
    from wheelsim.core.planning.path import path_shape
    from wheelsim.core.planning.planner import plan_through
    from wheelsim.core.planning.waypoints import waypoints_from_lists

    points, _, route_values = ROUTES[route]
    values = {**route_values, 'limits.max_speed': 1.0, 'limits.max_acceleration': 0.5,
              'limits.workspace_radius': 5000.0}
    # set where the version has them ("from the vehicle" otherwise): FIXED_PLANNER's values
    later = {'model': 'differential', 'limits.max_lateral_acceleration': 1.0,
             'limits.max_curvature_rate': 0.0}
    names = {spec.name for spec in specs(PlannerConfig)}
    values.update({name: value for name, value in later.items() if name in names})
    config = from_flat(PlannerConfig, values)
    waypoints = waypoints_from_lists(points(count))
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


def measure(package: Path | None, route: str, count: int, runs: int, timeout_s: float) -> dict:
    env = dict(os.environ)
    if package is not None:
        env['PYTHONPATH'] = f'{package}{os.pathsep}{env.get("PYTHONPATH", "")}'
    command = [sys.executable, __file__, '--route', route, '--worker', str(count),
               '--runs', str(runs)]
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
    parser.add_argument('--route', choices=sorted(ROUTES), default='road')
    parser.add_argument('--baseline', default=BASELINE, help='git revision of the old code')
    parser.add_argument('--runs', type=int, default=3)
    parser.add_argument('--timeout', type=float, default=300.0, help='per run [s]')
    parser.add_argument('--worker', type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.route, args.worker, args.runs)))
        return
    with tempfile.TemporaryDirectory() as folder:
        old = baseline_tree(args.baseline, Path(folder))
        print(f'route: {args.route} (module doc); median of {args.runs} runs')
        print(f'{"waypoints":>9}  {"old (" + args.baseline + ")":42}  new (working tree)')
        for count in ROUTES[args.route][1]:
            before = measure(old, args.route, count, args.runs, args.timeout)
            after = measure(None, args.route, count, args.runs, args.timeout)
            print(f'{count:9d}  {cell(before):42}  {cell(after)}')


if __name__ == '__main__':
    main()
