"""Planner and controller over DDS: a live change back to "from the vehicle" (-1) when no
vehicle_description has come."""

from __future__ import annotations

import pytest
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter

from wheelsim.testing.configs import FIXED_CONTROLLER, FIXED_PLANNER
from wheelsim.testing.processes import NodeProcess

REFUSED = ('parameter limits.{name} = -1.0 is invalid: "from the vehicle" needs a description '
           'on vehicle_description (from vehicle_sim), and none has come: give a value')


@pytest.mark.parametrize('node_name, params, name', [
    ('planner', FIXED_PLANNER, 'max_speed'),
    ('controller', FIXED_CONTROLLER, 'max_linear_x'),
])
def test_back_to_from_the_vehicle_without_a_description_is_refused(node_name, params, name,
                                                                     probe):
    """Found in review: the change was accepted and the node went on with the old value,
    silently. A value is still taken live."""
    with NodeProcess(f'wheelsim.nodes.{node_name}', params) as node:
        request = SetParameters.Request()
        for value, reason in ((-1.0, REFUSED.format(name=name)), (0.5, '')):
            request.parameters = [Parameter(f'limits.{name}', Parameter.Type.DOUBLE,
                                            value).to_parameter_msg()]
            result = probe.call(SetParameters, f'/{node_name}/set_parameters',
                                request).results[0]
            assert (result.successful, result.reason) == (not reason, reason), node.output()
        assert node.stop_cleanly(), node.output()
