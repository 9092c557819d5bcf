"""Reliability figures: the reliability review's areas re-measured (docs/reliability.md).

    python bench/bench_reliability.py                  # after `source env.sh`; about 8 minutes
    python bench/bench_reliability.py startup faults   # only some areas

Areas (each prints its figures; a line starting with ``NOT`` is a case that failed):

- ``startup``: every node started with each invalid value of the review's area 1 (values out of
  range, NaN, inf, wrong types, empty, equal or malformed frame names, two clock modes, missing
  or garbled params files, waypoints beyond the workspace). Refused cleanly = exit code 2, no
  traceback, at most two output lines, an ``error:`` line naming the parameter. Valid controls
  (an unknown name, Stanley on a differential base) must start.
- ``live``: the four nodes running; each invalid live update of the review's area 2 must be
  refused with a reason, leave the value as it was and leave every node alive.
- ``memory``: peak RSS of a planner given the farthest goal it accepts (edge to edge of
  ``limits.workspace_radius``) and goals beyond it (refused), against a near goal.
- ``faults``: the four nodes driving a square; each of controller, localization and vehicle_sim
  killed with SIGKILL and restarted: wall seconds until the vehicle is at rest (< 0.05 m/s), and
  from the restart until it moves again (> 0.1 m/s); the slowest backward speed after a restart.
- ``signals``: ``wheelsim run`` interrupted by SIGINT, SIGTERM and SIGKILL: whether the bag was
  finished (``metadata.yaml`` written) and how many messages wheelsim's reader finds in it.
- ``load``: vehicle_sim at 1000/1000 Hz with three subscribers for 30 s (messages lost), and
  vehicle_sim + localization as fast as possible for 120 s (memory growth per simulated hour).

The fuzz, shutdown, socket and output-safety checks are tests (``make test``), not figures.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml
from geometry_msgs.msg import TwistStamped
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import GetParameters, SetParameters
from rclpy.parameter import Parameter, parameter_value_to_python
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState

from wheelsim.ros.conversions import stamp_ns
from wheelsim.ros.dds_domain import require_loopback_dds, reserved_domain_id
from wheelsim.testing.processes import NodeProcess, Probe

VS, LO, PL, CO = 'vehicle_sim', 'localization', 'planner', 'controller'
DIFF = 'model_params.differential.drive_actuators'
BIKE = 'model_params.bicycle.drive_actuator'
NAN, INF = math.nan, math.inf
#: (node, {parameter: invalid value}, the parameter the error line must name).
STARTUP_INVALID = [
    *[(VS, {'step_rate': v}, 'step_rate') for v in (-100.0, 0.0, NAN, INF, 1e12, 'abc', True,
                                                    [1000.0, 2.0])],
    *[(VS, {'pub_rate': v}, 'pub_rate') for v in (-1.0, 0.0, NAN, 1e12, 2000.0)],
    *[(VS, {'clock_rate': v}, 'clock_rate') for v in (0.0, 2000.0)],
    *[(VS, {'model': v}, 'model') for v in ('tank', 42)],
    (VS, {'cmd_vel_type': 'foo'}, 'cmd_vel_type'),
    *[(VS, {'model': 'bicycle', f'{BIKE}.time_constant': v}, 'time_constant') for v in (-0.4, NAN)],
    *[(VS, {f'{DIFF}.time_constant': v}, 'time_constant') for v in (-0.4, NAN)],
    (VS, {f'{DIFF}.max_deceleration': -2.0}, 'max_deceleration'),
    (VS, {'model': 'bicycle', 'model_params.bicycle.wheel_base': 0.0}, 'wheel_base'),
    (VS, {'model_params.differential.slip_left': 1.5}, 'slip_left'),
    (VS, {'twist_reference_max_oldness': -1.0}, 'twist_reference_max_oldness'),
    (VS, {'max_time_jump': 0.0}, 'max_time_jump'),
    (VS, {'initial_pose.yaw': 100.0}, 'initial_pose.yaw'),
    (VS, {'initial_pose.x': 1e300}, 'initial_pose.x'),
    (VS, {'cmd_vel_limits.linear': 0.0}, 'cmd_vel_limits.linear'),
    (VS, {'real_time_factor': -1.0}, 'real_time_factor'),
    (VS, {'be_reference_clock': True, 'use_sim_time': True}, 'be_reference_clock'),
    (VS, {'map_frame': ''}, 'map_frame'),
    (VS, {'base_frame': ''}, 'base_frame'),
    (VS, {'map_frame': 'base_link'}, 'base_frame'),
    (VS, {'frame_prefix': 'a b/'}, 'frame_prefix'),
    (VS, 'garbled', 'params file'),
    (VS, 'missing', 'params file'),
    *[(LO, {'mode': v}, 'mode') for v in ('foo', True)],
    *[(LO, {'seed': v}, 'seed') for v in (-1, 1.5, 1e23)],
    *[(LO, {'localization.odom_walk_velocity_translation': v}, 'odom_walk') for v in (-1.0, INF)],
    (LO, {'localization.map_noise_correlation_time': NAN}, 'correlation_time'),
    *[(LO, {'ekf.measurement_rate': v}, 'measurement_rate') for v in (0.0, -10.0, 1e12)],
    (LO, {'ekf.measurement_noise_translation': 0.0}, 'measurement_noise'),
    (LO, {'map_frame': ''}, 'map_frame'),
    (LO, {'odom_frame': ''}, 'odom_frame'),
    (LO, {'odom_frame': 'map'}, 'odom_frame'),
    (LO, {'base_frame': 'odom'}, 'base_frame'),
    *[(PL, {'waypoints': v}, 'waypoints') for v in ([1.0, 2.0], [INF, 0.0, 0.0],
                                                     [NAN, NAN, NAN], [1e308, -1e308, 0.0])],
    (PL, {'waypoints': ['a', 'b', 'c']}, 'waypoints'),
    *[(PL, {'path_resolution': v}, 'path_resolution') for v in (0.0, -0.05)],
    *[(PL, {'limits.max_speed': v}, 'max_speed') for v in (-1.0, NAN)],
    (PL, {'limits.max_curvature': NAN}, 'max_curvature'),
    (PL, {'limits.max_acceleration': 0.0}, 'max_acceleration'),
    (PL, {'limits.max_yaw_rate': INF}, 'max_yaw_rate'),
    (PL, {'map_frame': ''}, 'map_frame'),
    (CO, {'algorithm': 'mpc'}, 'algorithm'),
    *[(CO, {'control_rate': v}, 'control_rate') for v in (-20.0, 0.0, 1e12, NAN)],
    (CO, {'wheel_base': 0.0}, 'wheel_base'),
    (CO, {'max_steering_angle': 2.0}, 'max_steering_angle'),
    (CO, {'limits.min_linear_x': 1.0}, 'min_linear_x'),
    (CO, {'limits.max_linear_x': -1.0}, 'max_linear_x'),
    (CO, {'goal.timeout': 0.0}, 'goal.timeout'),
    (CO, {'pose_timeout': INF}, 'pose_timeout'),
    (CO, {'enable_stamped_cmd_vel': 'maybe'}, 'enable_stamped_cmd_vel'),
    (CO, {'model': 'tank'}, 'model'),
    (CO, {'pure_pursuit.min_lookahead': 5.0, 'pure_pursuit.max_lookahead': 1.0}, 'lookahead'),
    (CO, {'base_frame': ''}, 'base_frame'),
    (CO, {'base_frame': 'map'}, 'base_frame'),
]
#: Valid start-ups: each node must run (the unknown name gets a warning, not an error).
STARTUP_VALID = [
    (VS, {'step_rat': 100.0}, 'did you mean'),
    (CO, {'model': 'differential', 'algorithm': 'stanley'}, 'stanley'),
]

#: Invalid live updates: (node, parameter, value); ``Parameter.Type.NOT_SET`` = undeclare.
UNDECLARE = object()
LIVE_INVALID = [
    *[(VS, 'pub_rate', v) for v in (-1.0, NAN, INF, 5000.0, 'fast', UNDECLARE)],
    (VS, 'step_rate', 500.0), (VS, 'model', 'omni'), (VS, 'frame_prefix', 'x/'),
    (VS, 'use_sim_time', True), (VS, 'clock_rate', 2000.0),
    *[(VS, 'real_time_factor', v) for v in (INF, -1.0)],
    *[(VS, 'cmd_vel_limits.linear', v) for v in (NAN, 0.0)],
    *[(VS, 'initial_pose.x', v) for v in (1e12, NAN)],
    *[(VS, f'{DIFF}.dead_time', v) for v in (1e308, -1.0)],
    (VS, f'{DIFF}.time_constant', NAN), (VS, 'max_time_jump', 0.0),
    (VS, 'twist_reference_max_oldness', -1.0), (VS, 'pub_rat', 1.0),
    (LO, 'mode', 'ekf'), (LO, 'seed', 5), (LO, 'map_frame', 'x'),
    *[(LO, 'localization.odom_walk_velocity_translation', v) for v in (NAN, INF, -1.0)],
    *[(LO, 'ekf.measurement_rate', v) for v in (1e12, 0.0)],
    (LO, 'localization.map_noise_correlation_time', NAN),
    *[(PL, 'waypoints', v) for v in ([INF, 0.0, 0.0], [NAN, NAN, NAN], [1.0, 2.0],
                                      [1e308, -1e308, 0.0], [2000.0, 0.0, NAN])],
    (PL, 'limits.max_curvature', NAN), (PL, 'limits.max_speed', -1.0),
    (PL, 'path_resolution', 0.0), (PL, 'map_frame', 'x'),
    *[(CO, 'control_rate', v) for v in (1e12, NAN, 0.0)],
    (CO, 'enable_stamped_cmd_vel', False), (CO, 'model', 'bicycle'), (CO, 'wheel_base', 0.0),
    (CO, 'max_steering_angle', 2.0), (CO, 'limits.min_linear_x', 1.0), (CO, 'goal.timeout', 0.0),
    (CO, 'pose_timeout', INF), (CO, 'base_frame', ''),
    (CO, 'pure_pursuit.min_lookahead', 50.0),
]
#: Valid live updates, applied in this order (the last ones restore the first).
LIVE_VALID = [(VS, 'pub_rate', 20), (VS, 'pub_rate', 50.0),
              (CO, 'pure_pursuit.min_lookahead', 0.5), (CO, 'pure_pursuit.min_lookahead', 0.3)]

# 120 m at 1 m/s: still driving when the last node restarts.
SQUARE = [30.0, 0.0, NAN, 30.0, 30.0, NAN, 0.0, 30.0, NAN, 0.0, 0.0, NAN]
STACK = {VS: {'model': 'differential'}, LO: {'mode': 'noisy'},
         PL: {'waypoints': SQUARE, 'limits.max_speed': 1.0}, CO: {'model': 'differential'}}


def _yaml_value(value):
    if isinstance(value, list):
        return [_yaml_value(v) for v in value]
    return value if not isinstance(value, float) or math.isfinite(value) else (
        '.nan' if math.isnan(value) else ('.inf' if value > 0 else '-.inf'))


def _params_file(values, folder: Path) -> Path:
    path = Path(tempfile.mkstemp(suffix='.yaml', dir=folder)[1])
    if values == 'garbled':
        path.write_text('vehicle_sim: {ros__parameters: [unclosed\n')
    elif values == 'missing':
        path.unlink()
    else:
        body = {k: _yaml_value(v) for k, v in values.items()}
        text = yaml.safe_dump({'/**': {'ros__parameters': body}})
        path.write_text(text.replace("'.nan'", '.nan').replace("'.inf'", '.inf')
                        .replace("'-.inf'", '-.inf'))
    return path


def _start(node: str, values, folder: Path, run_s: float) -> tuple[int | None, str]:
    """Start ``node``; its exit code if it ended within ``run_s`` (else None) and its output."""
    command = [sys.executable, '-m', f'wheelsim.nodes.{node}', '--ros-args', '--params-file',
               str(_params_file(values, folder))]
    with tempfile.TemporaryFile('w+') as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            code = process.wait(timeout=run_s)
        except subprocess.TimeoutExpired:
            code = None
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)
        log.seek(0)
        return code, log.read().strip()


def area_startup() -> None:
    def invalid(case) -> tuple[bool, str]:
        node, values, name = case
        code, output = _start(node, values, folder, 60.0)
        lines = output.splitlines()
        named = name in lines[-1] or name == 'params file' if lines else False
        clean = (code == 2 and 'Traceback' not in output and 0 < len(lines) <= 2
                 and f'{node}: error:' in lines[-1] and named)
        return clean, output

    def valid(case) -> tuple[bool, str]:
        node, values, expected = case
        code, output = _start(node, values, folder, 20.0)
        return code is None and expected in output, output

    with tempfile.TemporaryDirectory() as name, ThreadPoolExecutor(4) as pool:
        folder = Path(name)
        refused = list(pool.map(invalid, STARTUP_INVALID))
        started = list(pool.map(valid, STARTUP_VALID))
    print(f'startup: invalid values refused cleanly: {sum(ok for ok, _ in refused)} of '
          f'{len(refused)} (exit 2, one error line naming the parameter, no traceback); valid '
          f'controls started: {sum(ok for ok, _ in started)} of {len(started)}')
    for case, (ok, output) in zip(STARTUP_INVALID + STARTUP_VALID, refused + started,
                                  strict=True):
        if not ok:
            print(f'   NOT as expected: {case[0]} {case[1]}: {output[-300:]!r}')


def _get(probe: Probe, node: str, name: str):
    response = probe.call(GetParameters, f'/{node}/get_parameters',
                          GetParameters.Request(names=[name]))
    return repr(parameter_value_to_python(response.values[0])) if response.values else None


def _set(probe: Probe, node: str, name: str, value):
    parameter = (Parameter(name, Parameter.Type.NOT_SET) if value is UNDECLARE
                 else Parameter(name, value=value))
    request = SetParameters.Request(parameters=[parameter.to_parameter_msg()])
    return probe.call(SetParameters, f'/{node}/set_parameters', request).results[0]


def area_live() -> None:
    nodes = {name: NodeProcess(f'wheelsim.nodes.{name}', params) for name, params in STACK.items()}
    probe = Probe('live_probe')
    failures, refused = [], 0
    try:
        for node, name, value in LIVE_INVALID:
            before = _get(probe, node, name)
            result = _set(probe, node, name, value)
            after = _get(probe, node, name)
            if not result.successful and result.reason and before == after:
                refused += 1
            else:
                failures.append(f'{node} {name}={value!r}: successful={result.successful} '
                                f'reason={result.reason!r} before={before} after={after}')
        applied = sum(_set(probe, node, name, value).successful
                      for node, name, value in LIVE_VALID)
        alive = [name for name, node in nodes.items() if node.process.poll() is None]
    finally:
        probe.close()
        codes = {name: node.stop() for name, node in nodes.items()}
    print(f'live: invalid updates refused with a reason, value kept: {refused} of '
          f'{len(LIVE_INVALID)}; valid updates applied: {applied} of {len(LIVE_VALID)}; nodes '
          f'alive afterwards: {len(alive)} of 4; exit codes at SIGINT '
          f'{sorted(set(codes.values()))}')
    for line in failures:
        print(f'   NOT refused: {line}')


PLANNER_PROBE = '''
import json, resource, sys, time, rclpy
from rclpy.parameter import Parameter
from wheelsim.core.geometry.se2 import Pose2D
rclpy.init()
from wheelsim.nodes.planner import Planner
node = Planner(parameter_overrides=[Parameter('waypoints', value=[])])
node._pose = Pose2D(float(sys.argv[1]), 0.0, 0.0)
from geometry_msgs.msg import PoseStamped
goal = PoseStamped(); goal.header.frame_id = 'map'; goal.pose.position.x = float(sys.argv[2])
goal.pose.orientation.w = 1.0
start = time.process_time()
node._on_goal(goal)
cpu = time.process_time() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({'cpu_s': cpu, 'peak_rss_mb': rss_mb}))
'''


def area_memory() -> None:
    def run(start_x: float, goal_x: float) -> dict:
        out = subprocess.run([sys.executable, '-c', PLANNER_PROBE, str(start_x), str(goal_x)],
                             capture_output=True, text=True, timeout=300)
        return json.loads(out.stdout.strip().splitlines()[-1])

    near, edge, beyond = run(0.0, 5.0), run(-999.0, 999.0), run(0.0, 1e7)
    print(f'memory: planner peak RSS for one goal: 5 m away {near["peak_rss_mb"]:.0f} MB; the '
          f'farthest accepted (1998 m, edge to edge of workspace_radius 1000 m) '
          f'{edge["peak_rss_mb"]:.0f} MB, {edge["cpu_s"]:.2f} s CPU; 1e7 m (refused) '
          f'{beyond["peak_rss_mb"]:.0f} MB')


class Stack:
    """The four nodes driving the square, and a probe sampling ground truth and cmd_vel."""

    def __init__(self) -> None:
        self.nodes = {name: NodeProcess(f'wheelsim.nodes.{name}', params)
                      for name, params in STACK.items()}
        self.probe = Probe('fault_probe')
        self.truth = self.probe.record_arrivals(Odometry, 'ground_truth')
        self.commands = self.probe.record_arrivals(TwistStamped, 'cmd_vel')
        #: What each node publishes first when it starts.
        self.outputs = {VS: self.truth, CO: self.commands,
                        LO: self.probe.record_arrivals(Odometry, 'odom')}

    def speed_mps(self) -> float:
        """The latest true speed (m/s, turning at 1 rad/s counts as 1 m/s), or 0 when ground
        truth is older than 0.5 s."""
        if not self.truth or time.time_ns() - self.truth[-1][0] > 500_000_000:
            return 0.0
        twist = self.truth[-1][1].twist.twist
        return max(abs(twist.linear.x), abs(twist.angular.z))

    def wait(self, condition, timeout_s: float) -> float | None:
        """Wall seconds until ``condition()`` holds, or None."""
        start = time.monotonic()
        return (time.monotonic() - start) if self.probe.spin_until(condition, timeout_s) else None

    def kill_and_restart(self, name: str) -> tuple[float | None, ...]:
        """SIGKILL ``name``; seconds to rest, then restart; seconds to the node's first output,
        to the first non-zero command and to motion; the slowest forward speed afterwards."""
        self.nodes[name].process.kill()
        self.nodes[name].stop()
        if name == VS:  # no plant: at rest once the controller commands zero
            since = len(self.commands)
            stop_s = self.wait(lambda: any(abs(m.twist.linear.x) < 1e-9
                                           for _, m in self.commands[since:]), 15.0)
        else:
            stop_s = self.wait(lambda: self.speed_mps() < 0.05, 15.0)
        self.probe.spin_for(2.0)
        restart_ns = time.time_ns()
        self.nodes[name] = NodeProcess(f'wheelsim.nodes.{name}', STACK[name])
        since, commands_since = len(self.truth), len(self.commands)
        outputs_since = len(self.outputs[name])
        resume_s = self.wait(lambda: self.speed_mps() > 0.1, 30.0)
        self.probe.spin_for(5.0)
        slowest = min((m.twist.twist.linear.x for _, m in self.truth[since:]), default=0.0)
        command_s = next(((t - restart_ns) / 1e9 for t, m in self.commands[commands_since:]
                          if abs(m.twist.linear.x) + abs(m.twist.angular.z) > 1e-9), None)
        output_s = next(((t - restart_ns) / 1e9 for t, _ in self.outputs[name][outputs_since:]),
                        None)
        return stop_s, output_s, command_s, resume_s, slowest

    def close(self) -> dict[str, int]:
        self.probe.close()
        return {name: node.stop() for name, node in self.nodes.items()}


def area_faults() -> None:
    stack = Stack()
    results = {}
    try:
        moving = stack.wait(lambda: stack.speed_mps() > 0.5, 60.0)
        if moving is None:
            print('faults: NOT moving within 60 s of the start')
            return
        for name in (CO, LO, VS):
            stack.probe.spin_for(3.0)
            results[name] = stack.kill_and_restart(name)
    finally:
        codes = stack.close()
    for name, (stop_s, output_s, command_s, resume_s, slowest) in results.items():
        fmt = lambda s: 'never' if s is None else f'{s:.2f} s'  # noqa: E731
        print(f'faults: kill -9 {name}: at rest after {fmt(stop_s)}; after the restart, its '
              f'first output {fmt(output_s)}, first command {fmt(command_s)}, moving '
              f'{fmt(resume_s)}; slowest forward speed afterwards {slowest:+.2f} m/s')
    print(f'faults: exit codes at the final SIGINT {sorted(set(codes.values()))}')


def _bag_messages(bag: Path) -> int:
    """Messages wheelsim's reader finds in the bag (of an unfinished one: its complete chunks)."""
    from wheelsim.report.bag_data import load_run

    return sum(load_run(bag).message_counts.values())


def area_signals() -> None:
    exe = shutil.which('wheelsim')
    for name in ('SIGINT', 'SIGTERM', 'SIGKILL'):
        with tempfile.TemporaryDirectory() as folder:
            process = subprocess.Popen([exe, 'run', '--no-plots', '--quiet', '--output', 'o',
                                        '--real-time-factor', '5'], cwd=folder,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            bag = Path(folder) / 'o' / 'default' / 'bag'
            deadline = time.monotonic() + 120
            while not list(bag.glob('*.mcap')) and time.monotonic() < deadline:
                time.sleep(0.2)
            time.sleep(3.0)
            process.send_signal(getattr(signal, name))
            code = process.wait(timeout=120)
            finished = 'finished' if (bag / 'metadata.yaml').is_file() else \
                'NOT finished (no metadata.yaml)'
            try:
                count, verdict = _bag_messages(bag), 'readable'
            except Exception as err:  # noqa: BLE001 - any failure to read is the figure
                count, verdict = 0, f'NOT readable ({err})'
            print(f'signals: wheelsim run, {name} after 3 s: exit {code}, bag {finished}, '
                  f'{verdict} by load_run, {count} messages')


def _rss_mb(pid: int) -> float:
    for line in Path(f'/proc/{pid}/status').read_text().splitlines():
        if line.startswith('VmRSS:'):
            return int(line.split()[1]) / 1024
    return math.nan


def area_load() -> None:
    node = NodeProcess('wheelsim.nodes.vehicle_sim', {'model': 'differential', 'pub_rate': 1000.0})
    probe = Probe('load_probe')
    topics = {'ground_truth': Odometry, 'twist_actual': TwistStamped, 'joint_states': JointState}
    received = {topic: probe.record(kind, topic) for topic, kind in topics.items()}
    try:
        probe.spin_until(lambda: all(received.values()), 30.0)
        marks = {topic: len(messages) for topic, messages in received.items()}
        probe.spin_for(30.0)
    finally:
        probe.close()
        node.stop()
    said = [line for line in node.output().splitlines() if 'jumped' in line or 'keep up' in line]
    for topic, messages in received.items():
        stamps = [stamp_ns(m.header.stamp) for m in messages[marks[topic]:]]
        gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
        missing = sum(round(g / 1_000_000) - 1 for g in gaps if g > 1_500_000)
        backwards = sum(g <= 0 for g in gaps)
        print(f'load: 1000 Hz {topic}: {len(stamps)} received in 30 s, {missing} missing, '
              f'{backwards} backwards or repeated')
    for line in said:
        print(f'   vehicle_sim said: {line}')

    vehicle = NodeProcess('wheelsim.nodes.vehicle_sim', {
        'model': 'differential', 'be_reference_clock': True, 'real_time_factor': 0.0})
    localization = NodeProcess('wheelsim.nodes.localization', {'use_sim_time': True})
    probe = Probe('rss_probe')
    clock = probe.record(Clock, '/clock')
    try:
        probe.spin_until(lambda: clock, 30.0)
        probe.spin_for(10.0)
        first = (stamp_ns(clock[-1].clock), _rss_mb(vehicle.process.pid),
                 _rss_mb(localization.process.pid))
        probe.spin_for(110.0)
        last = (stamp_ns(clock[-1].clock), _rss_mb(vehicle.process.pid),
                _rss_mb(localization.process.pid))
    finally:
        probe.close()
        vehicle.stop()
        localization.stop()
    hours = (last[0] - first[0]) / 3.6e12
    print(f'load: {hours:.1f} simulated hours in 110 s: RSS growth per simulated hour '
          f'vehicle_sim {(last[1] - first[1]) / hours:.3f} MB ({first[1]:.1f} -> {last[1]:.1f}), '
          f'localization {(last[2] - first[2]) / hours:.3f} MB '
          f'({first[2]:.1f} -> {last[2]:.1f})')


AREAS = {'startup': area_startup, 'live': area_live, 'memory': area_memory,
         'faults': area_faults, 'signals': area_signals, 'load': area_load}


def main() -> None:
    chosen = sys.argv[1:] or list(AREAS)
    unknown = sorted(set(chosen) - set(AREAS))
    if unknown:
        sys.exit(f'unknown area(s) {unknown}; choose from {list(AREAS)}')
    require_loopback_dds()
    with reserved_domain_id() as domain_id:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        for name in chosen:
            started = time.monotonic()
            AREAS[name]()
            print(f'   ({name}: {time.monotonic() - started:.0f} s)', flush=True)


if __name__ == '__main__':
    main()
