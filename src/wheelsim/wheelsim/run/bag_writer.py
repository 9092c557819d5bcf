"""Write serialized ROS 2 messages into a new rosbag2 bag folder with MCAP storage.

:class:`McapBagWriter` writes ``metadata.yaml`` and one ``.mcap`` file, as
``ros2 bag record -s mcap`` writes them, with the rosbags library, in this process. The schema
text and type hash of each recorded type are those of the ROS installation's ``.msg`` files
(:mod:`wheelsim.run.msg_definitions`: the types the bag holds are those of the ROS 2 the run
used); rosbags' built-in ROS 2 Kilted definitions are used only for a type without a ``.msg``
file. For the types of a run both give the same text and hashes.

Messages are given as MCAP message records (:func:`record_serializer` packs one from an rclpy
message in one call) and written in batches by :class:`_Chunks`, which writes the bytes of
rosbags' own ``Writer.write`` (checked by the tests against it) at a fraction of its cost:
rosbags builds each MCAP message record field by field and, closing a chunk, its message indexes
one number at a time; this writes the records of a batch at once and packs each channel's
message index at once. It reaches into rosbags' MCAP storage writer (its pending
chunk, file, chunk indexes and counters, as rosbags 0.11 has them: tools/requirements-common.txt
pins it, and the tests compare the bytes with rosbags' own writer); with another storage,
compression or a rosbags whose writer has not these parts it writes through ``Writer.write``.
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from collections.abc import Sequence
from io import BytesIO
from itertools import accumulate
from pathlib import Path

import numpy as np
from rosbags.interfaces import Qos
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.writer import Connection

from wheelsim.report.bag_data import built_in_types
from wheelsim.ros.distro import ros_distro
from wheelsim.run.cdr import Frame, Serializer, serializer
from wheelsim.run.msg_definitions import installed_definition

Message = tuple[int, int, bytes]
"""A message to write: ``(channel id, log time [ns], MCAP message record)``; the channel id is
the connection's (:meth:`McapBagWriter.add_topic`), the record's data the CDR bytes, from byte
:data:`MESSAGE_DATA_START` on."""

# MCAP records (MCAP specification), up to their variable part: opcode, record length, fields.
#: Message: channel id, sequence 0, log time, publish time (rosbags writes the log time twice).
_MESSAGE = struct.Struct('<BQHIQQ')
MESSAGE_DATA_START = _MESSAGE.size
"""Where a message record's data (the CDR bytes) starts [bytes]."""
#: The message record's fields, as a frame of the CDR bytes: its length counts what follows it
#: (the record but its opcode and length, 9 bytes).
_MESSAGE_FRAME = Frame(codes=_MESSAGE.format[1:], params=('channel', 'time_ns'),
                       values=('0x05', 'size - 9', 'channel', '0', 'time_ns', 'time_ns'))
#: Chunk: message start and end time, records size, CRC 0 (none), compression '' (its length
#: 0), records size again (uncompressed).
_CHUNK = struct.Struct('<BQQQQIIQ')
#: Message index: channel id, size of its (log time, offset) entries.
_MESSAGE_INDEX = struct.Struct('<BQHI')
#: Chunk index (its opcode and length written by rosbags at the end): message start and end
#: time, chunk offset and length, size of the message index offsets, each (channel id, offset),
#: then message indexes length, compression '', compressed and uncompressed size.
_CHUNK_INDEX = struct.Struct('<QQQQI')
_CHUNK_INDEX_OFFSET = struct.Struct('<HQ')
_CHUNK_INDEX_END = struct.Struct('<QIQQ')
#: rosbags closes a chunk once its content passes this many bytes (``McapWriter.write``).
_CHUNK_BYTES = 2**20
_NO_MESSAGE_NS = 2**63 - 1  # rosbags' start time of a chunk without messages
#: The parts of rosbags' writer and of its MCAP storage writer that :class:`_Chunks` uses.
_WRITER_PARTS = ('storage', 'counts', 'min_timestamp', 'max_timestamp', 'compression_mode')
_STORAGE_PARTS = ('chunk', 'bio', 'chunks', 'compression', 'channel_stats', 'message_start_time',
                  'message_end_time')


class _Chunks:
    """Writes messages into ``writer``'s MCAP storage in chunks closed where and as rosbags
    closes them (the same bytes), keeping the pending chunk's records and message index itself
    and giving the writer and the storage their counts and times when it closes.

    rosbags still writes the schema and channel records of a new connection into its pending
    chunk (``storage.chunk.bio``): they are moved into this one before the next message."""

    def __init__(self, writer: Writer) -> None:
        self._writer, self._storage = writer, writer.storage
        self._records: list[bytes] = []  # the pending chunk's records
        self._size = 0  # their bytes
        # Its messages: channel id, log time and offset in the chunk.
        self._channels: list[int] = []
        self._times_ns: list[int] = []
        self._offsets: list[int] = []

    @staticmethod
    def usable(writer: Writer) -> bool:
        """Whether ``writer`` is rosbags' writer with the parts used here, uncompressed."""
        if not all(hasattr(writer, part) for part in _WRITER_PARTS) or \
                writer.compression_mode != CompressionMode.NONE:
            return False
        storage = writer.storage
        return all(hasattr(storage, part) for part in _STORAGE_PARTS) and \
            storage.compression == '' and isinstance(getattr(storage.chunk, 'bio', None), BytesIO)

    def write(self, messages: Sequence[Message]) -> None:
        """Write ``messages`` in order."""
        if not messages:
            return
        channels, times_ns, records = zip(*messages, strict=True)
        self._take_rosbags_records()
        first = 0
        while first < len(records):
            offsets = list(accumulate(map(len, records[first:]), initial=self._size))
            # rosbags closes the chunk after the message that ends past _CHUNK_BYTES
            past = bisect_right(offsets, _CHUNK_BYTES, lo=1)
            end = first + min(past, len(offsets) - 1)
            self._records += records[first:end]
            self._size = offsets[end - first]
            self._channels += channels[first:end]
            self._times_ns += times_ns[first:end]
            self._offsets += offsets[:end - first]
            if past < len(offsets):
                self.close_chunk()
            first = end

    def _take_rosbags_records(self) -> None:
        """Move the records rosbags wrote into its pending chunk since into this one."""
        chunk = self._storage.chunk
        if chunk.bio.tell():
            self._records.append(chunk.bio.getvalue())
            self._size += chunk.bio.tell()
            chunk.bio = BytesIO()

    def close_chunk(self) -> None:
        """Write the pending chunk, its message indexes, and keep its chunk index for the
        summary."""
        self._take_rosbags_records()
        count = len(self._channels)
        channels = np.fromiter(self._channels, np.int64, count)
        entries = np.empty((count, 2), '<i8')  # (log time, offset): all below 2**63
        entries[:, 0] = np.fromiter(self._times_ns, np.int64, count)
        entries[:, 1] = np.fromiter(self._offsets, np.int64, count)
        ids, firsts, counts = np.unique(channels, return_index=True, return_counts=True)
        ids, counts = ids.tolist(), counts.tolist()
        # The entries of each channel in message order, the channels in id order (as ids).
        by_channel = entries[np.argsort(channels, kind='stable')]
        ends = list(accumulate(counts))
        start_ns, end_ns = (int(entries[:, 0].min()), int(entries[:, 0].max())) if count else \
            (_NO_MESSAGE_NS, 0)
        self._count(ids, counts, start_ns, end_ns)
        data = b''.join(self._records)
        file = self._storage.bio
        chunk_start = file.tell()
        file.write(_CHUNK.pack(0x06, _CHUNK.size - 9 + len(data), start_ns, end_ns, len(data), 0,
                               0, len(data)))
        file.write(data)
        chunk_end = file.tell()
        index_offsets = []
        for k in np.argsort(firsts).tolist():  # rosbags' order: first message first
            channel = ids[k]
            index = by_channel[ends[k] - counts[k]:ends[k]].tobytes()
            index_offsets.append(_CHUNK_INDEX_OFFSET.pack(channel, file.tell()))
            file.write(_MESSAGE_INDEX.pack(0x07, _MESSAGE_INDEX.size - 9 + len(index), channel,
                                           len(index)))
            file.write(index)
        chunk_index = BytesIO()
        chunk_index.write(_CHUNK_INDEX.pack(start_ns, end_ns, chunk_start, chunk_end - chunk_start,
                                            len(index_offsets) * _CHUNK_INDEX_OFFSET.size))
        chunk_index.write(b''.join(index_offsets))
        chunk_index.write(_CHUNK_INDEX_END.pack(file.tell() - chunk_end, 0, len(data), len(data)))
        self._storage.chunks.append(chunk_index)
        self._records, self._size = [], 0
        self._channels, self._times_ns, self._offsets = [], [], []

    def _count(self, channels: list[int], counts: list[int], start_ns: int, end_ns: int) -> None:
        """Give the writer and the storage the message counts and times of a chunk."""
        writer, storage = self._writer, self._storage
        for channel, count in zip(channels, counts, strict=True):
            writer.counts[channel] += count
            storage.channel_stats[channel] += count
        storage.message_start_time = min(storage.message_start_time, start_ns)
        storage.message_end_time = max(storage.message_end_time, end_ns)
        writer.min_timestamp = min(writer.min_timestamp, start_ns)
        writer.max_timestamp = max(writer.max_timestamp, end_ns)

    def finish(self) -> None:
        """Close the pending chunk if it holds anything (rosbags' ``close`` would close it
        without the messages kept here)."""
        self._take_rosbags_records()
        if self._size:
            self.close_chunk()


def record_serializer(cls: type) -> Serializer:
    """``record(msg, channel, time_ns)``: the MCAP message record of ``msg`` (an instance of
    message class ``cls``) on channel ``channel`` with log and publish time ``time_ns`` [ns],
    packed in one call (:mod:`wheelsim.run.cdr`), its CDR bytes ending where the data ends,
    which every reader takes (``rmw_padding=False``)."""
    return serializer(cls, _MESSAGE_FRAME, rmw_padding=False)


#: What rosbags' writer puts in ``metadata.yaml`` for the distribution.
ROSBAGS_DISTRO_LINE = 'ros_distro: rosbags\n'


class McapBagWriter:
    """A new bag folder ``path`` (which must not exist), open until :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()
        self._chunks = _Chunks(self._writer) if _Chunks.usable(self._writer) else None
        self._connections: dict[int, Connection] = {}

    def add_topic(self, topic: str, type_name: str,
                  offered_qos_profiles: Sequence[Qos] = ()) -> Connection:
        """The connection to write ``topic``'s messages of type ``pkg/msg/Type`` with; the QoS
        profiles of its publishers go into ``metadata.yaml`` (``ros2 bag play`` offers a topic
        transient local when all of them are)."""
        definition = installed_definition(type_name)
        if definition is None:
            connection = self._writer.add_connection(
                topic, type_name, typestore=built_in_types(),
                offered_qos_profiles=offered_qos_profiles)
        else:
            text, rihs01 = definition
            connection = self._writer.add_connection(
                topic, type_name, msgdef=text, rihs01=rihs01,
                offered_qos_profiles=offered_qos_profiles)
        self._connections[connection.id] = connection
        return connection

    def write(self, messages: Sequence[Message]) -> None:
        """Write ``messages`` in order."""
        if self._chunks is not None:
            self._chunks.write(messages)
            return
        for channel, time_ns, record in messages:
            self._writer.write(self._connections[channel], time_ns, record[MESSAGE_DATA_START:])

    def close(self) -> None:
        """Write the indexes, the summary and ``metadata.yaml``: the bag is complete.
        ``metadata.yaml`` names the ROS 2 distribution of the run (:func:`ros_distro`), as
        ``ros2 bag record`` does (rosbags writes its own name there, and in the MCAP file's
        copy of the metadata, which stays so)."""
        if self._chunks is not None:
            self._chunks.finish()
        self._writer.close()
        distro = ros_distro()
        metadata = self._writer.metapath
        text = metadata.read_text()
        if distro and text.count(ROSBAGS_DISTRO_LINE) == 1:
            metadata.write_text(text.replace(ROSBAGS_DISTRO_LINE, f'ros_distro: {distro}\n'))
