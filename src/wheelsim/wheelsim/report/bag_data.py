"""Read a wheelsim run's rosbag2 (MCAP) folder into numpy arrays, one series per topic.

Messages are read with the ``mcap`` reader. The numbers of the pose, twist and point series are
read column-wise from the CDR bytes of all messages of a topic at once
(:func:`wheelsim.report.cdr_columns.read_columns`); other messages are decoded one by one by the
``rosbags`` type store (generated code, several times faster than ``mcap_ros2``'s decoder), or
by ``mcap_ros2``'s decoder from the schema in the bag for a type the store does not know or
cannot read exactly (``rosbags`` refuses more than 3 bytes of trailing padding, which rclpy
writes after an empty sequence of doubles, as in ``sensor_msgs/JointState``); none needs a ROS
install or message package. Of ``map`` and ``footprint`` only the last message is decoded; the
joint states and tracking errors (only the plots use them) when first asked for. Times are in
seconds of simulated time: the header stamp of stamped messages, the log time of the others (a
Twist on ``cmd_vel``). Every series is in stamp order, the plans in log time order. A topic
missing from the bag gives empty arrays, never an error; a bag whose writer was killed (no
summary, no ``metadata.yaml``) gives the messages of its complete chunks.
"""

from __future__ import annotations

import dataclasses
import io
import struct
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from operator import attrgetter, itemgetter
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
from mcap.exceptions import McapError
from mcap.reader import NonSeekingReader, make_reader
from mcap.records import Channel, Message, Schema
from mcap_ros2.decoder import DecoderFactory
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore
from rosbags.typesys.store import Typestore

from wheelsim.core.units import NS_PER_S
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.report.cdr_columns import NotColumnar, read_columns
from wheelsim.report.geometry import FloatArray, yaw_from_quaternion

TOPICS = ('ground_truth', 'odom', 'pose', 'twist_actual', 'joint_states', 'cmd_vel', 'plan',
          'tracking_error', 'map', 'footprint', 'collision')
"""The topics read (relative to the run's namespace); every other topic is only counted."""


def _no_samples() -> Any:
    """A dataclass field defaulting to an empty array (a topic missing from the bag)."""
    return field(default_factory=lambda: np.empty(0))


def _array(values: Iterable[float]) -> FloatArray:
    return np.asarray(list(values), dtype=float)


@dataclass(frozen=True)
class PoseSeries:
    """Planar poses over time: ``t_s`` [s], position ``x_m``, ``y_m`` [m], ``yaw_rad`` in
    [-pi, pi]. The frame is the topic's (``map`` for ground truth and the estimate, ``odom``
    for odometry, ``map`` for a plan, whose ``t_s`` are the planned times)."""

    t_s: FloatArray = _no_samples()
    x_m: FloatArray = _no_samples()
    y_m: FloatArray = _no_samples()
    yaw_rad: FloatArray = _no_samples()

    def __len__(self) -> int:
        return len(self.t_s)


@dataclass(frozen=True)
class TwistSeries:
    """Planar body twists over time (``base_link``): ``vx_mps``, ``vy_mps``, ``wz_radps``."""

    t_s: FloatArray = _no_samples()
    vx_mps: FloatArray = _no_samples()
    vy_mps: FloatArray = _no_samples()
    wz_radps: FloatArray = _no_samples()

    def __len__(self) -> int:
        return len(self.t_s)


@dataclass(frozen=True)
class JointSeries:
    """Joint states over time: ``position`` [rad] and ``velocity`` [rad/s], shape (samples,
    joints), columns in ``names`` order; NaN where a message did not carry a value."""

    t_s: FloatArray = _no_samples()
    names: tuple[str, ...] = ()
    position: FloatArray = field(default_factory=lambda: np.empty((0, 0)))
    velocity: FloatArray = field(default_factory=lambda: np.empty((0, 0)))

    @property
    def steering_names(self) -> tuple[str, ...]:
        """Steering joints: the names containing 'steer'."""
        return tuple(n for n in self.names if 'steer' in n.lower())

    @property
    def wheel_names(self) -> tuple[str, ...]:
        """Every other joint (the wheels)."""
        return tuple(n for n in self.names if 'steer' not in n.lower())

    def column(self, name: str) -> int:
        return self.names.index(name)


@dataclass(frozen=True)
class Plan:
    """One published plan: in effect from ``received_s`` (its header stamp, or its log time if
    unstamped) until the next plan; ``poses`` in ``map`` with their planned times."""

    received_s: float
    poses: PoseSeries


@dataclass(frozen=True)
class ColumnSeries:
    """A topic of unknown type flattened to named numeric columns (dotted field paths, ``[i]``
    for array elements), e.g. the controller's tracking errors."""

    t_s: FloatArray = _no_samples()
    columns: Mapping[str, FloatArray] = field(default_factory=dict)


@dataclass(frozen=True)
class PointSeries:
    """Points over time: ``t_s`` [s], ``x_m``, ``y_m`` [m] in the topic's frame."""

    t_s: FloatArray = _no_samples()
    x_m: FloatArray = _no_samples()
    y_m: FloatArray = _no_samples()

    def __len__(self) -> int:
        return len(self.t_s)


@dataclass(frozen=True)
class RunData:
    """Everything the report uses from one run. Times in seconds of simulated time."""

    ground_truth: PoseSeries
    ground_truth_twist: TwistSeries
    odom: PoseSeries
    estimate: PoseSeries
    twist_actual: TwistSeries
    cmd_vel: TwistSeries
    plans: tuple[Plan, ...]
    message_counts: Mapping[str, int]
    """Messages per topic, every topic in the bag (fully qualified names)."""
    start_time_s: float
    end_time_s: float
    """Log time of the first and last message (0 for an empty bag)."""
    world: OccupancyMap | None = None
    """The last map recorded on ``map`` (obstacles: cells of value 100)."""
    footprint: Footprint | None = None
    """The footprint recorded on ``footprint`` (base frame)."""
    collisions: PointSeries = field(default_factory=PointSeries)
    """Every ``collision``: its stamp and the obstacle cell touched (map frame)."""
    decode_later: Mapping[str, Callable[[], Any]] = field(default_factory=dict, repr=False,
                                                          compare=False)
    """How to get :attr:`joints` and :attr:`tracking_error` (empty series without)."""

    @cached_property
    def joints(self) -> JointSeries:
        """The joint states, decoded on first use (the plots use them, the metrics do not)."""
        decode = self.decode_later.get('joints')
        return JointSeries() if decode is None else decode()

    @cached_property
    def tracking_error(self) -> ColumnSeries:
        """The controller's tracking errors, decoded on first use (as :attr:`joints`)."""
        decode = self.decode_later.get('tracking_error')
        return ColumnSeries() if decode is None else decode()

    @property
    def plan(self) -> Plan | None:
        """The reference: the latest plan with at least one pose (None without any)."""
        return next((p for p in reversed(self.plans) if len(p.poses)), None)


def _stamp_s(msg: Any, log_time_ns: int) -> float:
    header = getattr(msg, 'header', None)
    if header is None:
        return log_time_ns / NS_PER_S
    return header.stamp.sec + header.stamp.nanosec / NS_PER_S


def _sorted(t_s: FloatArray, *columns: FloatArray) -> list[FloatArray]:
    order = np.argsort(t_s, kind='stable')
    return [t_s[order], *(c[order] for c in columns)]


def _pose_arrays(poses: list[Any]) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``(x_m, y_m, yaw_rad)`` of geometry_msgs/Pose objects."""
    q = [_array(getattr(p.orientation, axis) for p in poses) for axis in 'xyzw']
    return (_array(p.position.x for p in poses), _array(p.position.y for p in poses),
            yaw_from_quaternion(*q))


def _joints(stamps: list[float], messages: list[Any]) -> JointSeries:
    names: dict[str, int] = {}
    for msg in messages:
        for name in msg.name:
            names.setdefault(name, len(names))
    position = np.full((len(messages), len(names)), np.nan)
    velocity = np.full((len(messages), len(names)), np.nan)
    for row, msg in enumerate(messages):
        columns = [names[n] for n in msg.name]
        if len(msg.position) == len(columns):
            position[row, columns] = msg.position
        if len(msg.velocity) == len(columns):
            velocity[row, columns] = msg.velocity
    order = np.argsort(_array(stamps), kind='stable')
    return JointSeries(_array(stamps)[order], tuple(names), position[order], velocity[order])


def _plan(msg: Any, log_time_ns: int) -> Plan:
    """A nav_msgs/Path, kept in path order (the planned times only label the poses)."""
    received_s = _stamp_s(msg, log_time_ns) or log_time_ns / NS_PER_S
    planned_s = _array(_stamp_s(p, 0) for p in msg.poses)
    return Plan(received_s, PoseSeries(planned_s, *_pose_arrays([p.pose for p in msg.poses])))


def _field_names(msg: Any) -> Iterable[str]:
    """The fields of a message decoded by either decoder (dataclass or slots)."""
    if dataclasses.is_dataclass(msg):
        return [f.name for f in dataclasses.fields(msg)]
    return getattr(msg, '__slots__', ())


def _flatten(msg: Any, prefix: str, out: dict[str, float]) -> None:
    """Numeric leaves of a decoded message as ``{dotted.path: value}`` (header skipped)."""
    for name in _field_names(msg):
        if name in ('header', 'layout'):
            continue
        value = getattr(msg, name)
        path = f'{prefix}{name}'
        if isinstance(value, (bool, str, bytes)):
            continue
        if isinstance(value, (int, float)):
            out[path] = float(value)
        elif isinstance(value, (list, tuple, np.ndarray)):
            for i, item in enumerate(value):
                if isinstance(item, (int, float)) and not isinstance(item, bool):
                    out[f'{path}[{i}]'] = float(item)
                else:
                    _flatten(item, f'{path}[{i}].', out)
        else:
            _flatten(value, f'{path}.', out)


def _world(msg: Any | None) -> OccupancyMap | None:
    """The nav_msgs/OccupancyGrid ``msg`` as a map, or None."""
    if msg is None:
        return None
    info = msg.info
    q = info.origin.orientation
    yaw = float(yaw_from_quaternion(q.x, q.y, q.z, q.w))
    return OccupancyMap.from_values(np.asarray(msg.data, dtype=np.int8), int(info.width),
                                    int(info.height), float(info.resolution),
                                    (info.origin.position.x, info.origin.position.y, yaw))


def _footprint(msg: Any | None) -> Footprint | None:
    """The geometry_msgs/PolygonStamped ``msg`` as a footprint, or None."""
    if msg is None:
        return None
    try:
        return Footprint.from_flat([v for p in msg.polygon.points for v in (p.x, p.y)])
    except ValueError:  # not a simple polygon of three corners or more: no footprint
        return None


def _columns(stamps: list[float], messages: list[Any]) -> ColumnSeries:
    rows = []
    for msg in messages:
        row: dict[str, float] = {}
        _flatten(msg, '', row)
        rows.append(row)
    names = list(dict.fromkeys(name for row in rows for name in row))
    order = np.argsort(_array(stamps), kind='stable')
    columns = {n: _array(row.get(n, np.nan) for row in rows)[order] for n in names}
    return ColumnSeries(_array(stamps)[order], columns)


@cache
def built_in_types() -> Typestore:
    """rosbags' own ROS 2 Kilted definitions, one store per process: a store keeps the
    (de)serializers it generates for each type, so the runs of one process (a sweep worker)
    generate them once (the first store also imports every definition, about 65 ms)."""
    return get_typestore(Stores.ROS2_KILTED)


class _Decoders:
    """CDR bytes -> message object: the ``rosbags`` type store for a schema that is its own
    definition of the type (as :class:`wheelsim.run.recording.BagRecorder` writes them), else, and
    for a message it cannot read exactly, ``mcap_ros2`` from the schema (see the module doc)."""

    def __init__(self) -> None:
        self.typestore = built_in_types()
        self._known_ids: dict[int, bool] = {}  # schema id -> the type store's definition
        self._fast: dict[int, bool] = {}  # schema id -> the type store can decode it
        self._factory = DecoderFactory()
        self._fallback: dict[int, Callable[[bytes], Any]] = {}

    def known(self, schema: Schema) -> bool:
        """Whether ``schema`` is the type store's definition of its type."""
        known = self._known_ids.get(schema.id)
        if known is None:
            known = schema.name in self.typestore.types and schema.data == (
                self.typestore.generate_msgdef(schema.name, ros_version=2)[0].encode())
            self._known_ids[schema.id] = known
        return known

    def decode(self, schema: Schema, encoding: str, data: bytes) -> Any:
        fast = self._fast.get(schema.id)
        if fast is None:
            fast = self._fast[schema.id] = self.known(schema)
        if fast:
            try:
                return self.typestore.deserialize_cdr(data, schema.name)
            except SerdeError:
                self._fast[schema.id] = False
        if schema.id not in self._fallback:
            self._fallback[schema.id] = self._factory.decoder_for(encoding, schema)
        return self._fallback[schema.id](data)


_log_time = itemgetter(1)

ChannelInfo = tuple[str, Schema | None, str]
"""A channel of recorded messages: ``(topic (fully qualified), schema (None: schemaless),
message encoding)``."""
Record = tuple[int, int, bytes]
"""A recorded message: ``(channel id, log time [ns], bytes)``, the serialized message in the
bytes from a given start on (see :class:`RunReader`)."""


@dataclass
class _Topic:
    """The messages of one topic, in file order, as recorded: decoded only when asked for."""

    records: list[Record]
    channels: Mapping[int, ChannelInfo]
    """The channels of the records (each with a schema)."""
    data_start: int
    """Where the serialized message starts in a record's bytes."""

    @cached_property
    def log_times_ns(self) -> list[int]:
        return [time_ns for _, time_ns, _ in self.records]

    @cached_property
    def payloads(self) -> list[bytes]:
        """The records' bytes (the serialized messages from :attr:`data_start` on)."""
        return [data for _, _, data in self.records]

    def _decode(self, decoders: _Decoders, record: Record) -> Any:
        _, schema, encoding = self.channels[record[0]]
        data = record[2]
        return decoders.decode(schema, encoding, data[self.data_start:] if self.data_start
                               else data)

    def messages(self, decoders: _Decoders) -> list[Any]:
        return [self._decode(decoders, record) for record in self.records]

    def stamps_s(self, messages: list[Any]) -> list[float]:
        return [_stamp_s(m, t) for m, t in zip(messages, self.log_times_ns, strict=True)]

    def last(self, decoders: _Decoders) -> Any | None:
        return self._decode(decoders, self.records[-1]) if self.records else None

    def _one_known_schema(self, decoders: _Decoders) -> Schema | None:
        schemas = {schema.id: schema for _, schema, _ in self.channels.values()}
        if len(schemas) != 1 or not self.records:
            return None
        schema, = schemas.values()
        return schema if decoders.known(schema) else None

    def has_field(self, decoders: _Decoders, name: str) -> bool:
        """Whether the messages have a field ``name`` (False without messages)."""
        schema = self._one_known_schema(decoders)
        if schema is not None:
            return any(f == name for f, _ in decoders.typestore.fielddefs[schema.name][1])
        return hasattr(self.last(decoders), name)

    def table(self, decoders: _Decoders, paths: list[str]) -> list[FloatArray]:
        """``[t_s, *values]``: the stamps (see :func:`_stamp_s`) and the numeric fields at the
        dotted ``paths`` as float arrays, in file order; read column-wise
        (:func:`wheelsim.report.cdr_columns.read_columns`) where the type allows it."""
        schema = self._one_known_schema(decoders)
        if schema is not None:
            stamped = self.has_field(decoders, 'header')
            stamp = ['header.stamp.sec', 'header.stamp.nanosec'] if stamped else []
            try:
                columns = read_columns(decoders.typestore, schema.name, self.payloads,
                                       paths + stamp, self.data_start)
            except NotColumnar:
                pass
            else:
                if stamped:
                    t_s = columns[stamp[0]].astype(float) + columns[stamp[1]] / NS_PER_S
                else:
                    t_s = np.asarray(self.log_times_ns, dtype=np.int64) / NS_PER_S
                return [t_s, *(columns[p].astype(float) for p in paths)]
        messages = self.messages(decoders)
        return [_array(self.stamps_s(messages)),
                *(_array(attrgetter(p)(m) for m in messages) for p in paths)]


def _bag_file(bag: Path) -> Path:
    if bag.is_file():
        return bag
    files = sorted(bag.glob('*.mcap'))
    if not files:
        raise FileNotFoundError(f'{bag}: no .mcap file (expected a rosbag2 folder with MCAP '
                                'storage or an .mcap file)')
    return files[0]


POSE_FIELDS = ['position.x', 'position.y', 'orientation.x', 'orientation.y', 'orientation.z',
               'orientation.w']
TWIST_FIELDS = ['linear.x', 'linear.y', 'angular.z']


def _pose_series(topic: _Topic, decoders: _Decoders, prefix: str) -> PoseSeries:
    t_s, x_m, y_m, *q = topic.table(decoders, [prefix + f for f in POSE_FIELDS])
    return PoseSeries(*_sorted(t_s, x_m, y_m, yaw_from_quaternion(*q)))


def _twist_series(topic: _Topic, decoders: _Decoders, prefix: str) -> TwistSeries:
    return TwistSeries(*_sorted(*topic.table(decoders, [prefix + f for f in TWIST_FIELDS])))


class RunReader:
    """Gathers the messages of one run, given batch by batch in recording order (:meth:`add`),
    and builds its :class:`RunData` (:meth:`run`). Fed by :func:`load_run` from a bag file, or by
    :class:`wheelsim.run.recording.BagRecorder` as it records (the same messages, so the same
    result without reading the bag back).

    ``namespace``: the robot's namespace; the topics in :data:`TOPICS` are read under it.
    """

    def __init__(self, namespace: str = '/') -> None:
        prefix = namespace.rstrip('/') + '/'
        self._data_start: int | None = None  # of every record, set by the first add
        self._wanted = {prefix + name: name for name in TOPICS}
        self._channels: dict[int, ChannelInfo] = {}
        self._records: dict[str, list[Record]] = {}  # topic -> its messages
        self._appenders: dict[int, Callable[[Record], None]] = {}  # channel id -> their append

    def add(self, channels: Mapping[int, ChannelInfo], messages: Iterable[Record],
            data_start: int = 0) -> None:
        """``messages`` in recording order, ``channels`` holding at least every channel they
        use (a channel without a schema is only counted); in the bytes of each, the serialized
        message starts at ``data_start`` (0 in a bag file's messages; the recorder gives MCAP
        message records). Every batch of a run must give the same start (ValueError)."""
        if self._data_start is None:
            self._data_start = data_start
        elif data_start != self._data_start:
            raise ValueError(f'records whose data start at byte {data_start} after records whose '
                             f'data start at byte {self._data_start}: one source per run')
        for channel in channels.keys() - self._channels.keys():
            self._channels[channel] = channels[channel]
            topic = channels[channel][0]
            self._appenders[channel] = self._records.setdefault(topic, []).append
        appenders = self._appenders
        for record in messages:
            appenders[record[0]](record)

    def run(self) -> RunData:
        """The run read so far. The joint states and the tracking errors, which only the plots
        use, are decoded on first use."""
        decoders = _Decoders()
        topics = {name: self._topic(topic) for topic, name in self._wanted.items()}
        plan_topic = topics['plan']
        plans = [(t, _plan(m, t)) for m, t in zip(plan_topic.messages(decoders),
                                                   plan_topic.log_times_ns, strict=True)]
        cmd_vel = topics['cmd_vel']
        spans_ns = [(min(map(_log_time, records)), max(map(_log_time, records)))
                    for records in self._records.values() if records]  # each topic's
        t_s, x_m, y_m = topics['collision'].table(decoders, ['point.x', 'point.y'])

        def joints() -> JointSeries:
            messages = topics['joint_states'].messages(decoders)
            return _joints(topics['joint_states'].stamps_s(messages), messages)

        def tracking_error() -> ColumnSeries:
            messages = topics['tracking_error'].messages(decoders)
            return _columns(topics['tracking_error'].stamps_s(messages), messages)

        return RunData(
            ground_truth=_pose_series(topics['ground_truth'], decoders, 'pose.pose.'),
            ground_truth_twist=_twist_series(topics['ground_truth'], decoders, 'twist.twist.'),
            odom=_pose_series(topics['odom'], decoders, 'pose.pose.'),
            estimate=_pose_series(topics['pose'], decoders, 'pose.pose.'),
            twist_actual=_twist_series(topics['twist_actual'], decoders, 'twist.'),
            cmd_vel=_twist_series(cmd_vel, decoders,
                                  'twist.' if cmd_vel.has_field(decoders, 'twist') else ''),
            plans=tuple(plan for _, plan in sorted(plans, key=lambda item: item[0])),
            message_counts={topic: len(records)
                            for topic, records in sorted(self._records.items()) if records},
            start_time_s=min((first for first, _ in spans_ns), default=0) / NS_PER_S,
            end_time_s=max((last for _, last in spans_ns), default=0) / NS_PER_S,
            world=_world(topics['map'].last(decoders)),
            footprint=_footprint(topics['footprint'].last(decoders)),
            collisions=PointSeries(*_sorted(t_s, x_m, y_m)),
            decode_later={'joints': joints, 'tracking_error': tracking_error},
        )

    def _topic(self, topic: str) -> _Topic:
        """The messages of ``topic`` that have a schema."""
        channels = {channel: info for channel, info in self._channels.items()
                    if info[0] == topic and info[1] is not None}
        records = self._records.get(topic, [])
        if len(channels) < sum(info[0] == topic for info in self._channels.values()):
            records = [record for record in records if record[0] in channels]
        return _Topic(records, channels, self._data_start or 0)


#: The last 8 bytes of a finished MCAP file (and its first 8).
MCAP_MAGIC = b'\x89MCAP0\r\n'


def _file_messages(stream: BinaryIO) -> Iterator[tuple[Schema | None, Channel, Message]]:
    """The messages of an MCAP file in file order. A file its writer never finished (a process
    killed outright: no summary, no closing magic; empty if it died before its first chunk)
    gives the messages of its complete chunks."""
    size = stream.seek(0, io.SEEK_END)
    finished = size >= 2 * len(MCAP_MAGIC) and stream.seek(size - len(MCAP_MAGIC)) >= 0 and \
        stream.read(len(MCAP_MAGIC)) == MCAP_MAGIC
    stream.seek(0)
    if finished:
        yield from make_reader(stream).iter_messages(log_time_order=False)
        return
    try:
        yield from NonSeekingReader(stream).iter_messages(log_time_order=False)
    except (McapError, struct.error, UnicodeDecodeError):  # cut short inside a record
        return


def load_run(bag_dir: Path | str, namespace: str = '/') -> RunData:
    """Read the run recorded in ``bag_dir`` (a rosbag2 folder, or its ``.mcap`` file); see
    :class:`RunReader`."""
    channels: dict[int, ChannelInfo] = {}
    records = []
    with _bag_file(Path(bag_dir)).open('rb') as stream:
        # File order: the recorder writes in time order, and every series is sorted anyway.
        for schema, channel, message in _file_messages(stream):
            if channel.id not in channels:
                channels[channel.id] = (channel.topic, schema, channel.message_encoding)
            records.append((channel.id, message.log_time, message.data))
    reader = RunReader(namespace)
    reader.add(channels, records)
    return reader.run()
