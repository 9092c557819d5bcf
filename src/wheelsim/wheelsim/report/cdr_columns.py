"""Numeric fields of many CDR messages of one type at once, as numpy arrays (one per field).

Decoding message by message builds a Python object per message and per nested structure;
reading a bag back for its metrics mostly needs a few numbers (a stamp, a pose, a twist) of
thousands of messages of one type. :func:`read_columns` finds those numbers in all the
messages at once: every payload is a view into one joined byte buffer, and the offset of the
next field in each message is an integer array, advanced field by field along the type's
definition (from the ``rosbags`` type store). Strings (frame ids) have per-message lengths, so
the offsets may differ between messages; numbers are aligned to their size relative to the
end of the 4-byte encapsulation header, as in ROS 2's CDR.

Handled up to the last field asked for: numbers, strings, nested structures and fixed-size
arrays of numbers, little-endian CDR. Anything else (a sequence before a wanted field,
big-endian data, a payload too short for its type) raises :class:`NotColumnar`: decode those
messages one by one instead. The values are the bytes of the messages, so they equal what a
message-by-message decoder gives.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt
from rosbags.interfaces import Nodetype
from rosbags.typesys.store import Typestore

NUMBER_TYPES = {
    'bool': np.dtype('?'), 'byte': np.dtype('u1'), 'char': np.dtype('u1'),
    'int8': np.dtype('i1'), 'uint8': np.dtype('u1'), 'int16': np.dtype('<i2'),
    'uint16': np.dtype('<u2'), 'int32': np.dtype('<i4'), 'uint32': np.dtype('<u4'),
    'int64': np.dtype('<i8'), 'uint64': np.dtype('<u8'), 'float32': np.dtype('<f4'),
    'float64': np.dtype('<f8'),
}
"""rosbags' names of the ROS 2 number types -> their little-endian numpy type."""
ENCAPSULATION_BYTES = 4
LITTLE_ENDIAN_CDR = (0, 1)
"""The first two bytes of a little-endian CDR payload (representation id ``CDR_LE``)."""


class NotColumnar(Exception):
    """The messages cannot be read column-wise (see the module doc)."""


class _Cursor:
    """The position of the next field in every message, walked along a type's definition."""

    def __init__(self, typestore: Typestore, buffer: npt.NDArray[np.uint8],
                 data_starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                 paths: Collection[str]) -> None:
        self._typestore = typestore
        self._buffer = buffer
        self._data_starts = data_starts
        self._ends = ends
        self.position = np.zeros(len(data_starts), dtype=np.int64)
        """Offsets from the end of each message's encapsulation header."""
        self.wanted = set(paths)
        self.columns: dict[str, np.ndarray] = {}

    def structure(self, type_name: str, prefix: str) -> None:
        for name, (kind, detail) in self._typestore.fielddefs[type_name][1]:
            if not self.wanted:
                return  # nothing more to read
            path = prefix + name
            if kind == Nodetype.NAME:
                self.structure(detail, path + '.')
            elif kind == Nodetype.BASE and detail[0] == 'string':
                self._skip_string(path)
            elif kind == Nodetype.BASE and detail[0] in NUMBER_TYPES:
                dtype = NUMBER_TYPES[detail[0]]
                self._align(dtype.itemsize)
                if path in self.wanted:
                    self.wanted.discard(path)
                    self.columns[path] = self._read(dtype, path)
                self.position += dtype.itemsize
            elif (kind == Nodetype.ARRAY and detail[0][0] == Nodetype.BASE
                  and detail[0][1][0] in NUMBER_TYPES):
                size = NUMBER_TYPES[detail[0][1][0]].itemsize
                self._align(size)
                self.position += size * detail[1]
                self._check(0, path)
            else:
                raise NotColumnar(f'{path}: {kind.name.lower()} fields are read message by '
                                  'message')

    def _align(self, size: int) -> None:
        if size > 1:
            self.position += -self.position % size

    def _check(self, size: int, path: str) -> None:
        if np.any(self._data_starts + self.position + size > self._ends):
            raise NotColumnar(f'{path}: a message ends before this field')

    def _read(self, dtype: np.dtype, path: str) -> np.ndarray:
        self._check(dtype.itemsize, path)
        offsets = self._data_starts + self.position
        raw = self._buffer[offsets[:, None] + np.arange(dtype.itemsize)]
        return raw.view(dtype)[:, 0]

    def _skip_string(self, path: str) -> None:
        self._align(4)
        length = self._read(NUMBER_TYPES['uint32'], path).astype(np.int64)
        self.position += 4 + length
        self._check(0, path)


def read_columns(typestore: Typestore, type_name: str, payloads: Sequence[bytes],
                 paths: Collection[str], data_start: int = 0) -> dict[str, np.ndarray]:
    """``{path: values}``: the numeric field at each dotted ``path`` (``pose.pose.position.x``)
    of every CDR-serialized message of ``type_name`` in ``payloads`` (each from byte
    ``data_start`` on), in payload order, in the field's own numpy type.

    Raises :class:`NotColumnar` for messages this reader does not handle (see the module doc)
    and ``KeyError`` for a path that is no numeric field of the type.
    """
    sizes = np.fromiter(map(len, payloads), dtype=np.int64, count=len(payloads))
    starts = np.cumsum(sizes) - sizes + data_start
    lengths = sizes - data_start
    buffer = np.frombuffer(b''.join(payloads), dtype=np.uint8)
    if np.any(lengths < ENCAPSULATION_BYTES):
        raise NotColumnar(f'{type_name}: a message shorter than the CDR header')
    if np.any((buffer[starts] != LITTLE_ENDIAN_CDR[0])
              | (buffer[starts + 1] != LITTLE_ENDIAN_CDR[1])):
        raise NotColumnar(f'{type_name}: not little-endian CDR')
    cursor = _Cursor(typestore, buffer, starts + ENCAPSULATION_BYTES, starts + lengths, paths)
    cursor.structure(type_name, '')
    if cursor.wanted:
        raise KeyError(f'{type_name} has no numeric field {", ".join(sorted(cursor.wanted))}')
    return cursor.columns
