"""The bag-writing child process of :class:`wheelsim.run.recording.BagRecorder`.

``python -m wheelsim.run.bag_writer BAG_FOLDER`` writes the serialized messages it reads from its
standard input into a new rosbag2 bag folder with MCAP storage (``metadata.yaml`` and one
``.mcap`` file, as ``ros2 bag record -s mcap`` writes it) with the rosbags library; the schema text
of each type comes from the rosbags type store (ROS 2 Kilted definitions, identical to Jazzy for
the message types used here). It imports no ROS, so it starts quickly.

Protocol, all pickled: on standard input, lists of ``(topic, type_name, log_time_ns, cdr_bytes)``
and then ``None`` to finish; on standard output, once the bag is closed, ``None`` or the text of
the error that stopped the writing. The end of the input (the parent is gone) also finishes the
bag, so it stays readable whatever happens to the parent.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import BinaryIO

from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.writer import Connection
from rosbags.typesys import Stores, get_typestore


def write_bag(path: Path, batches: BinaryIO) -> None:
    """Write the batches pickled on ``batches`` into the new bag folder ``path``, until
    ``None`` or the end of the stream."""
    typestore = get_typestore(Stores.ROS2_KILTED)
    writer = Writer(path, version=9, storage_plugin=StoragePlugin.MCAP)
    connections: dict[str, Connection] = {}
    writer.open()
    try:
        while (batch := pickle.load(batches)) is not None:
            for topic, type_name, log_time_ns, data in batch:
                connection = connections.get(topic)
                if connection is None:
                    connection = writer.add_connection(topic, type_name, typestore=typestore)
                    connections[topic] = connection
                writer.write(connection, log_time_ns, data)
    except EOFError:  # the parent is gone: finish the bag
        pass
    finally:
        writer.close()


def main() -> None:
    error = None
    try:
        write_bag(Path(sys.argv[1]), sys.stdin.buffer)
    except Exception as err:  # noqa: BLE001 - reported to the parent, which raises it
        error = f'{type(err).__name__}: {err}'
    try:
        pickle.dump(error, sys.stdout.buffer)
        sys.stdout.flush()
    except OSError:  # the parent is gone
        pass


if __name__ == '__main__':
    main()
