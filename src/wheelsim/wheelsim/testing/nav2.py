"""Stock Nav2 driving wheelsim, end to end: launch, wait, send goals, watch, stop (tests, bench).

Needs a Nav2 in the environment (a ROS install, or ``source tools/nav2_env.sh`` after env.sh for
the prefix ``make setup`` unpacked) and ``ROS_DOMAIN_ID`` set to a reserved domain.

- :func:`nav2_problem`: why Nav2 cannot run here, in one line (None when it can).
- :class:`Nav2Stack`: ``nav2_bringup.launch.py`` started as ``ros2 launch`` starts it
  (:mod:`wheelsim.testing.ros2_launch`), its output in a file; waits until every lifecycle
  node is active, sends ``NavigateToPose`` goals, records ground truth, and stops it with
  SIGINT as Ctrl-C would, reporting every process left behind.
- :func:`min_clearance_m`: the footprint's smallest distance to the map's obstacles along a
  recorded ground truth.
"""

from __future__ import annotations

import importlib
import math
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wheelsim.core.world.collision import clearances
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.map_file import load_map_file
from wheelsim.ros.conversions import stamp_ns, yaw_from_quaternion
from wheelsim.testing.process_activity import activity
from wheelsim.testing.processes import Probe, default_sigint, ending_with_this_process
from wheelsim.testing.sockets import descendants

#: Stock Nav2 through its own bring-up, and the light option (four servers and a map server).
BRINGUP_LAUNCH, LIGHT_LAUNCH = 'nav2_bringup.launch.py', 'nav2.launch.py'
#: The lifecycle managers of nav2_bringup.launch.py, by localization.
LIFECYCLE_MANAGERS = {
    'wheelsim': ('lifecycle_manager_navigation', 'lifecycle_manager_map_server'),
    'amcl': ('lifecycle_manager_navigation', 'lifecycle_manager_localization'),
}
#: The lifecycle managers of nav2.launch.py.
LIGHT_LIFECYCLE_MANAGERS = ('lifecycle_manager_navigation', 'lifecycle_manager_map')
#: Launch arguments every stack here gets: no RViz (no display on the test machines).
BASE_ARGUMENTS = ('rviz:=false',)


def nav2_problem() -> str | None:
    """Why stock Nav2 cannot run here, in one line; None when it can."""
    if none := os.environ.get('WHEELSIM_NAV2_NONE'):  # set by tools/nav2_env.sh
        return f'no Nav2: {none}'
    for module, what in (('nav2_msgs.action', 'Nav2 (nav2_msgs)'),
                         ('ros2launch.api', 'the launch tooling (ros2launch)')):
        try:
            importlib.import_module(module)
        except ImportError as err:
            return (f'{what} is not importable ({err}): source tools/nav2_env.sh after env.sh, '
                    'or a ROS install with navigation2 and nav2_bringup')
    return None


@dataclass(frozen=True)
class Goal:
    """A goal pose in the map frame."""

    x_m: float
    y_m: float
    yaw_rad: float


@dataclass(frozen=True)
class Outcome:
    """One NavigateToPose goal: its result, when it ended (simulated time), and the ground truth
    from its start to its end."""

    goal: Goal
    succeeded: bool
    status: int
    error_code: int
    sim_s: float
    truth: np.ndarray  # (n, 4): t_s, x_m, y_m, yaw_rad
    #: for a goal without a result in time: what the launch's processes were doing then
    #: (:func:`wheelsim.testing.process_activity.activity`, a line each)
    activity: tuple[str, ...] = ()

    @property
    def path_length_m(self) -> float:
        return float(np.sum(np.hypot(np.diff(self.truth[:, 1]), np.diff(self.truth[:, 2]))))

    @property
    def straight_line_m(self) -> float:
        return math.hypot(self.goal.x_m - self.truth[0, 1], self.goal.y_m - self.truth[0, 2])

    @property
    def position_error_m(self) -> float:
        return math.hypot(self.goal.x_m - self.truth[-1, 1], self.goal.y_m - self.truth[-1, 2])


class Nav2Stack:
    """``launch_file`` (:data:`BRINGUP_LAUNCH` or :data:`LIGHT_LAUNCH`) with ``arguments``
    (``name:=value``), run as ``ros2 launch`` would, its output in ``folder / 'launch.log'``.
    Use as a context manager; :meth:`stop` (Ctrl-C) at the end."""

    def __init__(self, folder: Path, *arguments: str, launch_file: str = BRINGUP_LAUNCH
                 ) -> None:
        from nav_msgs.msg import Odometry

        self.folder = Path(folder)
        self.arguments = (*BASE_ARGUMENTS, *arguments)
        self.localization = next((a.split(':=', 1)[1] for a in arguments
                                  if a.startswith('localization:=')), 'wheelsim')
        self.managers = LIGHT_LIFECYCLE_MANAGERS if launch_file == LIGHT_LAUNCH \
            else LIFECYCLE_MANAGERS[self.localization]
        self.log_path = self.folder / 'launch.log'
        # The probe's DDS participant is made before the launch starts its 17 processes and
        # deleted (stop) before they stop: Fast DDS's teardown has hung, holding the
        # interpreter lock, where a participant was deleted while many processes stopped at
        # once (docs/reliability.md); here it would be the test process's.
        self.probe = Probe('nav2_test_probe', use_sim_time=True)
        self._is_active_clients: dict[str, Any] = {}  # by lifecycle manager
        self.ground_truth = self.probe.record(Odometry, '/ground_truth')
        self._log = open(self.log_path, 'w')  # noqa: SIM115 - closed in stop()
        self.started_s = time.monotonic()
        # ending with this process: a test ended at its time limit leaves no Nav2 running
        self.process = subprocess.Popen(
            ending_with_this_process([sys.executable, '-m', 'wheelsim.testing.ros2_launch',
                                      'wheelsim', launch_file, *self.arguments]),
            stdout=self._log, stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=default_sigint)  # launch hears the Ctrl-C of stop(), as in a terminal
        self.descendants: set[int] = set()
        self.stopped: tuple[int | None, float, list[str]] | None = None

    def __enter__(self) -> Nav2Stack:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.stopped is None:
            self.stop()

    def output(self) -> str:
        """Everything the launch and its processes printed so far."""
        if not self._log.closed:
            self._log.flush()
        return self.log_path.read_text(errors='replace')

    def _note_descendants(self) -> None:
        self.descendants |= descendants(self.process.pid) - {self.process.pid}

    def wait_until_active(self, timeout_s: float = 120.0) -> float:
        """Wait until every lifecycle manager of the stack reports its nodes active; return the
        wall seconds since the launch started. Raises AssertionError with the output on a
        timeout or when the launch ends first."""
        from std_srvs.srv import Trigger

        deadline = time.monotonic() + timeout_s
        for manager in self.managers:
            # A request left unanswered is asked again, through the same client, which lives
            # as long as the probe: rmw_fastrtps holds a server for the profile's 5 s reply
            # wait when it answers a client that has gone (docs/reliability.md), as a
            # lifecycle manager busy bringing its nodes up did for each request a destroyed
            # client had left behind.
            if manager not in self._is_active_clients:
                self._is_active_clients[manager] = self.probe.node.create_client(
                    Trigger, f'/{manager}/is_active')
            client = self._is_active_clients[manager]
            while True:
                assert self.process.poll() is None, f'the launch ended:\n{self.output()[-6000:]}'
                assert time.monotonic() < deadline, (
                    f'{manager} not active after {timeout_s} s:\n{self.output()[-6000:]}')
                if not client.wait_for_service(timeout_sec=0.5):
                    continue
                request = client.call_async(Trigger.Request())
                if not self.probe.spin_until(request.done, 2.0):
                    continue
                if request.result().success:
                    break
                self.probe.spin_for(0.2)
        self._note_descendants()
        return time.monotonic() - self.started_s

    def record_amcl_poses(self) -> list:
        """The list every ``/amcl_pose`` received from now on is appended to, AMCL's last pose
        before the subscription matched first. AMCL publishes a pose at its first scan and then
        only when its filter updates (the robot moved), transient local: a volatile
        subscription that matches after the first pose (discovery takes seconds on a loaded
        host) receives nothing while the robot stands still. Subscribed as Nav2's
        nav2_simple_commander subscribes it: reliable, transient local."""
        from geometry_msgs.msg import PoseWithCovarianceStamped
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy

        return self.probe.record(PoseWithCovarianceStamped, '/amcl_pose', QoSProfile(
            depth=1000, reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL))

    def sim_time_s(self) -> float:
        return self.probe.node.get_clock().now().nanoseconds * 1e-9

    def truth_since(self, start_s: float) -> np.ndarray:
        rows = [(stamp_ns(m.header.stamp) * 1e-9, m.pose.pose.position.x,
                 m.pose.pose.position.y, yaw_from_quaternion(m.pose.pose.orientation))
                for m in self.ground_truth]
        table = np.array(rows, dtype=float).reshape(-1, 4)
        return table[table[:, 0] >= start_s]

    def wait_for_truth(self, timeout_s: float = 30.0) -> None:
        assert self.probe.spin_until(lambda: len(self.ground_truth) > 0, timeout_s), (
            f'no /ground_truth within {timeout_s} s:\n{self.output()[-4000:]}')

    def navigate(self, goal: Goal, timeout_s: float = 300.0) -> Outcome:
        """Send ``goal`` as NavigateToPose and wait for its result (``timeout_s`` of wall time;
        then the goal is cancelled and counted as failed, with what each process of the launch
        was doing in :attr:`Outcome.activity`)."""
        from action_msgs.msg import GoalStatus
        from nav2_msgs.action import NavigateToPose
        from rclpy.action import ActionClient

        self.wait_for_truth()
        client = ActionClient(self.probe.node, NavigateToPose, 'navigate_to_pose')
        try:
            assert client.wait_for_server(timeout_sec=30.0), 'no navigate_to_pose server'
            request = NavigateToPose.Goal()
            request.pose.header.frame_id = 'map'
            request.pose.pose.position.x = goal.x_m
            request.pose.pose.position.y = goal.y_m
            request.pose.pose.orientation.z = math.sin(goal.yaw_rad / 2.0)
            request.pose.pose.orientation.w = math.cos(goal.yaw_rad / 2.0)
            start_s = stamp_ns(self.ground_truth[-1].header.stamp) * 1e-9
            sent = client.send_goal_async(request)
            assert self.probe.spin_until(sent.done, 30.0), 'the goal was not answered'
            handle = sent.result()
            assert handle.accepted, f'goal {goal} rejected'
            result = handle.get_result_async()
            if not self.probe.spin_until(result.done, timeout_s):
                stalled = tuple(activity(descendants(self.process.pid)))
                cancel = handle.cancel_goal_async()
                self.probe.spin_until(cancel.done, 10.0)
                return Outcome(goal, False, GoalStatus.STATUS_UNKNOWN, -1, self.sim_time_s(),
                               self.truth_since(start_s), stalled)
            self.probe.spin_for(0.2)  # the last ground truths
            answer = result.result()
            return Outcome(goal, answer.status == GoalStatus.STATUS_SUCCEEDED, answer.status,
                           int(getattr(answer.result, 'error_code', 0)), self.sim_time_s(),
                           self.truth_since(start_s))
        finally:
            client.destroy()

    def stop(self, timeout_s: float = 30.0) -> tuple[int | None, float, list[str]]:
        """Close the probe, then send SIGINT to the launch's process group, as Ctrl-C in its
        terminal (``ros2 launch`` then leaves SIGINT to the terminal and escalates to SIGTERM
        after 5 s); wait ``timeout_s`` for the launch to end. Returns (exit code or None,
        seconds to the end, command lines of the processes it started that are still running
        then; those are killed)."""
        self._note_descendants()
        self.probe.close()
        sent = time.monotonic()
        code = None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                code = self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        else:
            code = self.process.returncode
        seconds = time.monotonic() - sent
        left = []
        for pid in sorted(self.descendants):
            command = _command_line(pid)
            if command is not None:
                left.append(command)
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self._log.close()
        self.stopped = (code, seconds, left)
        return self.stopped


def _command_line(pid: int) -> str | None:
    """The command line of running process ``pid`` (None when it ended or is a zombie)."""
    try:
        state = Path(f'/proc/{pid}/stat').read_text().rpartition(')')[2].split()[0]
        if state == 'Z':
            return None
        return Path(f'/proc/{pid}/cmdline').read_text().replace('\0', ' ').strip()
    except OSError:
        return None


def min_clearance_m(map_yaml: str | os.PathLike, footprint: Sequence[float],
                    truth: np.ndarray) -> float:
    """The smallest distance from ``footprint`` (flat x, y list in the base frame) at the
    ground-truth poses ``truth`` (rows t_s, x_m, y_m, yaw_rad) to the map's obstacles (0 in
    contact)."""
    world = load_map_file(map_yaml).occupancy_map()
    return float(np.min(clearances(world, Footprint.from_flat(footprint), truth[:, 1:4])))
