"""Serialize rclpy messages to CDR with code compiled once per message type.

``serialize(msg)`` gives the bytes ``rclpy.serialization.serialize_message(msg)`` gives (ROS 2's
little-endian CDR as rmw_fastrtps writes it: the 4-byte encapsulation header, then each member
aligned to its size relative to the end of that header), two to seven times faster: for each
message class it generates, from the class's ``SLOT_TYPES`` (its rosidl definition), one Python
function that reads the fields and packs runs of numbers with one precompiled ``struct.Struct``,
alignment computed when the function is generated wherever the offset is known then.

Where it matters:

- alignment padding is written as zeros (rclpy leaves it uninitialised, so its bytes there are
  arbitrary: equal messages serialized by rclpy can differ in those bytes, never here);
- the length is the one rmw_fastrtps computes before writing: an empty sequence of 8-byte
  numbers (``float64[]``, ``int64[]``) is not padded in the data but counted with its padding
  in the length, so such a message ends with as many zero bytes as that padding;
- a message of fixed size (no string, no sequence) has its length rounded up to 4 bytes.

Both length rules were found by comparing with rclpy on Jazzy (rclpy 7, rmw_fastrtps 8) and hold
on Kilted (rclpy 9): ``test_run_cdr.py`` compares every member kind with rclpy's bytes.

Types the compiler does not handle (``byte``, ``char``, wide strings, bounded strings and
sequences, empty structures) are serialized by rclpy.
"""

from __future__ import annotations

import functools
import importlib
import struct
import sys
from collections.abc import Callable
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
_ZEROS = tuple(bytes(n) for n in range(8))
_U32 = struct.Struct('<I')

Serializer = Callable[[Any], bytes]
_serializers: dict[type, Serializer] = {}


class _Unsupported(Exception):
    """A member type the compiler leaves to rclpy."""


def _message_class(namespaced: definition.NamespacedType) -> type:
    module = importlib.import_module('.'.join(namespaced.namespaces))
    return getattr(module, namespaced.name)


@functools.cache
def _members(cls: type) -> list[tuple[str, Any]]:
    """(field name, rosidl type) of a message class, in declaration order."""
    names = list(cls.get_fields_and_field_types())
    if not names:
        raise _Unsupported(f'{cls.__name__} has no fields')
    return list(zip(names, cls.SLOT_TYPES, strict=True))


def _number(kind: Any) -> tuple[str, int]:
    if not isinstance(kind, definition.BasicType) or kind.typename not in _NUMBERS:
        raise _Unsupported(str(kind))
    return _NUMBERS[kind.typename]


class _Compiler:
    """Generates the source of one serializer.

    The generated code appends to ``buf``; the position of the next byte relative to the end of
    the CDR header is ``len(buf) - 4``. While generating, ``offset`` and ``modulus`` say what is
    known of that position (it is ``offset`` modulo ``modulus``), so padding is decided here
    where possible; numbers written in a row are packed together by one ``struct.Struct``.
    """

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.namespace: dict[str, Any] = {'Z': _ZEROS, 'U32': _U32}
        self.offset, self.modulus = 0, 8
        self._format = ''
        self._args: list[str] = []
        self._names = 0
        self.indent = 1
        self.may_be_short = False  # has an 8-byte number sequence (see the module docstring)
        self.plain = True  # no string, no sequence: a fixed size
        self.fields: list[str] = []  # the path of the member being compiled, for errors

    def name(self, prefix: str) -> str:
        self._names += 1
        return f'{prefix}{self._names}'

    def emit(self, line: str) -> None:
        self.lines.append('    ' * self.indent + line)

    def flush(self) -> None:
        """Write the numbers collected so far."""
        if self._format:
            packer = self.name('S')
            self.namespace[packer] = struct.Struct('<' + self._format)
            self.emit(f'buf += {packer}.pack({", ".join(self._args)})')
            self._format, self._args = '', []

    def forget_position(self, modulus: int = 1) -> None:
        self.flush()
        self.offset, self.modulus = 0, modulus

    def align(self, size: int) -> None:
        if size == 1:
            return
        if self.modulus % size == 0:
            pad = -self.offset % size
            self._format += 'x' * pad
            self.offset = (self.offset + pad) % self.modulus
        else:
            self.flush()
            self.emit(f'buf += Z[(4 - len(buf)) % {size}]')
            self.offset, self.modulus = 0, size

    def advance(self, size: int) -> None:
        self.offset = (self.offset + size) % self.modulus

    def number(self, expr: str, kind: Any) -> None:
        code, size = _number(kind)
        self.align(size)
        self._format += code
        self._args.append(expr)
        self.advance(size)

    def string(self, expr: str) -> None:
        self.plain = False
        self.align(4)
        self.flush()
        text = self.name('b')
        self.emit(f'{text} = {expr}.encode()')
        self.emit(f"buf += U32.pack(len({text}) + 1) + {text} + b'\\x00'")
        self.forget_position()

    def member(self, expr: str, kind: Any) -> None:
        if isinstance(kind, definition.BasicType):
            self.number(expr, kind)
        elif isinstance(kind, definition.NamespacedType):
            self.structure(expr, _message_class(kind))
        elif isinstance(kind, definition.UnboundedString):
            self.string(expr)
        elif isinstance(kind, definition.Array):
            self.array(expr, kind.value_type, kind.size)
        elif isinstance(kind, definition.UnboundedSequence):
            self.sequence(expr, kind.value_type)
        else:
            raise _Unsupported(str(kind))

    def structure(self, expr: str, cls: type) -> None:
        value = self.name('v')
        members = _members(cls)
        # Emitted before the pending numbers are packed, and never reassigned: they may use it.
        self.emit(f'{value} = {expr}')
        slots = set(getattr(cls, '__slots__', ()))
        for field, kind in members:
            # The generated classes keep each field in slot _<field> behind a property that
            # only returns it: reading the slot skips a Python call.
            attribute = f'_{field}' if f'_{field}' in slots else field
            self.fields.append(field)
            self.member(f'{value}.{attribute}', kind)
            self.fields.pop()

    def array(self, expr: str, kind: Any, size: int) -> None:
        """A fixed-size array: numbers as one block (rclpy holds them in numpy arrays)."""
        if isinstance(kind, definition.BasicType):
            _, item_size = _number(kind)
            self.align(item_size)
            self.flush()
            items = self.name('a')
            self.emit(f'{items} = {expr}')
            # rclpy's setters convert without checking the length unless check_fields is on
            self.emit(f'if len({items}) != {size}:')
            self.emit(f"    raise ValueError(f'{'.'.join(self.fields)}: {{len({items})}} items, "
                      f"not {size}')")
            self.emit(f'buf += {items}.tobytes()' if kind.typename != 'boolean'
                      else f'buf += bytes({items})')
            self.advance(size * item_size)
        else:
            self.each(expr, kind)

    def sequence(self, expr: str, kind: Any) -> None:
        """A sequence: its length, then its items (numbers in an ``array.array``)."""
        self.plain = False
        self.align(4)
        self.flush()
        items = self.name('s')
        self.emit(f'{items} = {expr}')
        self.emit(f'buf += U32.pack(len({items}))')
        if not isinstance(kind, definition.BasicType):
            self.forget_position(4)
            self.each(items, kind)
            return
        _, item_size = _number(kind)
        data = f'bytes({items})' if kind.typename == 'boolean' else f'{items}.tobytes()'
        if item_size == 8:
            self.may_be_short = True
            self.emit(f'if {items}:')
            self.emit(f'    buf += Z[(4 - len(buf)) % 8] + {data}')
            self.emit('else:')
            self.emit('    short += 1')
            self.emit('    short_end = len(buf)')
        else:
            self.emit(f'buf += {data}')
        self.forget_position(min(item_size, 4) if item_size > 1 else 1)

    def each(self, items: str, kind: Any) -> None:
        """Items serialized one by one: strings and structures."""
        self.forget_position()
        item = self.name('i')
        self.emit(f'for {item} in {items}:')
        self.indent += 1
        self.member(item, kind)
        self.forget_position()
        self.indent -= 1

    def function(self, cls: type) -> Serializer:
        self.structure('msg', cls)
        self.flush()
        body = ["buf = bytearray(b'\\x00\\x01\\x00\\x00')"]
        if self.may_be_short:
            body.append('short = 0')
        end = ['return bytes(buf)']
        if self.may_be_short:  # the padding counted for empty sequences: usually one, last
            end = ['if short == 1 and short_end == len(buf):',
                   '    buf += Z[(4 - len(buf)) % 8]',
                   'elif short:',
                   '    buf += bytes(computed_size(msg) - len(buf))', *end]
            self.namespace['computed_size'] = computed_size
        elif self.plain:  # fixed size: rmw_fastrtps rounds the length up to 4 bytes
            end = ['buf += Z[-len(buf) % 4]', *end]
        source = 'def serialize(msg):\n' + '\n'.join(
            ['    ' + line for line in body] + self.lines + ['    ' + line for line in end])
        exec(compile(source, f'<cdr serializer of {cls.__name__}>', 'exec'), self.namespace)
        return self.namespace['serialize']


def computed_size(msg: Any) -> int:
    """The length rmw_fastrtps gives ``msg`` serialized: the data's length, with the padding of
    empty 8-byte number sequences counted as if they had items."""
    return 4 + _size(msg, type(msg), 0)


def _size(value: Any, cls: type, position: int) -> int:
    for field, kind in _members(cls):
        position = _member_size(getattr(value, field), kind, position)
    return position


def _member_size(value: Any, kind: Any, position: int) -> int:
    if isinstance(kind, definition.BasicType):
        size = _number(kind)[1]
        return position + -position % size + size
    if isinstance(kind, definition.NamespacedType):
        return _size(value, _message_class(kind), position)
    if isinstance(kind, definition.AbstractString):
        return position + -position % 4 + 4 + len(value.encode()) + 1
    if isinstance(kind, definition.AbstractSequence):
        position += -position % 4 + 4
    if isinstance(kind.value_type, definition.BasicType):
        size = _number(kind.value_type)[1]
        return position + -position % size + size * len(value)
    for item in value:
        position = _member_size(item, kind.value_type, position)
    return position


def serializer(cls: type) -> Serializer:
    """The serializer of message class ``cls`` (compiled on first use)."""
    function = _serializers.get(cls)
    if function is None:
        try:
            if sys.byteorder != 'little':
                raise _Unsupported('a big-endian machine')
            function = _Compiler().function(cls)
        except _Unsupported:
            function = serialize_message
        _serializers[cls] = function
    return function


def serialize(msg: Any) -> bytes:
    """``msg`` in CDR, as ``rclpy.serialization.serialize_message`` gives it."""
    return serializer(type(msg))(msg)
