"""Every preset's waypoints give a plan the planner accepts, from the preset's start pose, for
the vehicle its vehicle_sim section describes."""

from pathlib import Path

import pytest
import yaml

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import flatten, from_flat
from wheelsim.core.planning.config import PlannerConfig, with_vehicle
from wheelsim.core.planning.planner import plan_waypoints
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.description import describe
from wheelsim.nodes.planner import parameter_specs

PARAMS_DIR = Path(__file__).resolve().parents[1] / 'params'
PRESETS = sorted(p for p in PARAMS_DIR.glob('*.yaml') if not p.name.startswith('nav2'))


def node_values(tree: dict, node: str) -> dict:
    """Flat parameters a params file gives ``node`` (its own and the /** sections)."""
    values = {}
    for key, body in tree.items():
        if str(key).rsplit('/', 1)[-1] in ('**', node):
            values.update(flatten((body or {}).get('ros__parameters', {})))
    return values


@pytest.mark.parametrize('preset', PRESETS, ids=lambda p: p.name)
def test_preset_waypoints_are_plannable(preset):
    tree = yaml.safe_load(preset.read_text())
    planner = node_values(tree, 'planner')
    assert planner.get('waypoints'), f'{preset.name} gives the planner no waypoints'
    declared = {spec.name for spec in parameter_specs()}
    sim = node_values(tree, 'vehicle_sim')
    declared_config = from_flat(PlannerConfig, {k: v for k, v in planner.items() if k in declared})
    config, _ = with_vehicle(declared_config, describe(vehicle_config_from_params(sim)))
    start = Pose2D(sim.get('initial_pose.x', 0.0), sim.get('initial_pose.y', 0.0),
                   sim.get('initial_pose.yaw', 0.0))
    trajectory = plan_waypoints(config, start)  # raises with the reason if refused
    assert trajectory.duration_s > 0
