"""Write ROS 2 messages to a rosbag2 bag with MCAP storage, without needing rosbag2 installed.

The bag is a folder with ``metadata.yaml`` and one ``.mcap`` file, as ``ros2 bag record -s mcap``
writes it, so it plays back in ``ros2 bag play``, Foxglove and PlotJuggler. Messages are
serialized to CDR by rclpy; the schema text comes from the rosbags type store (ROS 2 Kilted
definitions, identical to Jazzy for the message types used here). Closing the recorder (also on an
interrupted run, through the context manager) finishes the file so it stays readable.

A message is serialized when it is recorded: its publisher may fill the same object again for
its next publication.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rclpy.serialization import serialize_message
from rosbags.rosbag2 import StoragePlugin, Writer
from rosbags.rosbag2.writer import Connection
from rosbags.typesys import Stores, get_typestore

# ROS infrastructure topics: not part of a run (parameter events carry wall-clock stamps from
# node construction, which would make two identical runs differ).
IGNORED_TOPICS = frozenset({'/parameter_events', '/rosout'})


def ros_type_name(msg: Any) -> str:
    """``pkg/msg/Type`` of an rclpy message instance."""
    package = type(msg).__module__.split('.')[0]
    return f'{package}/msg/{type(msg).__name__}'


class BagRecorder:
    """Record messages into a new bag folder ``path`` (which must not exist yet)."""

    def __init__(self, path: Path, topics: set[str] | None = None) -> None:
        """``topics``: fully qualified topic names to record; None records every topic."""
        self.path = Path(path)
        self._topics = topics
        self._typestore = get_typestore(Stores.ROS2_KILTED)
        self._writer = Writer(self.path, version=9, storage_plugin=StoragePlugin.MCAP)
        self._connections: dict[str, Connection] = {}
        self.message_counts: dict[str, int] = {}

    def __enter__(self) -> BagRecorder:
        self._writer.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self._writer.close()

    def record(self, topic: str, msg: Any, time_ns: int) -> None:
        """Record ``msg`` on ``topic`` with log time ``time_ns`` (simulated time) [ns]."""
        if topic in IGNORED_TOPICS or (self._topics is not None and topic not in self._topics):
            return
        connection = self._connections.get(topic)
        if connection is None:
            connection = self._writer.add_connection(
                topic, ros_type_name(msg), typestore=self._typestore)
            self._connections[topic] = connection
        self._writer.write(connection, time_ns, serialize_message(msg))
        self.message_counts[topic] = self.message_counts.get(topic, 0) + 1
