"""wheelsim.ros.parameters on a real rclpy node: descriptors, start-up values, live changes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import pytest
import rclpy
import yaml
from rcl_interfaces.msg import ParameterType
from rclpy.parameter import Parameter

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParameterError, from_flat, group, param, specs
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import LiveSeam


@dataclass(frozen=True)
class Limits:
    speed: float = param(1.0, 'Top speed.', unit='m/s', min_value=0.0, max_value=10.0)
    count: int = param(3, 'How many.', min_value=1, max_value=5)


@dataclass(frozen=True)
class Demo:
    kind: str = param('a', 'Which kind.', choices=('a', 'b'), read_only=True)
    rate: float = param(50.0, 'Rate.', unit='Hz', min_value=0.0, min_exclusive=True)
    points: tuple = param((), 'Points.')
    outline: tuple = param((), 'Outline.', read_only=True)
    flag: bool = param(False, 'A flag.')
    lag: float = param(-1.0, 'Lag.', unit='s', min_value=0.0, max_value=10.0,
                       special=(-1.0, 'from the vehicle'))
    button: int = param(-1, 'Button.', min_value=2, max_value=5, special=(-1, 'none'))
    limits: Limits = group(Limits)

    def __post_init__(self) -> None:
        if self.limits.speed > self.rate:
            raise ParameterError('limits.speed', self.limits.speed, 'must be <= rate')


@pytest.fixture
def node_with(ros_domain_id, tmp_path):
    """``node_with(*ros_args)``: a node given ``ros_args`` and its NodeParameters."""
    made = []

    def make(*ros_args: str):
        context = rclpy.Context()
        rclpy.init(args=['test', '--ros-args', *ros_args], context=context)
        seam = LiveSeam('demo', context=context)
        node = seam.rclpy_node
        made.append((node, context))
        changes = []
        params = NodeParameters(seam)
        group_ = params.declare(specs(Demo), partial(from_flat, Demo),
                                lambda new, old: changes.append((new, old)))
        return node, params, group_, changes

    yield make
    for node, context in made:
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def test_descriptors_carry_type_unit_range_choices_and_read_only(node_with):
    node, _, _, _ = node_with()
    rate, points, kind, count = node.describe_parameters(
        ['rate', 'points', 'kind', 'limits.count'])
    assert rate.type == ParameterType.PARAMETER_DOUBLE
    assert rate.description == 'Rate. [Hz]'
    assert rate.floating_point_range[0].from_value == 0.0
    assert rate.floating_point_range[0].to_value == float('inf')
    assert 'must be > 0' in rate.additional_constraints
    assert points.type == ParameterType.PARAMETER_DOUBLE_ARRAY
    assert node.get_parameter('points').value == []
    assert kind.read_only and "one of 'a', 'b'" in kind.additional_constraints
    assert (count.integer_range[0].from_value, count.integer_range[0].to_value) == (1, 5)


def test_a_read_only_empty_array_has_its_value(node_with):
    """Found in review: vehicle_sim's read-only ``footprint`` left empty had no value, so a
    ``get_parameters`` call naming it (``ros2 param dump``) returned no value at all."""
    node, _, _, _ = node_with()
    assert node.get_parameter('outline').value == []
    assert node.get_parameter('outline').type_ == Parameter.Type.DOUBLE_ARRAY
    [outline] = node.describe_parameters(['outline'])
    assert outline.read_only and outline.type == ParameterType.PARAMETER_DOUBLE_ARRAY
    [refused] = node.set_parameters([Parameter('outline', value=[1.0, 2.0])])
    assert not refused.successful


def test_a_special_value_is_within_the_ros_range_and_a_value_between_is_refused(node_with):
    """-1 (from the vehicle) or [0, 10]: ROS' range holds -1, the constraints say the rest,
    and a value in the gap is refused live with the allowed values."""
    node, _, group_, _ = node_with()
    [lag] = node.describe_parameters(['lag'])
    assert (lag.floating_point_range[0].from_value, lag.floating_point_range[0].to_value) == (
        -1.0, 10.0)
    assert lag.additional_constraints == '-1 (from the vehicle) or a finite number in [0, 10]'
    assert group_.config.lag == -1.0
    [result] = node.set_parameters([Parameter('lag', value=-0.5)])
    assert not result.successful
    assert 'must be -1 (from the vehicle) or a finite number in [0, 10]' in result.reason
    assert node.set_parameters([Parameter('lag', value=0.5)])[0].successful
    [button] = node.describe_parameters(['button'])  # an integer's too
    assert (button.integer_range[0].from_value, button.integer_range[0].to_value) == (-1, 5)
    assert not node.set_parameters([Parameter('button', value=1)])[0].successful
    assert node.set_parameters([Parameter('button', value=3)])[0].successful
    assert node.set_parameters([Parameter('button', value=-1)])[0].successful


def test_start_up_values_accept_integers_for_doubles_and_empty_lists(node_with, tmp_path):
    params_file = tmp_path / 'p.yaml'
    params_file.write_text('/**:\n  ros__parameters:\n    rate: 20\n    limits:\n      speed: 2\n')
    node, _, group_, _ = node_with('--params-file', str(params_file), '-p', 'points:=[1, 2]')
    assert group_.config.rate == 20.0 and group_.config.limits.speed == 2.0
    assert group_.config.points == (1.0, 2.0)
    assert node.get_parameter('rate').type_ == Parameter.Type.DOUBLE
    node2, _, group2, _ = node_with('-p', 'points:=[]')
    assert group2.config.points == ()
    assert node2.get_parameter('points').type_ == Parameter.Type.DOUBLE_ARRAY


@pytest.mark.parametrize('override, message', [
    ('rate:=0.0', "parameter rate = 0.0 is invalid: must be a finite number in (0, inf)"),
    ('limits.count:=9', 'parameter limits.count = 9 is invalid: must be an integer in [1, 5]'),
    ('kind:=c', "parameter kind = 'c' is invalid: must be one of 'a', 'b'"),
    ('rate:=0.5', 'parameter limits.speed = 1.0 is invalid: must be <= rate'),
])
def test_invalid_start_up_value_names_parameter_value_and_range(node_with, override, message):
    with pytest.raises(ParameterError) as err:
        node_with('-p', override)
    assert str(err.value) == message


def test_live_change_is_converted_validated_and_applied(node_with):
    node, _, group_, changes = node_with()
    result = node.set_parameters([Parameter('rate', Parameter.Type.INTEGER, 20)])[0]
    assert result.successful, result.reason
    assert group_.config.rate == 20.0
    assert [(new.rate, old.rate) for new, old in changes] == [(20.0, 50.0)]


def test_live_bool_array_for_a_double_array_is_refused_not_made_numbers(node_with):
    node, _, group_, changes = node_with('-p', 'points:=[1.0, 2.0]')
    result = node.set_parameters([Parameter('points', Parameter.Type.BOOL_ARRAY, [True, False])])[0]
    assert not result.successful
    assert result.reason.startswith('Wrong parameter type'), result.reason  # rclpy's words
    assert group_.config.points == (1.0, 2.0) and changes == []
    assert node.get_parameter('points').value == [1.0, 2.0]
    integers = node.set_parameters([Parameter('points', Parameter.Type.INTEGER_ARRAY, [3, 4])])[0]
    assert integers.successful, integers.reason
    assert group_.config.points == (3.0, 4.0)


def test_live_change_violating_a_rule_is_refused_with_the_reason(node_with):
    node, _, group_, changes = node_with()
    result = node.set_parameters([Parameter('rate', value=0.5)])[0]
    assert not result.successful
    # found in review: the reason named only the parameter the change did not set
    assert result.reason == ('parameter limits.speed = 1.0 is invalid: must be <= rate (this '
                             'change sets rate = 0.5)')
    out_of_range = node.set_parameters([Parameter('limits.count', value=0)])[0]
    assert not out_of_range.successful and 'limits.count' in out_of_range.reason
    read_only = node.set_parameters([Parameter('kind', value='b')])[0]
    assert not read_only.successful
    assert group_.config == Demo() and changes == []


def test_atomic_change_is_validated_as_a_whole(node_with):
    node, _, group_, _ = node_with()
    result = node.set_parameters_atomically([
        Parameter('limits.speed', value=0.2), Parameter('rate', value=0.5)])
    assert result.successful, result.reason
    assert (group_.config.rate, group_.config.limits.speed) == (0.5, 0.2)


def test_unknown_names_are_reported_with_the_closest_parameter(node_with):
    node, params, _, _ = node_with('-p', 'limits.sped:=2.0', '-p', 'zzz:=1')
    warnings = params.report_unknown()
    assert len(warnings) == 2
    assert "unknown parameter 'limits.sped' = 2.0" in warnings[0]
    assert "did you mean 'limits.speed'?" in warnings[0]
    assert 'did you mean' not in warnings[1]


def test_frozen_parameter_refuses_live_changes(node_with):
    node, params, _, _ = node_with()
    params.freeze('use_sim_time', 'chosen at start-up')
    result = node.set_parameters([Parameter('use_sim_time', value=True)])[0]
    assert not result.successful
    assert result.reason == 'use_sim_time cannot change while the node runs: chosen at start-up'
    assert node.get_parameter('use_sim_time').value is False


# Plain scalars PyYAML's YAML 1.1 reads as strings but ROS 2 as doubles, and ordinary numbers.
VALUE_TEXTS = (
    # numbers PyYAML (YAML 1.1) reads as texts: exponents without a dot or sign, strtod's words
    '1e3', '1.0e3', '2e-05', '-1E3', '+1e3', '1.e3', '.5e1', '5e-2', '1.0e+3', 'nan', 'NaN',
    'inf', '-Infinity', 'nan(1)', '0x1p3', '-0x1.8P1', '0xA.8', '08', '1.', '.5',
    # rcl's YAML spellings, and one it does not have
    '.nan', '.NaN', '.inf', '-.INF', '+.Inf', '+.nan', '.nAn',
    # integers: decimal, octal, hexadecimal, beyond 64 bits (then doubles)
    '12', '-7', '+12', '-0', '017', '0x1F', '-0X1f', '9223372036854775807',
    '9223372036854775808', '-9223372036854775809', '0xFFFFFFFFFFFFFFFFF',
    '077777777777777777777777',
    # range errors of strtod: texts
    '1e400', '-1e400', '1e-400', '1e-310', '0x1p-1074', '0.0', '0e-400', '0x0p-2000',
    # YAML 1.1's integers, floats and dates that ROS reads as texts
    '1_000', '1:30', '190:20:30.15', '0b101', '0o17', '1_000.5', '2001-12-14',
    '2001-12-14 21:59:43.10 -5',
    # booleans, YAML 1.1's and rcl's
    'y', 'Y', 'n', 'N', 'yes', 'Off', 'TRUE', 'false', 'nO', 'yES',
    # tags: rcl keeps !!str and ignores the others; quotes make a text, whatever the tag
    '!!str 12', '!!float 1', '!!int 1.5', '!!bool yes', '!!binary aGVsbG8=',
    '!!timestamp 2001-12-14', '!custom 5', "'12'", '"yes"', "'1e3'", '!!float "1"',
    "!!bool 'y'", '! "5"', '!!str [1, 2]', '!custom [y, n]',
    # block scalars are typed as plain ones
    '|-\n      5', '>-\n      y', '|\n      5',
    # just below the smallest normal double (range errors), huge exponents, many digits
    '2.2250738585072012e-308', '0x1.fffffffffffffp-1023', '2.2250738585072014e-308',
    '1e-999999999', '1e999999999', '0.' + '0' * 400 + '1', '9' * 30, '0x' + 'F' * 40,
    # texts
    '0.1.2', '12abc', '0x', '<<', '=', 'a b',
    # arrays: each item by the same rule
    '[1_000, 0b101]', '[y, n, on]', '[1e3, nan, .inf]', '[2001-12-14]')


def rcl_reads(path, names):
    """``{name: (type, repr)}`` of the parameters ``names`` that rcl's parser gives a node from
    the params file ``path`` (rclpy, --params-file); arrays as lists of those."""
    context = rclpy.Context()
    rclpy.init(args=['test', '--ros-args', '--params-file', str(path)], context=context)
    try:
        node = rclpy.create_node('values', context=context,
                                 automatically_declare_parameters_from_overrides=True)
        values = {name: node.get_parameter(name).value for name in names}
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)
    return {name: typed(value) for name, value in values.items()}


def typed(value):
    """``(type, repr)`` of ``value`` (NaN equal to NaN, -0.0 not 0.0); an array (list, tuple,
    numpy array) as a list of those."""
    if isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
        return [typed(item) for item in list(value)]
    return type(value), repr(value)


def test_params_file_values_are_read_as_ros_reads_them(ros_domain_id, tmp_path):
    """yaml_numbers.load gives each value of a params file the value and type rcl's parser
    gives the node (rcl_yaml_param_parser, through --params-file): PyYAML's YAML 1.1 read
    ``1e3`` and ``y`` as texts, ``1_000`` as an integer and ``2001-12-14`` as a date."""
    names = [f'p{i}' for i in range(len(VALUE_TEXTS))]
    text = '/**:\n  ros__parameters:\n' + ''.join(
        f'    {name}: {value}\n' for name, value in zip(names, VALUE_TEXTS, strict=True))
    path = tmp_path / 'values.yaml'
    path.write_text(text)
    by_ros = rcl_reads(path, names)
    ours = yaml_numbers.load(text)['/**']['ros__parameters']
    assert {text: typed(ours[n]) for n, text in zip(names, VALUE_TEXTS, strict=True)} == \
        {text: by_ros[n] for n, text in zip(names, VALUE_TEXTS, strict=True)}
    assert ours['p0'] == 1000.0 and yaml.safe_load('p0: 1e3') == {'p0': '1e3'}  # PyYAML's


def test_what_dump_writes_ros_reads_back(ros_domain_id, tmp_path):
    """yaml_numbers.dump (the params files wheelsim writes: tune's best parameters, calibration,
    Nav2's merged parameters) quotes a text ROS would read as another type and writes a
    subnormal double in hexadecimal: rcl reads back every value as given."""
    values = {'t_y': 'y', 't_nan': 'nan', 't_hex': '0x1p3', 't_octal': '08', 't_null': 'null',
              't_under': '1_000', 't_plain': 'pkg.mod:policy', 't_date': '2001-12-14',
              't_space': 'a b', 't_quote': "it's", 'f_sub': 5e-324, 'f_small': 2.5e-320,
              'f': 1.5, 'f_big': 1e300, 'f_inf': -math.inf, 'i': -7, 'i_max': 2**63 - 1,
              'b': False, 'a_texts': ['on', 'x', '017'], 'a_floats': [1.0, 4e-320]}
    path = tmp_path / 'dumped.yaml'
    path.write_text(yaml_numbers.dump({'/**': {'ros__parameters': values}}))
    given = {name: typed(value) for name, value in values.items()}
    assert rcl_reads(path, values) == given
    ours = yaml_numbers.load(path.read_text())['/**']['ros__parameters']
    assert {name: typed(value) for name, value in ours.items()} == given


def test_a_key_is_a_name_whatever_its_tag(ros_domain_id, tmp_path):
    """rcl takes every key as a name; found in review: a tagged key was typed (``!!int x``
    raised a ValueError, a traceback for the user, ``!!float 2`` became a number)."""
    text = ('/**:\n  ros__parameters:\n    !!int a: 1\n    !!timestamp b: 2\n'
            '    !!bool c: 3\n    !custom d: 4\n')
    path = tmp_path / 'keys.yaml'
    path.write_text(text)
    ours = yaml_numbers.load(text)['/**']['ros__parameters']
    assert {name: typed(value) for name, value in ours.items()} == \
        rcl_reads(path, ['a', 'b', 'c', 'd'])
