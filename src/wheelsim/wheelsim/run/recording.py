"""Record ROS 2 messages into a rosbag2 bag with MCAP storage, without needing rosbag2 installed.

The bag plays back in ``ros2 bag play``, Foxglove and PlotJuggler (format and writer:
:mod:`wheelsim.run.bag_writer`). A message is serialized to CDR when it is recorded, into the
MCAP message record the bag holds (by :mod:`wheelsim.run.cdr`: rclpy's bytes, faster), so its
publisher may fill the same object again for its next publication, and written in batches in
this process. The bag is finished when the recorder closes, also on an interrupted run
(through the context manager); a process killed outright leaves an MCAP file without its
summary (the ``mcap`` tools can recover its messages).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from rclpy.duration import Duration
from rclpy.qos import QoSProfile
from rosbags.interfaces import (
    Qos,
    QosDurability,
    QosHistory,
    QosLiveliness,
    QosReliability,
    QosTime,
)

from wheelsim.run.bag_writer import McapBagWriter, Message, record_serializer
from wheelsim.run.cdr import Serializer

# ROS infrastructure topics: not part of a run (parameter events carry wall-clock stamps from
# node construction, which would make two identical runs differ).
IGNORED_TOPICS = frozenset({'/parameter_events', '/rosout'})
#: Messages written at once (the writer's cost per call is spread over them).
BATCH_MESSAGES = 500


class RecordingError(RuntimeError):
    """The bag could not be written (the cause is in the message)."""


def _qos_time(duration: Duration) -> QosTime:
    seconds, nanoseconds = divmod(duration.nanoseconds, 1_000_000_000)
    return QosTime(seconds, nanoseconds)


def bag_qos(profile: QoSProfile | int) -> Qos:
    """A publisher's QoS profile (or depth, as rclpy takes it) as a bag's metadata holds it."""
    if not isinstance(profile, QoSProfile):
        profile = QoSProfile(depth=profile)
    return Qos(
        history=QosHistory[profile.history.name], depth=profile.depth,
        reliability=QosReliability[profile.reliability.name],
        durability=QosDurability[profile.durability.name],
        deadline=_qos_time(profile.deadline), lifespan=_qos_time(profile.lifespan),
        liveliness=QosLiveliness[profile.liveliness.name],
        liveliness_lease_duration=_qos_time(profile.liveliness_lease_duration),
        avoid_ros_namespace_conventions=profile.avoid_ros_namespace_conventions)


def ros_type_name(msg: Any) -> str:
    """``pkg/msg/Type`` of an rclpy message instance."""
    package = type(msg).__module__.split('.')[0]
    return f'{package}/msg/{type(msg).__name__}'


class BagRecorder:
    """Record messages into a new bag folder ``path`` (which must not exist yet).

    Use as a context manager: entering creates the bag, leaving finishes it. A failure to write
    raises :class:`RecordingError` naming the bag.
    """

    def __init__(self, path: Path, topics: set[str] | None = None,
                 offered_qos: Mapping[str, Sequence[QoSProfile | int]] | None = None) -> None:
        """``topics``: fully qualified topic names to record; None records every topic.
        ``offered_qos``: per topic, the QoS profiles of its publishers (read when its first
        message is recorded: :attr:`wheelsim.run.lockstep.Lockstep.offered_qos`), for
        ``metadata.yaml``."""
        self.path = Path(path)
        self._offered_qos = {} if offered_qos is None else offered_qos
        if self.path.exists():
            raise FileExistsError(f'bag folder {self.path} exists already: give a new path')
        self._topics = topics
        # topic -> (channel id, record serializer); (0, None) for a topic not recorded
        self._routes: dict[str, tuple[int, Serializer | None]] = {}
        self._batch: list[Message] = []
        self._writer: McapBagWriter | None = None

    def __enter__(self) -> BagRecorder:
        self._writer = self._writing(McapBagWriter, self.path)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self._flush()
        finally:
            self._writing(self._writer.close)

    def record(self, topic: str, msg: Any, time_ns: int) -> None:
        """Record ``msg`` on ``topic`` with log time ``time_ns`` (simulated time) [ns]."""
        try:
            channel, serialize_msg = self._routes[topic]
        except KeyError:
            channel, serialize_msg = self._routes[topic] = self._route(topic, msg)
        if serialize_msg is None:
            return
        batch = self._batch
        batch.append((channel, time_ns, serialize_msg(msg, channel, time_ns)))
        if len(batch) >= BATCH_MESSAGES:
            self._flush()

    def _flush(self) -> None:
        """Write the messages recorded since the last batch."""
        batch, self._batch = self._batch, []
        self._writing(self._writer.write, batch)

    def _route(self, topic: str, msg: Any) -> tuple[int, Serializer | None]:
        """How messages on ``topic`` are recorded: (channel id, serializer), or (0, None) if not.
        A topic carries one type (DDS allows no other in one process)."""
        if topic in IGNORED_TOPICS or (self._topics is not None and topic not in self._topics):
            return 0, None
        profiles = [bag_qos(profile) for profile in self._offered_qos.get(topic, ())]
        connection = self._writing(self._writer.add_topic, topic, ros_type_name(msg), profiles)
        return connection.id, record_serializer(type(msg))

    def _writing(self, action: Callable[..., Any], *args: Any) -> Any:
        """``action(*args)``, a failure of which is a :class:`RecordingError` naming the bag."""
        try:
            return action(*args)
        except Exception as err:  # noqa: BLE001 - the disk, the folder or the type: all reported
            raise RecordingError(f'writing the bag {self.path} failed: '
                                 f'{type(err).__name__}: {err}') from err
