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
    """A limit of 0 is no limit, read as null: 0 is "no limit" in vehicle_sim's parameters,
    which it writes as null, so every reader (top_speed_mps, wheel_teleop's warning) takes
    both alike."""
    assert getattr(parse_description(document(**{name: 0})), name) is None
    assert getattr(parse_description(document(**{name: None})), name) is None
    unlimited = parse_description(document(max_speed=0.0))
    assert top_speed_mps(unlimited) == NO_LIMIT_TOP_SPEED_MPS


@pytest.mark.parametrize('name', LIMITS)
def test_a_negative_limit_is_refused_naming_the_field(name):
    """A negative limit is refused naming the field (a negative max_speed would invert
    wheel_teleop's sticks)."""
    with pytest.raises(DescriptionError, match=re.escape(
            f'limits.{name} = -0.8: expected a number >= 0 (0: no limit) or null')):
        parse_description(document(**{name: -0.8}))
