"""Sweep points from --param axes: grids, integer ranges, random and Latin-hypercube samples."""

import math
import re
import shlex

import numpy as np
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from wheelsim.core.params import ParamSpec
from wheelsim.run.robustness import reproduce_command
from wheelsim.run.sampling import (
    MAX_POINTS,
    Axis,
    as_parameter_types,
    format_value,
    parse_axes,
    parse_axis,
    plan_points,
    value_key,
)
from wheelsim.run.scenario import ScenarioError

#: ``c.k`` an integer parameter, ``c.gain`` a real one, ``c.points`` a real array.
SPECS = {'c': [ParamSpec('k', 1, 'an integer gain', min_value=0, max_value=10),
               ParamSpec('gain', 1.0, 'a real gain'),
               ParamSpec('points', (0.0,), 'a double array'),
               ParamSpec('mode', 'a', 'a text')]}


def test_axis_forms():
    assert parse_axis('controller.k_x=1,2.5,abc') == Axis('controller.k_x', (1, 2.5, 'abc'))
    assert parse_axis('seed=3..6') == Axis('seed', (3, 4, 5, 6))
    assert parse_axis('controller.lead_time=0:0.5') == Axis('controller.lead_time', low=0.0,
                                                           high=0.5)
    assert parse_axis('c.k=0.1:10:log') == Axis('c.k', low=0.1, high=10.0, log=True)


def test_numbers_as_python_prints_them_are_numbers():
    # YAML 1.1 reads 2e-05 (no dot) as a string; the reproduce commands print floats so.
    values = parse_axis('c.k=2e-05,1E3,-3.5e+2,.5e1,e5,1e,3.0e-05').values
    assert values == (2e-05, 1000.0, -350.0, 5.0, 'e5', '1e', 3e-05)
    assert all(isinstance(v, float) for v in values[:4])
    point = {'controller.lead_time': 2e-05, 'seed': 3}
    words = shlex.split(reproduce_command('s.yaml', point))
    assert parse_axes([words[words.index('--param') + 1]]) == [
        Axis('controller.lead_time', (2e-05,))]


@pytest.mark.parametrize('text, fragment', [
    ('c.k', 'expected NAME=V1,V2'),
    ('c.k= ', "no value after = (an empty text is '')"),  # found in review: "expected NAME=..."
    # found in review: an empty value was read as null, and the error showed c.k=null
    ('c.k=0.1,', "--param 'c.k=0.1,': an empty value between commas or at an end (a comma too "
                 "many? an empty text is '')"),
    ('c.k=0.1, ,0.2', "--param 'c.k=0.1, ,0.2': an empty value between commas"),
    ('c.k=1:0', 'LOW < HIGH'),
    ('c.k=0:1:log', 'LOW > 0 (log scale)'),
    ('c.k=0:1:ln', 'LOW:HIGH:log'),
    ('c.k=a:1', "LOW 'a' must be a finite number"),
    ('c.k=0.1:abc', "HIGH 'abc' must be a finite number"),
    ('c.k=nan:1', "LOW 'nan' must be a finite number"),
    ('seed=5..2', 'FIRST <= LAST'),
    ('seed=1..x', 'FIRST..LAST needs integers'),
    ('seed=1.5..3', 'FIRST..LAST needs integers'),
    # found in review: the range allowed was not given
    ('seed=1..9223372036854775808', 'FIRST..LAST needs integers in [-2**63, 2**63-1] (64-bit; '
                                    'ROS reads a larger one as a double) with FIRST <= LAST'),
])
def test_bad_axes_name_the_text(text, fragment):
    with pytest.raises(ScenarioError, match=f"--param '{text}'.*") as info:
        parse_axis(text)
    assert fragment in str(info.value)


# 1_000 and 2_000 are texts for ROS (YAML 1.1: integers), as in a value list
@pytest.mark.parametrize('spec', ['badpol:short', 'package.module:policy', 'x:y:log',
                                  '1_000:2_000', '1_0..1_2'])
def test_a_colon_text_without_numbers_is_one_text_value_not_a_range(spec):
    # a policy's module:function; a range needs a number as LOW or HIGH
    assert parse_axis(f'controller.policy.callable={spec}') == Axis(
        'controller.policy.callable', (spec,))
    assert parse_axis(f'c.p={spec},other:name').values == (spec, 'other:name')


@pytest.mark.parametrize('spec', ['../maps/room.yaml', 'maps/2..3.yaml', 'a..b'])
def test_a_dotted_text_without_numbers_is_one_text_value_not_first_last(spec):
    """A relative path (world.map_yaml=../maps/room.yaml) is a text, not FIRST..LAST."""
    assert parse_axis(f'vehicle_sim.world.map_yaml={spec}') == Axis(
        'vehicle_sim.world.map_yaml', (spec,))


def test_a_name_given_twice_is_an_error_naming_both():
    with pytest.raises(ScenarioError, match="'seed=1,2' and --param 'seed=3' both set seed"):
        parse_axes(['seed=3', 'seed=1,2'])


def test_grid_is_every_combination_in_order():
    points = plan_points(parse_axes(['a.x=1,2', 'seed=1..3']))
    assert points == [{'a.x': x, 'seed': s} for x in (1, 2) for s in (1, 2, 3)]


def test_a_grid_refuses_ranges_and_sampling_needs_ranges():
    with pytest.raises(ScenarioError, match='is a range: a grid needs value lists'):
        plan_points(parse_axes(['a.x=0:1']))
    with pytest.raises(ScenarioError, match='needs at least one range'):
        plan_points(parse_axes(['a.x=1,2']), 'lhs', 4)
    with pytest.raises(ScenarioError, match='needs --samples N'):
        plan_points(parse_axes(['a.x=0:1']), 'random')
    for samples, sample_seed, name in ((4, None, '--samples'), (None, 0, '--sample-seed')):
        with pytest.raises(ScenarioError, match=f'{name}: only with --sample random or lhs'):
            plan_points(parse_axes(['a.x=1,2']), 'grid', samples, sample_seed)


def test_latin_hypercube_puts_one_sample_in_each_stratum_of_each_range():
    count = 8
    points = plan_points(parse_axes(['a.x=0:8', 'b.y=1:256:log']), 'lhs', count, sample_seed=3)
    assert len(points) == count
    x_strata = sorted(math.floor(p['a.x']) for p in points)
    y_strata = sorted(math.floor(math.log2(p['b.y'])) for p in points)  # log: equal ratios
    assert x_strata == list(range(count)) and y_strata == list(range(count))
    assert plan_points(parse_axes(['a.x=0:8', 'b.y=1:256:log']), 'lhs', count, 3) == points


def test_random_samples_are_seeded_uniform_and_crossed_with_the_value_lists():
    points = plan_points(parse_axes(['a.x=-1:1', 'seed=1,2']), 'random', 500, sample_seed=1)
    assert len(points) == 1000 and [p['seed'] for p in points[:4]] == [1, 2, 1, 2]
    xs = np.array([p['a.x'] for p in points[::2]])
    assert xs.min() >= -1 and xs.max() <= 1 and abs(xs.mean()) < 0.1  # 4.5 sigma of U(-1, 1)
    assert points != plan_points(parse_axes(['a.x=-1:1', 'seed=1,2']), 'random', 500, 2)


@pytest.mark.parametrize('method', ['random', 'lhs'])
@pytest.mark.parametrize('text', ['a.x=0.1000001:0.1000004', 'a.x=-2.0000003:-2.0000001',
                                  'a.x=1e-12:1.0000001e-12:log', 'a.x=0.1:0.2'])
def test_samples_of_a_narrow_range_stay_in_it_and_apart(text, method):
    """Found in review: rounded to 6 significant digits, 0.1000001:0.1000004 gave 0.1 (below
    LOW) at every point, one run three times."""
    (axis,) = parse_axes([text])
    values = [p['a.x'] for p in plan_points([axis], method, 20, sample_seed=3)]
    assert all(axis.low <= v <= axis.high for v in values), values
    assert len(set(values)) == 20, values
    if text == 'a.x=0.1:0.2':  # a usual range keeps its 6 digits
        assert all(v == float(f'{v:.6g}') for v in values), values


@pytest.mark.parametrize('method', ['random', 'lhs'])
@pytest.mark.parametrize('text', ['c.k=0:3', 'c.k=1:8:log', 'seed=5:9'])
def test_a_range_of_an_integer_parameter_is_sampled_as_integers(text, method):
    """A range of an integer parameter (or of the seed) is drawn as integers, which the node
    takes: by as_parameter_types, the one rule of sweep and tune."""
    [axis] = as_parameter_types([parse_axis(text)], SPECS)
    values = [p[axis.name] for p in plan_points([axis], method, 400, sample_seed=1)]
    assert all(type(value) is int for value in values)
    assert set(values) == set(range(axis.low, axis.high + 1))  # both ends drawn too


def test_a_latin_hypercube_over_an_integer_range_draws_each_integer_equally_often():
    [axis] = as_parameter_types([parse_axis('c.k=2:5')], SPECS)  # 4 integers, each a stratum
    for count in (4, 12):
        values = [p['c.k'] for p in plan_points([axis], 'lhs', count, sample_seed=7)]
        assert sorted(values) == sorted([2, 3, 4, 5] * (count // 4))


def test_a_real_range_and_choices_stay_as_given_and_seed_is_an_integer():
    axes = as_parameter_types([parse_axis('c.gain=0:2'), parse_axis('c.k=1,3'),
                           parse_axis('seed=1:100:log'), parse_axis('planner.unknown=0:1')],
                          SPECS)
    assert (axes[0].low, axes[0].high) == (0.0, 2.0) and type(axes[0].low) is float
    assert axes[1].values == (1, 3)
    assert (axes[2].low, axes[2].high) == (1, 100) and type(axes[2].low) is int
    assert type(axes[3].low) is float  # not a parameter: the nodes' check names it
    assert all(type(p['c.gain']) is float for p in plan_points(axes[:1], 'random', 20))


def test_a_double_parameter_takes_1_and_1_0_as_one_value():
    """The node takes an integer for a double (array) as a float: ``1,1.0`` is one value twice
    (it ran two identical runs under two keys), named as given; values stay as given."""
    axes = as_parameter_types([parse_axis('c.gain=1,2.5'), parse_axis('c.points=[1,2],[0.5,1]'),
                               parse_axis('c.k=1,3'), parse_axis('c.mode=1,b'),
                               parse_axis('d.unknown=1,2')], SPECS)
    assert [axis.values for axis in axes] == [(1, 2.5), ([1, 2], [0.5, 1]), (1, 3), (1, 'b'),
                                              (1, 2)]
    for text, shown in [('c.gain=1,1.0', '1.0'), ('c.gain=2.0,0.5,2', '2'),
                        ('c.points=[1,2],[1.0,2.0]', '[1.0,2.0]')]:
        with pytest.raises(ScenarioError, match='^' + re.escape(
                f"--param {text!r}: {text.split('=')[0]} has the value {shown} twice: give "
                'each value once') + '$'):
            as_parameter_types([parse_axis(text)], SPECS)
    # ... and a mixed array, which ROS refuses (the nodes' check names it), is not made one
    for text in ('c.k=1,1.0', 'c.mode=1,1.0', 'c.gain=true,1', 'c.points=[true],[1]',
                 'c.points=[2.0,0.5],[2,0.5]'):
        as_parameter_types([parse_axis(text)], SPECS)  # two values the node tells apart


@pytest.mark.parametrize('text', ['c.k=0:2.5', 'c.k=0.5:3:log', 'seed=0:1e-3'])
def test_a_range_of_an_integer_parameter_needs_integer_bounds(text):
    with pytest.raises(ScenarioError, match=rf'^--param {re.escape(text)}: '
                                            rf'{text.split("=")[0]} is an integer, so a range '
                                            'of it needs integer LOW and HIGH$'):
        as_parameter_types([parse_axis(text)], SPECS)


@pytest.mark.parametrize('text, fragment', [
    ('c.gian=0:0.5', 'c.gian: c has no such parameter (did you mean gain?)$'),
    ('c.gian=0,1', 'c.gian: c has no such parameter (did you mean gain?)$'),
    ('c.zzz=1', 'c.zzz: c has no such parameter$'),
])
def test_an_unknown_parameter_is_named_with_the_param_as_given(text, fragment):
    """Found in review: the error showed the range's first end (``c.gian=0.0``), not what
    was typed."""
    with pytest.raises(ScenarioError, match=rf'^--param {re.escape(text)}: '
                                            rf'{re.escape(fragment[:-1])}$'):
        as_parameter_types([parse_axis(text)], SPECS)
    as_parameter_types([parse_axis('other.gian=1')], SPECS)  # a node with no specs: left


@pytest.mark.parametrize('text', ['c.gain=0:' + '9' * 5000, 'c.gain=1,' + '[' * 5000,
                                  'c.gian=' + '9' * 5000])
def test_a_huge_param_is_cut_in_its_error(text):
    """Found in review: a 5000-digit value was echoed whole in the one-line error."""
    with pytest.raises(ScenarioError) as info:
        as_parameter_types(parse_axes([text]), SPECS)
    assert len(str(info.value)) < 400 and '...' in str(info.value), str(info.value)


@pytest.mark.parametrize('seed', [-1, 2**32, True, 1.5])
def test_a_sample_seed_out_of_range_is_an_error_naming_the_option(seed):
    axes = [parse_axis('c.k=0:0.5')]
    with pytest.raises(ScenarioError, match=r'--sample-seed: .* must be an integer in '
                                            r'\[0, 2\*\*32-1\]$'):
        plan_points(axes, 'random', 2, seed)
    assert len(plan_points(axes, 'lhs', 2, 2**32 - 1)) == 2


def test_a_value_given_twice_in_an_axis_is_an_error_naming_the_axis_and_the_value():
    with pytest.raises(ScenarioError, match=r"--param 'c.k=1,2,1': c.k has the value 1 twice"):
        parse_axis('c.k=1,2,1')
    with pytest.raises(ScenarioError, match="c.mode has the value 'a' twice"):
        parse_axis('c.mode=a, b,a')
    assert parse_axis('c.k=1,1.0,true').values == (1, 1.0, True)  # three different values


def test_a_sweep_has_at_most_max_points():
    assert len(parse_axis(f'seed=1..{MAX_POINTS}').values) == MAX_POINTS
    for text in (f'seed=0..{MAX_POINTS}', 'seed=-9223372036854775808..9223372036854775807'):
        with pytest.raises(ScenarioError, match=rf"--param '{text}': .* points, more than the "
                                                f'{MAX_POINTS}'):
            parse_axis(text)
    grid = [parse_axis('seed=1..1000'), parse_axis('c.k=1..101')]
    with pytest.raises(ScenarioError, match='the grid .*: 101000 points, more than'):
        plan_points(grid)
    with pytest.raises(ScenarioError, match='--samples 1001 .*: 101101 points, more than'):
        plan_points([parse_axis('c.g=0:1'), parse_axis('c.k=1..101')], 'random', 1001)


def test_an_axis_keeps_its_text_as_given():
    assert parse_axis(' c.k = 0:0.50 ').text == 'c.k=0:0.50'
    with pytest.raises(ScenarioError, match=r'--param c.k=0:0.50 is a range'):
        plan_points([parse_axis('c.k=0:0.50')])


NAN = float('nan')


def test_an_array_is_one_value_its_commas_inside_the_brackets():
    # as ROS takes -p waypoints:=[...]: a YAML flow sequence, numbers as a params file reads them
    [waypoints] = parse_axis('planner.waypoints=[2.0,0.0,.nan,2.0,2.0,1.57]').values
    assert waypoints[:2] == [2.0, 0.0] and math.isnan(waypoints[2]) and waypoints[3:] == [
        2.0, 2.0, 1.57]
    two = parse_axis('planner.waypoints=[1.0, 0.0, .nan], [1e3, 2.0, 0.5]').values
    assert len(two) == 2 and two[1] == [1000.0, 2.0, 0.5] and isinstance(two[1][0], float)
    assert parse_axis('c.k=1,[2, 3],[]').values == (1, [2, 3], [])
    assert parse_axis('c.names=[a:b]').values == (['a:b'],)  # an array, not a range
    points = plan_points(parse_axes(['planner.waypoints=[1.0,0.0,.nan],[2.0,0.0,.nan]',
                                     'seed=1..2']))
    assert [(p['planner.waypoints'][0], p['seed']) for p in points] == [
        (1.0, 1), (1.0, 2), (2.0, 1), (2.0, 2)]


@pytest.mark.parametrize('spec, fragment', [
    ('[1.0, 0.0', "unbalanced brackets: 1 [ of '[1.0, 0.0' not closed by ]"),
    ('[1.0],0.0]', "unbalanced brackets: a ] at character 10 of '[1.0],0.0]' closes no ["),
    ('[1.0,,2.0]', "'[1.0,,2.0]' is not a YAML value: while parsing a flow node: expected the node "
                   "content, but found ',' (line 1, column 6)"),
    ('[1.0, "a]', 'unbalanced quotes: the " at character 7 of \'[1.0, "a]\' is not closed'),
    ('"a,b', 'unbalanced quotes: the " at character 1 of \'"a,b\' is not closed'),
    ("x,'a", "unbalanced quotes: the ' at character 3 of \"x,'a\" is not closed"),
    ("'it''s", "unbalanced quotes: the ' at character 1 of \"'it''s\" is not closed"),
    ('"a\\"', 'unbalanced quotes: the " at character 1 of \'"a\\\\"\' is not closed'),
    ('"a\\0"', 'a text with a NUL character, where ROS cuts the text (line 1, column 1)'),
])
def test_a_bad_array_or_quote_is_a_one_line_error_naming_the_param(spec, fragment):
    with pytest.raises(ScenarioError) as info:
        parse_axis(f'planner.waypoints={spec}')
    assert str(info.value).startswith(f'--param {f"planner.waypoints={spec}"!r}: ')
    assert fragment in str(info.value) and '\n' not in str(info.value)


def test_an_array_given_twice_is_an_error_even_with_nan_and_by_type_too():
    with pytest.raises(ScenarioError, match=r"p.w has the value \[1.0,.nan\] twice"):
        parse_axis('p.w=[1.0, .nan],[1.0,.nan]')
    assert parse_axis('p.w=[1],[1.0],1').values == ([1], [1.0], 1)  # three different values


def test_a_reproduce_command_gives_an_array_back_as_it_was():
    point = {'planner.waypoints': [2.0, 1e-05, NAN, -1.0, 2.0, 1.57], 'seed': 3}
    words = shlex.split(reproduce_command('s.yaml', point))
    assert words[words.index('--param') + 1] == 'planner.waypoints=[2.0,1e-05,.nan,-1.0,2.0,1.57]'
    [axis] = parse_axes([words[words.index('--param') + 1]])
    [back] = axis.values
    assert back[:2] + back[3:] == [2.0, 1e-05, -1.0, 2.0, 1.57] and math.isnan(back[2])


@pytest.mark.parametrize('spec, values', [
    ('"a,b"', ('a,b',)),
    ("'a,b',c", ('a,b', 'c')),
    ("x, 'a, b' ,\"c,d\"", ('x', 'a, b', 'c,d')),
    ("'it''s, here'", ("it's, here",)),  # YAML: '' in single quotes is one '
    ('"say \\"hi, there\\""', ('say "hi, there"',)),  # and \" in double quotes is one "
    ('"a[b",c', ('a[b', 'c')),
    ('["a,b]", \'c\'],[d]', (['a,b]', 'c'], ['d'])),  # quoted items of an array
    ("it's,b", ("it's", 'b')),  # a quote inside a text starts no quoted text
    ('"1",2', ('1', 2)),  # quoted: a text, not a number
    ('"0:1"', ('0:1',)),  # nor a range
    ("'1..3'", ('1..3',)),  # nor FIRST..LAST
    ('"1:2:3"', ('1:2:3',)),
    ("'1..2..3'", ('1..2..3',)),
])
def test_a_quoted_text_is_one_value_its_commas_and_brackets_inside_the_quotes(spec, values):
    """A text in single or double quotes, as YAML reads them, is one value: --param
    'x.name="a,b"' is not cut at the comma inside the quotes."""
    assert parse_axis(f'c.name={spec}').values == values


@pytest.mark.parametrize('value', [
    'a,b', "it's", 'say "hi", twice', '1', 'true', '.nan', '0:1', '1..3', '', ' padded ', '[x]',
    'plain', 'pkg.mod:policy', ['a,b', 'c]', "'"],
    'a: b', '{a}', '?', ['x: '], 'null', 'None', '~', '#', 'a #b',  # YAML reads no text there
    ['a{b'], ['{a}', '?', 'a #b', '- x', ' '],  # in brackets, { } ? # end or start a node
    # single quotes cannot hold a line break nor a control character
    'a\nb', 'a\r', 'bell\x07', 'nel\x85', 'line\u2028', 'tab\there', "it's\n",
    "\xa0'a,b'", '\u3000x', 'ümlaut ☃ 😀',  # Unicode spaces are characters of a plain text
    None, [None, 'null'], True, 'True', 2e-05, math.inf, [math.nan, -math.inf],
])
def test_a_value_is_written_back_as_parse_axis_reads_it(value):
    """The tables and reproduce commands write a value as --param reads it back, a text in
    quotes only where --param would read it otherwise (a comma, a number, a range, a mapping,
    a comment, ...), in double quotes with escapes where single quotes cannot hold it (a line
    break, a control character)."""
    words = shlex.split(reproduce_command(None, {'c.name': value}))
    [axis] = parse_axes([words[words.index('--param') + 1]])
    assert [value_key(v) for v in axis.values] == [value_key(value)]
    if value in ('plain', 'pkg.mod:policy', "it's", '\u3000x', 'ümlaut ☃ 😀'):
        assert words[-1] == f'c.name={value}'  # no quotes where none are needed


@pytest.mark.parametrize('value, written', [
    (None, 'null'), (True, 'true'), ([False, 1.5], '[false,1.5]'), ('None', 'None'),
    ('null', "'null'"), ('a: b', "'a: b'"),
    (['a{b', 'c'], "['a{b',c]"), ('a\nb', '"a\\nb"'), ("it's\r", '"it\'s\\r"'),
    ('\x00', '"\\u0000"'),
    # as ROS reads --param values: y and nan are a bool and a double, 1_000 and a date texts
    ('y', "'y'"), ('nan', "'nan'"), ('1_000', '1_000'), ('2001-12-14', '2001-12-14'),
    (5e-324, '0x0.0000000000001p-1022'), (1e-300, '1e-300'),
    # a tab, printed raw, looks like spaces (and a terminal copies it as spaces)
    ('\t', '"\\t"'), ('a\tb', '"a\\tb"'), (['\t'], '["\\t"]'),
])
def test_a_value_is_written_in_single_quotes_or_else_double_quotes(value, written):
    assert format_value(value) == written


#: What --param can give: texts of any characters but NUL (refused: ROS cuts a text there),
#: numbers (64-bit integers, doubles: NaN, infinities and subnormals too), booleans, None, and
#: arrays of these.
VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.floats()
    | st.text(st.characters(blacklist_characters='\x00'))
    | st.text(alphabet=' \t\n\r\x85\xa0\'",:[]{}?#!&*|>%@`-~.01aeé'),
    lambda inner: st.lists(inner, max_size=4), max_leaves=6)


@settings(max_examples=150)
@given(VALUES)
def test_parse_axis_reads_back_every_value_format_value_writes(value):
    [back] = parse_axis('c.x=' + format_value(value)).values
    assert value_key(back) == value_key(value)


@pytest.mark.parametrize('text', [
    'c.x={a: 1}', 'c.x=a: b', 'c.x=?', 'c.x=[x: ]', 'c.x=1,[2, {a: 1}]', 'c.x=!!set {a}',
    'c.x=!!omap [a: 1]',
])
def test_a_mapping_is_refused_on_one_line_naming_the_param(text):
    """No parameter takes a mapping, nor an array of them."""
    with pytest.raises(ScenarioError) as info:
        parse_axis(text)
    assert str(info.value).startswith(f'--param {text!r}: ') and '\n' not in str(info.value)
    assert 'is a YAML mapping, which no parameter takes' in str(info.value)


@pytest.mark.parametrize('spec', ["[\xa0'a],b'", "c,\xa0'a,b'", "[\u3000'a,b']", "c,\n'a,b'",
                                  "c, 'a,b'", "[x,\u2028'a,b']"])
def test_a_value_list_is_cut_as_yaml_reads_its_flow_sequence(spec):
    """A quote after YAML's white space (a space, a line break) opens a quoted text; after
    another Unicode space (a no-break space) it is a character of a plain text."""
    assert parse_axis(f'c.x={spec}').values == tuple(yaml.safe_load(f'[{spec}]'))
