"""Serialize rclpy messages to CDR with code generated once per message type.

``serialize(msg)`` gives the bytes ``rclpy.serialization.serialize_message(msg)`` gives (ROS 2's
little-endian CDR as rmw_fastrtps writes it: the 4-byte encapsulation header, then each member
aligned to its size relative to the end of that header), several times faster for the types of
a run (``bench/bench_recording.py`` times both on a run's messages: 0.2 s against rclpy's
0.5-0.6 s for the default run, whose whole budget at 300x real time is 0.3 s). For each message
class it generates, from the class's ``SLOT_TYPES`` (its rosidl definition), one Python function
that reads the fields through their public properties and packs the whole message with a single
``struct.Struct``: its *layout*, which depends only on the lengths of the message's strings and
sequences. The function gathers those lengths (the layout's *key*) with the values and takes the
layout from a table of the ones met so far (a type has few: frame ids and joint names keep their
lengths), building one (:func:`layout`, which computes the padding) for a key it has not met. A
type without strings or sequences has a single layout, built with the function.

Where it matters:

- alignment padding is written as zeros (rclpy leaves it uninitialised, so its bytes there are
  arbitrary: equal messages serialized by rclpy can differ in those bytes, never here);
- a structure without fields (``std_msgs/Empty``) is one byte, the member rosidl adds to it
  (``structure_needs_at_least_one_member``, a ``uint8``), which rclpy also leaves uninitialised:
  zero here;
- the length is the one rmw_fastrtps computes before writing: an empty sequence of 8-byte
  numbers (``float64[]``, ``int64[]``) is not padded in the data but counted with its padding
  in the length, so such a message ends with as many zero bytes as that padding;
- a message of fixed size (no string, no sequence) has its length rounded up to 4 bytes.

``serializer(cls, rmw_padding=False)`` ends the bytes of a message with strings or sequences
where its data ends, without what rmw_fastrtps counts after an empty sequence of 8-byte numbers:
strict readers (rosbags) refuse the 4 bytes after an empty ``float64[]`` at the end of a message
(``JointState.effort``), and every reader (rclpy, rosbags, mcap_ros2) takes the shorter bytes.
The bag recorder (:mod:`wheelsim.run.recording`) uses it.

Both length rules were found by comparing with rclpy on Jazzy (rclpy 7, rmw_fastrtps 8) and hold
on Kilted (rclpy 9): ``test_ros_cdr.py`` compares every member kind with rclpy's bytes.

Types the compiler does not handle (``byte``, ``char``, wide strings, bounded strings and
sequences) are serialized by rclpy.
"""

from __future__ import annotations

import functools
import importlib
import struct
import sys
from collections.abc import Callable, Iterator
from itertools import islice
from typing import Any

from rclpy.serialization import serialize_message
from rosidl_parser import definition

#: rosidl basic type -> (struct code, size [bytes]).
_NUMBERS = {
    'boolean': ('?', 1), 'float': ('f', 4), 'double': ('d', 8),
    'int8': ('b', 1), 'uint8': ('B', 1), 'int16': ('h', 2), 'uint16': ('H', 2),
    'int32': ('i', 4), 'uint32': ('I', 4), 'int64': ('q', 8), 'uint64': ('Q', 8),
}
_HEADER = b'\x00\x01\x00\x00'  # CDR, little endian; offsets count from its end
#: Layouts a serializer keeps (more are only met with ever-changing string or sequence lengths:
#: the table then starts again).
MAX_LAYOUTS = 256

Serializer = Callable[[Any], bytes]
"""``serialize(msg)``: ``msg`` in CDR."""


_serializers: dict[tuple[type, bool], Serializer] = {}


class _Unsupported(Exception):
    """A member type the compiler leaves to rclpy."""


def _message_class(namespaced: definition.NamespacedType) -> type:
    module = importlib.import_module('.'.join(namespaced.namespaces))
    return getattr(module, namespaced.name)


@functools.cache
def _members(cls: type) -> list[tuple[str, Any]]:
    """(field name, rosidl type) of a message class, in declaration order (none for a structure
    without fields: its one byte has no field in Python)."""
    names = list(cls.get_fields_and_field_types())
    return list(zip(names, cls.SLOT_TYPES, strict=True))


def _number(kind: Any) -> tuple[str, int]:
    if not isinstance(kind, definition.BasicType) or kind.typename not in _NUMBERS:
        raise _Unsupported(str(kind))
    return _NUMBERS[kind.typename]


class _Layout:
    """Builds the struct format of one layout: walks a message class's members in order, taking
    the length of each string and sequence from the key.

    ``position`` is where the next byte goes, relative to the end of the CDR header; ``length``
    is the same position as rmw_fastrtps counts it (see the module docstring); ``fixed``: no
    string, no sequence met."""

    def __init__(self, key: Iterator[int], position: int = 0, length: int = 0) -> None:
        self.key = key
        self.codes: list[str] = []
        self.position, self.length = position, length
        self.fixed = True

    def put(self, code: str, size: int, alignment: int) -> None:
        """``code`` of ``size`` bytes, after the padding to ``alignment``."""
        pad = -self.position % alignment
        self.codes.append('x' * pad + code)
        self.position += pad + size
        self.length += -self.length % alignment + size

    def member(self, kind: Any) -> None:
        if isinstance(kind, definition.BasicType):
            code, size = _number(kind)
            self.put(code, size, size)
        elif isinstance(kind, definition.NamespacedType):
            self.structure(_message_class(kind))
        elif isinstance(kind, definition.UnboundedString):
            self.fixed = False
            encoded = next(self.key)
            self.put('I', 4, 4)
            self.put(f'{encoded + 1}s', encoded + 1, 1)
        elif isinstance(kind, definition.Array):
            self.items(kind.value_type, kind.size)
        elif isinstance(kind, definition.UnboundedSequence):
            self.fixed = False
            count = next(self.key)
            self.put('I', 4, 4)
            if isinstance(kind.value_type, definition.BasicType):
                self.numbers(kind.value_type, count, unpadded_if_empty=True)
            else:
                self.items(kind.value_type, count)
        else:
            raise _Unsupported(str(kind))

    def structure(self, cls: type) -> None:
        """A structure; one whose key entries are its strings walked once per alignment and
        lengths (a plan's poses share them)."""
        entries = _key_entries(cls)
        if entries is None:
            self.members(cls)
            return
        codes, moved, counted, fixed = _structure_part(
            cls, self.position % 8, self.length % 8, tuple(islice(self.key, entries)))
        self.codes.append(codes)
        self.position += moved
        self.length += counted
        self.fixed &= fixed

    def members(self, cls: type) -> None:
        members = _members(cls)
        if not members:  # structure_needs_at_least_one_member: a uint8, zero
            self.put('x', 1, 1)
        for _, kind in members:
            self.member(kind)

    def items(self, kind: Any, count: int) -> None:
        if isinstance(kind, definition.BasicType):
            self.numbers(kind, count)
        else:
            for _ in range(count):
                self.member(kind)

    def numbers(self, kind: Any, count: int, unpadded_if_empty: bool = False) -> None:
        """``count`` numbers as one block of bytes. rmw_fastrtps pads before an empty sequence
        in the length it counts, not in the data."""
        _, size = _number(kind)
        if count or not unpadded_if_empty:
            self.put(f'{count * size}s', count * size, size)
        else:
            self.codes.append('0s')
            self.length += -self.length % size

    def format(self, rmw_padding: bool) -> str:
        """The format, with the end rmw_fastrtps gives, or (``rmw_padding`` False) ending
        where the data ends unless fixed (see the module docstring)."""
        if self.fixed:
            end = -self.position % 4
        else:
            end = self.length - self.position if rmw_padding else 0
        return ''.join(self.codes) + 'x' * end


def layout(cls: type, key: tuple[int, ...], rmw_padding: bool = True) -> struct.Struct:
    """The struct that packs a ``cls`` message whose strings (encoded) and sequences have the
    lengths ``key`` (in the order of the members) after the CDR header (a value), ending as
    :func:`serializer` says for ``rmw_padding``."""
    walk = _Layout(iter(key))
    walk.codes.append('<4s')
    walk.members(cls)
    return struct.Struct(walk.format(rmw_padding))


@functools.lru_cache(maxsize=1024)
def _structure_part(cls: type, position: int, length: int,
                    key: tuple[int, ...]) -> tuple[str, int, int, bool]:
    """The codes of a ``cls`` structure with key entries ``key`` at ``position`` and ``length``
    (below 8: the padding depends on nothing else), how far it moves them, whether fixed."""
    walk = _Layout(iter(key), position, length)
    walk.members(cls)
    return ''.join(walk.codes), walk.position - position, walk.length - length, walk.fixed


@functools.cache
def _key_entries(cls: type) -> int | None:
    """The number of key entries of a ``cls`` structure (its strings), None if it varies."""
    total = 0
    for _, kind in _members(cls):
        entries = _member_key_entries(kind)
        if entries is None:
            return None
        total += entries
    return total


def _member_key_entries(kind: Any) -> int | None:
    if isinstance(kind, definition.BasicType):
        return 0
    if isinstance(kind, definition.NamespacedType):
        return _key_entries(_message_class(kind))
    if isinstance(kind, definition.UnboundedString):
        return 1
    if isinstance(kind, definition.Array):
        entries = _member_key_entries(kind.value_type)
        return None if entries is None else entries * kind.size
    return None  # a sequence (or a type the compiler refuses)


class _Compiler:
    """Generates the source of one serializer: the values to pack, in member order, and the
    key of their layout.

    Values and key entries are collected as expressions. A type with a loop (a sequence or array
    of strings or structures) gathers them at run time into the lists ``args`` and ``key``,
    which the collected expressions are added to before each loop; the others pack them in one
    call."""

    def __init__(self, rmw_padding: bool) -> None:
        self.rmw_padding = rmw_padding
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {'HEADER': _HEADER}
        self.args: list[str] = ['HEADER']
        self.key: list[str] = []
        self.listed = False  # the values go into the lists args and key at run time
        self._names = 0
        self.indent = 1
        self.fields: list[str] = []  # the path of the member being compiled, for errors

    def name(self, prefix: str) -> str:
        self._names += 1
        return f'{prefix}{self._names}'

    def emit(self, line: str) -> None:
        self.lines.append('    ' * self.indent + line)

    def flush(self) -> None:
        """Add the values and key entries collected so far to the run-time lists."""
        if not self.listed:
            self.emit(f'args = [{", ".join(self.args)}]')
            self.emit(f'key = [{", ".join(self.key)}]')
            self.listed = True
        else:
            if self.args:
                self.emit(f'args += ({", ".join(self.args)},)')
            if self.key:
                self.emit(f'key += ({", ".join(self.key)},)')
        self.args, self.key = [], []

    def member(self, expr: str, kind: Any) -> None:
        if isinstance(kind, definition.BasicType):
            _number(kind)
            self.args.append(expr)
        elif isinstance(kind, definition.NamespacedType):
            self.structure(expr, _message_class(kind))
        elif isinstance(kind, definition.UnboundedString):
            text, length = self.name('b'), self.name('n')
            self.emit(f'{text} = {expr}.encode()')
            self.emit(f'{length} = len({text})')
            self.key.append(length)
            self.args += [f'{length} + 1', text]
        elif isinstance(kind, definition.Array):
            self.array(expr, kind.value_type, kind.size)
        elif isinstance(kind, definition.UnboundedSequence):
            self.sequence(expr, kind.value_type)
        else:
            raise _Unsupported(str(kind))

    def structure(self, expr: str, cls: type) -> None:
        value = self.name('v')
        members = _members(cls)
        self.emit(f'{value} = {expr}')
        for field, kind in members:
            self.fields.append(field)
            self.member(f'{value}.{field}', kind)
            self.fields.pop()

    def array(self, expr: str, kind: Any, size: int) -> None:
        """A fixed-size array: numbers as one block (rclpy holds them in numpy arrays)."""
        if isinstance(kind, definition.BasicType):
            _number(kind)
            items = self.name('a')
            self.emit(f'{items} = {expr}')
            # rclpy's setters convert without checking the length unless check_fields is on
            self.emit(f'if len({items}) != {size}:')
            self.emit(f"    raise ValueError(f'{'.'.join(self.fields)}: {{len({items})}} items, "
                      f"not {size}')")
            self.args.append(f'{items}.tobytes()' if kind.typename != 'boolean'
                             else f'bytes({items})')
        else:
            self.each(expr, kind)

    def sequence(self, expr: str, kind: Any) -> None:
        """A sequence: its length, then its items (numbers in an ``array.array``)."""
        items, count = self.name('s'), self.name('n')
        self.emit(f'{items} = {expr}')
        self.emit(f'{count} = len({items})')
        self.key.append(count)
        self.args.append(count)
        if isinstance(kind, definition.BasicType):
            _number(kind)
            self.args.append(f'bytes({items})' if kind.typename == 'boolean'
                             else f'{items}.tobytes()')
        else:
            self.each(items, kind)

    def each(self, items: str, kind: Any) -> None:
        """Items serialized one by one: strings and structures."""
        self.flush()
        item = self.name('i')
        self.emit(f'for {item} in {items}:')
        self.indent += 1
        self.member(item, kind)
        self.flush()
        self.indent -= 1

    def function(self, cls: type) -> Serializer:
        self.structure('msg', cls)
        if self.listed:
            self.flush()
            key, values = 'tuple(key)', '*args'
        else:
            key, values = f'({", ".join(self.key)},)', ', '.join(self.args)
        if self.listed or self.key:
            layouts: dict[tuple[int, ...], struct.Struct] = {}
            self.namespace.update(layouts=layouts,
                                  new_layout=functools.partial(_new_layout, cls, self.rmw_padding,
                                                               layouts))
            self.emit(f'packer = layouts.get({key})')
            self.emit('if packer is None:')
            self.emit(f'    packer = new_layout({key})')
        else:  # one layout
            self.namespace['packer'] = layout(cls, (), self.rmw_padding)
        self.emit(f'return packer.pack({values})')
        source = 'def serialize(msg):\n' + '\n'.join(self.lines)
        exec(compile(source, f'<cdr serializer of {cls.__name__}>', 'exec'), self.namespace)
        return self.namespace['serialize']


def _new_layout(cls: type, rmw_padding: bool, layouts: dict[tuple[int, ...], struct.Struct],
                key: tuple[int, ...]) -> struct.Struct:
    """The layout of ``key``, kept in ``layouts``."""
    if len(layouts) >= MAX_LAYOUTS:
        layouts.clear()
    packer = layouts[key] = layout(cls, key, rmw_padding)
    return packer


def serializer(cls: type, rmw_padding: bool = True) -> Serializer:
    """The serializer of message class ``cls`` (compiled on first use). ``rmw_padding``: end as
    rclpy's bytes end; False: where the data ends (a type the compiler leaves to rclpy keeps
    rclpy's end; see the module docstring)."""
    function = _serializers.get((cls, rmw_padding))
    if function is None:
        try:
            if sys.byteorder != 'little':
                raise _Unsupported('a big-endian machine')
            function = _Compiler(rmw_padding).function(cls)
        except _Unsupported:
            function = serialize_message
        _serializers[cls, rmw_padding] = function
    return function


def serialize(msg: Any) -> bytes:
    """``msg`` in CDR, as ``rclpy.serialization.serialize_message`` gives it."""
    return serializer(type(msg))(msg)
