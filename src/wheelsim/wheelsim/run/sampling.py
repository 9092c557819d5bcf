"""The points of a sweep: ``--param`` axes as value lists (a grid) or ranges (sampled).

An axis is ``NAME=V1,V2,...`` (values parsed as YAML), ``NAME=FIRST..LAST`` (the integers from
FIRST to LAST, e.g. ``seed=1..200``) or ``NAME=LOW:HIGH[:log]`` (a range of real numbers,
uniform or log-uniform; a colon text with no number as LOW or HIGH, such as a policy's
``module:function``, is one text value). ``NAME`` is ``seed`` (the scenario's seed) or
``<node>.<parameter>``.
A value may be an array, a YAML flow sequence as ROS takes it (``-p waypoints:=[1.0,2.0]``):
the commas inside its brackets do not separate values (``planner.waypoints=[2.0,0.0,.nan],
[3.0,0.0,.nan]`` is two arrays). Arrays are lists, as a params file gives them: unhashable, so
compare and group values by :func:`value_key`, and write them back with :func:`format_value`.
A text in single or double quotes, where a value or an array item starts, is one text as YAML
reads it (``''`` is a ``'`` inside single quotes, ``\\"`` a ``"`` inside double quotes): the
commas, brackets, colons and dots inside the quotes do not separate values nor make a range
(``c.name="a,b",'1:2'`` is the two texts ``a,b`` and ``1:2``); a quote inside a text (``it's``)
is one of its characters. A YAML mapping (``{a: 1}``, ``a: b``, also inside an array) is
refused: no parameter takes one.

- ``grid``: every combination of the value lists (ranges are refused: a grid has no values
  for them);
- ``random`` / ``lhs``: ``samples`` points over the ranges, independent uniform draws or a Latin
  hypercube (scipy.stats.qmc: each range cut into ``samples`` equal strata, one point in each),
  from ``sample_seed``; each crossed with every combination of the value lists (so
  ``--param seed=1..10`` runs every sample with each of 10 seeds). A range of an integer
  parameter or of ``seed`` (given integer bounds by :func:`as_parameter_types`, which sweep and
  tune both apply) is drawn as integers, each integer of it equally likely (or, on a log scale, as
  likely as its stretch of ``[LOW - 0.5, HIGH + 0.5]``, as Optuna draws them).

A value list may not repeat a value (two points would be one run; for a double parameter 1 and
1.0 are one value), and a sweep has at most :data:`MAX_POINTS` points (a ``FIRST..LAST`` axis,
``--samples`` and the product of the value lists alike).

No ROS imports: the CLI plans a sweep before starting anything.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import yaml

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParamSpec, unknown_keys
from wheelsim.core.yaml_numbers import cut
from wheelsim.run.scenario import SEED_KEY, ScenarioError, check_seed

METHODS = ('grid', 'random', 'lhs')
SAMPLE_DIGITS = 6
"""Sampled values are rounded to this many significant digits (readable tables, exact reruns);
more for a narrow range (:func:`sample_digits`)."""
MAX_POINTS = 100_000
"""The most points a sweep (or one axis) may have: more runs than one command should start,
and a bound on the memory its plan takes."""
SAMPLE_SEED_BITS = 32
"""``--sample-seed`` (and tune's ``--sampler-seed``) is an integer in [0, 2**32-1]."""
QUOTES = ('"', "'")
"""The quotes of a quoted text in a ``--param`` value, YAML's."""
SPACES = ' \t\r\n\x85\u2028\u2029'
"""YAML's white space (space, tab) and line breaks (YAML 1.1's, as PyYAML reads them): what
may come before a quoted text and around a value; other Unicode spaces, such as a no-break
space, are characters of a plain text in YAML."""


TEXT_SHOWN = 100
"""Characters of a ``--param`` (or a part of it) an error message shows (a 5000-digit value is
cut)."""


def _quoted(text: str) -> str:
    """``text`` of a ``--param`` in an error message: in quotes, cut (:data:`TEXT_SHOWN`)."""
    return repr(cut(text, TEXT_SHOWN))


@dataclass(frozen=True)
class Axis:
    """One ``--param``: a list of ``values``, or the range ``[low, high]`` (``log``: sampled
    uniformly in log space) when ``values`` is None (int bounds: a range of integers, see
    :func:`as_parameter_types`); ``text``: the ``--param`` as given (``NAME=SPEC``), for
    messages."""

    name: str
    values: tuple[Any, ...] | None = None
    low: float = math.nan
    high: float = math.nan
    log: bool = False
    text: str = field(default='', compare=False, repr=False)
    counted: bool = field(default=False, compare=False, repr=False)  # FIRST..LAST


def _read_number(text: str) -> int | float | None:
    """``text`` as ROS reads a value (:func:`yaml_numbers.ros_value`) if that is a number (not a
    bool), else None."""
    value = yaml_numbers.ros_value(text.strip(SPACES))
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _number(text: str, what: str, spec: str) -> float:
    value = _read_number(text)
    if value is None or not math.isfinite(value):
        raise ScenarioError(f'--param {_quoted(spec)}: {what} {_quoted(text)} must be a finite '
                            'number')
    return float(value)


def _is_span(spec: str, separator: str) -> bool:
    """Whether ``spec`` is meant as ``LOW:HIGH[:log]`` (``separator`` ``:``) or ``FIRST..LAST``
    (``..``): the part before or after the separator is a number as ROS reads one (then both
    must be numbers of their kind). A text with no number there, such as a policy's
    ``module:function``, a path ``../maps/room.yaml`` or ``1_000:2_000`` (texts for ROS), is
    one value."""
    return any(_read_number(part) is not None for part in spec.split(separator)[:2])


def _check_count(count: int, what: str) -> None:
    if count > MAX_POINTS:
        raise ScenarioError(f'{what}: {count} points, more than the {MAX_POINTS} a sweep may '
                            'have: split it into several sweeps')


def value_key(value: Any) -> Hashable:
    """A hashable key of a ``--param`` value, equal for values that are the same run: by type
    too (1 and 1.0 are two values, as are ``[1]`` and ``[1.0]``), arrays item by item and NaN
    equal to NaN (``[1.0, .nan]`` twice is one array given twice)."""
    if isinstance(value, (list, tuple)):
        return (list, tuple(value_key(item) for item in value))
    if isinstance(value, float) and math.isnan(value):
        return (float, 'nan')
    return (type(value), value)


def format_value(value: Any) -> str:
    """``value`` as a ``--param`` writes it, so that :func:`parse_axis` reads it back (any value
    it gives: None, a bool, a number, a text or an array of these): an array as a YAML flow
    sequence without spaces (``[2.0,0.0,.nan]``), None as ``null``, a bool as ``true`` or
    ``false`` (as ROS writes it), NaN and infinities in
    YAML's spelling, a subnormal number in hexadecimal (``0x1.0000000000000p-1074``: ROS reads
    it in decimal as a text), a text as it is where
    ``--param`` reads it so (an array item inside the brackets, where ``{`` and ``?`` mean
    something else), else in single quotes (YAML's, a ``'`` in it doubled: ``'a,b'``, ``'1'``,
    ``'0:1'``, ``''``), or in double quotes with escapes where single quotes cannot hold it (a
    line break, a control character: ``"a\\nb"``) or would hide it (a tab: ``"a\\tb"``);
    anything else as ``str``."""
    return _written(value, item=False)


def overrides_text(overrides: Mapping[str, Any]) -> str:
    """A point's or trial's values as ``--param`` writes them: ``NAME=VALUE, NAME=VALUE``."""
    return ', '.join(f'{name}={format_value(value)}' for name, value in overrides.items())


def _written(value: Any, item: bool) -> str:
    """:func:`format_value`, of a value or (``item``) of an item of an array."""
    if isinstance(value, (list, tuple)):
        return '[' + ','.join(_written(each, item=True) for each in value) + ']'
    if value is None:
        return 'null'
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, float) and not math.isfinite(value):
        return '.nan' if math.isnan(value) else ('.inf' if value > 0 else '-.inf')
    if isinstance(value, float) and 0 < abs(value) < sys.float_info.min:
        return value.hex()  # ROS reads a subnormal written in decimal as a text (inexact)
    if isinstance(value, str):
        if '\t' in value:  # printed raw, a tab looks like spaces and is copied as spaces
            return _double_quoted(value)
        single_quoted = "'" + value.replace("'", "''") + "'"
        return next((form for form in (value, single_quoted)
                     if _reads_back(form, value, item)), _double_quoted(value))
    return str(value)


def _double_quoted(text: str) -> str:
    """``text`` in YAML's double quotes: JSON's escapes (``\\n``, ``\\"``, ``\\u001b``), and
    Python's for a character it does not print (``\\x85``, ``\\u2028``: YAML refuses some raw
    and folds its other line breaks)."""
    return ''.join(char if char.isprintable() else char.encode('unicode_escape').decode()
                   for char in json.dumps(text, ensure_ascii=False))


def _reads_back(written: str, text: str, item: bool) -> bool:
    """Whether ``--param x=WRITTEN`` is the one text ``text``, or (``item``) ``x=[WRITTEN]`` the
    array of it: an item read where YAML takes ``{``, ``}`` and ``?`` for flow indicators."""
    spec, value = (f'[{written}]', [text]) if item else (written, text)
    try:
        return parse_axis(f'x={spec}').values == (value,)
    except ScenarioError:
        return False


def shown_value(value: Any) -> str:
    """``value`` in a message: an array as :func:`format_value` writes it (as ``--param`` takes
    it), the rest as YAML writes it (:func:`yaml_numbers.shown`: ``null``, ``true``, ``'a'``)."""
    return format_value(value) if isinstance(value, list) else yaml_numbers.shown(value)


def _split_values(spec: str, text: str) -> list[str]:
    """``spec`` cut at the commas outside brackets and quotes (see the module doc: a quote
    opens a quoted text only where a value or an array item starts); ScenarioError for
    unbalanced brackets or quotes."""
    pieces, depth, start = [], 0, 0
    item_starts = True  # nothing but spaces since the start, a comma or a [
    quoted_until = -1  # the index of the quote closing the quoted text being skipped
    for index, char in enumerate(spec):
        if index <= quoted_until:
            continue
        if char in QUOTES and item_starts:
            quoted_until = _closing_quote(spec, index, text)
            item_starts = False
        elif char == '[':
            depth += 1
            item_starts = True
        elif char == ']':
            depth -= 1
            item_starts = False
            if depth < 0:
                raise ScenarioError(f'--param {_quoted(text)}: unbalanced brackets: a ] at '
                                    f'character {index + 1} of {_quoted(spec)} closes no [')
        elif char == ',':
            item_starts = True
            if depth == 0:
                pieces.append(spec[start:index])
                start = index + 1
        elif char not in SPACES:
            item_starts = False
    if depth > 0:
        raise ScenarioError(f'--param {_quoted(text)}: unbalanced brackets: {depth} [ of '
                            f'{_quoted(spec)} not closed by ]')
    pieces.append(spec[start:])
    return pieces


def _closing_quote(spec: str, opening: int, text: str) -> int:
    """The index of the quote that closes the one at ``opening`` in ``spec``, as YAML reads
    quotes (``''`` inside single quotes and a backslash and the character after it inside
    double quotes close nothing); ScenarioError naming the ``--param`` if none does."""
    quote, index = spec[opening], opening + 1
    while index < len(spec):
        if quote == '"' and spec[index] == '\\':
            index += 2
        elif spec[index] == quote == "'" and spec[index + 1:index + 2] == "'":
            index += 2
        elif spec[index] == quote:
            return index
        else:
            index += 1
    raise ScenarioError(f'--param {_quoted(text)}: unbalanced quotes: the {quote} at character '
                        f'{opening + 1} of {_quoted(spec)} is not closed')


def _value(piece: str, text: str) -> Any:
    """One value as YAML, numbers as ROS reads them; ScenarioError on one line otherwise, and for
    a YAML mapping (no parameter takes one)."""
    piece = piece.strip(SPACES)
    if not piece:  # YAML would read null
        raise ScenarioError(f'--param {_quoted(text)}: an empty value between commas or at an '
                            "end (a comma too many? an empty text is '')")
    try:
        value = yaml_numbers.load(piece)
    except yaml.YAMLError as err:
        raise ScenarioError(f'--param {_quoted(text)}: {_quoted(piece)} is not a YAML value: '
                            f'{yaml_numbers.one_line(err)}') from None
    if _holds_mapping(value):
        raise ScenarioError(f'--param {_quoted(text)}: {_quoted(piece)} is a YAML mapping, '
                            "which no parameter takes (quote a text: 'a: b')")
    return value


def _holds_mapping(value: Any) -> bool:
    """Whether ``value`` is or holds a mapping (``!!set`` and ``!!omap`` are mappings and lists
    of them: their tags are ignored, as rcl ignores them)."""
    if isinstance(value, dict):
        return True
    return isinstance(value, list) and any(_holds_mapping(item) for item in value)


def parse_axis(text: str) -> Axis:
    """One ``--param`` text -> :class:`Axis`; ScenarioError naming the text on bad input
    (including a repeated value and more than :data:`MAX_POINTS` values)."""
    name, sep, spec = text.partition('=')
    name, spec = name.strip(), spec.strip(SPACES)
    if sep and name and not spec:
        raise ScenarioError(f"--param {_quoted(text)}: no value after = (an empty text is '')")
    if not sep or not name or not spec:
        raise ScenarioError(f'--param {_quoted(text)}: expected NAME=V1,V2,... or '
                            'NAME=FIRST..LAST or NAME=LOW:HIGH[:log] (NAME: seed or '
                            '<node>.<parameter>)')
    text = f'{name}={spec}'
    pieces = _split_values(spec, text)
    # a range or FIRST..LAST, not an array nor a quoted text
    single = len(pieces) == 1 and '[' not in spec and spec[0] not in QUOTES
    if single and ':' in spec and _is_span(spec, ':'):
        parts = spec.split(':')
        if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != 'log'):
            raise ScenarioError(f'--param {_quoted(text)}: a range is LOW:HIGH or LOW:HIGH:log')
        low, high = _number(parts[0], 'LOW', text), _number(parts[1], 'HIGH', text)
        log = len(parts) == 3
        if not low < high or (log and low <= 0):
            raise ScenarioError(f'--param {_quoted(text)}: a range needs LOW < HIGH'
                                + (' and LOW > 0 (log scale)' if log else ''))
        return Axis(name, low=low, high=high, log=log, text=text)
    if single and '..' in spec and _is_span(spec, '..'):
        first, last = (_read_number(part) for part in spec.split('..', 1))
        integers = all(type(bound) is int for bound in (first, last))
        values = range(first, last + 1) if integers else range(0)
        if not values:
            raise ScenarioError(f'--param {_quoted(text)}: FIRST..LAST needs integers in '
                                '[-2**63, 2**63-1] (64-bit; ROS reads a larger one as a double) '
                                'with FIRST <= LAST')
        _check_count(values.stop - values.start, f'--param {_quoted(text)}')  # not len(): overflow
        return Axis(name, values=tuple(values), text=text, counted=True)
    values = tuple(_value(piece, text) for piece in pieces)
    _check_repeats(name, values, text)
    return Axis(name, values=values, text=text)


def _check_repeats(name: str, values: Sequence[Any], text: str,
                   taken: Callable[[Any], Any] = lambda value: value) -> None:
    """ScenarioError naming the ``--param`` ``text`` and the value as given if two of ``values``
    are one value as the parameter takes it (``taken``; by type too: 1 and 1.0 are two values
    but for a double parameter, :func:`as_parameter_types`)."""
    seen: set[Hashable] = set()
    for value in values:
        key = value_key(taken(value))
        if key in seen:
            raise ScenarioError(f'--param {_quoted(text)}: {name} has the value '
                                f'{shown_value(value)} twice: give each value once')
        seen.add(key)


def parse_axes(texts: Sequence[str]) -> list[Axis]:
    """Every ``--param``; a name given twice is an error naming both."""
    axes: dict[str, Axis] = {}
    texts_by_name: dict[str, str] = {}
    for text in texts:
        axis = parse_axis(text)
        if axis.name in axes:
            raise ScenarioError(f'--param {_quoted(text)} and --param '
                                f'{_quoted(texts_by_name[axis.name])} both set {axis.name}: '
                                'give it once')
        axes[axis.name] = axis
        texts_by_name[axis.name] = text
    if not axes:
        raise ScenarioError('give at least one --param NAME=VALUES (a list, or a LOW:HIGH range)')
    return list(axes.values())


def as_parameter_types(axes: Sequence[Axis],
                       specs: Mapping[str, Sequence[ParamSpec]]) -> list[Axis]:
    """``axes`` as the parameters take them (kinds from ``specs``, by node): the range of an
    integer parameter (or of ``seed``) given integer bounds, so that it is sampled as integers
    (:func:`plan_points`, and tune's Optuna trials). ScenarioError naming the ``--param`` of
    an integer range with a bound that is no integer, or of a value list repeating a value as
    the parameter takes it: a double (array) parameter takes an integer as a float, so
    ``k_x=1,1.0`` is one value twice; or naming the ``--param`` as given (its range, not a
    value drawn from it) of a parameter its node (one of ``specs``) does not declare, with the
    closest name. Other axes are kept as they are (an unknown node is left to
    :func:`~wheelsim.run.scenario.with_overrides`)."""
    checked = []
    for axis in axes:
        spec = _spec(axis.name, specs)
        kind = int if axis.name == SEED_KEY else spec and spec.kind
        node, _, parameter = axis.name.partition('.')
        if kind is None and node in specs and parameter != 'use_sim_time':
            [(_, suggestion)] = unknown_keys([spec.name for spec in specs[node]], [parameter])
            hint = f' (did you mean {suggestion}?)' if suggestion else ''
            raise ScenarioError(f'--param {cut(axis.text, TEXT_SHOWN)}: {axis.name}: {node} has '
                                f'no such parameter{hint}')
        given = f'--param {cut(axis.text, TEXT_SHOWN)}: {axis.name}'
        if axis.counted and kind not in (None, int):
            raise ScenarioError(f'{given} is no integer parameter, and FIRST..LAST counts '
                                'integers (for an integer parameter or seed): give the values '
                                'V1,V2,...' + (', or a range LOW:HIGH' if kind is float else ''))
        if (axis.values is None and spec is not None and spec.special is not None
                and spec.special[0] in (axis.low, axis.high)):
            raise ScenarioError(f'{given}: {spec.special_text()} is a value of its own, not the '
                                f'end of a range: a range lies in {spec.interval()}; give '
                                f'{spec.special[0]:g} as one of a list of values')
        if axis.values is None and kind is int:
            if not (float(axis.low).is_integer() and float(axis.high).is_integer()):
                raise ScenarioError(f'--param {cut(axis.text, TEXT_SHOWN)}: {axis.name} is an '
                                    'integer, so a range of it needs integer LOW and HIGH')
            axis = replace(axis, low=int(axis.low), high=int(axis.high))
        elif axis.values is not None and kind in (float, tuple):
            _check_repeats(axis.name, axis.values, axis.text, _as_doubles)
        checked.append(axis)
    return checked


def _spec(name: str, specs: Mapping[str, Sequence[ParamSpec]]) -> ParamSpec | None:
    """The spec of the parameter ``<node>.<parameter>`` ``name``; None for a name no spec
    has."""
    node, _, parameter = name.partition('.')
    return next((spec for spec in specs.get(node, ()) if spec.name == parameter), None)


def _as_doubles(value: Any) -> Any:
    """``value`` as a double (array) parameter takes it: an integer (not a bool), or a list of
    integers (an integer array), as floats; anything else as it is (a list mixing integers and
    doubles too: ROS refuses it, and the nodes' check names it)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, list) and all(type(item) is int for item in value):
        return [float(item) for item in value]
    return value


def _unit_samples(method: str, count: int, dimensions: int, sample_seed: int) -> np.ndarray:
    """``count`` x ``dimensions`` points in the unit cube."""
    if method == 'lhs':
        from scipy.stats import qmc  # on first use: docs/architecture.md

        return qmc.LatinHypercube(d=dimensions, seed=sample_seed).random(count)
    return np.random.default_rng(sample_seed).random((count, dimensions))


def _scaled(axis: Axis, unit: float) -> float | int:
    """The point ``unit`` in [0, 1) of the range ``axis``: an int for integer bounds (the
    nearest integer to the point of ``[low - 0.5, high + 0.5]``), else a float of
    :func:`sample_digits` digits, within ``[low, high]``."""
    integer = isinstance(axis.low, int)
    low, high = (axis.low - 0.5, axis.high + 0.5) if integer else (axis.low, axis.high)
    if axis.log:
        value = math.exp(math.log(low) + unit * (math.log(high) - math.log(low)))
    else:
        value = low + unit * (high - low)
    if integer:
        return min(max(round(value), axis.low), axis.high)
    return min(max(float(f'{value:.{sample_digits(low, high)}g}'), low), high)


def sample_digits(low: float, high: float) -> int:
    """Significant digits of a value sampled in ``[low, high]``: :data:`SAMPLE_DIGITS`, or more
    for a range narrow against its largest magnitude, so that every range keeps at least about
    10 000 distinct values (0.1000001:0.1000004 would otherwise give 0.1 at every point); at
    most 17, a float's own."""
    narrowness = max(abs(low), abs(high)) / (high - low)
    return min(max(SAMPLE_DIGITS, math.ceil(math.log10(narrowness)) + 5), 17)


def plan_points(axes: Sequence[Axis], method: str = 'grid', samples: int | None = None,
                sample_seed: int | None = None) -> list[dict[str, Any]]:
    """The sweep's points, ``{name: value}`` each, in a fixed order (see the module doc);
    ``sample_seed`` (random and lhs only) None is 0. ScenarioError naming the option on bad
    input, and for more than :data:`MAX_POINTS` points."""
    if method not in METHODS:
        raise ScenarioError(f'--sample {method!r}: must be one of {", ".join(METHODS)}')
    ranges = [a for a in axes if a.values is None]
    lists = [a for a in axes if a.values is not None]
    combinations = math.prod(len(a.values) for a in lists)
    if method == 'grid':
        if ranges:
            raise ScenarioError(f'--param {cut(ranges[0].text, TEXT_SHOWN)} is a range: a grid '
                                'needs value lists; sample ranges with --sample random|lhs '
                                '--samples N')
        for name, value in (('--samples', samples), ('--sample-seed', sample_seed)):
            if value is not None:
                raise ScenarioError(f'{name}: only with --sample random or lhs (a grid runs '
                                    'every combination)')
        _check_count(combinations, 'the grid (every combination of the --param values)')
        sampled: list[dict[str, Any]] = [{}]
    else:
        if not ranges:
            raise ScenarioError(f'--sample {method}: needs at least one range --param '
                                'NAME=LOW:HIGH[:log]')
        if samples is None or samples < 1:
            raise ScenarioError(f'--sample {method}: needs --samples N with N >= 1')
        if sample_seed is not None:
            check_seed('--sample-seed', sample_seed, SAMPLE_SEED_BITS)
        _check_count(samples * combinations, f'--samples {samples} (times every combination '
                     'of the --param values)')
        unit = _unit_samples(method, samples, len(ranges), sample_seed or 0)
        sampled = [{a.name: _scaled(a, u) for a, u in zip(ranges, row, strict=True)}
                   for row in unit]
    combos = list(itertools.product(*(a.values for a in lists)))
    return [{**point, **dict(zip((a.name for a in lists), combo, strict=True))}
            for point in sampled for combo in combos]
