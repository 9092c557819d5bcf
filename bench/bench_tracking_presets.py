"""Tracking with node defaults: every shipped preset and every model at vehicle_sim's defaults.

Run after ``source env.sh``:  python bench/bench_tracking_presets.py

Each vehicle drives a square through its waypoints (2 m sides; 6 m for cars) and the default
figure-eight of ``wheelsim run`` (6 m x 3 m) with every node at its defaults otherwise (noisy
localization, the planner's and controller's limits and lead time from the vehicle; a preset's
own parameters, its vehicle starting at the course's start, the origin facing +x), one
``wheelsim run`` per course, headless, no bag. The table gives the true cross-track error
against the plan (max and RMS over the run, ``metrics.json``), the distance to the goal at the
end, and whether the goal was reached; issue 36's goal is a max within 0.15 m (0.25 m for cars).
Each run's whole command (process start to exit) is timed, wall and CPU of the child.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from wheelsim.run.scenario import DEFAULT_SCENARIO

REPO = Path(__file__).resolve().parents[1]
#: (preset, model): a preset file of params/, or None and vehicle_sim's defaults for the model.
VEHICLES = [('indoor_differential', None), ('mecanum_omni', None), ('ackermann_car', None),
            ('forklift', None), ('all_vehicles', None), (None, 'differential'), (None, 'omni'),
            (None, 'bicycle')]
CARS = ('ackermann_car', 'forklift', 'all_vehicles', 'bicycle')  # all_vehicles: a car by default
NAN = math.nan
#: The default scenario's figure-eight (6 m x 3 m).
FIGURE_EIGHT = yaml.safe_load(DEFAULT_SCENARIO.read_text())['nodes']['planner']['waypoints']
DURATION_S = 240.0  # the longest plan (a car's figure-eight of Reeds-Shepp legs) takes 170 s
RUN = 'import sys; from wheelsim.cli import main; sys.exit(main())'


def square(side_m: float) -> list[float]:
    return [side_m, 0.0, NAN, side_m, side_m, NAN, 0.0, side_m, NAN, 0.0, 0.0, NAN]


def run(name: str, preset: str | None, model: str | None, waypoints: list[float],
        folder: Path) -> dict:
    scenario = {'name': name, 'duration': DURATION_S, 'seed': 1, 'record': 'none',
                'nodes': {'planner': {'waypoints': waypoints}}}
    if preset:  # the preset's vehicle and nodes, starting where the course starts
        scenario['params_file'] = str(REPO / 'params' / f'{preset}.yaml')
        scenario['nodes']['vehicle_sim'] = {'initial_pose': {'x': 0.0, 'y': 0.0, 'yaw': 0.0}}
    else:
        scenario['nodes']['vehicle_sim'] = {'model': model}
    path = folder / f'{name}.yaml'
    path.write_text(yaml.safe_dump(scenario))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run([sys.executable, '-c', RUN, 'run', str(path), '--quiet',
                             '--no-plots', '--output', str(folder)],
                            capture_output=True, text=True, env=os.environ)
    wall_s = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode not in (0, 1):
        raise SystemExit(f'{name}: exit {result.returncode}\n{result.stderr}')
    metrics = json.loads((folder / name / 'metrics.json').read_text())
    return {**metrics, 'wall_s': wall_s,
            'cpu_s': after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime}


def main() -> None:
    argparse.ArgumentParser(description=__doc__.split('\n')[0]).parse_args()
    print('| vehicle | course | cross-track max / RMS [m] | goal error [m] | reached | '
          'command wall / CPU [s] |')
    print('|---|---|---|---|---|---|')
    with tempfile.TemporaryDirectory() as folder:
        for preset, model in VEHICLES:
            vehicle = preset or f'{model} (defaults)'
            car = (preset or model) in CARS
            courses = (('square 6 m' if car else 'square 2 m', square(6.0 if car else 2.0)),
                       ('figure-eight', FIGURE_EIGHT))
            for course, waypoints in courses:
                name = f'{preset or model}_{course.split()[0].replace("-", "_")}'
                m = run(name, preset, model, waypoints, Path(folder))
                reached = 'yes' if m.get('time_to_goal_s') is not None else 'no'
                print(f'| {vehicle} | {course} | {m["cross_track_max_m"]:.3f} / '
                      f'{m["cross_track_rms_m"]:.3f} | {m["goal_position_error_m"]:.3f} | '
                      f'{reached} | {m["wall_s"]:.1f} / {m["cpu_s"]:.1f} |', flush=True)


if __name__ == '__main__':
    main()
