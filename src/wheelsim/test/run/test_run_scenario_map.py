"""A scenario's map: a shipped map by name or a YAML relative to the scenario, checked at load."""

import textwrap

import numpy as np
import pytest

from wheelsim.core.params import ParamSpec
from wheelsim.run.scenario import ScenarioError, load_scenario, with_overrides
from wheelsim.shipped import shipped_map
from wheelsim.testing.maps import write_map

SPECS = {'vehicle_sim': [ParamSpec('world.map_yaml', '', 'map')], 'localization': [],
         'planner': [], 'controller': []}


def scenario(tmp_path, text):
    path = tmp_path / 'scenario.yaml'
    path.write_text(textwrap.dedent(text))
    return load_scenario(path, SPECS, ())


def test_a_map_relative_to_the_scenario(tmp_path):
    write_map(tmp_path / 'maps', np.eye(4, dtype=bool), 0.1, (0.0, 0.0, 0.0), name='tiny')
    loaded = scenario(tmp_path, 'map: maps/tiny.yaml\n')
    assert loaded.map_yaml == (tmp_path / 'maps' / 'tiny.yaml').resolve()
    assert with_overrides(loaded, {}, lambda *_: None).map_yaml == loaded.map_yaml
    assert scenario(tmp_path, 'name: plain\n').map_yaml is None


def test_a_shipped_map_by_name(tmp_path):
    loaded = scenario(tmp_path, 'map: room\n')
    assert loaded.map_yaml == shipped_map('room') and loaded.map_yaml.is_file()


@pytest.mark.parametrize('text, message', [
    # found in review: a name no shipped map has read as params/maps/<name>.yaml ('..yaml')
    ('map: nowhere\n', r"map: 'nowhere' is no shipped map \(one of room\) and no file path "
                       r'\(a path has a / or ends in .yaml\)$'),
    ('map: roomm\n', r"map: 'roomm' is no shipped map \(did you mean room\? one of room\)"),
    ('map: .\n', r"map: '.' is no shipped map"),
    ('map: maps/missing.yaml\n', 'map: cannot read map'),
    ('map: 3\n', 'map: 3 must name a map_server YAML file'),
    ('map: room\nnodes:\n  vehicle_sim: {world: {map_yaml: other.yaml}}\n',
     'map: nodes.vehicle_sim.world.map_yaml names a map too'),
])
def test_bad_maps_are_named(tmp_path, text, message):
    with pytest.raises(ScenarioError, match=message):
        scenario(tmp_path, text)


def test_the_scenario_map_replaces_a_params_file_map_with_a_note(tmp_path):
    """Found in review: a params file's world.map_yaml beside the scenario's map was refused
    as ``nodes.vehicle_sim.world.map_yaml``, which the scenario did not have. The params file
    is the base layer the scenario's keys replace."""
    from wheelsim.run.runner import node_parameter_checks, node_parameter_specs

    (tmp_path / 'robot.yaml').write_text(  # another machine's map: not read
        'vehicle_sim:\n  ros__parameters: {world: {map_yaml: /opt/robot/maps/office.yaml}}\n')
    (tmp_path / 'scenario.yaml').write_text(
        'map: room\nparams_file: robot.yaml\nnodes: {planner: {waypoints: [1.0, 0.0, .nan]}}\n')
    loaded = load_scenario(tmp_path / 'scenario.yaml', node_parameter_specs(), (),
                           node_parameter_checks())
    assert loaded.map_yaml.name == 'room.yaml'
    assert 'world.map_yaml' not in loaded.node_parameters['vehicle_sim']
    assert loaded.params_file_replaced == {
        'vehicle_sim.world.map_yaml': "which the scenario's map replaces"}
