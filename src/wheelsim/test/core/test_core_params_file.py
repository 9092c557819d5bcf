"""ROS params files: sections walked and matched as ROS does (test/ros/test_ros_params_file.py
checks the same against rclpy), numbers and repeated keys read as the scenario loader reads them,
and what ROS refuses named with the file and the section."""

import textwrap
from pathlib import Path

import pytest

from wheelsim.core.params_file import ParamsFileError, Section, node_parameters, read_sections

REPO_PARAMS = Path(__file__).resolve().parents[4] / 'params'


def write(tmp_path, text, name='robot.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


def test_sections_apply_as_ros_matches_names(tmp_path):
    path = write(tmp_path, """
        /**:
          ros__parameters: {step_rate: 1e3}
        /robot1/vehicle_sim:
          ros__parameters: {model: omni}
        /robot2/vehicle_sim:
          ros__parameters: {model: bicycle}
        vehicle_sim:
          ros__parameters: {seed: 3}
        """)
    assert node_parameters([path], '/robot1/vehicle_sim') == {'step_rate': 1000.0,
                                                              'model': 'omni'}
    assert node_parameters([path], '/vehicle_sim') == {'step_rate': 1000.0, 'seed': 3}


def test_a_section_for_any_node_gives_only_the_declared_parameters(tmp_path):
    path = write(tmp_path, """
        /**:
          ros__parameters: {use_sim_time: false, odom_frame: odom}
        /*:
          ros__parameters: {seed: 3, base_frame: base}
        /**/vehicle_sim:
          ros__parameters: {model: omni, extra: 1}
        """)
    declared = {'use_sim_time', 'seed', 'model'}
    assert node_parameters([path], '/vehicle_sim', declared) == {
        'use_sim_time': False, 'seed': 3, 'model': 'omni', 'extra': 1}  # named: taken whole
    assert node_parameters([path], '/vehicle_sim') == {  # without declared: all of them
        'use_sim_time': False, 'odom_frame': 'odom', 'seed': 3, 'base_frame': 'base',
        'model': 'omni', 'extra': 1}


@pytest.mark.parametrize('name, fqn, applies', [
    ('vehicle_sim', '/vehicle_sim', True),
    ('vehicle_sim', '/robot1/vehicle_sim', False),
    ('robot1/vehicle_sim', '/robot1/vehicle_sim', True),
    ('/robot1/vehicle_sim', '/vehicle_sim', False),
    ('/**', '/robot1/sub/vehicle_sim', True),
    ('**', '/vehicle_sim', True),
    ('/*', '/vehicle_sim', True),
    ('/*', '/robot1/vehicle_sim', False),
    ('/**/vehicle_sim', '/vehicle_sim', True),
    ('/**/vehicle_sim', '/robot1/sub/vehicle_sim', True),
    ('/**/vehicle_sim', '/robot1/vehicle_sim2', False),
    ('/*/vehicle_sim', '/vehicle_sim', False),
    ('/robot1/*', '/robot1/planner', True),
    ('/robot1/*', '/robot1/sub/planner', False),
    ('/robot1/**', '/robot1/sub/planner', True),
])
def test_a_name_applies_as_rclpy_matches_it(name, fqn, applies):
    assert Section(name, {}).applies_to(fqn) is applies


def test_nested_namespace_levels_are_levels_of_the_node_name(tmp_path):
    """Found in review: launch files and load_vehicle read top-level keys only, so a robot's
    nested section (and Nav2's ``local_costmap: {local_costmap: ...}``) was ignored."""
    path = write(tmp_path, """
        robot1:
          vehicle_sim:
            ros__parameters: {model: omni}
        """)
    assert node_parameters([path], '/robot1/vehicle_sim') == {'model': 'omni'}
    assert node_parameters([path], '/vehicle_sim') == {}
    stock = REPO_PARAMS / 'nav2' / 'stock_jazzy.yaml'
    assert 'footprint' in node_parameters([stock], '/local_costmap/local_costmap')


def test_sections_of_one_name_are_one_entry_where_the_first_is(tmp_path):
    first = write(tmp_path, """
        robot1/vehicle_sim: {ros__parameters: {a: 1}}
        /**: {ros__parameters: {a: 5}}
        robot1: {vehicle_sim: {ros__parameters: {a: 2, b: 2}}}
        """, 'first.yaml')
    second = write(tmp_path, '/**: {ros__parameters: {b: 6}}\n', 'second.yaml')
    assert [s.name for s in read_sections([first, second])] == ['robot1/vehicle_sim', '/**']
    assert node_parameters([first, second], '/robot1/vehicle_sim') == {'a': 5, 'b': 6}


@pytest.mark.parametrize('text, detail', [
    ('vehicle_sim: 3\n', 'section vehicle_sim: a value before ros__parameters'),
    ('vehicle_sim: {params: {model: omni}}\n',
     'section vehicle_sim/params/model: a value before ros__parameters'),
    ('- vehicle_sim\n', 'must map node names to sections'),
    ('vehicle_sim: [unclosed\n', 'not a readable YAML file'),
    ('vehicle_sim:\n  ros__parameters:\n    model: omni\n    model: bicycle\n',
     "not a readable YAML file: the key 'model' is given twice in one mapping (lines 3 and 4): "
     'give it once'),
    ('vehicle_sim: {ros__parameters: {a: {b: 1}, a.b: 2}}\n',
     'section vehicle_sim: a.b: given twice'),
    ('/robot1/2d/vehicle_sim: {ros__parameters: {}}\n', "'2d' is not a ROS name"),
    # stricter than rcl, which takes it in one order and, depending on the release, fails in
    # the other (rcl_yaml_param_parser 9.2.8, Jazzy's wheel: "Internal error creating param
    # namespace"; 10.1.3, Kilted's: accepted; 10.1.4: failing again)
    ('robot1: {ros__parameters: {a: 1}, vehicle_sim: {ros__parameters: {b: 2}}}\n',
     'section robot1: vehicle_sim beside ros__parameters'),
    ('robot1: {vehicle_sim: {ros__parameters: {b: 2}}, ros__parameters: {a: 1}}\n',
     'section robot1: vehicle_sim beside ros__parameters'),
])
def test_what_ros_refuses_is_named_with_the_file_and_section(tmp_path, text, detail):
    path = write(tmp_path, text)
    with pytest.raises(ParamsFileError) as info:
        node_parameters([path], '/vehicle_sim')
    assert str(info.value) == f'{path}: {info.value.detail}'
    assert detail in info.value.detail


def test_a_missing_file_is_named(tmp_path):
    with pytest.raises(ParamsFileError, match=r'missing\.yaml: not a readable YAML file: No such'):
        node_parameters([tmp_path / 'missing.yaml'], '/vehicle_sim')


def test_an_empty_file_gives_nothing(tmp_path):
    assert node_parameters([write(tmp_path, '# nothing\n')], '/vehicle_sim') == {}
