"""vehicle_sim's URDF: the vehicle plus its laser link and REP-120 footprint frame."""

import math
import xml.etree.ElementTree as ET

import pytest
from urdf_parser_py.urdf import URDF

from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.vehicle_sim.description import vehicle_sim_urdf
from wheelsim.nodes.vehicle_sim import check_parameters

CONFIG = vehicle_config_from_params({'model': 'differential'})


def urdf(**values):
    settings = from_flat(VehicleSimSettings, {k.replace('__', '.'): v for k, v in values.items()})
    return URDF.from_xml_string(vehicle_sim_urdf(CONFIG, settings))


def test_the_laser_is_a_fixed_link_at_its_mount_pose():
    robot = urdf(scan__x=0.2, scan__y=-0.1, scan__z=0.3, scan__yaw=math.pi / 2,
                 frame_prefix='r1/')
    joint = robot.joint_map['r1/base_scan_joint']
    assert (joint.type, joint.parent, joint.child) == ('fixed', 'r1/base_link', 'r1/base_scan')
    assert joint.origin.xyz == pytest.approx([0.2, -0.1, 0.3])
    assert joint.origin.rpy == pytest.approx([0.0, 0.0, math.pi / 2])
    assert robot.link_map['r1/base_scan'].visual is not None


def test_footprint_frame_is_an_identity_child_of_the_base_and_optional():
    robot = urdf(footprint_frame='base_footprint', scan__frame_id='laser')
    joint = robot.joint_map['base_footprint_joint']
    assert (joint.type, joint.parent, joint.child) == ('fixed', 'base_link', 'base_footprint')
    assert joint.origin.xyz == [0.0, 0.0, 0.0] and joint.origin.rpy == [0.0, 0.0, 0.0]
    assert 'laser' in robot.link_map
    plain = urdf(scan__enabled=False)
    assert 'base_footprint' not in plain.link_map and 'base_scan' not in plain.link_map
    assert plain.get_root() == 'base_link'


@pytest.mark.parametrize('model, link', [('differential', 'left_wheel'),
                                         ('omni', 'rear_right_wheel'),
                                         ('bicycle', 'steering_left'),
                                         ('bicycle', 'fixed_right_wheel')])
@pytest.mark.parametrize('parameter', ['base_frame', 'scan.frame_id', 'footprint_frame'])
def test_a_frame_may_not_take_a_link_name_of_the_vehicle(model, link, parameter):
    """Review F2: scan.frame_id:=left_wheel gave a URDF with link left_wheel and joint
    left_wheel_joint twice, which urdfdom (robot_state_publisher, RViz) refuses; so did
    base_frame:=left_wheel, the body link taking a wheel's name."""
    config = vehicle_config_from_params({'model': model})
    settings = from_flat(VehicleSimSettings, {parameter: link, 'frame_prefix': 'r1/'})
    with pytest.raises(ParameterError) as refused:
        vehicle_sim_urdf(config, settings)
    assert refused.value.name == parameter
    assert f'must differ from the wheel and steering links of the {model} vehicle in its ' in (
        str(refused.value))
    assert link in refused.value.allowed
    assert 'base_link' not in refused.value.allowed
    with pytest.raises(ParameterError):
        check_parameters({'model': model, parameter: link})


@pytest.mark.parametrize('model', ['differential', 'omni', 'bicycle'])
def test_every_joint_is_named_after_its_child_link_so_links_cover_joints(model):
    """check_frame_links compares a frame with the links only (its message says links): a
    frame's joint ``<frame>_joint`` can then take a joint's name only with the link's. Were a
    joint named otherwise, the check would have to compare joints too."""
    robot = ET.fromstring(vehicle_sim_urdf(vehicle_config_from_params({'model': model}),
                                           from_flat(VehicleSimSettings, {})))
    for joint in robot.iter('joint'):
        assert joint.get('name') == joint.find('child').get('link') + '_joint'


def test_every_shipped_frame_name_stays_unique():
    for model in ('differential', 'omni', 'bicycle'):
        settings = from_flat(VehicleSimSettings, {'footprint_frame': 'base_footprint'})
        text = vehicle_sim_urdf(vehicle_config_from_params({'model': model}), settings)
        root = ET.fromstring(text)
        for kind in ('link', 'joint'):
            names = [element.get('name') for element in root.iter(kind)]
            assert len(names) == len(set(names)), (model, kind, names)
    assert urdf(scan__enabled=False, scan__frame_id='left_wheel').get_root() == 'base_link'
