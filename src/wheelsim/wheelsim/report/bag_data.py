"""What the run report uses of a wheelsim run, as numpy arrays, one series per topic.

:class:`RunReader` takes messages one at a time: from the lock-step runner as the nodes publish
them (so a run's metrics need no bag), or from a rosbag2 (MCAP) folder (:func:`load_run`, read
with the ``mcap`` reader). A bag's messages are decoded by the ``rosbags`` type store
(generated code, several times faster than ``mcap_ros2``'s decoder), or by ``mcap_ros2``'s
decoder from the schema in the bag for a type the store does not know or cannot read exactly
(``rosbags`` refuses more than 3 bytes of trailing padding, which rclpy writes after an empty
sequence of doubles, as in ``sensor_msgs/JointState``); none needs a ROS install or message
package. Only the topics of :data:`TOPICS` are decoded; the others are counted. Times are in
seconds of simulated time: the header stamp of stamped messages, the log time of the others (a
Twist on ``cmd_vel``). Every series is in stamp order, the plans in log time order. A topic
missing from the run gives empty arrays, never an error; a bag whose writer was killed (no
summary, no ``metadata.yaml``) gives the messages of its complete chunks.
"""

from __future__ import annotations

import array
import dataclasses
import io
import re
import struct
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property, partial
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

import numpy as np

from wheelsim.core.units import NS_PER_S
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.report.geometry import FloatArray, yaw_from_quaternion

if TYPE_CHECKING:  # the readers of bag files are imported when a bag file is read
    from mcap.records import Channel, Message, Schema
    from rosbags.typesys.store import Typestore

TOPICS = ('ground_truth', 'odom', 'pose', 'twist_actual', 'joint_states', 'cmd_vel', 'plan',
          'tracking_error', 'map', 'footprint', 'collision')
"""The topics read (relative to the run's namespace); every other topic is only counted."""
#: The topics of :data:`TOPICS` only the plots draw.
PLOT_TOPICS = ('joint_states', 'tracking_error')


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


def _is_steering(joint_name: str) -> bool:
    name = joint_name.lower()
    return 'steer' in name and not name.removesuffix('_joint').endswith('wheel')


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
        """Steering joints: the names containing 'steer' but for a wheel's (ending in 'wheel'
        or 'wheel_joint': the rolling joint of a steered wheel, ``steered_left_wheel_joint``)."""
        return tuple(n for n in self.names if _is_steering(n))

    @property
    def wheel_names(self) -> tuple[str, ...]:
        """Every other joint (the wheels)."""
        return tuple(n for n in self.names if not _is_steering(n))

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
    collisions_recorded: bool = True
    """False for a bag whose topics (channels, with or without messages) lack ``collision``:
    how many there were is not known."""
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


class _JointRow(NamedTuple):
    """One sensor_msgs/JointState as read."""

    name: tuple[str, ...]
    position: tuple[float, ...]
    velocity: tuple[float, ...]


def _joints(rows: list[tuple[float, _JointRow]]) -> JointSeries:
    """Joint states ``(stamp [s], row)`` as a series in stamp order."""
    names: dict[str, int] = {}
    for _, msg in rows:
        for name in msg.name:
            names.setdefault(name, len(names))
    position = np.full((len(rows), len(names)), np.nan)
    velocity = np.full((len(rows), len(names)), np.nan)
    for row, (_, msg) in enumerate(rows):
        columns = [names[n] for n in msg.name]
        if len(msg.position) == len(columns):
            position[row, columns] = msg.position
        if len(msg.velocity) == len(columns):
            velocity[row, columns] = msg.velocity
    stamps = _array(t_s for t_s, _ in rows)
    order = np.argsort(stamps, kind='stable')
    return JointSeries(stamps[order], tuple(names), position[order], velocity[order])


def _plan(msg: Any, log_time_ns: int) -> Plan:
    """A nav_msgs/Path, kept in path order (the planned times only label the poses)."""
    received_s = _stamp_s(msg, log_time_ns) or log_time_ns / NS_PER_S
    planned_s = _array(_stamp_s(p, 0) for p in msg.poses)
    return Plan(received_s, PoseSeries(planned_s, *_pose_arrays([p.pose for p in msg.poses])))


def _field_names(msg: Any) -> Iterable[str]:
    """The fields of a message: an rclpy message's (in memory: its ``__slots__`` are private
    names), or one decoded by either decoder (dataclass or slots)."""
    fields = getattr(msg, 'get_fields_and_field_types', None)
    if fields is not None:
        return list(fields())
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
        elif isinstance(value, (list, tuple, np.ndarray, array.array)):  # rclpy: array.array
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


def _footprint(corners_m: list[float] | None) -> Footprint | None:
    """The corners of a geometry_msgs/PolygonStamped, ``[x0, y0, x1, y1, ...]`` [m], as a
    footprint; None without, or if they are no simple polygon of three corners or more."""
    if corners_m is None:
        return None
    try:
        return Footprint.from_flat(corners_m)
    except ValueError:
        return None


def _columns(rows: list[tuple[float, dict[str, float]]]) -> ColumnSeries:
    """Flattened messages ``(stamp [s], {path: value})`` as columns in stamp order (NaN where a
    message lacks a path)."""
    names = list(dict.fromkeys(name for _, row in rows for name in row))
    stamps = _array(t_s for t_s, _ in rows)
    order = np.argsort(stamps, kind='stable')
    columns = {n: _array(row.get(n, np.nan) for _, row in rows)[order] for n in names}
    return ColumnSeries(stamps[order], columns)


@cache
def built_in_types() -> Typestore:
    """rosbags' own ROS 2 Kilted definitions, one store per process: a store keeps the
    (de)serializers it generates for each type, so the runs of one process (a sweep worker)
    generate them once (the first store also imports every definition, about 65 ms)."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_KILTED)


class _Decoders:
    """CDR bytes -> message object: the ``rosbags`` type store for a schema that is its own
    definition of the type (as :class:`wheelsim.run.recording.BagRecorder` writes them), else, and
    for a message it cannot read exactly, ``mcap_ros2`` from the schema (see the module doc)."""

    def __init__(self) -> None:
        from mcap_ros2.decoder import DecoderFactory
        from rosbags.serde import SerdeError

        self.typestore = built_in_types()
        self._serde_error = SerdeError  # raised for a message the type store cannot read
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
            except self._serde_error:
                self._fast[schema.id] = False
        if schema.id not in self._fallback:
            self._fallback[schema.id] = self._factory.decoder_for(encoding, schema)
        return self._fallback[schema.id](data)


def _bag_files(bag: Path) -> list[Path]:
    """The MCAP files of ``bag`` (an ``.mcap`` file, or a rosbag2 folder: every one, in the
    order of the numbers in their names, as ``ros2 bag record`` numbers the files it splits a
    bag into: ``bag_0.mcap``, ``bag_1.mcap``, ... ``bag_10.mcap``)."""
    if bag.is_file():
        return [bag]
    files = sorted(bag.glob('*.mcap'), key=lambda path: [
        (0, int(part), '') if part.isdigit() else (1, 0, part)
        for part in re.split(r'(\d+)', path.name)])
    if not files:
        raise FileNotFoundError(f'{bag}: no .mcap file (expected a rosbag2 folder with MCAP '
                                'storage or an .mcap file)')
    return files


def _pose_row(msg: Any) -> tuple[float, ...]:
    """``(stamp [s], x, y, qx, qy, qz, qw)`` of a message with ``header`` and ``pose.pose``
    (nav_msgs/Odometry, geometry_msgs/PoseWithCovarianceStamped); one row per sample of the
    run, so its fields are read once each."""
    stamp, pose = msg.header.stamp, msg.pose.pose
    position, q = pose.position, pose.orientation
    return (stamp.sec + stamp.nanosec / NS_PER_S, position.x, position.y, q.x, q.y, q.z, q.w)


def _twist_row(t_s: float, twist: Any) -> tuple[float, ...]:
    """``(t_s, vx, vy, wz)`` of a geometry_msgs/Twist."""
    linear = twist.linear
    return (t_s, linear.x, linear.y, twist.angular.z)


def _columns_of(rows: list[tuple[float, ...]], width: int) -> list[FloatArray]:
    """Rows of ``width`` numbers as ``width`` float columns sorted by the first (the stamp)."""
    table = np.array(rows, dtype=float).reshape(len(rows), width)
    return _sorted(*table.T)


def _pose_series(rows: list[tuple[float, ...]]) -> PoseSeries:
    """Rows ``(t_s, x_m, y_m, qx, qy, qz, qw)`` as a series in stamp order."""
    t_s, x_m, y_m, *q = _columns_of(rows, 7)
    return PoseSeries(t_s, x_m, y_m, yaw_from_quaternion(*q))


class RunReader:
    """Gathers what the report uses of one run, message by message (:meth:`take`), and builds
    its :class:`RunData` (:meth:`run`).

    The lock-step runner gives it every message the nodes publish, as they publish it (the
    objects in memory: whether and what a run records into its bag does not change its
    metrics); :func:`load_run` gives it the messages of a bag file, decoded. A message is read
    when it is taken (its publisher may fill the same object again afterwards); rclpy's
    messages and the decoders' have the same fields.

    ``namespace``: the robot's namespace; the topics in :data:`TOPICS` are read under it.
    ``plots`` false: the topics only the plots draw (:data:`PLOT_TOPICS`) are only counted
    (:attr:`RunData.joints` and :attr:`RunData.tracking_error` are then empty).
    """

    def __init__(self, namespace: str = '/', plots: bool = True) -> None:
        prefix = namespace.rstrip('/') + '/'
        self._readers: dict[str, Callable[[Any, int], None]] = {
            prefix + name: getattr(self, '_take_' + name) for name in TOPICS
            if plots or name not in PLOT_TOPICS}
        self._counts: dict[str, int] = {}
        self._first_log_ns: int | None = None
        self._last_log_ns = 0
        # rows of numbers per series, the stamp [s] first
        self._ground_truth: list[tuple[float, ...]] = []
        self._odom: list[tuple[float, ...]] = []
        self._pose: list[tuple[float, ...]] = []
        self._twist_actual: list[tuple[float, ...]] = []
        self._cmd_vel: list[tuple[float, ...]] = []
        self._collisions: list[tuple[float, ...]] = []
        self._plans: list[tuple[int, Plan]] = []
        self._joints: list[tuple[float, _JointRow]] = []
        self._errors: list[tuple[float, dict[str, float]]] = []
        self._world: OccupancyMap | None = None
        self._footprint_m: list[float] | None = None  # the last footprint's corners
        self._collision_topic = prefix + 'collision'
        self._collisions_recorded = True

    def take(self, topic: str, msg: Any, log_time_ns: int) -> None:
        """Read ``msg``, published on ``topic`` (fully qualified) at ``log_time_ns`` [ns] of
        simulated time: counted whatever the topic, read if it is one of :data:`TOPICS`."""
        self.count(topic, log_time_ns)
        read = self._readers.get(topic)
        if read is not None:
            read(msg, log_time_ns)

    def topics_recorded(self, topics: Collection[str]) -> None:
        """The topics of a bag (fully qualified; those without messages too), after its
        messages: one without the collision topic leaves the number of collisions unknown."""
        self._collisions_recorded = (self._collision_topic in topics
                                     or self._collision_topic in self._counts)

    def reads(self, topic: str) -> bool:
        """Whether :meth:`take` reads the messages of ``topic`` (else it only counts them)."""
        return topic in self._readers

    def count(self, topic: str, log_time_ns: int) -> None:
        """Count a message on ``topic`` at ``log_time_ns`` without reading it."""
        counts = self._counts
        counts[topic] = counts.get(topic, 0) + 1
        if self._first_log_ns is None or log_time_ns < self._first_log_ns:
            self._first_log_ns = log_time_ns
        if log_time_ns > self._last_log_ns:
            self._last_log_ns = log_time_ns

    def _take_ground_truth(self, msg: Any, log_time_ns: int) -> None:
        self._ground_truth.append(_pose_row(msg))

    def _take_odom(self, msg: Any, log_time_ns: int) -> None:
        self._odom.append(_pose_row(msg))

    def _take_pose(self, msg: Any, log_time_ns: int) -> None:
        self._pose.append(_pose_row(msg))

    def _take_twist_actual(self, msg: Any, log_time_ns: int) -> None:
        self._twist_actual.append(_twist_row(_stamp_s(msg, log_time_ns), msg.twist))

    def _take_cmd_vel(self, msg: Any, log_time_ns: int) -> None:
        twist = getattr(msg, 'twist', msg)  # TwistStamped or Twist
        self._cmd_vel.append(_twist_row(_stamp_s(msg, log_time_ns), twist))

    def _take_plan(self, msg: Any, log_time_ns: int) -> None:
        self._plans.append((log_time_ns, _plan(msg, log_time_ns)))

    def _take_joint_states(self, msg: Any, log_time_ns: int) -> None:
        self._joints.append((_stamp_s(msg, log_time_ns), _JointRow(
            tuple(msg.name), tuple(msg.position), tuple(msg.velocity))))

    def _take_tracking_error(self, msg: Any, log_time_ns: int) -> None:
        row: dict[str, float] = {}
        _flatten(msg, '', row)
        self._errors.append((_stamp_s(msg, log_time_ns), row))

    def _take_map(self, msg: Any, log_time_ns: int) -> None:
        self._world = _world(msg)

    def _take_footprint(self, msg: Any, log_time_ns: int) -> None:
        self._footprint_m = [v for p in msg.polygon.points for v in (p.x, p.y)]

    def _take_collision(self, msg: Any, log_time_ns: int) -> None:
        self._collisions.append((_stamp_s(msg, log_time_ns), msg.point.x, msg.point.y))

    def run(self) -> RunData:
        """The run read so far. The joint states and the tracking errors, which only the plots
        use, are tabled on first use."""
        return RunData(
            ground_truth=_pose_series(self._ground_truth),
            odom=_pose_series(self._odom),
            estimate=_pose_series(self._pose),
            twist_actual=TwistSeries(*_columns_of(self._twist_actual, 4)),
            cmd_vel=TwistSeries(*_columns_of(self._cmd_vel, 4)),
            plans=tuple(plan for _, plan in sorted(self._plans, key=itemgetter(0))),
            message_counts=dict(sorted(self._counts.items())),
            start_time_s=(self._first_log_ns or 0) / NS_PER_S,
            end_time_s=self._last_log_ns / NS_PER_S,
            collisions_recorded=self._collisions_recorded,
            world=self._world,
            footprint=_footprint(self._footprint_m),
            collisions=PointSeries(*_columns_of(self._collisions, 3)),
            decode_later={'joints': partial(_joints, list(self._joints)),
                          'tracking_error': partial(_columns, list(self._errors))},
        )


#: The last 8 bytes of a finished MCAP file (and its first 8).
MCAP_MAGIC = b'\x89MCAP0\r\n'


def _file_messages(stream: BinaryIO, name: Path) -> Iterator[tuple[Schema | None, Channel,
                                                                  Message]]:
    """The messages of the MCAP file ``name`` open as ``stream``, in file order. A file its
    writer never finished (a process killed outright: no summary, no closing magic; empty if it
    died before its first chunk) gives the messages of its complete chunks. ValueError for a
    file that does not begin as an MCAP file does."""
    from mcap.exceptions import McapError
    from mcap.reader import NonSeekingReader, make_reader

    head = stream.read(len(MCAP_MAGIC))
    if not MCAP_MAGIC.startswith(head):
        raise ValueError(f'{name}: not an MCAP file (it does not begin with the MCAP magic '
                         'bytes): give a rosbag2 folder with MCAP storage or its .mcap file')
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
    """Read the run recorded in ``bag_dir`` (a rosbag2 folder, every MCAP file of it, or one
    ``.mcap`` file); see :class:`RunReader`. A message of a channel without a schema is only
    counted. FileNotFoundError for a folder without an MCAP file, ValueError for a file that is
    not one."""
    reader = RunReader(namespace)
    topics: set[str] | None = set()  # every file's channels; None once a file has no summary
    for path in _bag_files(Path(bag_dir)):
        decoders = _Decoders()  # schema ids are each file's own
        with path.open('rb') as stream:
            channels = _summary_topics(stream)
            topics = None if topics is None or channels is None else topics | channels
            # File order: the recorder writes in time order, and every series is sorted anyway.
            for schema, channel, message in _file_messages(stream, path):
                if schema is None or not reader.reads(channel.topic):
                    reader.count(channel.topic, message.log_time)
                else:
                    reader.take(channel.topic, decoders.decode(
                        schema, channel.message_encoding, message.data), message.log_time)
    if topics is not None:  # (a file its writer never finished has no summary: not known)
        reader.topics_recorded(topics)
    return reader.run()


def _summary_topics(stream: BinaryIO) -> set[str] | None:
    """The topics of the channels in the summary of the MCAP file open as ``stream`` (those
    without messages too), None for a file without a summary; ``stream`` is left at its
    start."""
    from mcap.exceptions import McapError
    from mcap.reader import make_reader

    try:
        summary = make_reader(stream).get_summary()
    except (McapError, struct.error, UnicodeDecodeError, OSError, ValueError):  # cut short
        summary = None
    finally:
        stream.seek(0)
    return None if summary is None else {channel.topic for channel in summary.channels.values()}
