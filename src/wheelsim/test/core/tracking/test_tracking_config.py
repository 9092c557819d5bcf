"""The controller's parameters that take their defaults from the vehicle (vehicle_description)."""

from dataclasses import replace

from wheelsim.core.params import specs, to_flat
from wheelsim.core.tracking.config import ControllerConfig, with_vehicle
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
