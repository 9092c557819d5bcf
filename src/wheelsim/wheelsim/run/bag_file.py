"""Write a rosbag2 bag folder, an MCAP file and ``metadata.yaml``, as rosbags' writer lays it out.

Why not rosbags' ``Writer``: its ``write`` builds each message record through a stream and five
small writes, about 6.5 us a message: 0.2 s of CPU for the 29 434 messages of the default
scenario, whose whole run may take 0.3 s at issue 34's 300x real time (``bench/bench_recording.py``
times both writers on a run's messages). Here a message record's header is one ``struct`` pack,
added with the message to the open chunk's bytes. The file is rosbags' (0.11) layout record for
record, its chunks compressed with zstd as its ``STORAGE`` compression mode does:
``test_run_bag_file.py`` writes the same messages with both (at the level rosbags compresses
with) and compares the files byte for byte and ``metadata.yaml`` as text. Where rosbags departs
from the MCAP specification this does not: the start time of a bag or chunk without messages is
0, not 2**63 - 1 (which rosbags also writes for a bag whose log times are all above it). So:

- records: the header (profile ``ros2``, ``library``); chunks of at most about 1 MiB of
  uncompressed records (a chunk is closed once a message takes it beyond 2**20 bytes), each
  holding the schema and channel records of the topics first written in it, then its messages
  (sequence 0, publish time = log time), compressed with zstd at :data:`ZSTD_LEVEL` (a run's
  records shrink about 7 times: fewer bytes to write, also for the disk of a sweep), followed
  by a message index per channel; the metadata record ``rosbag2`` (``serialized_metadata``: the
  YAML of ``metadata.yaml`` without its top key); data end; the summary (schemas, channels,
  chunk indexes, the metadata index, statistics, summary offsets) and the footer. CRCs are 0
  (not computed);
- ``metadata.yaml``: rosbag2's version 9, ``ros_distro`` as given (rosbag2 writes the
  distribution that recorded; ``ros2 bag info``, rosbags, mcap and PlotJuggler read it); its
  compression fields are empty, as rosbag2 leaves them for compression inside the MCAP file.

Every reader the project supports reads it (the tests read it back with mcap, mcap_ros2 and
rosbags). Times are log times [ns], integers in [0, 2**64); text is UTF-8, in the YAML too.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import yaml

try:  # the standard library's from Python 3.14, its backport before (as rosbags imports it)
    from compression import zstd
except ImportError:
    from backports import zstd

MAGIC = b'\x89MCAP0\r\n'
#: A chunk is closed once its uncompressed records exceed this size [bytes] (rosbags' rule).
CHUNK_SIZE_BYTES = 2**20
#: The chunks' zstd level: what ``ros2 bag record -s mcap`` compresses with by default (rosbag2's
#: MCAP storage leaves mcap's writer options at their defaults: zstd, ``CompressionLevel::Default``,
#: level 1 in the mcap 1.3.0 of Jazzy's and the 1.4.0 of Kilted's rosbag2).
ZSTD_LEVEL = 1
_MESSAGE_HEADER = struct.Struct('<BQHIQQ')  # opcode, record length, channel, sequence, 2 times
_MESSAGE_FIELDS_BYTES = _MESSAGE_HEADER.size - 9  # a message record's length before its data
_U16, _U32, _U64 = struct.Struct('<H'), struct.Struct('<I'), struct.Struct('<Q')
_COMPRESSION = b'\x04\x00\x00\x00zstd'  # a chunk's compression, as an MCAP string

# MCAP record opcodes.
_HEADER, _FOOTER, _SCHEMA, _CHANNEL, _MESSAGE, _CHUNK = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
_MESSAGE_INDEX, _CHUNK_INDEX, _STATISTICS, _METADATA = 0x07, 0x08, 0x0B, 0x0C
_METADATA_INDEX, _SUMMARY_OFFSET, _DATA_END = 0x0D, 0x0E, 0x0F


def _string(text: str) -> bytes:
    data = text.encode()
    return _U32.pack(len(data)) + data


def _record(opcode: int, *fields: bytes) -> bytes:
    body = b''.join(fields)
    return bytes((opcode,)) + _U64.pack(len(body)) + body


class _MetadataDumper(getattr(yaml, 'CSafeDumper', yaml.SafeDumper)):  # type: ignore[misc]
    """Block style, sorted keys, an object met twice written twice (no anchors); libyaml's
    emitter where PyYAML has it (the same text, 3 ms instead of 15 ms for a run's metadata)."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def yaml_text(value: Any) -> str:
    """``value`` in YAML as rosbag2 metadata is written: block style, sorted keys."""
    return yaml.dump(value, Dumper=_MetadataDumper, default_flow_style=False, allow_unicode=True)


class BagFile:
    """A new rosbag2 folder ``path`` (created; it must not exist) with ``<name>.mcap``.

    Add each topic once (:meth:`add_channel`), write its messages (:meth:`write`), then
    :meth:`close` (the summary and ``metadata.yaml``: the bag is complete) or :meth:`abort` (the
    file closed as it is: the messages of its closed chunks can be recovered).
    ``library`` is the MCAP header's writer name, ``ros_distro`` the metadata's distribution,
    ``zstd_level`` the chunks' compression level (zstd's, from its negative fast levels to 22).
    """

    def __init__(self, path: Path, library: str, ros_distro: str,
                 zstd_level: int = ZSTD_LEVEL) -> None:
        self.path = Path(path)
        self._ros_distro = ros_distro
        self._zstd_level = zstd_level
        self.path.mkdir(mode=0o755, parents=True)  # FileExistsError if it exists
        self.file_path = self.path / f'{self.path.name}.mcap'
        self._file: BinaryIO = self.file_path.open('xb')
        self._file.write(MAGIC + _record(_HEADER, _string('ros2'), _string(library)))
        self._schemas: dict[str, tuple[int, bytes]] = {}  # type -> (id, schema record)
        self._channels: list[tuple[bytes, dict[str, Any]]] = []  # (record, topic metadata)
        self._counts: dict[int, int] = {}  # channel id -> messages
        self._start_ns: int | None = None  # the first log time, None before any message
        self._end_ns = 0
        self._chunk_indexes: list[bytes] = []
        self._new_chunk()

    def _new_chunk(self) -> None:
        self._chunk = bytearray()  # the chunk's records so far, uncompressed
        self._index: dict[int, array] = {}  # channel id -> (log time, offset) pairs, in order

    def add_channel(self, topic: str, type_name: str, definition: str, type_hash: str,
                    offered_qos: Sequence[Mapping[str, Any]]) -> int:
        """Add ``topic`` carrying ``type_name`` (``pkg/msg/Type``) in CDR: its schema
        ``definition`` (``.msg`` text with its dependencies, ``ros2msg``) and RIHS01
        ``type_hash``, its publishers' QoS profiles as metadata.yaml holds them. Returns the
        channel id to :meth:`write` with."""
        schema = self._schemas.get(type_name)
        if schema is None:
            schema_id = len(self._schemas) + 1
            record = _record(_SCHEMA, _U16.pack(schema_id), _string(type_name),
                             _string('ros2msg'), _string(definition))
            schema = self._schemas[type_name] = (schema_id, record)
            self._chunk += record
        channel_id = len(self._channels) + 1
        qos_text = yaml_text(list(offered_qos)).strip()
        metadata = _string('offered_qos_profiles') + _string(qos_text)
        record = _record(_CHANNEL, _U16.pack(channel_id), _U16.pack(schema[0]), _string(topic),
                         _string('cdr'), _U32.pack(len(metadata)), metadata)
        self._channels.append((record, {
            'name': topic, 'type': type_name, 'serialization_format': 'cdr',
            'offered_qos_profiles': list(offered_qos), 'type_description_hash': type_hash}))
        self._counts[channel_id] = 0
        self._chunk += record
        return channel_id

    def write(self, channel_id: int, time_ns: int, data: bytes) -> None:
        """Write ``data`` (serialized) on channel ``channel_id`` at log time ``time_ns`` [ns].
        Raises ValueError for an unknown channel or a time that is no integer in [0, 2**64)
        (nothing written)."""
        try:
            header = _MESSAGE_HEADER.pack(_MESSAGE, _MESSAGE_FIELDS_BYTES + len(data),
                                          channel_id, 0, time_ns, time_ns)
        except struct.error:
            self._check_channel(channel_id)
            raise ValueError(f'log time {time_ns!r} ns: not an integer in [0, 2**64)') from None
        index = self._index.get(channel_id)
        if index is None:
            self._check_channel(channel_id)
            index = self._index[channel_id] = array('Q')
        chunk = self._chunk
        index.append(time_ns)
        index.append(len(chunk))
        chunk += header
        chunk += data
        if len(chunk) > CHUNK_SIZE_BYTES:
            self._close_chunk()

    def _check_channel(self, channel_id: int) -> None:
        if channel_id not in self._counts:
            raise ValueError(f'channel {channel_id}: not added (added: 1 to '
                             f'{len(self._channels)})')

    def _close_chunk(self) -> None:
        """Write the open chunk and its message indexes; keep its chunk index and count its
        messages."""
        start_ns, end_ns = 0, 0  # the MCAP specification's times of a chunk without messages
        if self._index:
            start_ns = min(min(pairs[::2]) for pairs in self._index.values())
            end_ns = max(max(pairs[::2]) for pairs in self._index.values())
            self._start_ns = start_ns if self._start_ns is None else min(self._start_ns,
                                                                         start_ns)
            self._end_ns = max(self._end_ns, end_ns)
        for channel_id, pairs in self._index.items():
            self._counts[channel_id] += len(pairs) // 2
        chunk_offset = self._file.tell()
        times = _U64.pack(start_ns) + _U64.pack(end_ns)
        size = len(self._chunk)
        compressed = zstd.compress(self._chunk, level=self._zstd_level)
        self._file.write(_record(_CHUNK, times, _U64.pack(size), _U32.pack(0),
                                 _COMPRESSION, _U64.pack(len(compressed)), compressed))
        chunk_end = self._file.tell()
        offsets = []
        for channel_id, pairs in self._index.items():
            offsets.append(_U16.pack(channel_id) + _U64.pack(self._file.tell()))
            entries = pairs.tobytes()
            self._file.write(_record(_MESSAGE_INDEX, _U16.pack(channel_id),
                                     _U32.pack(len(entries)), entries))
        self._chunk_indexes.append(_record(
            _CHUNK_INDEX, times, _U64.pack(chunk_offset), _U64.pack(chunk_end - chunk_offset),
            _U32.pack(10 * len(offsets)), *offsets, _U64.pack(self._file.tell() - chunk_end),
            _COMPRESSION, _U64.pack(len(compressed)), _U64.pack(size)))
        self._new_chunk()

    def _metadata(self) -> dict[str, Any]:
        """``metadata.yaml``'s ``rosbag2_bagfile_information``."""
        start_ns = self._start_ns or 0
        duration = {'nanoseconds': max(0, self._end_ns - start_ns)}
        count = sum(self._counts.values())
        name = self.file_path.name
        return {
            'version': 9, 'storage_identifier': 'mcap', 'relative_file_paths': [name],
            'duration': duration, 'starting_time': {'nanoseconds_since_epoch': start_ns},
            'message_count': count,
            'topics_with_message_count': [
                {'topic_metadata': topic, 'message_count': n}
                for (_, topic), n in zip(self._channels, self._counts.values(), strict=True)],
            'compression_format': '', 'compression_mode': '',
            'files': [{'path': name, 'starting_time': {'nanoseconds_since_epoch': start_ns},
                       'duration': duration, 'message_count': count}],
            'custom_data': None, 'ros_distro': self._ros_distro,
        }

    def close(self) -> None:
        """Write the last chunk, the metadata, the summary and the footer; close the file and
        write ``metadata.yaml``."""
        if self._chunk:
            self._close_chunk()
        out = self._file
        information = self._metadata()
        metadata_offset = out.tell()
        entry = _string('serialized_metadata') + _string(yaml_text(information).strip())
        out.write(_record(_METADATA, _string('rosbag2'), _U32.pack(len(entry)), entry))
        metadata_end = out.tell()
        out.write(_record(_DATA_END, _U32.pack(0)))
        summary_offset = out.tell()
        groups = []  # (opcode, offset, length) of the summary's groups
        for opcode, records in ((_SCHEMA, [r for _, r in self._schemas.values()]),
                                (_CHANNEL, [r for r, _ in self._channels]),
                                (_CHUNK_INDEX, self._chunk_indexes)):
            start = out.tell()
            out.write(b''.join(records))
            if records:
                groups.append((opcode, start, out.tell() - start))
        start = out.tell()
        out.write(_record(_METADATA_INDEX, _U64.pack(metadata_offset),
                          _U64.pack(metadata_end - metadata_offset), _string('rosbag2')))
        groups.append((_METADATA_INDEX, start, out.tell() - start))
        start = out.tell()
        counts = b''.join(_U16.pack(i) + _U64.pack(n) for i, n in self._counts.items())
        out.write(_record(
            _STATISTICS, _U64.pack(sum(self._counts.values())), _U16.pack(len(self._schemas)),
            _U32.pack(len(self._channels)), _U32.pack(0), _U32.pack(1),
            _U32.pack(len(self._chunk_indexes)), _U64.pack(self._start_ns or 0),
            _U64.pack(self._end_ns), _U32.pack(len(counts)), counts))
        groups.append((_STATISTICS, start, out.tell() - start))
        summary_offset_start = out.tell()
        for opcode, offset, length in groups:
            out.write(_record(_SUMMARY_OFFSET, bytes((opcode,)), _U64.pack(offset),
                              _U64.pack(length)))
        out.write(_record(_FOOTER, _U64.pack(summary_offset), _U64.pack(summary_offset_start),
                          _U32.pack(0)) + MAGIC)
        out.close()
        metadata_path = self.path / 'metadata.yaml'
        temporary = metadata_path.with_suffix('.yaml.tmp')
        temporary.write_text(yaml_text({'rosbag2_bagfile_information': information}), 'utf8')
        temporary.replace(metadata_path)

    def abort(self) -> None:
        """Close the file as it is (no open chunk, no summary, no metadata.yaml)."""
        self._file.close()
