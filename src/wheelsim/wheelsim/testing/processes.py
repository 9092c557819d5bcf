"""Run wheelsim nodes as separate processes and talk to them over DDS (tests, benchmarks).

- :class:`NodeProcess`: ``python -m wheelsim.nodes <name> --ros-args ...`` in its own process,
  parameters written to a params file, output captured to a file (a pipe could fill up and
  block the node), stopped with SIGINT like ``ros2 run`` on Ctrl-C.
- :func:`ending_with_this_process`: a child's command line such that it gets SIGTERM when the
  thread that started it ends, so a killed test run (a CI time-out, SIGKILL) leaves no node
  publishing on a domain it no longer reserves. :class:`NodeProcess` starts its node with it.
- :class:`Probe`: an rclpy node in the calling process, with its own context and executor,
  that records topics, publishes, calls services and spins until a condition holds.
- :class:`ClockedVehicleSim`: a ``use_sim_time`` vehicle_sim whose ``/clock`` the probe
  publishes, so that simulated time moves only when the caller says: a command sent while the
  clock stands still enters at a known simulated time, and every output can be checked exactly.
- :func:`stopped_cleanly`: whether a node process's exit counts as clean in a test (exit 0, or
  the one known hang in the middleware's teardown, with a warning); :func:`refused_cleanly`
  and :meth:`NodeProcess.refused` the same for a refused start-up (exit 2, or that hang).
- :func:`diagnostic_values`: the key-value pairs of a node's ``/diagnostics`` report.

The environment must keep DDS on loopback and name a reserved ``ROS_DOMAIN_ID``
(:func:`wheelsim.ros.dds_domain.loopback_domain`, or the ``ros_domain_id`` fixture of
``wheelsim.testing.fixtures``); child processes inherit it.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist, TwistStamped
from rcl_interfaces.msg import SetParametersResult
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile
from rosgraph_msgs.msg import Clock
from std_msgs.msg import String

from wheelsim.core import yaml_numbers
from wheelsim.ros import qos
from wheelsim.ros.conversions import clock_msg, stamp_ns

#: Deep enough that nothing is dropped while the probe is busy (depth 10 can overflow).
RECORD_QOS = QoSProfile(depth=1000)

#: Run as ``python -c CHILD_LAUNCHER PARENT_PID PROGRAM ARGS...``: asks Linux for SIGTERM when
#: the parent's starting thread ends (``PR_SET_PDEATHSIG``, prctl(2), which ``execve`` keeps),
#: exits if the parent has ended already, then executes ``PROGRAM ARGS...`` in its place (or exits
#: with one line naming the program if it cannot).
CHILD_LAUNCHER = """
import ctypes, os, signal, sys
PR_SET_PDEATHSIG = 1
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM) != 0:
    sys.exit(f'prctl(PR_SET_PDEATHSIG) failed: {os.strerror(ctypes.get_errno())}')
if os.getppid() != int(sys.argv[1]):
    sys.exit(f'the process that started this one (PID {sys.argv[1]}) has ended already')
try:
    os.execvp(sys.argv[2], sys.argv[2:])
except OSError as err:
    sys.exit(f'cannot run {sys.argv[2]!r}: {err.strerror}')
"""


# A wheelsim node whose teardown holds the Python interpreter lock past its limit is ended by
# faulthandler's C thread (wheelsim.ros.shutdown: HARD_LIMIT_S after a signal, TEARDOWN_LIMIT_S
# after a refused start-up's teardown began) with every thread's Python stack and exit 1. Seen
# inside rclpy's Node.destroy_node: at its last call, the node handle's destruction, where
# rmw_fastrtps finishes the rcl node and deletes the Fast DDS participant (on Jazzy in full test
# runs of 2026-11-27, localization in the Nav2 bring-up launch, the controller in the demo
# launch, not reproduced; on Kilted reproduced on 2026-12-01, 2 of 480 refused start-ups of 8
# vehicle_sims at a time: Fast DDS 3.2's set_listener spins there while a discovery callback
# waits for its lock, eProsima/Fast-DDS#6513); and on Kilted (CI of 2026-12-04, a controller
# signalled while every node started) one call earlier, in the publisher destruction that
# destroy_node begins with (rmw_destroy_publisher); and, in a reproduction on
# Kilted (2026-12-04), #6513's spin in a start-up abandoned for a signal, where the collection
# in node_main's _free_half_built deleted the participant. Below wheelsim's code
# (docs/reliability.md). Only those exits are let through: exit 1 with the dump whose main
# thread's innermost frames are rclpy's own (destroy_node, or the destruction of one of the
# node's entities that destroy_node calls) called by the live seam's destroy, called from
# node_main's _run; or node_main's _free_half_built (a collection, in C) called from run_node or
# _run, with nothing but rclpy's frames inside it. A hang anywhere else fails. The frames may
# carry a prefix (ros2 launch prints ``[name-N] `` before each line of a process).
MIDDLEWARE_TEARDOWN_HANG = re.compile(
    r'Timeout \(0:00:\d\d(?:\.\d+)?\)!\n(?:.*\n)*?'
    r'.*Thread 0x[0-9a-f]+ \(most recent call first\):\n'
    r'(?:.*/rclpy/\w+\.py", line \d+ in \w+\n)*'
    r'(?:.*/rclpy/node\.py", line \d+ in destroy_node\n'
    r'.*/wheelsim/ros/seam\.py", line \d+ in destroy\n'
    r'.*/wheelsim/ros/node_main\.py", line \d+ in _run\n'
    r'|.*/wheelsim/ros/node_main\.py", line \d+ in _free_half_built\n'
    r'.*/wheelsim/ros/node_main\.py", line \d+ in (?:run_node|_run)\n)')
#: The first line of faulthandler's dump when it ends a process at a time limit.
TEARDOWN_DUMP_START = re.compile(r'^(?:\[\S+\] )?Timeout \(0:\d\d:\d\d(?:\.\d+)?\)!$', re.MULTILINE)
#: The line a node prints when its start-up or teardown outlasted the grace period after a
#: signal and it ended its process with exit 0 anyway (wheelsim.ros.shutdown).
GRACE_OVERRUN = re.compile(
    r'\w+: the (?:start-up|teardown) took over [\d.]+ s after \w+ \(in [^)]*\)')


def middleware_teardown_hang(returncode: int, output: str) -> bool:
    """True if a wheelsim node process that exited with ``returncode`` after printing ``output``
    was ended by faulthandler while rclpy destroyed its node (see above)."""
    return returncode == 1 and MIDDLEWARE_TEARDOWN_HANG.search(output + '\n') is not None


def _ended_by_middleware_teardown_hang(name: str, returncode: int, output: str) -> bool:
    """:func:`middleware_teardown_hang`, with a warning naming ``name`` when true."""
    if not middleware_teardown_hang(returncode, output):
        return False
    warnings.warn(f"{name}: the shutdown hung in rclpy's teardown of the node (rmw / Fast "
                  'DDS) and faulthandler ended it with exit 1', stacklevel=4)
    return True


def stopped_cleanly(name: str, returncode: int, output: str) -> bool:
    """True if a node process ``name`` stopped by a signal exited cleanly: with 0 (with a
    warning when its start-up or teardown outlasted the grace period, :data:`GRACE_OVERRUN`),
    or (with a warning) by the known middleware teardown hang, :func:`middleware_teardown_hang`."""
    if returncode == 0:
        if overrun := GRACE_OVERRUN.search(output):
            warnings.warn(f'{name}: {overrun.group(0)}', stacklevel=3)
        return True
    return _ended_by_middleware_teardown_hang(name, returncode, output)


def refused_cleanly(name: str, returncode: int, output: str) -> bool:
    """True if a node process ``name`` whose start-up input was refused exited as promised:
    with 2, or (with a warning) by the known middleware teardown hang after its error line
    (:func:`middleware_teardown_hang`: on Kilted, Fast DDS 3.2 deleting the participant can spin
    while a discovery callback waits, eProsima/Fast-DDS#6513)."""
    if returncode == 2:
        return True
    return (f'{name}: error: ' in before_teardown_dump(output)
            and _ended_by_middleware_teardown_hang(name, returncode, output))


def before_teardown_dump(output: str) -> str:
    """``output`` up to faulthandler's dump of a teardown ended at its limit (all of it if there
    is none)."""
    return TEARDOWN_DUMP_START.split(output, maxsplit=1)[0]


def launched_node_stopped_cleanly(node: str, launch_output: str) -> bool:
    """Whether the wheelsim node ``node`` of a ``ros2 launch`` ended cleanly on Ctrl-C: launch
    says it finished cleanly, or it died with the exit code and the lines (launch's ``[node-N]``
    prefix removed) that :func:`stopped_cleanly` lets through (the known Fast DDS teardown
    hang, with a warning)."""
    if re.search(rf'\[{node}-\d+\]: process has finished cleanly', launch_output):
        return True
    died = re.search(rf'\[{node}-\d+\]: process has died \[pid \d+, exit code (-?\d+)',
                     launch_output)
    own = '\n'.join(line.split('] ', 1)[1] for line in launch_output.splitlines()
                     if re.match(rf'\[{node}-\d+\] ', line))
    return died is not None and stopped_cleanly(node, int(died.group(1)), own + '\n')


def diagnostic_values(report: DiagnosticArray) -> dict[str, str]:
    """The ``key: value`` pairs of the first status of a ``/diagnostics`` message (a wheelsim
    node reports one status per message)."""
    return {pair.key: pair.value for pair in report.status[0].values}


def ending_with_this_process(command: Sequence[str]) -> list[str]:
    """``command`` run so that it gets SIGTERM when the thread calling ``subprocess.Popen`` ends
    (the whole process, when that is its main thread, even killed outright; Linux only)."""
    return [sys.executable, '-S', '-c', CHILD_LAUNCHER, str(os.getpid()), *command]


def default_sigint() -> None:
    """``preexec_fn`` of a child that a test ends with SIGINT: SIGINT's default action, as
    from a terminal, also where the tests run with SIGINT ignored (a shell's background job),
    which the child would inherit: a SIGINT sent before it takes the signals over would be
    lost, and launch, which hears signals through Python's handlers, would never hear it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class NodeProcess:
    """A node module started in a child process with parameters and extra ROS arguments."""

    def __init__(
        self,
        module: str,
        params: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        ros_args: Sequence[str] = (),
    ) -> None:
        self.module = module
        self._dir = Path(tempfile.mkdtemp(prefix='wheelsim-node-'))
        package, _, name = module.rpartition('.')
        if package != 'wheelsim.nodes':
            raise ValueError(f'{module!r} is not a node module (wheelsim.nodes.NAME)')
        # As the node's executable starts it (signals taken over before the imports).
        command = [sys.executable, '-m', package, name, '--ros-args']
        if params:
            params_file = self._dir / 'params.yaml'
            params_file.write_text(yaml_numbers.dump({'/**': {'ros__parameters': dict(params)}}))
            command += ['--params-file', str(params_file)]
        if namespace:
            command += ['-r', f'__ns:={namespace}']
        command += list(ros_args)
        self.command = ending_with_this_process(command)
        self._log = open(self._dir / 'output.txt', 'w+')  # noqa: SIM115 - closed in stop()
        self._final_output: str | None = None  # kept by stop(), which removes the folder
        self.process = subprocess.Popen(self.command, stdout=self._log,
                                        stderr=subprocess.STDOUT, preexec_fn=default_sigint)

    def output(self) -> str:
        """Everything the node printed so far (stdout and stderr, ROS logging included)."""
        if self._final_output is not None:
            return self._final_output
        return (self._dir / 'output.txt').read_text()

    def wait(self, timeout_s: float = 30.0) -> int:
        """Wait for the process to end by itself; return its exit code."""
        return self.process.wait(timeout=timeout_s)

    def refused(self, timeout_s: float = 30.0) -> bool:
        """Wait for the process to end by itself; True if it ended as a node that refused its
        start-up input does (:func:`refused_cleanly`)."""
        code = self.wait(timeout_s)
        return refused_cleanly(self.module.rpartition('.')[2], code, self.output())

    def stop(self, timeout_s: float = 10.0) -> int:
        """SIGINT, then wait (kill after ``timeout_s``); return the exit code. The output stays
        readable (:meth:`output`); its temporary folder is removed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self._final_output is None:
            self._final_output = self.output()
            self._log.close()
            shutil.rmtree(self._dir, ignore_errors=True)
        return self.process.returncode

    def stop_cleanly(self, timeout_s: float = 10.0) -> bool:
        """:meth:`stop`; True if the exit was clean (:func:`stopped_cleanly`)."""
        return stopped_cleanly(self.module, self.stop(timeout_s), self.output())

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Probe:
    """An rclpy node in this process for observing and driving nodes under test."""

    def __init__(self, name: str = 'probe', use_sim_time: bool = False) -> None:
        self.context = rclpy.Context()
        rclpy.init(args=[], context=self.context, domain_id=int(os.environ['ROS_DOMAIN_ID']))
        self.node = Node(
            name, context=self.context,
            parameter_overrides=[Parameter('use_sim_time', value=use_sim_time)],
        )
        self.executor = SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def record(self, msg_type: type, topic: str, qos_profile=RECORD_QOS) -> list:
        """Subscribe ``topic``; return the list every received message is appended to."""
        received: list = []
        self.node.create_subscription(msg_type, topic, received.append, qos_profile)
        return received

    def record_arrivals(self, msg_type: type, topic: str, qos_profile=RECORD_QOS) -> list:
        """Like :meth:`record`, appending ``(wall_time_ns, message)`` pairs."""
        received: list = []
        self.node.create_subscription(
            msg_type, topic, lambda msg: received.append((time.time_ns(), msg)), qos_profile
        )
        return received

    def publisher(self, msg_type: type, topic: str, qos_profile=qos.DEFAULT):
        return self.node.create_publisher(msg_type, topic, qos_profile)

    def spin_until(self, condition: Callable[[], bool], timeout_s: float = 10.0) -> bool:
        """Spin until ``condition()`` is true (True) or ``timeout_s`` passed (False)."""
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            self.executor.spin_once(timeout_sec=0.01)
        return True

    def spin_for(self, duration_s: float) -> None:
        """Spin for ``duration_s`` of wall time."""
        self.spin_until(lambda: False, duration_s)

    def catch_up(self, recordings: Sequence[list], timeout_s: float = 60.0,
                 until_ns: int | None = None) -> bool:
        """Spin until each recording (of :meth:`record` or :meth:`record_arrivals`, of messages
        with a header) ends with a message stamped at or after ``until_ns`` (default: this
        probe's clock now); False after ``timeout_s``. A busy probe takes a fast topic's
        messages seconds late: call this before reading a recording's last message as the state
        of now, or before using everything the nodes published until a time."""
        target_ns = self.node.get_clock().now().nanoseconds if until_ns is None else until_ns

        def stamp(entry: Any) -> int:
            message = entry[1] if isinstance(entry, tuple) else entry
            return stamp_ns(message.header.stamp)

        def caught_up() -> bool:
            return all(recording and stamp(recording[-1]) >= target_ns for recording in recordings)

        return self.spin_until(caught_up, timeout_s)

    def call(self, srv_type: type, name: str, request: Any, timeout_s: float = 60.0) -> Any:
        """Call a service and return its response; raises TimeoutError."""
        client = self.node.create_client(srv_type, name)
        try:
            if not client.wait_for_service(timeout_sec=timeout_s):
                raise TimeoutError(f'service {name} did not appear')
            future = client.call_async(request)
            if not self.spin_until(future.done, timeout_s):
                raise TimeoutError(f'service {name} did not answer')
            return future.result()
        finally:
            self.node.destroy_client(client)

    def close(self) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


class ClockedVehicleSim:
    """vehicle_sim in its own process on a clock published by ``probe``.

    ``params`` are vehicle_sim's (``use_sim_time`` and ``cmd_vel_type: twist`` are added); the
    clock starts at ``start_ns``, where the node publishes its first state. Each instance has
    its own clock topic (``/clock`` remapped to ``<namespace>/clock``), so that several
    instances alive at once, or one left from an earlier test, never see each other's time.
    A subscription made after construction may miss what the node publishes until
    :meth:`wait_for_subscriptions` returns: call it before moving the clock on.
    """

    def __init__(
        self, probe: Probe, params: Mapping[str, Any], namespace: str, start_ns: int = 10**9
    ) -> None:
        params = {'use_sim_time': True, 'cmd_vel_type': 'twist', **params}
        self.probe = probe
        self.namespace = namespace
        self.pub_period_ns = round(1e9 / params.get('pub_rate', 50.0))
        clock_topic = f'{namespace.rstrip("/")}/clock'
        self.process = NodeProcess('wheelsim.nodes.vehicle_sim', params, namespace,
                                   ros_args=['-r', f'/clock:={clock_topic}'])
        # cmd_vel before /clock: the node learns of this probe's publishers in the order they
        # were made (see wait_for_subscriptions), so that once it follows the clock (its first
        # output arrived) it has matched the cmd_vel publisher too, and no command is lost.
        self.cmd = probe.publisher(Twist, f'{namespace}/cmd_vel')
        self.clock = probe.publisher(Clock, clock_topic, qos.CLOCK_PUBLISHER)
        self.twists: list = []
        twists = probe.node.create_subscription(
            TwistStamped, f'{namespace}/twist_actual', self.twists.append, RECORD_QOS)
        matched = probe.spin_until(
            lambda: self.clock.get_subscription_count() >= 1
            and self.cmd.get_subscription_count() >= 1
            and twists.get_publisher_count() >= 1, 30.0)
        if not matched:
            raise TimeoutError(f'vehicle_sim did not come up:\n{self.process.output()}')
        self._get_parameters = probe.node.create_client(
            GetParameters, f'{namespace}/vehicle_sim/get_parameters')  # see command()
        if not self._get_parameters.wait_for_service(timeout_sec=30.0):
            raise TimeoutError(f'vehicle_sim serves no parameters:\n{self.process.output()}')
        # The node publishes its first state once, at the first /clock: it must reach us.
        self.wait_for_subscriptions()
        self.now_ns = start_ns
        self.publish_clock(start_ns)
        self.wait_for_output(start_ns)

    def wait_for_subscriptions(self, timeout_s: float = 30.0) -> None:
        """Wait until vehicle_sim sends to every subscription the probe has made so far, so
        that none of them misses anything the node publishes from now on.

        A subscription is matched with the node's publisher on the probe's side (what
        ``get_publisher_count`` and matched events report) as soon as the probe knows the
        publisher, but on the node's side only once the node's DDS participant has processed
        its announcement; a message published before that does not reach it (volatile QoS),
        though the probe's side says matched. Under load that took
        long enough to lose vehicle_sim's first state, published once at the first /clock, and
        ``wait_for_output`` cannot get it back: republishing the same time publishes nothing.
        A participant announces its subscriptions in the order they were made, over one
        reliable discovery channel that delivers in order, and the node's ``robot_description``
        is latched: its value reaching a subscription made now proves that the node has
        processed this announcement and every earlier one (a publisher it creates later is
        matched with them when it is created).
        """
        received: list = []
        subscription = self.probe.node.create_subscription(
            String, f'{self.namespace}/robot_description', received.append, qos.LATCHED)
        try:
            if not self.probe.spin_until(lambda: received, timeout_s):
                raise TimeoutError(
                    f'vehicle_sim did not match the subscriptions:\n{self.process.output()}')
        finally:
            self.probe.node.destroy_subscription(subscription)

    def publish_clock(self, t_ns: int) -> None:
        self.now_ns = t_ns
        self.clock.publish(clock_msg(t_ns))

    def advance(self, t_ns: int, increment_ns: int | None = None) -> None:
        """Move the clock to ``t_ns`` in increments (default one publish period), waiting for
        the last output due at each new time."""
        increment_ns = increment_ns or self.pub_period_ns
        while self.now_ns < t_ns:
            self.publish_clock(min(self.now_ns + increment_ns, t_ns))
            self.wait_for_output(self.now_ns - self.now_ns % self.pub_period_ns)

    def wait_for_output(self, stamp: int) -> None:
        """Wait for the output stamped ``stamp`` (republishing /clock, which is best effort)."""
        for _ in range(120):
            if self.probe.spin_until(lambda: self.last_stamp() == stamp, 0.5):
                return
            self.clock.publish(clock_msg(self.now_ns))
        raise TimeoutError(f'no output at {stamp} ns:\n{self.process.output()}')

    def last_stamp(self) -> int:
        return stamp_ns(self.twists[-1].header.stamp) if self.twists else -1

    def set_parameter(self, name: str, value: Any) -> SetParametersResult:
        parameter = Parameter(name, value=value).to_parameter_msg()
        request = SetParameters.Request(parameters=[parameter])
        service = f'{self.namespace}/vehicle_sim/set_parameters'
        return self.probe.call(SetParameters, service, request).results[0]

    def command(self, vx_mps: float, vy_mps: float, wz_radps: float) -> int:
        """Send a command while the clock stands still; return the simulated time it enters.

        Returns once the node has taken the command, so that the clock moved on next cannot
        overtake it. The command and a ``get_parameters`` request sent after it reach the node
        in that order (from this probe's participant to the node's over one transport, with
        ``rmw_fastrtps_cpp`` as env.sh sets it), and the node's single-threaded executor handles
        the subscriptions ready in one wait before the services (rclpy's ``Executor``, Jazzy
        and Kilted). The node checks them one after another, though, so one request could be
        seen ready without the command that arrived just before it. Its answer proves that the
        command is in the node: a second request is then served only in a wait that also sees
        the command, or after the command was taken. (Waiting for the command's
        acknowledgement instead waits for the writer's next heartbeat, up to 3 s.)
        """
        msg = Twist()
        msg.linear.x, msg.linear.y, msg.angular.z = vx_mps, vy_mps, wz_radps
        self.cmd.publish(msg)
        for _ in range(2):
            answer = self._get_parameters.call_async(GetParameters.Request(names=['pub_rate']))
            if not self.probe.spin_until(answer.done, 30.0):
                raise TimeoutError(f'vehicle_sim did not answer:\n{self.process.output()}')
        return self.now_ns

    def samples(self, since_ns: int) -> tuple[np.ndarray, np.ndarray]:
        """(times in s after ``since_ns``, (n, 3) body twists) of the outputs after it."""
        rows = [(stamp_ns(m.header.stamp), m.twist.linear.x, m.twist.linear.y, m.twist.angular.z)
                for m in self.twists if stamp_ns(m.header.stamp) > since_ns]
        data = np.array(rows)
        return (data[:, 0] - since_ns) / 1e9, data[:, 1:]
