"""Plans the vehicle can follow (issue 36): with every node at its defaults, the default
differential and omni vehicles (drive dead time 0.2 s, time constant 0.4 s) and the indoor
presets stay within 0.15 m of their plan on a 2 m square and on the default figure-eight, and
reach the goal. ``wheelsim run`` headless, as bench/bench_tracking_presets.py (whose table in
BENCHMARKS.md covers every preset). The cars are not here: their plans through these waypoints
are Reeds-Shepp legs whose length swings with millimetres of start pose and with the numpy
release (the default car's 6 m square: 45-78 m on Jazzy, once 65 km on Kilted, refused)."""

import json
import math
import shutil
import subprocess

import pytest
import yaml
from bringup_support import REPO

from wheelsim.run.scenario import DEFAULT_SCENARIO

MAX_CROSS_TRACK_M = 0.15
SQUARE = [2.0, 0.0, math.nan, 2.0, 2.0, math.nan, 0.0, 2.0, math.nan, 0.0, 0.0, math.nan]

FIGURE_EIGHT = yaml.safe_load(DEFAULT_SCENARIO.read_text())['nodes']['planner']['waypoints']


@pytest.mark.parametrize('vehicle, course', [
    ('differential', 'square'), ('differential', 'figure_eight'), ('omni', 'square'),
    ('omni', 'figure_eight'), ('indoor_differential', 'square'), ('mecanum_omni', 'square')])
def test_node_defaults_follow_their_plan(tmp_path, vehicle, course):
    scenario = {'name': f'{vehicle}_{course}', 'duration': 60.0, 'seed': 1, 'record': 'none',
                'nodes': {'planner': {'waypoints': FIGURE_EIGHT if course == 'figure_eight'
                                      else SQUARE}}}
    if vehicle in ('differential', 'omni'):
        scenario['nodes']['vehicle_sim'] = {'model': vehicle}
    else:
        scenario['params_file'] = str(REPO / 'params' / f'{vehicle}.yaml')
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump(scenario))
    result = subprocess.run([shutil.which('wheelsim'), 'run', str(path), '--quiet', '--no-plots',
                             '--output', str(tmp_path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    metrics = json.loads((tmp_path / scenario['name'] / 'metrics.json').read_text())
    assert metrics['cross_track_max_m'] <= MAX_CROSS_TRACK_M, metrics
    assert metrics['time_to_goal_s'] is not None, metrics
