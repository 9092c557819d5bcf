"""A message serialized once whose numeric fields are rewritten in its bytes before each publish.

Publishing a message object makes rclpy convert it to a C message and then to the middleware's
bytes, every time. A node that publishes the same message with new numbers at a fixed rate can
instead keep those bytes and overwrite only the numbers; ``Publisher.publish`` sends ``bytes``
as they are. On a machine where each publication runs from cold caches this is most of a
publisher's CPU (vehicle_sim in wall-clock mode: docs/vehicle_sim.md).

No knowledge of the wire format is built in: the bytes come from rclpy's own serializer (that
is, the middleware's), and where a field lies in them is found by serializing the message with
the field set to two different probe values and taking the one offset at which each probe's
bytes appear. Everything else (frame ids, joint names, sequence lengths) is fixed when the
template is made. The constructor packs test values, deserializes them with rclpy and compares
the result with the message object holding the same values; any difference raises
:class:`LayoutError`, so a template either reproduces rclpy's serialization or does not exist.
"""

from __future__ import annotations

import math
import struct
from collections.abc import Sequence
from typing import Any

from rclpy.serialization import deserialize_message, serialize_message

#: Field types that can be rewritten, with their ``struct`` codes and two probe values whose
#: bytes are unlikely anywhere else in a message.
_KINDS = {
    'double': ('d', (math.pi, -math.e)),
    'int32': ('i', (0x13579BDF, -0x2468ACE1)),
    'uint32': ('I', (0x13579BDF, 0x2468ACE1)),
}


class LayoutError(RuntimeError):
    """A field cannot be located in, or rewritten in, the serialized message."""


class _Field:
    """One numeric field named by a path such as ``pose.pose.position.x`` or ``position[3]``."""

    def __init__(self, message: Any, path: str) -> None:
        self.path = path
        *parents, leaf = path.split('.')
        self.index = None
        if leaf.endswith(']'):
            leaf, _, index = leaf[:-1].partition('[')
            self.index = int(index)
        owner = message
        try:
            for name in parents:
                owner = getattr(owner, name)
            type_name = owner.get_fields_and_field_types()[leaf]
        except (AttributeError, KeyError) as err:
            raise LayoutError(f'{type(message).__name__} has no field {path}') from err
        if self.index is not None:  # 'sequence<double>' or 'double[36]'
            type_name = type_name.removeprefix('sequence<').rstrip('>').split('[')[0]
            length = len(getattr(owner, leaf))
            if not 0 <= self.index < length:
                raise LayoutError(
                    f'{type(message).__name__}.{path}: index out of range (the message holds '
                    f'{length} elements)'
                )
        if type_name not in _KINDS:
            raise LayoutError(
                f'{type(message).__name__}.{path} is a {type_name}; only {sorted(_KINDS)} '
                'fields can be rewritten'
            )
        self.code, self.probes = _KINDS[type_name]
        self.size = struct.calcsize(self.code)
        self.zero = type(self.probes[0])(0)  # rclpy's setters check the Python type
        self._parents, self._owner, self._leaf = parents, owner, leaf

    def set(self, value: float | int) -> None:
        """Set this field in the message it was made from."""
        if self.index is None:
            setattr(self._owner, self._leaf, value)
        else:
            getattr(self._owner, self._leaf)[self.index] = value

    def get(self, message: Any) -> float | int:
        """This field's value in another message of the same type."""
        for name in self._parents:
            message = getattr(message, name)
        value = getattr(message, self._leaf)
        return value if self.index is None else value[self.index]


def _occurrences(data: bytes, pattern: bytes) -> set[int]:
    """Every offset at which ``pattern`` starts in ``data`` (overlaps included)."""
    found, start = set(), data.find(pattern)
    while start >= 0:
        found.add(start)
        start = data.find(pattern, start + 1)
    return found


def _locate(message: Any, field: _Field) -> tuple[int, str]:
    """(byte offset, byte order '<' or '>') of ``field`` in ``message``'s serialization."""
    serialized = []
    for probe in field.probes:
        field.set(probe)
        serialized.append(_serialize(message))
    field.set(field.zero)
    places = [
        (offset, order)
        for order in '<>'
        for offset in set.intersection(*(
            _occurrences(data, struct.pack(order + field.code, probe))
            for data, probe in zip(serialized, field.probes, strict=True)
        ))
    ]
    if len(places) != 1:
        raise LayoutError(
            f'{type(message).__name__}.{field.path}: found at {len(places)} places in the '
            'serialized message instead of one'
        )
    return places[0]


def _serialize(message: Any) -> bytes:
    try:
        return serialize_message(message)
    except Exception as err:  # the middleware's serializer: whatever it raises, say so
        raise LayoutError(f'{type(message).__name__} could not be serialized: {err}') from err


class SerializedMessage:
    """``message`` serialized once; :meth:`pack` writes new values of ``fields`` into it.

    ``fields`` are paths of numeric fields (``double``, ``int32``, ``uint32``), in the order
    :meth:`pack` takes their values. Every other field keeps the value it had in ``message``
    (which is left with 0 in the listed fields), and the listed fields hold 0 until packed.
    Raises :class:`LayoutError` if a field cannot be located or the template does not reproduce
    rclpy's serialization.
    """

    def __init__(self, message: Any, fields: Sequence[str]) -> None:
        parsed = [_Field(message, path) for path in fields]
        for field in parsed:
            field.set(field.zero)
        places = [_locate(message, field) for field in parsed]
        self._buffer = bytearray(_serialize(message))
        self._count = len(parsed)
        # Fields adjacent in the bytes and in the given order are packed by one struct call.
        self._runs: list[tuple[struct.Struct, int, int, int]] = []
        start = 0
        for i in range(1, len(parsed) + 1):
            offset, order = places[start]
            end = offset + sum(f.size for f in parsed[start:i])
            if i == len(parsed) or places[i] != (end, order):
                codes = ''.join(f.code for f in parsed[start:i])
                self._runs.append((struct.Struct(order + codes), offset, start, i))
                start = i
        self._check(message, parsed)

    def pack(self, values: Sequence[float | int]) -> bytes:
        """The serialized message with ``values`` in the fields, in the order they were named."""
        if len(values) != self._count:
            raise ValueError(f'expected {self._count} values, got {len(values)}')
        buffer = self._buffer
        for layout, offset, start, stop in self._runs:
            layout.pack_into(buffer, offset, *values[start:stop])
        return bytes(buffer)

    def _check(self, message: Any, fields: list[_Field]) -> None:
        """Pack distinct test values and compare rclpy's reading with the message object."""
        values = [
            (i + 1) * 0.3 if field.code == 'd' else 1000 + i for i, field in enumerate(fields)
        ]
        for field, value in zip(fields, values, strict=True):
            field.set(value)
        try:
            decoded = deserialize_message(self.pack(values), type(message))
        except Exception as err:  # the middleware's deserializer refused the rewritten bytes
            raise LayoutError(
                f'{type(message).__name__}: the rewritten bytes do not deserialize ({err})'
            ) from err
        wrong = [f.path for f, v in zip(fields, values, strict=True) if f.get(decoded) != v]
        if wrong or decoded != message:
            raise LayoutError(
                f'{type(message).__name__}: rewriting {wrong or "the fields"} in the serialized '
                'bytes does not give the same message'
            )
        for field in fields:
            field.set(field.zero)
