"""Tests of the parameter-tree mechanism (wheelsim.core.params)."""

import math
from dataclasses import FrozenInstanceError, dataclass

import pytest

from wheelsim.core.params import (
    ParameterError,
    ParamSpec,
    flatten,
    from_flat,
    group,
    param,
    specs,
    to_flat,
    unknown_keys,
)


@dataclass(frozen=True)
class Actuator:
    dead_time: float = param(0.2, 'Transport delay', unit='s', min_value=0.0, max_value=10.0)
    time_constant: float = param(0.4, 'Low-pass time constant', unit='s', min_value=0.0)


@dataclass(frozen=True)
class Car:
    model: str = param('bicycle', 'Model', choices=('bicycle', 'differential'), read_only=True)
    wheel_base: float = param(2.0, 'Axle distance', unit='m', min_value=0.0, min_exclusive=True)
    steps: int = param(3, 'A count', min_value=1, max_value=10)
    drive_actuator: Actuator = group(Actuator, time_constant=0.1)
    waypoints: tuple = param((), 'Flat x, y, theta triples', nan_allowed=True)
    corners: tuple = param((), 'Flat x, y pairs')
    reverse: bool = param(False, 'Steered axle behind')

    def __post_init__(self):
        if self.wheel_base > 5.0:
            raise ParameterError('wheel_base', self.wheel_base, 'must be at most 5 m for a car')


def test_specs_have_dotted_names_defaults_and_group_overrides():
    by_name = {s.name: s for s in specs(Car, 'model_params')}
    assert set(by_name) == {
        'model_params.model', 'model_params.wheel_base', 'model_params.steps',
        'model_params.drive_actuator.dead_time', 'model_params.drive_actuator.time_constant',
        'model_params.waypoints', 'model_params.corners', 'model_params.reverse',
    }
    assert by_name['model_params.drive_actuator.time_constant'].default == 0.1
    assert by_name['model_params.drive_actuator.dead_time'].unit == 's'
    assert by_name['model_params.model'].read_only


def test_from_flat_uses_defaults_and_converts_types():
    car = from_flat(Car, {'drive_actuator.dead_time': 1, 'waypoints': [1, 2, float('nan')]})
    assert car.drive_actuator == Actuator(dead_time=1.0, time_constant=0.1)
    assert isinstance(car.drive_actuator.dead_time, float)
    assert car.waypoints[:2] == (1.0, 2.0) and math.isnan(car.waypoints[2])
    with pytest.raises(FrozenInstanceError):
        car.wheel_base = 3.0


@pytest.mark.parametrize('values, name, fragment', [
    ({'p.drive_actuator.dead_time': -1.0}, 'p.drive_actuator.dead_time', '[0, 10]'),
    ({'p.drive_actuator.dead_time': float('nan')}, 'p.drive_actuator.dead_time', 'finite'),
    ({'p.wheel_base': 0.0}, 'p.wheel_base', '(0, inf)'),
    ({'p.wheel_base': 7.0}, 'p.wheel_base', 'at most 5 m'),
    ({'p.model': 'omni'}, 'p.model', "one of 'bicycle', 'differential'"),
    ({'p.steps': 2.5}, 'p.steps', 'an integer'),
    ({'p.reverse': 1}, 'p.reverse', 'true or false'),
    ({'p.wheel_base': 'long'}, 'p.wheel_base', 'a finite number'),
    ({'p.waypoints': [1.0, float('inf')]}, 'p.waypoints', 'no infinities'),
    ({'p.corners': [1.0, float('nan')]}, 'p.corners', 'must be a list of finite numbers'),
])
def test_invalid_values_name_path_value_and_range(values, name, fragment):
    with pytest.raises(ParameterError) as info:
        from_flat(Car, values, 'p')
    assert info.value.name == name
    assert name in str(info.value) and fragment in str(info.value)


@pytest.mark.parametrize('low, high, text', [
    (0, 2**63 - 1, 'an integer in [0, 9223372036854775807]'),
    (2, 1e7, 'an integer in [2, 10000000]'),
])
def test_integer_ranges_are_written_exactly(low, high, text):
    spec = ParamSpec('n', 1, 'A count', min_value=low, max_value=high)
    assert spec.allowed() == text


@pytest.mark.parametrize('value, text', [
    (True, 'parameter p.x = true is invalid'), ([False, 1.0], 'p.x = [false, 1.0] is'),
    ('true', "p.x = 'true' is"), ([1.0, 2.0], 'p.x = [1.0, 2.0] is'),
])
def test_an_error_writes_a_bool_as_ros_does(value, text):
    """A bool reads ``true``, as the user wrote it (``:=true``, YAML), not Python's ``True``."""
    assert text in str(ParameterError('p.x', value, 'must be a number'))


def test_to_flat_round_trips():
    car = from_flat(Car, {'p.steps': 5, 'p.drive_actuator.time_constant': 0.3}, 'p')
    assert from_flat(Car, to_flat(car, 'p'), 'p') == car


def test_flatten_nested_yaml_tree():
    tree = {'model_params': {'bicycle': {'wheel_base': 2.7, 'drive_actuator': {'dead_time': 0}}}}
    assert flatten(tree) == {
        'model_params.bicycle.wheel_base': 2.7,
        'model_params.bicycle.drive_actuator.dead_time': 0,
    }


def test_unknown_keys_suggest_closest_name():
    known = [s.name for s in specs(Car)]
    found = dict(unknown_keys(known, ['wheel_bsae', 'drive_actuator.dead_time', 'colour']))
    assert found == {'wheel_bsae': 'wheel_base', 'colour': None}
