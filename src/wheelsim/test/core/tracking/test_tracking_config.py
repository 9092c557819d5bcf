"""The controller's parameters that take their defaults from the vehicle (vehicle_description)."""

from dataclasses import replace

import pytest

from wheelsim.core.params import specs, to_flat
from wheelsim.core.tracking.config import MAX_STEERING_RAD, ControllerConfig, with_vehicle
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.description import NO_LIMIT_TOP_SPEED_MPS, describe


def test_every_speed_limit_taken_from_the_vehicle_documents_its_stand_in():
    """limits.min_linear_x and limits.max_linear_y took 2 m/s without a speed limit, as
    limits.max_linear_x does, but only max_linear_x's description (docs/parameters.md) said
    so. Found by resolving the defaults with and without the vehicle's speed limit."""
    omni = describe(vehicle_config_from_params({'model': 'omni'}))
    with_limit, without_limit = (
        to_flat(with_vehicle(ControllerConfig(), replace(omni, max_speed=max_speed_mps))[0])
        for max_speed_mps in (0.8, None))
    stand_ins = {name for name, value in without_limit.items()
                 if value != with_limit[name] and abs(value) == NO_LIMIT_TOP_SPEED_MPS}
    assert stand_ins == {'limits.max_linear_x', 'limits.min_linear_x', 'limits.max_linear_y'}
    documented = f'({NO_LIMIT_TOP_SPEED_MPS:g} m/s for a vehicle without a speed limit)'
    for spec in specs(ControllerConfig):
        if spec.name in stand_ins:
            assert documented in spec.description, spec.name


def resolved(model, **figures):
    """The controller's defaults resolved from the description of a ``model`` vehicle with
    ``figures`` in place of its own (None: the vehicle lacks it)."""
    description = replace(describe(vehicle_config_from_params({'model': model})), **figures)
    return to_flat(with_vehicle(ControllerConfig(), description)[0])


@pytest.mark.parametrize('name, value, model, figures, documented', [
    ('limits.max_angular_z', 2.0, 'omni', {'max_speed': None, 'max_yaw_rate': None},
     '2 rad/s for a vehicle without a speed limit, or a car without a steering limit'),
    ('limits.max_angular_z', 2.0, 'bicycle', {'max_steering_angle': None, 'max_curvature': None,
                                              'max_yaw_rate': None},
     '2 rad/s for a vehicle without a speed limit, or a car without a steering limit'),
    ('wheel_base', 2.0, 'differential', {},
     '2 m for a differential vehicle, which has none'),
    ('max_steering_angle', MAX_STEERING_RAD, 'differential', {},
     "differential and omni: the steering limit of Stanley's virtual front axle (1.55: a base"),
    ('max_steering_angle', MAX_STEERING_RAD, 'omni', {},
     "differential and omni: the steering limit of Stanley's virtual front axle (1.55: a base"),
    ('max_steering_angle', MAX_STEERING_RAD, 'bicycle',
     {'max_steering_angle': None, 'max_curvature': None}, '(an unlimited steering: 1.55)'),
], ids=['yaw rate, no speed limit', 'yaw rate, a car without a steering limit',
        'wheel base, differential', 'steering, differential', 'steering, omni',
        'steering, a car without a steering limit'])
def test_every_other_stand_in_is_in_the_parameter_s_description(name, value, model, figures,
                                                                 documented):
    """The stand-ins the controller takes where the vehicle gives no figure (limits.max_angular_z
    2 rad/s without a limit; wheel_base 2 m and max_steering_angle 1.55 rad for Stanley's
    virtual front axle) are what their descriptions (parameters.md) say."""
    assert resolved(model, **figures)[name] == pytest.approx(value)
    description = {spec.name: spec.description for spec in specs(ControllerConfig)}[name]
    assert documented in description
