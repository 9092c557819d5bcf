"""Vehicle configuration: reference names and defaults, ranges, errors naming the full path."""

import math

import pytest

from wheelsim.core.params import ParameterError, flatten, unknown_keys
from wheelsim.core.vehicle.config import (
    VEHICLE_PARAM_SPECS,
    VehicleConfig,
    vehicle_config_from_params,
)

SPEC_BY_NAME = {spec.name: spec for spec in VEHICLE_PARAM_SPECS}

# The seed README's example configurations (sim_node ros__parameters), as YAML would load them.
SEED_EXAMPLES = {
    'car': {
        'model': 'bicycle',
        'model_params': {'bicycle': {
            'wheel_base': 2.7, 'drive_on_steered_wheel': False, 'vis_track_steered': 1.5,
            'vis_track_fixed': 1.5,
            'drive_actuator': {'max_velocity': 15.0, 'max_acceleration': 3.0},
            'steering_actuator': {'max_position': 0.61},
        }},
    },
    'forklift': {
        'model': 'bicycle',
        'model_params': {'bicycle': {
            'wheel_base': 2.0, 'reverse': True, 'drive_on_steered_wheel': True,
            'vis_track_fixed': 1.1, 'vis_track_steered': 0.0,
            'drive_actuator': {'max_velocity': 5.0, 'max_acceleration': 3.0},
            'steering_actuator': {'max_position': 0.0},
        }},
    },
    'indoor_robot': {
        'model': 'differential',
        'model_params': {'differential': {
            'track': 0.5,
            'drive_actuators': {'max_velocity': 0.8, 'max_acceleration': 1.0, 'dead_time': 0.05},
        }},
    },
}


@pytest.mark.parametrize(
    ('name', 'default'),
    [
        ('model', 'bicycle'),
        ('model_params.bicycle.wheel_base', 2.0),
        ('model_params.bicycle.drive_on_steered_wheel', False),
        ('model_params.bicycle.reverse', False),
        ('model_params.bicycle.base_link_offset', 0.0),
        ('model_params.bicycle.drive_actuator.max_velocity', 2.0),
        ('model_params.bicycle.drive_actuator.time_constant', 0.4),
        ('model_params.bicycle.drive_actuator.max_acceleration', 2.0),
        ('model_params.bicycle.drive_actuator.dead_time', 0.2),
        ('model_params.bicycle.steering_actuator.max_position', math.pi / 6),
        ('model_params.bicycle.steering_actuator.time_constant', 0.05),
        ('model_params.bicycle.steering_actuator.max_velocity', 2.0),
        ('model_params.bicycle.steering_actuator.dead_time', 0.2),
        ('model_params.differential.track', 1.4),
        ('model_params.differential.drive_actuators.max_velocity', 2.0),
        ('model_params.omni.wheel_base', 1.4),
        ('model_params.omni.track', 1.2),
        ('model_params.omni.drive_actuators.dead_time', 0.2),
    ],
)
def test_reference_names_and_defaults(name, default):
    assert SPEC_BY_NAME[name].default == default


@pytest.mark.parametrize(
    ('values', 'expected'),
    [
        ({}, (1.4, 1.4, 0.25)),
        ({'model_params.bicycle.wheel_base': 3.0}, (2.1, 2.1, 0.375)),
        ({'model_params.bicycle.vis_track_fixed': 0.0, 'model_params.bicycle.vis_tire_diameter':
          0.6}, (0.0, 2.1 * 2 / 3, 0.3)),
    ],
)
def test_derived_bicycle_geometry(values, expected):
    bicycle = vehicle_config_from_params(values).model_params.bicycle
    actual = (bicycle.track_fixed_m, bicycle.track_steered_m, bicycle.wheel_radius_m)
    assert actual == pytest.approx(expected)


def test_derived_wheel_radii_follow_the_reference_proportions():
    config = vehicle_config_from_params(
        {'model_params.differential.track': 0.5, 'model_params.omni.track': 0.8}
    )
    assert config.model_params.differential.wheel_radius_m == pytest.approx(0.1)
    assert config.model_params.omni.wheel_radius_m == pytest.approx(0.1)


def test_max_deceleration_defaults_to_max_acceleration_and_zero_means_none():
    drive = vehicle_config_from_params(
        {'model_params.bicycle.drive_actuator.max_acceleration': 1.5}
    ).drive
    assert drive.deceleration_limit == 1.5
    zero = vehicle_config_from_params({'model_params.bicycle.drive_actuator.max_deceleration': 0})
    assert zero.drive.deceleration_limit == 0.0


@pytest.mark.parametrize('name', sorted(SPEC_BY_NAME))
def test_every_numeric_leaf_has_a_range_and_a_description(name):
    spec = SPEC_BY_NAME[name]
    assert spec.description
    if spec.kind is float:
        assert spec.min_value is not None and spec.max_value is not None
        assert spec.unit or 'fraction' in spec.description.lower()


@pytest.mark.parametrize(
    ('name', 'read_only'),
    [
        ('model', True),
        ('model_params.bicycle.wheel_base', True),
        ('model_params.bicycle.reverse', True),
        ('model_params.bicycle.vis_track_steered', True),
        ('model_params.differential.track', True),
        ('model_params.omni.base_link_offset', True),
        ('model_params.bicycle.drive_actuator.max_velocity', False),
        ('model_params.bicycle.steering_actuator.dead_time', False),
        ('model_params.differential.drive_actuators.time_constant', False),
        ('model_params.differential.slip_left', False),
        ('model_params.omni.drive_actuators.max_jerk', False),
        ('model_params.omni.proportional_acceleration', False),
    ],
)
def test_live_and_read_only_leaves(name, read_only):
    assert SPEC_BY_NAME[name].read_only is read_only


@pytest.mark.parametrize(
    ('values', 'path', 'fragment'),
    [
        ({'model_params.bicycle.wheel_base': -1.0}, 'model_params.bicycle.wheel_base',
         'a finite number in (0, 100]'),
        ({'model_params.differential.drive_actuators.dead_time': 11},
         'model_params.differential.drive_actuators.dead_time', 'a finite number in [0, 10]'),
        ({'model_params.omni.drive_actuators.max_jerk': float('nan')},
         'model_params.omni.drive_actuators.max_jerk', 'a finite number'),
        ({'model_params.differential.slip_right': 1.5}, 'model_params.differential.slip_right',
         '[0, 1]'),
        ({'model': 'tank'}, 'model', "one of 'bicycle', 'differential', 'omni'"),
        ({'model_params.bicycle.reverse': 'yes'}, 'model_params.bicycle.reverse', 'true or false'),
        ({'model_params.bicycle.drive_actuator.max_deceleration': -0.5},
         'model_params.bicycle.drive_actuator.max_deceleration', '-1 (same as max_acceleration)'),
        ({'model_params.differential.vis_tire_diameter': 0.0},
         'model_params.differential.vis_tire_diameter',
         '-1 (0.4 x track) or a finite number in (0, 10]'),
        ({'model_params.bicycle.vis_track_fixed': -0.3}, 'model_params.bicycle.vis_track_fixed',
         '-1 (0.7 x wheel_base)'),
        ({'model_params.bicycle.steering_actuator.max_position': 0.0},
         'model_params.bicycle.steering_actuator.max_position', 'must be in (0, pi/2)'),
        ({'model_params.bicycle.steering_actuator.max_position': 1.6},
         'model_params.bicycle.steering_actuator.max_position', 'drive_on_steered_wheel is false'),
    ],
)
def test_errors_name_the_full_path_the_value_and_the_allowed_range(values, path, fragment):
    with pytest.raises(ParameterError) as error:
        vehicle_config_from_params(values)
    assert error.value.name == path
    message = str(error.value)
    assert message.startswith(f'parameter {path} = {next(iter(values.values()))!r}')
    assert fragment in message


def test_steered_drive_may_turn_all_around():
    config = vehicle_config_from_params({
        'model_params.bicycle.drive_on_steered_wheel': True,
        'model_params.bicycle.steering_actuator.max_position': 0.0,
    })
    assert config.model_params.bicycle.steering_actuator.max_position == 0.0


@pytest.mark.parametrize('example', sorted(SEED_EXAMPLES))
def test_seed_examples_load_with_every_key_known(example):
    flat = flatten(SEED_EXAMPLES[example])
    assert unknown_keys(SPEC_BY_NAME, flat) == []
    config = vehicle_config_from_params(flat)
    assert config.model == SEED_EXAMPLES[example]['model']


def test_active_group_and_drive_follow_the_model():
    config = vehicle_config_from_params({'model': 'omni'})
    assert config.active is config.model_params.omni
    assert config.drive is config.model_params.omni.drive_actuators
    default = VehicleConfig()
    assert default.active is default.model_params.bicycle
