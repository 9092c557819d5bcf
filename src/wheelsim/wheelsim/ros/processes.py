"""Run wheelsim nodes as separate processes and talk to them over DDS (tests, benchmarks).

- :class:`NodeProcess`: ``python -m wheelsim.nodes.<name> --ros-args ...`` in its own process,
  parameters written to a params file, output captured to a file (a pipe could fill up and
  block the node), stopped with SIGINT like ``ros2 run`` on Ctrl-C.
- :class:`Probe`: an rclpy node in the calling process, with its own context and executor,
  that records topics, publishes, calls services and spins until a condition holds.

The environment must keep DDS on loopback and name a reserved ``ROS_DOMAIN_ID``
(``wheelsim.dds_domain``); child processes inherit it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import rclpy
import yaml
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import QoSProfile

from wheelsim.ros import qos

#: Deep enough that nothing is dropped while the probe is busy (depth 10 can overflow).
RECORD_QOS = QoSProfile(depth=1000)


class NodeProcess:
    """A node module started in a child process with parameters and extra ROS arguments."""

    def __init__(
        self,
        module: str,
        params: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        ros_args: Sequence[str] = (),
    ) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix='wheelsim-node-'))
        command = [sys.executable, '-m', module, '--ros-args']
        if params:
            params_file = self._dir / 'params.yaml'
            params_file.write_text(yaml.safe_dump({'/**': {'ros__parameters': dict(params)}}))
            command += ['--params-file', str(params_file)]
        if namespace:
            command += ['-r', f'__ns:={namespace}']
        command += list(ros_args)
        self.command = command
        self._log = open(self._dir / 'output.txt', 'w+')  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT)

    def output(self) -> str:
        """Everything the node printed so far (stdout and stderr, ROS logging included)."""
        return (self._dir / 'output.txt').read_text()

    def wait(self, timeout_s: float = 30.0) -> int:
        """Wait for the process to end by itself; return its exit code."""
        return self.process.wait(timeout=timeout_s)

    def stop(self, timeout_s: float = 10.0) -> int:
        """SIGINT, then wait (kill after ``timeout_s``); return the exit code."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()
        return self.process.returncode

    def __enter__(self) -> NodeProcess:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class Probe:
    """An rclpy node in this process for observing and driving nodes under test."""

    def __init__(self, name: str = 'probe', use_sim_time: bool = False) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context, domain_id=int(os.environ['ROS_DOMAIN_ID']))
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

    def call(self, srv_type: type, name: str, request: Any, timeout_s: float = 10.0) -> Any:
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
