"""YAML whose plain values are read as ROS 2 reads them: ``1e3`` a float, ``y`` true.

rcl_yaml_param_parser (``get_value`` in ``parse.c``, the same from rcl 9.2.0, Jazzy, to 10.1,
Kilted) types a value by its text alone: tagged ``!!str`` or quoted, a text; else one of ``Y y
yes Yes YES true True TRUE on On ON`` (or the same for false: ``N n no ... off Off OFF``) a
bool; else an integer if ``strtoll`` (base 0: ``0x1F`` hexadecimal, ``017`` octal) takes it whole
within 64 bits; else a double if ``strtod`` takes it whole without a range error (``1e3``,
``1.``, ``nan``, ``inf``, ``0x1p3``; ``.nan``, ``.inf``); else a text, and every other tag is
ignored. PyYAML follows YAML 1.1 instead, whose ``1e3``, ``y``, ``nan`` are texts and ``1_000``,
``1:30``, ``0b101`` integers, ``2001-12-14`` a date and ``9223372036854775808`` an integer.
:func:`load` reads every plain value of a sequence or mapping by rcl's rule (:func:`ros_value`),
and values tagged with a type as rcl does (the tag ignored: ``!!float 1`` is the integer 1),
so a params file, a ``--param`` and a scenario give a node what ROS gives it; one exception:
``null``, ``Null``, ``NULL``, ``~`` and nothing are None (rcl: the text, or no value), what
wheelsim writes for none. Mapping keys are read as PyYAML reads them (``<<`` merges). A key
given twice in one mapping is refused (PyYAML keeps the last, ROS too: one setting silently
overriding another); for everything else it is :func:`yaml.safe_load`. Raises
:class:`yaml.YAMLError` on bad YAML.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Hashable
from fractions import Fraction
from typing import IO, Any

import yaml

TRUE_TEXTS = frozenset(('Y', 'y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'))
FALSE_TEXTS = frozenset(('N', 'n', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off',
                         'OFF'))
NULL_TEXTS = frozenset(('', '~', 'null', 'Null', 'NULL'))
"""What PyYAML reads as None, and :func:`load` too (rcl: a text, or no value)."""
_INTEGER = re.compile(r'[-+]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)')
"""What ``strtoll`` with base 0 takes whole: hexadecimal, octal (a leading 0) or decimal."""
_DECIMAL = re.compile(r'[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?')
_HEXADECIMAL = re.compile(r'[-+]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)'
                          r'(?:[pP][-+]?[0-9]+)?')
_SPECIAL = re.compile(r'[-+]?(?:inf(?:inity)?|nan(?:\([0-9A-Za-z_]*\))?)', re.IGNORECASE)
"""The forms ``strtod`` takes (C locale), each matched whole: decimal, hexadecimal (binary
exponent optional), infinity and NaN in any case."""
_YAML_SPECIALS = {**dict.fromkeys(('.nan', '.NaN', '.NAN'), math.nan),
                  **{sign + text: value for text in ('.inf', '.Inf', '.INF')
                     for sign, value in (('', math.inf), ('+', math.inf), ('-', -math.inf))}}
"""The spellings rcl reads as NaN and infinity before it asks ``strtod`` (no ``+.nan``)."""
_ROS_VALUE_TAG = 'tag:wheelsim,2026:ros-value'
"""The tag :class:`_Loader` gives a plain value that :func:`ros_value` reads."""


def ros_value(text: str) -> bool | int | float | str:
    """A plain YAML value as rcl_yaml_param_parser reads it: bool, int (64 bits), float or
    the text itself (see the module doc)."""
    if text in TRUE_TEXTS or text in FALSE_TEXTS:
        return text in TRUE_TEXTS
    if _INTEGER.fullmatch(text):
        digits = text.lstrip('+-')
        base = 16 if digits[:2] in ('0x', '0X') else 8 if digits[0] == '0' else 10
        value = int(digits, base) * (-1 if text.startswith('-') else 1)
        if -2**63 <= value < 2**63:
            return value
    number = _double(text)
    return text if number is None else number


def _double(text: str) -> float | None:
    """``text`` as ``strtod`` reads it whole, None where it does not or reports a range error
    (glibc: beyond a double, or rounded to zero or to a subnormal); rcl's YAML spellings
    first."""
    if text in _YAML_SPECIALS:
        return _YAML_SPECIALS[text]
    if _SPECIAL.fullmatch(text):
        return float(text.split('(')[0])
    hexadecimal = _HEXADECIMAL.fullmatch(text) is not None
    if not hexadecimal and not _DECIMAL.fullmatch(text):
        return None
    try:
        value = float.fromhex(text) if hexadecimal else float(text)
    except OverflowError:
        return None
    if math.isinf(value):
        return None
    if abs(value) < sys.float_info.min and Fraction(value) != _exact(text, hexadecimal):
        return None
    return value


def _exact(text: str, hexadecimal: bool) -> Fraction:
    """The number ``text`` (as :data:`_DECIMAL` or :data:`_HEXADECIMAL` match it) exactly."""
    if not hexadecimal:
        return Fraction(text)
    sign = -1 if text.startswith('-') else 1
    mantissa, _, exponent = text.lstrip('+-')[2:].lower().partition('p')
    whole, _, fraction = mantissa.partition('.')
    digits = int(whole + fraction or '0', 16)
    return sign * Fraction(digits, 16 ** len(fraction)) * Fraction(2) ** int(exponent or '0')


class DuplicateKeyError(yaml.YAMLError):
    """A key given twice in one mapping; the message names it and its second line."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, every plain value of a sequence or mapping and every value tagged
    with a type but ``!!str`` read by :func:`ros_value`, and a key given twice in one mapping
    refused (PyYAML keeps the last one without a word)."""

    _composing_key = False

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self._composing_key = isinstance(parent, yaml.MappingNode) and index is None
        return super().compose_node(parent, index)

    def compose_scalar_node(self, anchor: str | None) -> yaml.ScalarNode:
        event = self.peek_event()
        if event.tag not in (None, '!', 'tag:yaml.org,2002:str') and not self._composing_key \
                and event.tag.startswith('tag:yaml.org,2002:'):
            event.tag, event.implicit = None, (True, False)  # rcl ignores the tag
        return super().compose_scalar_node(anchor)

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0] and not self._composing_key \
                and value not in NULL_TEXTS:
            return _ROS_VALUE_TAG
        return super().resolve(kind, value, implicit)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict:
        first_line: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == 'tag:yaml.org,2002:merge':  # << merges, its keys may be replaced
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                continue  # PyYAML's own error follows
            line = key_node.start_mark.line + 1
            if key in first_line:
                name = key_node.start_mark.name  # the file's, or '<unicode string>' for text
                where = '' if name.startswith('<') else f'{name}: '
                raise DuplicateKeyError(f'{where}the key {key!r} is given twice in one mapping '
                                        f'(lines {first_line[key]} and {line}): give it once')
            first_line[key] = line
        return super().construct_mapping(node, deep)


_Loader.add_constructor(_ROS_VALUE_TAG, lambda loader, node: ros_value(node.value))


def load(stream: str | IO[str]) -> Any:
    """The YAML document ``stream`` (text or a text file), plain values read as ROS 2 reads
    them."""
    return yaml.load(stream, Loader=_Loader)
