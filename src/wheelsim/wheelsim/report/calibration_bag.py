"""Read a calibration recording from a rosbag2 bag, as real robots record them.

``rosbags`` reads both storage formats of rosbag2 (MCAP and sqlite3) and ROS 1 bags, with the
message definitions in the bag or, for older sqlite3 bags without them, its ROS 2 Jazzy type
store. Topics (relative names match any namespace):

- commands: ``cmd_vel``, geometry_msgs/Twist or TwistStamped;
- measured motion: ``twist_actual`` (geometry_msgs/TwistStamped) if the bag has it, else ``odom``
  (nav_msgs/Odometry, its twist in the child frame, base_link);
- optional ``joint_states`` (sensor_msgs/JointState): the wheel joints' velocities and the
  steering joints' angle, for the geometry and the steering; wheelsim's joint names are
  recognised, alone or after a frame prefix ending in ``/``.

Times are the header stamps of stamped messages and the bag's log times of the others (a Twist
on ``cmd_vel``), in seconds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from rosbags.highlevel import AnyReader, AnyReaderError
from rosbags.typesys import Stores, get_typestore

from wheelsim.core.calibration.recording import CalibrationError, Recording
from wheelsim.core.localization.wheel_encoders import centre_steering_tan
from wheelsim.core.units import NS_PER_S

TWIST_TYPES = ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped')
MEASURED = (('twist_actual', 'geometry_msgs/msg/TwistStamped'), ('odom', 'nav_msgs/msg/Odometry'))
#: The types a measured-motion topic named by its option may have (a twist with a stamp).
MEASURED_TYPES = ('geometry_msgs/msg/TwistStamped', 'nav_msgs/msg/Odometry',
                  'geometry_msgs/msg/TwistWithCovarianceStamped')
JOINT_STATES_TYPES = ('sensor_msgs/msg/JointState',)
WHEEL_JOINTS = ('left_wheel_joint', 'right_wheel_joint', 'front_left_wheel_joint',
                'front_right_wheel_joint', 'rear_left_wheel_joint', 'rear_right_wheel_joint',
                'fixed_left_wheel_joint', 'fixed_right_wheel_joint', 'fixed_wheel_joint',
                'steered_left_wheel_joint', 'steered_right_wheel_joint', 'steered_wheel_joint')
STEERING_JOINTS = (('steering_left_joint', 'steering_right_joint'), ('steering_joint',))


@dataclass(frozen=True)
class BagTopics:
    """The topics a recording was read from (fully qualified names)."""

    commands: str
    measured: str
    joint_states: str | None


def _matching(connections: list[Any], name: str, types: tuple[str, ...]) -> list[str]:
    return sorted({c.topic for c in connections if c.msgtype in types and (
        c.topic == name or c.topic.endswith('/' + name))})


#: The ``wheelsim calibrate`` option naming the topic of each kind.
TOPIC_OPTIONS = {'command': '--cmd-topic', 'measured motion': '--measured-topic',
                 'joint_states': '--joint-states-topic'}


def _choose(connections, given: str | None, name: str, types: tuple[str, ...],
            what: str) -> str | None:
    if given is not None:
        found = [c for c in connections if c.topic in (given, '/' + given.lstrip('/'))]
        if not found:
            fitting = sorted({c.topic for c in connections if c.msgtype in types})
            raise CalibrationError(f'the bag has no topic {given or repr(given)} ({what}); its '
                                   f'topics of a type it can be: {", ".join(fitting) or "none"}')
        if found[0].msgtype not in types:
            raise CalibrationError(f'topic {given} ({what}) is {found[0].msgtype}, not '
                                   + ' or '.join(types))
        return found[0].topic
    found = _matching(connections, name, types)
    if len(found) > 1:
        raise CalibrationError(f'several {what} topics ({", ".join(found)}): choose one with '
                               f'{TOPIC_OPTIONS[what]}')
    return found[0] if found else None


def _deserialize(reader: AnyReader, connection, data: bytes):
    try:
        return reader.deserialize(data, connection.msgtype)
    except AnyReaderError:
        # rclpy pads an empty trailing sequence of doubles (JointState.effort) to 8 bytes,
        # rosbags accepts at most 3 bytes of padding: the message itself ended before it.
        return reader.deserialize(data[:len(data) - 4], connection.msgtype)


def _stamp_s(msg: Any, log_time_ns: int) -> float:
    header = getattr(msg, 'header', None)
    if header is None:
        return log_time_ns / NS_PER_S
    return header.stamp.sec + header.stamp.nanosec / NS_PER_S


def _suffix(name: str, choices: tuple[str, ...]) -> str | None:
    """The wheelsim joint name that ``name`` is, alone or after a frame prefix ending in /."""
    return next((c for c in choices if name == c or name.endswith('/' + c)), None)


def _joints(messages: list[tuple[float, Any]]) -> tuple[np.ndarray, np.ndarray, tuple, np.ndarray]:
    names = list(messages[0][1].name)
    wheels = [(i, _suffix(n, WHEEL_JOINTS)) for i, n in enumerate(names)]
    wheels = [(i, w) for i, w in wheels if w is not None]
    steering_columns: list[int] = []
    for group in STEERING_JOINTS:
        columns = [next((i for i, n in enumerate(names) if _suffix(n, (g,)) == g), None)
                   for g in group]
        if all(c is not None for c in columns):
            steering_columns = columns
            break
    t_s, rates, steering = [], [], []
    for stamp, msg in messages:
        if list(msg.name) != names or len(msg.velocity) != len(names):
            continue
        t_s.append(stamp)
        rates.append([msg.velocity[i] for i, _ in wheels])
        if steering_columns:
            steering.append(math.atan(centre_steering_tan([msg.position[i]
                                                           for i in steering_columns])))
    return (np.array(t_s), np.array(rates), tuple(w for _, w in wheels),
            np.array(steering) if steering_columns else np.empty(0))


def load_recording(bag: Path | str, commands: str | None = None, measured: str | None = None,
                   joint_states: str | None = None) -> tuple[Recording, BagTopics]:
    """The :class:`Recording` in a rosbag2 folder (or a single bag file); topic options as the
    module documentation says. CalibrationError names what is missing."""
    path = Path(bag)
    if not path.exists():
        raise CalibrationError(f'{path}: no such bag')
    if path.name == 'metadata.yaml':
        raise CalibrationError(f'{path}: give the bag folder, {path.parent}, not its '
                               'metadata.yaml')
    if path.is_dir() and not (path / 'metadata.yaml').exists():  # rosbags: "Expected metadata"
        raise CalibrationError(f'{path}: not a bag folder (no metadata.yaml in it); give the '
                               'folder `ros2 bag record` wrote, or its .mcap file')
    try:
        return _read_recording(path, commands, measured, joint_states)
    except (AnyReaderError, OSError) as err:  # an empty, truncated or broken bag
        hint = ''
        if 'magic' in str(err) and _starts_as_mcap(path):
            hint = (' (an MCAP file without its end, as a killed recorder leaves it: '
                    '`mcap recover` rewrites it)')
        text = ' '.join(str(err).split())  # one line (YAML errors span several)
        raise CalibrationError(f'{path}: cannot read the bag: {text}{hint}') from None


#: The first bytes of an MCAP file (and its last, when it was closed).
MCAP_MAGIC = b'\x89MCAP0\r\n'


def _starts_as_mcap(path: Path) -> bool:
    """Whether the bag file ``path`` (or a ``.mcap`` file in the bag folder) begins as an MCAP
    file does."""
    files = sorted(path.glob('*.mcap')) if path.is_dir() else [path]
    for file in files:
        try:
            with file.open('rb') as stream:
                if stream.read(len(MCAP_MAGIC)) == MCAP_MAGIC:
                    return True
        except OSError:
            continue
    return False


def _read_recording(path: Path, commands: str | None, measured: str | None,
                    joint_states: str | None) -> tuple[Recording, BagTopics]:
    """:func:`load_recording`'s work; the reader's errors pass through."""
    with AnyReader([path], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        connections = list(reader.connections)
        command_topic = _choose(connections, commands, 'cmd_vel', TWIST_TYPES, 'command')
        measured_topic = measured
        if measured_topic is None:
            for name, kind in MEASURED:
                measured_topic = _choose(connections, None, name, (kind,), 'measured motion')
                if measured_topic:
                    break
        else:
            measured_topic = _choose(connections, measured, '', MEASURED_TYPES,
                                     'measured motion')
        joint_topic = _choose(connections, joint_states, 'joint_states', JOINT_STATES_TYPES,
                              'joint_states')
        if command_topic is None or measured_topic is None:
            topics = ', '.join(sorted({f'{c.topic} ({c.msgtype})' for c in connections}))
            options = ' and '.join(option for option, topic in (
                ('--cmd-topic', command_topic), ('--measured-topic', measured_topic))
                if topic is None)
            raise CalibrationError(
                'the bag needs commands (cmd_vel: Twist or TwistStamped) and measured motion '
                f'(twist_actual or odom); it has {topics or "no topics"}: name the topics with '
                f'{options}')
        if measured_topic == command_topic:
            raise CalibrationError(f'the measured motion and the commands are both {command_topic}:'
                                   ' the measured motion is what the robot did (twist_actual or '
                                   'odom)')
        wanted = {command_topic, measured_topic, joint_topic} - {None}
        received: dict[str, list[tuple[float, Any]]] = {t: [] for t in wanted}
        chosen = [c for c in connections if c.topic in wanted]
        for connection, log_time_ns, data in reader.messages(connections=chosen):
            msg = _deserialize(reader, connection, data)
            received[connection.topic].append((_stamp_s(msg, log_time_ns), msg))
    for topic in wanted:
        received[topic].sort(key=lambda item: item[0])
    command_msgs = received[command_topic]
    measured_msgs = received[measured_topic]
    twist = [getattr(m, 'twist', m) for _, m in command_msgs]
    measured_twist = [m.twist.twist if hasattr(m.twist, 'twist') else m.twist
                      for _, m in measured_msgs]
    joints = (np.empty(0), np.empty((0, 0)), (), np.empty(0))
    if joint_topic and received[joint_topic]:
        joints = _joints(received[joint_topic])
    recording = Recording(
        np.array([t for t, _ in command_msgs]),
        np.array([(m.linear.x, m.linear.y, m.angular.z) for m in twist]).reshape(-1, 3),
        np.array([t for t, _ in measured_msgs]),
        np.array([(m.linear.x, m.linear.y, m.angular.z) for m in measured_twist]).reshape(-1, 3),
        *joints,
    )
    return recording, BagTopics(command_topic, measured_topic, joint_topic)
