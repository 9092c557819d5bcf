"""Record ROS 2 messages into a rosbag2 bag with MCAP storage, without needing rosbag2 installed.

The bag (``metadata.yaml`` and one ``.mcap`` file, as ``ros2 bag record -s mcap`` writes them)
is written by :class:`wheelsim.run.bag_file.BagFile` (rosbags' layout, faster) and plays back
in ``ros2 bag play``, Foxglove and PlotJuggler. Each topic's schema (definition text and RIHS01
type hash) is rosbags' rendering of the type's ``.msg`` files in the ROS installation that runs
(:func:`type_store`: the bag holds the definitions of the ROS 2 the run used; the tests check
the hashes against those the middleware reports). A message is serialized to CDR when it is
recorded (by :mod:`wheelsim.ros.cdr`: rclpy's bytes, faster, ending where the data ends), so
its publisher may fill the same object again for its next publication. The bag is finished when
the recorder closes, also on an interrupted run (through the context manager); a process killed
outright leaves an MCAP file without its summary (the ``mcap`` tools can recover its messages).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any

from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from rclpy.duration import Duration
from rclpy.qos import QoSProfile
from rosbags.interfaces import Nodetype
from rosbags.typesys import Stores, get_types_from_msg, get_typestore
from rosbags.typesys.store import Typestore

from wheelsim.ros.cdr import Serializer, serializer
from wheelsim.ros.distro import ros_distro
from wheelsim.run.bag_file import BagFile

# ROS infrastructure topics: not part of a run (parameter events carry wall-clock stamps from
# node construction, which would make two identical runs differ).
IGNORED_TOPICS = frozenset({'/parameter_events', '/rosout'})
#: The MCAP header's writer name.
LIBRARY = 'wheelsim'
#: ``metadata.yaml``'s distribution where the one running is not known (as rosbag2 leaves it).
UNKNOWN_DISTRO = ''


class RecordingError(RuntimeError):
    """The bag could not be written (the cause is in the message)."""


#: rmw's infinite duration [ns] (``RMW_DURATION_INFINITE``): what the ROS graph reports for a
#: deadline, lifespan or liveliness lease left at its default.
INFINITE_DURATION_NS = 2**63 - 1
#: A policy left to the system default or best available, as the ROS graph reports a
#: publisher's (rmw_fastrtps, the default middleware of Jazzy and Kilted: Fast DDS's writer
#: defaults; best available is the highest level for a publisher).
_CHOSEN_BY_MIDDLEWARE = {'reliability': 'reliable', 'durability': 'transient_local',
                         'liveliness': 'automatic'}


def _qos_time(duration: Duration) -> dict[str, int]:
    nanoseconds = duration.nanoseconds or INFINITE_DURATION_NS  # 0: the default
    seconds, nanoseconds = divmod(nanoseconds, 1_000_000_000)
    return {'sec': seconds, 'nsec': nanoseconds}


def bag_qos(profile: QoSProfile | int) -> dict[str, Any]:
    """A publisher's QoS profile (or depth, as rclpy takes it) as ``ros2 bag record`` writes it
    in a bag's metadata (version 9): as the ROS graph reports the publisher
    (``get_publishers_info_by_topic``), which DDS discovery gives without history or depth
    (``unknown``, 0), a duration left at its default as infinite and a policy left to the
    system default or best available as the middleware chose it."""
    if not isinstance(profile, QoSProfile):
        profile = QoSProfile(depth=profile)

    def policy(name: str) -> str:
        value = getattr(profile, name).name.lower()
        return _CHOSEN_BY_MIDDLEWARE[name] if value in ('system_default', 'best_available') \
            else value

    return {
        'history': 'unknown', 'depth': 0,
        'reliability': policy('reliability'), 'durability': policy('durability'),
        'deadline': _qos_time(profile.deadline), 'lifespan': _qos_time(profile.lifespan),
        'liveliness': policy('liveliness'),
        'liveliness_lease_duration': _qos_time(profile.liveliness_lease_duration),
        'avoid_ros_namespace_conventions': profile.avoid_ros_namespace_conventions}


@functools.cache
def distro_types() -> Typestore:
    """rosbags' built-in message definitions of the ROS 2 distribution this process runs on
    (:func:`ros_distro`), its latest ones for a distribution it does not know; one store per
    process (building it imports every definition: about 0.1 s). It may differ from the
    built-in definitions the report reads bags without schemas with (ROS 2 Kilted's)."""
    store = getattr(Stores, f'ROS2_{ros_distro().upper()}', Stores.LATEST)
    return get_typestore(store)


@functools.cache
def installed_types() -> Typestore:
    """The types :func:`type_store` read from the installation in this process (every bag it
    writes takes its types from the same installation)."""
    return get_typestore(Stores.EMPTY)


def msg_file(type_name: str) -> Path | None:
    """The ``.msg`` file of ``pkg/msg/Type`` in the ROS installation (ament index), None if
    there is none."""
    package, _, name = type_name.split('/')
    try:
        path = Path(get_package_share_directory(package), 'msg', f'{name}.msg')
    except PackageNotFoundError:
        return None
    return path if path.is_file() else None


def _held_types(fields: list) -> list[str]:
    """The message types a rosbags parse tree's fields hold (directly, in arrays, sequences)."""
    held = []
    for _, (node_type, argument) in fields:
        while node_type in (Nodetype.ARRAY, Nodetype.SEQUENCE):
            (node_type, argument), _ = argument
        if node_type == Nodetype.NAME:
            held.append(argument)
    return held


def type_store(type_name: str) -> Typestore:
    """A type store holding ``pkg/msg/Type`` and the types it holds: :func:`installed_types`,
    read by rosbags' parser from the installation's ``.msg`` files on first use (about 40-65 ms
    for the 26 types of a run, about half of building :func:`distro_types`), or
    :func:`distro_types` if one of them has no ``.msg`` file."""
    store = installed_types()
    parsed: dict[str, tuple] = {}
    to_read = [type_name]
    while to_read:
        name = to_read.pop()
        if name in parsed or name in store.fielddefs:
            continue
        path = msg_file(name)
        if path is None:
            return distro_types()
        parsed.update(get_types_from_msg(path.read_text(encoding='utf-8'), name))
        to_read.extend(_held_types(parsed[name][1]))
    store.register(parsed)
    return store


def ros_type_name(msg: Any) -> str:
    """``pkg/msg/Type`` of an rclpy message instance or class."""
    cls = msg if isinstance(msg, type) else type(msg)
    return f'{cls.__module__.split(".")[0]}/msg/{cls.__name__}'


class BagRecorder:
    """Record messages into a new bag folder ``path`` (which must not exist yet).

    Use as a context manager: entering creates the bag, leaving finishes it. A failure to write
    raises :class:`RecordingError` naming the bag.
    """

    def __init__(self, path: Path, topics: set[str] | None = None,
                 offered_qos: Mapping[str, Sequence[QoSProfile | int]] | None = None,
                 topic_types: Mapping[str, type] | None = None) -> None:
        """``topics``: fully qualified topic names to record; None records every topic.
        ``offered_qos``: per topic, the QoS profiles of its publishers (read when its first
        message is recorded: :attr:`wheelsim.run.lockstep.Lockstep.offered_qos`), for
        ``metadata.yaml``. ``topic_types``: the message type of every topic published on
        (:attr:`wheelsim.run.lockstep.Lockstep.topic_types`, read at the end): a recorded topic
        no message came on is in the bag too, without messages, as ``ros2 bag record`` records
        a topic it discovered."""
        self.path = Path(path)
        self._offered_qos = {} if offered_qos is None else offered_qos
        self._topic_types = {} if topic_types is None else topic_types
        if self.path.exists():
            raise FileExistsError(f'bag folder {self.path} exists already: give a new path')
        self._topics = topics
        # topic -> (channel id, serializer); None for a topic not recorded
        self._routes: dict[str, tuple[int, Serializer] | None] = {}
        self._file: BagFile | None = None
        self._broken = False  # a write failed: the file cannot be completed

    def __enter__(self) -> BagRecorder:
        self._file = self._writing(BagFile, self.path, LIBRARY, ros_distro() or UNKNOWN_DISTRO)
        return self

    def __exit__(self, *exc: object) -> None:
        self._writing(self._close)

    def records(self, *topics: str) -> bool:
        """Whether any of ``topics`` (fully qualified) is recorded."""
        return any(topic not in IGNORED_TOPICS and (self._topics is None or topic in self._topics)
                   for topic in topics)

    def record(self, topic: str, msg: Any, time_ns: int) -> None:
        """Record ``msg`` on ``topic`` with log time ``time_ns`` (simulated time) [ns]."""
        try:
            route = self._routes[topic]
        except KeyError:
            route = self._routes[topic] = self._route(topic, type(msg))
        if route is None:
            return
        channel_id, serialize = route
        data = serialize(msg)  # a malformed message is the publisher's error, raised as is
        try:
            self._file.write(channel_id, time_ns, data)
        except ValueError as err:  # the time: refused, the bag unharmed
            raise self._error(err) from err
        except Exception as err:  # noqa: BLE001 - the disk: the bag can only be aborted
            self._broken = True
            raise self._error(err) from err

    def _route(self, topic: str, msg_type: type) -> tuple[int, Serializer] | None:
        """How messages on ``topic`` are recorded: (channel id, serializer), or None if not.
        A topic carries one type (DDS allows no other in one process)."""
        if not self.records(topic):
            return None
        profiles = [bag_qos(profile) for profile in self._offered_qos.get(topic, ())]
        type_name = ros_type_name(msg_type)
        types = self._writing(type_store, type_name)
        definition, _ = self._writing(types.generate_msgdef, type_name, ros_version=2)
        channel_id = self._writing(self._file.add_channel, topic, type_name, definition,
                                   self._writing(types.hash_rihs01, type_name), profiles)
        return channel_id, serializer(msg_type, rmw_padding=False)

    def _close(self) -> None:
        """Write the summary and ``metadata.yaml``: the bag is complete. ``metadata.yaml`` names
        the ROS 2 distribution of the run (:func:`ros_distro`), as ``ros2 bag record`` does. A
        bag that cannot be completed is aborted (its file closed as it is: its complete chunks
        can be read) and the failure raised, once: after a failed write, whose error was
        raised, it is aborted quietly."""
        if self._broken:
            with suppress(Exception):  # closing flushes: the disk may refuse that too
                self._file.abort()
            return
        try:
            for topic, msg_type in sorted(self._topic_types.items(), key=lambda item: item[0]):
                if topic not in self._routes:  # recorded, no message came
                    self._routes[topic] = self._route(topic, msg_type)
            self._file.close()
        except Exception:
            with suppress(Exception):
                self._file.abort()
            raise

    def _writing(self, action: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``action(*args, **kwargs)``, a failure of which is a :class:`RecordingError` naming
        the bag."""
        try:
            return action(*args, **kwargs)
        except Exception as err:  # noqa: BLE001 - the disk, the folder or the type: all reported
            raise self._error(err) from err

    def _error(self, err: Exception) -> RecordingError:
        return RecordingError(f'writing the bag {self.path} failed: {type(err).__name__}: {err}')
