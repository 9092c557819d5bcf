"""Read a wheelsim run's rosbag2 (MCAP) folder into numpy arrays, one series per topic.

Messages are read with the ``mcap`` reader and decoded by the ``rosbags`` type store (generated
code, several times faster than ``mcap_ros2``'s decoder), or by ``mcap_ros2``'s decoder from the
schema in the bag for a type the store does not know or cannot read exactly (``rosbags`` refuses
more than 3 bytes of trailing padding, which rclpy writes after an empty sequence of doubles, as
in ``sensor_msgs/JointState``); neither needs a ROS install or message package. Times are in
seconds of simulated time: the header stamp of stamped messages, the log time of the others (a
Twist on ``cmd_vel``). Every series is in stamp order, the plans in log time order. A topic
missing from the bag gives empty arrays, never an error.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from mcap.reader import make_reader
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory
from rosbags.serde import SerdeError
from rosbags.typesys import Stores, get_typestore

from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.report.geometry import FloatArray, yaw_from_quaternion

NS_PER_S = 1e9
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
    joints: JointSeries
    plans: tuple[Plan, ...]
    tracking_error: ColumnSeries
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


def _poses(stamps: list[float], poses: list[Any]) -> PoseSeries:
    return PoseSeries(*_sorted(_array(stamps), *_pose_arrays(poses)))


def _twists(stamps: list[float], twists: list[Any]) -> TwistSeries:
    return TwistSeries(*_sorted(_array(stamps), _array(t.linear.x for t in twists),
                                _array(t.linear.y for t in twists),
                                _array(t.angular.z for t in twists)))


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


def _world(messages: list[Any]) -> OccupancyMap | None:
    """The last nav_msgs/OccupancyGrid, or None."""
    if not messages:
        return None
    info = messages[-1].info
    q = info.origin.orientation
    yaw = float(yaw_from_quaternion(q.x, q.y, q.z, q.w))
    return OccupancyMap.from_values(np.asarray(messages[-1].data, dtype=np.int8), int(info.width),
                                    int(info.height), float(info.resolution),
                                    (info.origin.position.x, info.origin.position.y, yaw))


def _footprint(messages: list[Any]) -> Footprint | None:
    """The last geometry_msgs/PolygonStamped as a footprint, or None."""
    if not messages:
        return None
    try:
        return Footprint.from_flat([v for p in messages[-1].polygon.points for v in (p.x, p.y)])
    except ValueError:  # not a simple polygon of three corners or more: no footprint
        return None


def _points(stamps: list[float], messages: list[Any]) -> PointSeries:
    return PointSeries(*_sorted(_array(stamps), _array(m.point.x for m in messages),
                                _array(m.point.y for m in messages)))


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


class _Decoders:
    """CDR bytes -> message object: the ``rosbags`` type store for a schema that is its own
    definition of the type (as :class:`wheelsim.run.recording.BagRecorder` writes them), else, and
    for a message it cannot read exactly, ``mcap_ros2`` from the schema (see the module doc)."""

    def __init__(self) -> None:
        self._typestore = get_typestore(Stores.ROS2_KILTED)
        self._fast: dict[int, bool] = {}  # schema id -> the type store can decode it
        self._factory = DecoderFactory()
        self._fallback: dict[int, Callable[[bytes], Any]] = {}

    def _known(self, schema: Schema) -> bool:
        if schema.name not in self._typestore.types:
            return False
        definition, _ = self._typestore.generate_msgdef(schema.name, ros_version=2)
        return schema.data == definition.encode()

    def decode(self, schema: Schema, encoding: str, data: bytes) -> Any:
        fast = self._fast.get(schema.id)
        if fast is None:
            fast = self._fast[schema.id] = self._known(schema)
        if fast:
            try:
                return self._typestore.deserialize_cdr(data, schema.name)
            except SerdeError:
                self._fast[schema.id] = False
        if schema.id not in self._fallback:
            self._fallback[schema.id] = self._factory.decoder_for(encoding, schema)
        return self._fallback[schema.id](data)


def _bag_file(bag: Path) -> Path:
    if bag.is_file():
        return bag
    files = sorted(bag.glob('*.mcap'))
    if not files:
        raise FileNotFoundError(f'{bag}: no .mcap file (expected a rosbag2 folder with MCAP '
                                'storage or an .mcap file)')
    return files[0]


def load_run(bag_dir: Path | str, namespace: str = '/') -> RunData:
    """Read the run recorded in ``bag_dir`` (a rosbag2 folder, or its ``.mcap`` file).

    ``namespace``: the robot's namespace; the topics in :data:`TOPICS` are read under it.
    """
    prefix = namespace.rstrip('/') + '/'
    wanted = {prefix + name: name for name in TOPICS}
    received: dict[str, tuple[list[float], list[Any]]] = {name: ([], []) for name in TOPICS}
    plans: list[tuple[int, Plan]] = []
    counts: dict[str, int] = {}
    log_times: list[int] = []
    decoders = _Decoders()
    with _bag_file(Path(bag_dir)).open('rb') as stream:
        # File order: the recorder writes in time order, and every series is sorted anyway.
        for schema, channel, message in make_reader(stream).iter_messages(log_time_order=False):
            counts[channel.topic] = counts.get(channel.topic, 0) + 1
            log_times.append(message.log_time)
            name = wanted.get(channel.topic)
            if name is None or schema is None:
                continue
            msg = decoders.decode(schema, channel.message_encoding, message.data)
            if name == 'plan':
                plans.append((message.log_time, _plan(msg, message.log_time)))
            else:
                received[name][0].append(_stamp_s(msg, message.log_time))
                received[name][1].append(msg)

    def pose_of(name: str) -> PoseSeries:
        stamps, messages = received[name]
        return _poses(stamps, [m.pose.pose for m in messages])

    gt_stamps, gt_messages = received['ground_truth']
    return RunData(
        ground_truth=pose_of('ground_truth'),
        ground_truth_twist=_twists(gt_stamps, [m.twist.twist for m in gt_messages]),
        odom=pose_of('odom'),
        estimate=pose_of('pose'),
        twist_actual=_twists(received['twist_actual'][0],
                             [m.twist for m in received['twist_actual'][1]]),
        cmd_vel=_twists(received['cmd_vel'][0],
                        [getattr(m, 'twist', m) for m in received['cmd_vel'][1]]),
        joints=_joints(*received['joint_states']),
        plans=tuple(plan for _, plan in sorted(plans, key=lambda item: item[0])),
        tracking_error=_columns(*received['tracking_error']),
        message_counts=dict(sorted(counts.items())),
        start_time_s=min(log_times, default=0) / NS_PER_S,
        end_time_s=max(log_times, default=0) / NS_PER_S,
        world=_world(received['map'][1]),
        footprint=_footprint(received['footprint'][1]),
        collisions=_points(*received['collision']),
    )
