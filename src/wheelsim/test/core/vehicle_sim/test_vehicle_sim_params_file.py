"""vehicle_sim's parameters from a ROS params file: sections matched as ROS matches node names,
numbers and repeated keys read as the scenario loader reads them."""

import pytest
import yaml

from wheelsim.core.vehicle_sim.params_file import node_section


def test_sections_apply_in_file_order_as_ros_matches_names(tmp_path):
    path = tmp_path / 'robot.yaml'
    path.write_text('/**:\n  ros__parameters: {step_rate: 1e3}\n'
                    '/robot1/vehicle_sim:\n  ros__parameters: {model: omni}\n'
                    '/robot2/vehicle_sim:\n  ros__parameters: {model: bicycle}\n')
    assert node_section(str(path), '/robot1/vehicle_sim') == {'step_rate': 1000.0,
                                                              'model': 'omni'}
    assert node_section(str(path), '/vehicle_sim') == {'step_rate': 1000.0}


def test_a_key_given_twice_is_named_with_the_file_and_both_lines(tmp_path):
    path = tmp_path / 'robot.yaml'
    path.write_text('vehicle_sim:\n  ros__parameters:\n    model: omni\n    model: bicycle\n')
    with pytest.raises(yaml.YAMLError, match=f"^{path}: the key 'model' is given twice in one "
                                             r'mapping \(lines 3 and 4\): give it once$'):
        node_section(str(path), '/vehicle_sim')
