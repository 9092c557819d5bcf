"""YAML whose values are read as ROS 2 reads them: ``1e3`` a float, ``y`` true, ``1_000`` a text.

rcl_yaml_param_parser (``get_value`` in ``parse.c``, the same from rcl 9.2.0, Jazzy, to 10.1,
Kilted) types a value by its text alone: quoted or tagged ``!!str``, a text; else one of ``Y y yes
Yes YES true True TRUE on On ON`` (or ``N n no No NO false False FALSE off Off OFF``) a bool; else
an integer if the C library's ``strtoll`` (base 0: ``0x1F`` hexadecimal, ``017`` octal) takes it
whole without a range error; else a double if ``strtod`` does (``1e3``, ``1.``, ``nan``, ``inf``,
``0x1p3``; and rcl's ``.nan``, ``.inf``); else a text. Every other tag is ignored, also on a
sequence or mapping (``!!set``), and a block scalar (``|``, ``>``) is typed as a plain one. PyYAML
follows YAML 1.1 instead, whose ``1e3``, ``y``, ``nan`` are texts, ``1_000``, ``1:30``, ``0b101``
integers, ``2001-12-14`` a date and ``9223372036854775808`` an integer. :func:`load` reads every
value of a sequence or mapping by rcl's rule (:func:`ros_value`, which calls the C library's
``strtoll`` and ``strtod`` as rcl does, in the C locale a ROS node reads in), so a params file, a
``--param`` and a scenario give a node what ROS gives it; one exception: ``null``, ``Null``,
``NULL``, ``~`` and nothing are None (rcl: the text, or no value), what wheelsim writes for none. A
mapping key is a text whatever its tag, a name as in rcl (``on``, ``1``, ``!!int 1``; a plain
``<<`` merges). A text with a NUL character (``"\\0"``) is refused: rcl cuts it there. A key given
twice in one mapping is refused (PyYAML keeps the last, ROS too: one setting silently overriding
another), and so are nesting deeper than :data:`MAX_DEPTH`, an alias inside what its anchor
names (a value holding itself) and more than :data:`MAX_VALUES` keys and values with every alias
expanded (a small file whose aliases nest would take hours to read); for everything else it
is :func:`yaml.safe_load`. Raises :class:`yaml.YAMLError` on bad YAML. :func:`dump` writes
YAML that :func:`load` and ROS read back to the same values.
"""

from __future__ import annotations

import ctypes
import locale
import math
import sys
from typing import IO, Any

import yaml

TRUE_TEXTS = frozenset(('Y', 'y', 'yes', 'Yes', 'YES', 'true', 'True', 'TRUE', 'on', 'On', 'ON'))
FALSE_TEXTS = frozenset(('N', 'n', 'no', 'No', 'NO', 'false', 'False', 'FALSE', 'off', 'Off',
                         'OFF'))
NULL_TEXTS = frozenset(('', '~', 'null', 'Null', 'NULL'))
"""What PyYAML reads as None, and :func:`load` too (rcl: a text, or no value)."""
_YAML_SPECIALS = {**dict.fromkeys(('.nan', '.NaN', '.NAN'), math.nan),
                  **{sign + text: value for text in ('.inf', '.Inf', '.INF')
                     for sign, value in (('', math.inf), ('+', math.inf), ('-', -math.inf))}}
"""The spellings rcl reads as NaN and infinity before it asks ``strtod`` (no ``+.nan``)."""
_STR_TAG = 'tag:yaml.org,2002:str'
_MERGE_TAG = 'tag:yaml.org,2002:merge'
_ROS_VALUE_TAG = 'tag:wheelsim,2026:ros-value'
"""The tag :class:`_Loader` gives a value that :func:`ros_value` reads."""
MAX_DEPTH = 100
"""The deepest nesting of sequences and mappings :func:`load` reads (a YAML error beyond)."""
MAX_VALUES = 1_000_000
"""The most keys, values, sequences and mappings :func:`load` reads, each alias counted as what
it names (a YAML error beyond)."""
_LIBC = ctypes.CDLL(None, use_errno=True)  # the C library of this process, rcl's too
_LIBC.newlocale.restype = ctypes.c_void_p
_LIBC.newlocale.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p)
_C_LOCALE = _LIBC.newlocale(1 << locale.LC_NUMERIC, b'C', None)  # glibc: mask 1 << category
"""The C locale, whatever the process's: a ROS node reads ``0.5`` as a number (C programs start
in it; rclpy does not change it), while a Python library may switch ``LC_NUMERIC`` to one whose
decimal point is a comma (e.g. matplotlib's ``axes.formatter.use_locale``)."""
if not _C_LOCALE:
    raise OSError(ctypes.get_errno(), 'newlocale: the C locale is not available')
_LIBC.strtoll_l.restype = ctypes.c_longlong
_LIBC.strtoll_l.argtypes = (ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_int,
                            ctypes.c_void_p)
_LIBC.strtod_l.restype = ctypes.c_double
_LIBC.strtod_l.argtypes = (ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_void_p)


def ros_value(text: str) -> bool | int | float | str:
    """A YAML value (plain, untagged) as rcl_yaml_param_parser reads it: bool, int (64 bits),
    float or the text itself (see the module doc)."""
    if text in TRUE_TEXTS or text in FALSE_TEXTS:
        return text in TRUE_TEXTS
    if text in _YAML_SPECIALS:
        return _YAML_SPECIALS[text]
    try:
        data = text.encode()
    except UnicodeEncodeError:  # a surrogate (bytes the command line could not decode)
        return text
    if not data or b'\0' in data:  # C stops at a NUL; YAML gives none in a plain value
        return text
    buffer = ctypes.create_string_buffer(data)
    for convert in (lambda end: _LIBC.strtoll_l(buffer, end, 0, _C_LOCALE),
                    lambda end: _LIBC.strtod_l(buffer, end, _C_LOCALE)):
        end = ctypes.c_char_p()
        ctypes.set_errno(0)
        value = convert(ctypes.byref(end))
        whole = ctypes.cast(end, ctypes.c_void_p).value == ctypes.addressof(buffer) + len(data)
        if ctypes.get_errno() == 0 and whole:
            return value
    return text


def _written_as(value: float) -> str | None:
    """How :func:`dump` writes the float ``value`` where YAML's own form would not read back:
    a subnormal in hexadecimal (``strtod`` reports a range error for it in decimal)."""
    if value != 0.0 and abs(value) < sys.float_info.min:
        return value.hex()
    return None


def shown(value: Any, limit: int = 60) -> str:
    """``value`` in an error message, as YAML writes it (``null``, ``true``, ``.nan``, ``-0.5``,
    a text in quotes, an array in brackets; numpy's numbers and arrays as Python's), cut after
    ``limit`` characters."""
    if hasattr(value, 'tolist'):  # a numpy number or array
        value = value.tolist()
    if isinstance(value, (list, tuple)):
        text = '[' + ', '.join(shown(item, limit) for item in value) + ']'
    elif value is None or isinstance(value, bool):
        text = {None: 'null', True: 'true', False: 'false'}[value]
    elif isinstance(value, float) and not math.isfinite(value):
        text = '.nan' if math.isnan(value) else '.inf' if value > 0 else '-.inf'
    else:
        text = repr(value)
    return cut(text, limit)


def cut(text: str, limit: int = 60) -> str:
    """``text`` in an error message: its first ``limit`` characters and ``...`` if longer."""
    return text if len(text) <= limit else text[:limit] + '...'


def one_line(err: yaml.YAMLError) -> str:
    """PyYAML's error (several lines, with an excerpt) on one line: what is wrong, where (``while
    parsing a flow sequence: expected ',' or ']', but got '}' (line 1, column 38)``)."""
    problem = getattr(err, 'problem', None)
    if problem is None:
        return ' '.join(str(err).split()) or type(err).__name__
    context = getattr(err, 'context', None)
    mark = getattr(err, 'problem_mark', None)
    where = f' (line {mark.line + 1}, column {mark.column + 1})' if mark is not None else ''
    return f'{context}: {problem}{where}' if context else f'{problem}{where}'


def not_utf8(err: UnicodeDecodeError) -> str:
    """Why a YAML file whose bytes are not UTF-8 is refused, on one line: which byte, where,
    and what to do (``not UTF-8 text (byte 0xff at position 15); save it as UTF-8``)."""
    return (f'not UTF-8 text (byte 0x{err.object[err.start]:02x} at position {err.start}); '
            'save it as UTF-8')


class DuplicateKeyError(yaml.YAMLError):
    """A key given twice in one mapping; the message names it and where both are (lines, or
    columns of one line)."""


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader with every value of a sequence or mapping typed as rcl types it
    (:func:`ros_value`; quoted: a text, whatever its tag), and a key given twice in one mapping
    refused (PyYAML keeps the last one without a word)."""

    _composing_key = False

    def __init__(self, stream: str | IO[str]) -> None:
        super().__init__(stream)
        self._open_anchors: list[str | None] = []  # of the collections open, outermost first
        self._values = 0  # composed so far, aliases expanded
        self._anchor_values: dict[str, int] = {}  # what each anchor's node counts

    def _count(self, values: int, mark: yaml.Mark) -> None:
        self._values += values
        if self._values > MAX_VALUES:
            raise yaml.composer.ComposerError(
                None, None, f'more than {MAX_VALUES} keys and values (each alias counted as what '
                'it names)', mark)

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        self._composing_key = isinstance(parent, yaml.MappingNode) and index is None
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent):
            if event.anchor in self._open_anchors:
                raise yaml.composer.ComposerError(
                    None, None, f'the alias *{event.anchor} is inside what &{event.anchor} '
                    'names (a value that holds itself)', event.start_mark)
            self._count(self._anchor_values.get(event.anchor, 1), event.start_mark)
            return super().compose_node(parent, index)
        before = self._values
        self._count(1, event.start_mark)
        node = self._compose_counted(parent, index, event)
        if event.anchor is not None:
            self._anchor_values[event.anchor] = self._values - before
        return node

    def _compose_counted(self, parent: yaml.Node | None, index: Any,
                         event: yaml.Event) -> yaml.Node:
        if not isinstance(event, yaml.CollectionStartEvent):
            return super().compose_node(parent, index)
        if len(self._open_anchors) >= MAX_DEPTH:  # PyYAML's composer recurses
            raise yaml.composer.ComposerError(
                None, None, f'nested more than {MAX_DEPTH} sequences or mappings deep',
                event.start_mark)
        self._open_anchors.append(event.anchor)
        try:
            return super().compose_node(parent, index)
        finally:
            self._open_anchors.pop()

    def compose_scalar_node(self, anchor: str | None) -> yaml.ScalarNode:
        event = self.peek_event()
        if '\0' in event.value:  # only an escape in double quotes writes one
            raise yaml.composer.ComposerError(
                None, None, 'a text with a NUL character, where ROS cuts the text',
                event.start_mark)
        if self._composing_key:
            if event.tag is not None:  # rcl: a name, whatever its tag
                event.tag = _STR_TAG
        else:
            if event.style in ("'", '"'):
                event.tag = _STR_TAG  # rcl: a quoted value is a text, whatever its tag
            elif event.tag != _STR_TAG:  # rcl ignores the tag, types a block scalar too
                event.tag, event.implicit = None, (True, False)
        return super().compose_scalar_node(anchor)

    def compose_sequence_node(self, anchor: str | None) -> yaml.SequenceNode:
        self._untag(self.peek_event())
        return super().compose_sequence_node(anchor)

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        self._untag(self.peek_event())
        node = super().compose_mapping_node(anchor)
        self._check_keys(node)
        return node

    @staticmethod
    def _check_keys(node: yaml.MappingNode) -> None:
        """Refuse a key given twice in ``node`` (a name: its text), as written: before merges
        rewrite the mappings they merge into, whose keys they may replace."""
        first: dict[str, yaml.Mark] = {}
        for key_node, _ in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == _MERGE_TAG:
                continue  # a key that is a sequence or mapping: PyYAML's own error follows
            key, mark = key_node.value, key_node.start_mark
            if key in first:
                where = '' if mark.name.startswith('<') else f'{mark.name}: '  # a file's name
                places = (f'lines {first[key].line + 1} and {mark.line + 1}'
                          if first[key].line != mark.line else
                          f'line {mark.line + 1}, columns {first[key].column + 1} and '
                          f'{mark.column + 1}')
                raise DuplicateKeyError(f'{where}the key {key!r} is given twice in one mapping '
                                        f'({places}): give it once')
            first[key] = mark

    @staticmethod
    def _untag(event: yaml.CollectionStartEvent) -> None:
        """rcl ignores the tag of a sequence or mapping (``!!set``, ``!!omap``, ``!!str``)."""
        event.tag, event.implicit = None, True

    def resolve(self, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            if self._composing_key and value != '<<':  # a name, as in rcl (<< merges)
                return _STR_TAG
            if not self._composing_key and value not in NULL_TEXTS:
                return _ROS_VALUE_TAG
        return super().resolve(kind, value, implicit)


_Loader.add_constructor(_ROS_VALUE_TAG, lambda loader, node: ros_value(node.value))


def load(stream: str | IO[str]) -> Any:
    """The YAML document ``stream`` (text or a text file), plain values read as ROS 2 reads
    them."""
    return yaml.load(stream, Loader=_Loader)


class _Dumper(yaml.SafeDumper):
    """PyYAML's safe dumper writing texts and floats so that :func:`load` and ROS read back the
    same values (:func:`dump`)."""

    def represent_str(self, data: str) -> yaml.ScalarNode:
        if '\0' in data:
            raise yaml.representer.RepresenterError(
                f'{data!r}: a text with a NUL character, where ROS would cut it')
        try:
            data.encode()
        except UnicodeEncodeError:
            raise yaml.representer.RepresenterError(
                f'{data!r}: a text with a lone surrogate (no UTF-8), whose file ROS '
                'refuses') from None
        if data not in NULL_TEXTS and ros_value(data) == data and '\n' not in data:
            return super().represent_str(data)
        return self.represent_scalar(_STR_TAG, data, style="'" if '\n' not in data else '"')

    def represent_float(self, data: float) -> yaml.ScalarNode:
        written = _written_as(data)
        if written is None:
            return super().represent_float(data)
        return self.represent_scalar(_STR_TAG, written)  # plain: YAML 1.1 has no such float


    def represent_int(self, data: int) -> yaml.ScalarNode:
        if not -2**63 <= data < 2**63:
            raise yaml.representer.RepresenterError(
                f'{data}: an integer beyond 64 bits, which ROS reads as a double')
        return super().represent_int(data)


_Dumper.add_representer(str, _Dumper.represent_str)
_Dumper.add_representer(int, _Dumper.represent_int)
_Dumper.add_representer(float, _Dumper.represent_float)


def dump(data: Any, stream: IO[str] | None = None, *, sort_keys: bool = True) -> str | None:
    """:func:`yaml.safe_dump` of ``data`` (block style, ASCII) that :func:`load` and ROS read
    back to the same values: a text ROS would read as another type (``y``, ``nan``, ``0x10``)
    in quotes, a subnormal float in hexadecimal; :class:`yaml.YAMLError` for what ROS cannot
    read back (an integer beyond 64 bits, a text with a NUL character or a lone surrogate)."""
    return yaml.dump(data, stream, Dumper=_Dumper, sort_keys=sort_keys)

