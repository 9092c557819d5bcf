"""The vehicle_description document: read back as written, a limit of 0 as none."""

import json
import re

import pytest

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.description import (
    NO_LIMIT_TOP_SPEED_MPS,
    DescriptionError,
    describe,
    parse_description,
    top_speed_mps,
)

LIMITS = ('max_speed', 'max_acceleration', 'max_deceleration', 'max_jerk', 'max_yaw_rate',
          'max_steering_angle', 'max_steering_rate', 'max_curvature')


def document(**limits):
    """A car's description (every limit set) as JSON, with ``limits`` over its limits."""
    text = describe(vehicle_config_from_params({'model': 'bicycle'})).to_json()
    data = json.loads(text)
    data['limits'].update(limits)
    return json.dumps(data)


def test_a_description_reads_back_as_written():
    description = describe(vehicle_config_from_params({'model': 'bicycle'}))
    assert parse_description(description.to_json()) == description


@pytest.mark.parametrize('name', LIMITS)
def test_a_limit_of_zero_reads_as_none_as_vehicle_sim_means_it(name):
    """Found in review: max_speed 0 became the 2 m/s stand-in (top_speed_mps tested falsiness)
    without wheel_teleop's warning for a vehicle without a limit (which tested None). 0 is "no
    limit" in vehicle_sim's parameters, which it writes as null; a reader takes it alike."""
    assert getattr(parse_description(document(**{name: 0})), name) is None
    assert getattr(parse_description(document(**{name: None})), name) is None
    unlimited = parse_description(document(max_speed=0.0))
    assert top_speed_mps(unlimited) == NO_LIMIT_TOP_SPEED_MPS


@pytest.mark.parametrize('name', LIMITS)
def test_a_negative_limit_is_refused_naming_the_field(name):
    """Found in review: max_speed -0.8 was taken, inverting wheel_teleop's sticks."""
    with pytest.raises(DescriptionError, match=re.escape(
            f'limits.{name} = -0.8: expected a number >= 0 (0: no limit) or null')):
        parse_description(document(**{name: -0.8}))
