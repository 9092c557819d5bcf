"""URDF generation, parsed with a real URDF parser."""

import math

import pytest
from urdf_parser_py.urdf import URDF

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.core.vehicle.urdf import build_urdf

VARIANTS = {
    'car': {'model': 'bicycle', 'model_params.bicycle.wheel_base': 2.7,
            'model_params.bicycle.steering_actuator.max_position': 0.61},
    'forklift': {'model': 'bicycle', 'model_params.bicycle.reverse': True,
                 'model_params.bicycle.drive_on_steered_wheel': True,
                 'model_params.bicycle.vis_track_steered': 0.0,
                 'model_params.bicycle.steering_actuator.max_position': 0.0},
    'trike': {'model': 'bicycle', 'model_params.bicycle.vis_track_steered': 0.0,
              'model_params.bicycle.vis_track_fixed': 0.0},
    'differential': {'model': 'differential', 'model_params.differential.base_link_offset': 0.3},
    'omni': {'model': 'omni'},
}


def parse(name, prefix=''):
    config = vehicle_config_from_params(VARIANTS[name])
    return config, URDF.from_xml_string(build_urdf(config, prefix))


@pytest.mark.parametrize('name', sorted(VARIANTS))
@pytest.mark.parametrize('prefix', ['', 'robot_2/'])
def test_joint_names_match_the_vehicle_and_every_name_is_prefixed(name, prefix):
    config, robot = parse(name, prefix)
    movable = [j.name for j in robot.joints if j.type in ('continuous', 'revolute')]
    assert sorted(movable) == sorted(prefix + n for n in Vehicle(config, 1e-3).joint_names)
    assert robot.get_root() == prefix + 'base_link'
    assert all(link.name.startswith(prefix) for link in robot.links)
    assert all(joint.name.startswith(prefix) for joint in robot.joints)
    assert robot.link_map[prefix + 'base_link'].visual is not None


@pytest.mark.parametrize('name', sorted(VARIANTS))
def test_wheels_are_continuous_on_y_and_steering_revolute_on_z(name):
    _, robot = parse(name)
    for joint in robot.joints:
        if joint.name.endswith('wheel_joint'):
            assert joint.type == 'continuous' and list(joint.axis) == [0, 1, 0]
        else:
            assert joint.name.startswith('steering') and list(joint.axis) == [0, 0, 1]


def test_single_steered_wheel_is_limited_to_max_position():
    _, robot = parse('trike')
    steering = robot.joint_map['steering_joint']
    assert steering.type == 'revolute'
    assert (steering.limit.lower, steering.limit.upper) == pytest.approx((-math.pi / 6,
                                                                          math.pi / 6))


def test_ackermann_wheels_cover_the_angles_they_reach_within_max_position():
    config, robot = parse('car')
    left = robot.joint_map['steering_left_joint'].limit
    right = robot.joint_map['steering_right_joint'].limit
    assert left.upper > 0.61 > right.upper  # inner wheel turns more than the centre wheel
    assert (left.lower, left.upper) == pytest.approx((-right.upper, -right.lower))
    vehicle = Vehicle(config, 1e-3)
    vehicle.set_command(2.0, 0.0, 10.0)  # full lock
    vehicle.step(3000)
    angles = vehicle.state().steering_angles_rad
    assert angles == pytest.approx([left.upper, right.upper], abs=1e-9)


def test_unlimited_steering_is_continuous():
    _, robot = parse('forklift')
    assert robot.joint_map['steering_joint'].type == 'continuous'


def test_wheels_sit_on_the_ground_where_the_geometry_puts_them():
    _, robot = parse('differential')
    left = robot.joint_map['left_wheel_joint'].origin.xyz
    radius = 0.5 * 0.4 * 1.4
    assert left == pytest.approx([-0.3, 0.7, radius])
    _, omni = parse('omni')
    assert omni.joint_map['rear_right_wheel_joint'].origin.xyz == pytest.approx(
        [-0.7, -0.6, 0.15])
