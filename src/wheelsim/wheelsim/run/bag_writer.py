"""Write serialized ROS 2 messages into a new rosbag2 bag folder with MCAP storage.

:class:`McapBagWriter` writes ``metadata.yaml`` and one ``.mcap`` file, as
``ros2 bag record -s mcap`` writes them, with the rosbags library, in this process. The schema
text and type hash of each recorded type are rosbags' (``generate_msgdef``, ``hash_rihs01``) for
the definitions in the ``.msg`` files of the ROS installation (``share/<package>/msg/<Type>.msg``
under ``AMENT_PREFIX_PATH``), the type and what it contains parsed on first use: the types the bag
holds are those of the ROS 2 the run used, and building them takes about 20 ms where rosbags'
built-in type store takes 65 ms (importing every distro's definitions); that store (ROS 2
Kilted) is used only for a type without a ``.msg`` file. For the default scenario's types both
give the same text and hashes.

Messages are written by :func:`write_messages`, which produces the bytes of rosbags' own
``Writer.write`` (checked by the tests against it) at about a tenth of its cost: rosbags builds
each MCAP message record field by field (about 10 us a message), this packs its header at once.
It reaches into rosbags' MCAP storage writer (its pending chunk and counters, rosbags 0.9 to
0.11); with another storage or a rosbags whose writer has not these parts it writes through
``Writer.write``.
"""

from __future__ import annotations

import functools
import os
import struct
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rosbags.interfaces import Nodetype
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.enums import CompressionMode
from rosbags.rosbag2.writer import Connection
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

#: MCAP message record up to its data: opcode 0x05, record length, channel id, sequence 0, log
#: time, publish time (MCAP specification, "Message"; rosbags writes the log time as both).
_MESSAGE_HEADER = struct.Struct('<BQHIQQ')
_MESSAGE_FIELDS_BYTES = _MESSAGE_HEADER.size - 9  # the record length counts what follows it
#: rosbags closes a chunk once its content passes this many bytes (``McapWriter.write``).
_CHUNK_BYTES = 2**20
#: The parts of rosbags' MCAP storage writer that :func:`write_messages` updates.
_STORAGE_PARTS = ('chunk', 'close_chunk', 'channel_stats', 'message_start_time',
                  'message_end_time')


def write_messages(writer: Writer, messages: Iterable[tuple[Connection, int, bytes]]) -> None:
    """Write ``(connection, log_time_ns, cdr_bytes)`` messages, in order, into the open
    ``writer``: the same file and metadata as ``writer.write`` for each."""
    storage = writer.storage
    if writer.compression_mode != CompressionMode.NONE or not all(
            hasattr(storage, part) for part in _STORAGE_PARTS):
        for connection, time_ns, data in messages:
            writer.write(connection, time_ns, data)
        return
    pack, fields_bytes = _MESSAGE_HEADER.pack, _MESSAGE_FIELDS_BYTES
    counts, stats = writer.counts, storage.channel_stats

    def close_times(chunk: Any, first_ns: int, last_ns: int) -> None:
        """Give the chunk, the storage and the writer the times of the messages written."""
        chunk.message_start_time, chunk.message_end_time = first_ns, last_ns
        storage.message_start_time = min(storage.message_start_time, first_ns)
        storage.message_end_time = max(storage.message_end_time, last_ns)
        writer.min_timestamp = min(writer.min_timestamp, first_ns)
        writer.max_timestamp = max(writer.max_timestamp, last_ns)

    chunk = storage.chunk
    bio, index = chunk.bio, chunk.msgs
    first_ns, last_ns = chunk.message_start_time, chunk.message_end_time
    for connection, time_ns, data in messages:
        channel = connection.id
        if time_ns < first_ns:
            first_ns = time_ns
        if time_ns > last_ns:
            last_ns = time_ns
        index[channel].append((time_ns, bio.tell()))
        bio.write(pack(0x05, fields_bytes + len(data), channel, 0, time_ns, time_ns))
        bio.write(data)
        counts[channel] += 1
        stats[channel] += 1
        if bio.tell() > _CHUNK_BYTES:
            close_times(chunk, first_ns, last_ns)
            storage.close_chunk()
            chunk = storage.chunk
            bio, index = chunk.bio, chunk.msgs
            first_ns, last_ns = chunk.message_start_time, chunk.message_end_time
    close_times(chunk, first_ns, last_ns)


def installed_definition(type_name: str) -> Path | None:
    """The ``.msg`` file of ``pkg/msg/Type`` in the ROS installation (None if there is none)."""
    package, _, name = type_name.split('/')
    for prefix in os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep):
        path = Path(prefix, 'share', package, 'msg', f'{name}.msg')
        if prefix and path.is_file():
            return path
    return None


def _referenced_types(fields: list) -> Iterator[str]:
    """The message types a parsed definition's fields hold (directly, in arrays, sequences)."""
    for _, (node_type, argument) in fields:
        while node_type in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (node_type, argument), _ = argument
        if node_type == Nodetype.NAME:
            yield argument


def add_installed_types(typestore: Typestore, type_name: str) -> bool:
    """Register ``type_name`` and the types it contains from their installed ``.msg`` files
    (those not in ``typestore`` yet); False, registering nothing, if one has no such file."""
    parsed: dict = {}
    to_read = [type_name]
    while to_read:
        name = to_read.pop()
        if name in parsed or name in typestore.fielddefs:
            continue
        path = installed_definition(name)
        if path is None:
            return False
        parsed.update(get_types_from_msg(path.read_text(), name))
        to_read.extend(_referenced_types(parsed[name][1]))
    typestore.register(parsed)
    return True


@functools.cache
def _typestore(store: Stores) -> Typestore:
    """One type store of each kind for the process: the installed types (``Stores.EMPTY``,
    filled on first use of each type) and rosbags' own ROS 2 Kilted definitions. Every bag
    written by this process takes its types from the same installation, and building a type
    costs far more than looking it up (about 4 ms a type: rosbags generates its classes)."""
    return get_typestore(store)


class McapBagWriter:
    """A new bag folder ``path`` (which must not exist), open until :meth:`close`."""

    def __init__(self, path: Path) -> None:
        self._writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._writer.open()

    def add_topic(self, topic: str, type_name: str) -> Connection:
        """The connection to write ``topic``'s messages of type ``pkg/msg/Type`` with."""
        installed = _typestore(Stores.EMPTY)
        typestore = installed if add_installed_types(installed, type_name) else \
            _typestore(Stores.ROS2_KILTED)
        return self._writer.add_connection(topic, type_name, typestore=typestore)

    def write(self, messages: Iterable[tuple[Connection, int, bytes]]) -> None:
        """Write ``(connection, log_time_ns, cdr_bytes)`` messages, in order."""
        write_messages(self._writer, messages)

    def close(self) -> None:
        """Write the indexes, the summary and ``metadata.yaml``: the bag is complete."""
        self._writer.close()
