"""Plans the vehicle can follow (issue 36): with every node at its defaults, the default
differential and omni vehicles (drive dead time 0.2 s, time constant 0.4 s) and the indoor
presets stay within 0.15 m of their plan on a 2 m square and on the default figure-eight, and
reach the goal; the default car (turning radius 4.3 m, reversing) and the Ackermann and
forklift presets within 0.25 m on a 6 m square and on the figure-eight (the default car's
planned as Reeds-Shepp legs with cusps). ``wheelsim run``
headless, as bench/bench_tracking_presets.py (whose table in BENCHMARKS.md covers every
preset)."""

import json
import math
import shutil
import subprocess

import pytest
import yaml
from bringup_support import REPO

from wheelsim.run.scenario import DEFAULT_SCENARIO

MAX_CROSS_TRACK_M = {'car': 0.25, 'base': 0.15}


def square(side_m):
    return [side_m, 0.0, math.nan, side_m, side_m, math.nan, 0.0, side_m, math.nan,
            0.0, 0.0, math.nan]


def run_metrics(tmp_path, scenario):
    """``metrics.json`` of ``wheelsim run`` of the scenario (a dict, as its YAML)."""
    path = tmp_path / 'scenario.yaml'
    path.write_text(yaml.safe_dump(scenario))
    result = subprocess.run([shutil.which('wheelsim'), 'run', str(path), '--quiet', '--no-plots',
                             '--output', str(tmp_path)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads((tmp_path / scenario['name'] / 'metrics.json').read_text())


FIGURE_EIGHT = yaml.safe_load(DEFAULT_SCENARIO.read_text())['nodes']['planner']['waypoints']


@pytest.mark.parametrize('vehicle, course', [
    ('differential', 'square'), ('differential', 'figure_eight'), ('omni', 'square'),
    ('omni', 'figure_eight'), ('indoor_differential', 'square'), ('mecanum_omni', 'square'),
    ('bicycle', 'square'), ('bicycle', 'figure_eight'), ('ackermann_car', 'square'),
    ('ackermann_car', 'figure_eight'), ('forklift', 'square'), ('forklift', 'figure_eight')])
def test_node_defaults_follow_their_plan(tmp_path, vehicle, course):
    car = vehicle in ('bicycle', 'ackermann_car', 'forklift')
    scenario = {'name': f'{vehicle}_{course}', 'duration': 150.0 if car else 60.0, 'seed': 1,
                'record': 'none',
                'nodes': {'planner': {'waypoints': FIGURE_EIGHT if course == 'figure_eight'
                                      else square(6.0 if car else 2.0)}}}
    if vehicle in ('differential', 'omni', 'bicycle'):
        scenario['nodes']['vehicle_sim'] = {'model': vehicle}
    else:  # the preset, its vehicle starting where the course starts
        scenario['params_file'] = str(REPO / 'params' / f'{vehicle}.yaml')
        scenario['nodes']['vehicle_sim'] = {'initial_pose': {'x': 0.0, 'y': 0.0, 'yaw': 0.0}}
    metrics = run_metrics(tmp_path, scenario)
    assert metrics['cross_track_max_m'] <= MAX_CROSS_TRACK_M['car' if car else 'base'], metrics
    assert metrics['time_to_goal_s'] is not None, metrics


# found in review: the omni base turned on the spot 0.17-0.19 rad past the goal's heading and
# stopped at the edge of its yaw tolerance: the plan of three poses stepped the yaw rate
@pytest.mark.parametrize('heading_rad', [1.5708, 3.1, -1.5708])
def test_the_omni_preset_turns_on_the_spot_without_overshooting(tmp_path, heading_rad):
    scenario = {'name': 'spin', 'duration': 12.0, 'seed': 1, 'record': 'none',
                'params_file': str(REPO / 'params' / 'mecanum_omni.yaml'),
                'nodes': {'localization': {'mode': 'perfect'},
                          'vehicle_sim': {'initial_pose': {'x': 0.0, 'y': 0.0, 'yaw': 0.0}},
                          'planner': {'waypoints': [0.01, 0.0, heading_rad]}}}
    metrics = run_metrics(tmp_path, scenario)
    assert metrics['heading_error_max_rad'] <= 0.06, metrics  # 0.15 with the three poses
    assert metrics['goal_heading_error_rad'] <= 0.035, metrics  # 0.08
    assert metrics['time_to_goal_s'] is not None, metrics
