"""Record ROS 2 messages into a rosbag2 bag with MCAP storage, without needing rosbag2 installed.

The bag plays back in ``ros2 bag play``, Foxglove and PlotJuggler (format:
:mod:`wheelsim.run.bag_writer`). A message is serialized to CDR when it is recorded (by
:mod:`wheelsim.run.cdr`: rclpy's bytes, faster), so its publisher may fill the same object again
for its next publication. Writing the bag (MCAP
records, indexes, the file) happens in a child process (``python -m wheelsim.run.bag_writer``) fed
batches of serialized messages through a pipe: on a machine with two cores or more it runs beside
the simulation instead of taking a third of its time. The child is in its own session, so a
Ctrl-C reaches only this process, which finishes the bag when the recorder closes (also on an
interrupted run, through the context manager); if this process dies, the child finishes the bag
at the end of its input. Either way the bag stays readable.
"""

from __future__ import annotations

import fcntl
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

from wheelsim.run.cdr import Serializer, serializer

# ROS infrastructure topics: not part of a run (parameter events carry wall-clock stamps from
# node construction, which would make two identical runs differ).
IGNORED_TOPICS = frozenset({'/parameter_events', '/rosout'})
#: Messages sent to the writer process at once.
BATCH_MESSAGES = 500
#: Size asked for the pipe to the writer [bytes] (Linux's default maximum for a user).
PIPE_BYTES = 1 << 20


class RecordingError(RuntimeError):
    """The bag could not be written (the writer process's error is in the message)."""


def ros_type_name(msg: Any) -> str:
    """``pkg/msg/Type`` of an rclpy message instance."""
    package = type(msg).__module__.split('.')[0]
    return f'{package}/msg/{type(msg).__name__}'


def _enlarge_pipe(fd: int) -> None:
    """Give the pipe to the writer room for several batches (Linux; elsewhere, or if the system
    refuses, it keeps its size): the simulation then does not wait whenever the writer is
    descheduled for a moment on a busy machine."""
    set_size = getattr(fcntl, 'F_SETPIPE_SZ', None)  # Linux only
    if set_size is None:
        return
    try:
        fcntl.fcntl(fd, set_size, PIPE_BYTES)
    except OSError:
        pass


class BagRecorder:
    """Record messages into a new bag folder ``path`` (which must not exist yet).

    Use as a context manager: entering starts the writer process, leaving finishes the bag and
    raises :class:`RecordingError` if writing it failed.
    """

    def __init__(self, path: Path, topics: set[str] | None = None) -> None:
        """``topics``: fully qualified topic names to record; None records every topic."""
        self.path = Path(path)
        if self.path.exists():
            raise FileExistsError(f'bag folder {self.path} exists already: give a new path')
        self._topics = topics
        self._routes: dict[str, tuple[str, Serializer] | None] = {}
        self._batch: list[tuple[str, str, int, bytes]] = []
        self._writer: subprocess.Popen | None = None

    def __enter__(self) -> BagRecorder:
        self._writer = subprocess.Popen(
            [sys.executable, '-m', 'wheelsim.run.bag_writer', str(self.path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            start_new_session=True,
        )
        _enlarge_pipe(self._writer.stdin.fileno())
        return self

    def __exit__(self, *exc: object) -> None:
        writer = self._writer
        try:
            self._send(self._batch)
            self._send(None)
        except OSError:  # the writer stopped early: its answer says why
            pass
        try:
            error = pickle.load(writer.stdout)
        except (EOFError, pickle.UnpicklingError) as err:
            error = f'the writer process ended without an answer ({err!r})'
        writer.wait()
        for stream in (writer.stdin, writer.stdout):
            try:
                stream.close()
            except OSError:  # unsent data on a broken pipe
                pass
        if error is not None:
            raise RecordingError(f'writing the bag {self.path} failed: {error}')

    def record(self, topic: str, msg: Any, time_ns: int) -> None:
        """Record ``msg`` on ``topic`` with log time ``time_ns`` (simulated time) [ns]."""
        route = self._routes.get(topic, False)
        if route is False:
            route = self._routes[topic] = self._route(topic, msg)
        if route is None:
            return
        type_name, serialize_msg = route
        self._batch.append((topic, type_name, time_ns, serialize_msg(msg)))
        if len(self._batch) >= BATCH_MESSAGES:
            self._send(self._batch)
            self._batch = []

    def _route(self, topic: str, msg: Any) -> tuple[str, Serializer] | None:
        """How messages on ``topic`` are recorded: (type name, serializer), or None if not.
        A topic carries one type (DDS allows no other in one process)."""
        if topic in IGNORED_TOPICS or (self._topics is not None and topic not in self._topics):
            return None
        return ros_type_name(msg), serializer(type(msg))

    def _send(self, batch: list | None) -> None:
        pickle.dump(batch, self._writer.stdin, protocol=pickle.HIGHEST_PROTOCOL)
        self._writer.stdin.flush()
