"""vehicle_sim figures: CPU share, highest real-time factor, dead time error, publish jitter.

Run after ``source env.sh``:  python bench/bench_vehicle_sim.py [--seconds 20] [--windows 3]

1. CPU share of one core in wall-clock mode at 1000/50 Hz: vehicle_sim (bicycle, defaults) in
   its own process, alone, its CPU time read from /proc. Goal: under 2 %. For scale, two bare
   rclpy processes that only publish the same three messages from a sleeping thread at 50 Hz
   (no simulation), one as CDR bytes as vehicle_sim publishes them, one as message objects:
   what waking up and publishing cost on this machine before vehicle_sim does anything. Each
   of the three runs by itself (processes that wake at the same rate disturb each other's
   figures by up to 0.35 % here), in turn, ``--windows`` times; median and range. This virtual
   machine's speed drifts by tens of percent over minutes to hours, so compare figures of one
   run. Then one window with a 20 Hz cmd_vel stream and a subscriber on every output (as with
   a controller and RViz).
2. Highest real-time factor in reference-clock mode with every output at 50 Hz:
   ``real_time_factor: 0`` (as fast as possible), 100 Hz /clock; the node's own diagnostics
   ("real-time factor achieved" per wall second, median). No subscriber on the outputs: a
   Python subscriber taking 150 messages per simulated second at 100x (15,000 a second) would
   saturate a core itself and measure the machine, not the node. Goal: at least 100x.
3. Dead time measured minus configured, in steps, at step rates 300, 1000 and 2500 Hz: the node
   follows a /clock this process publishes, so the command enters at a known time; dead time and
   time constant are fitted to the step response of ``twist_actual`` (ln(1 - v) is linear in
   time and crosses 0 at the dead time). Goal: 0 steps.
4. Wall-clock publish jitter in wall-clock mode (from run 1): stamp period error (the stamps
   are exact), latency from stamp to arrival (median, 99th percentile) and the standard
   deviation of the intervals between arrivals (nominal 20 ms).

The machine's other load shows in 1, 2 and 4: run it on an otherwise idle machine for the
figures of record. DDS stays on loopback (env.sh's profile) on a reserved ROS domain.
"""

from __future__ import annotations

import argparse
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np
import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import Twist, TwistStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException
from sensor_msgs.msg import JointState

from wheelsim.core.vehicle.config import VehicleConfig
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.ros.conversions import stamp_ns
from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.ros.seam import LiveSeam
from wheelsim.ros.vehicle_outputs import VehicleOutputs
from wheelsim.testing.process_activity import cpu_s
from wheelsim.testing.processes import ClockedVehicleSim, NodeProcess, Probe, diagnostic_values

NODE = 'wheelsim.nodes.vehicle_sim'
OUTPUTS = (('ground_truth', Odometry), ('twist_actual', TwistStamped),
           ('joint_states', JointState))


def cpu_shares(pids: Sequence[int], probe: Probe, seconds: float, command=None) -> list[float]:
    """CPU share of one core of each process over the same ``seconds``, the probe spinning
    (and publishing ``command`` at 20 Hz if given)."""
    cpu_start, wall_start = [cpu_s(pid) for pid in pids], time.monotonic()
    while time.monotonic() - wall_start < seconds:
        if command is not None:
            command.publish(forward_and_turning())
        probe.spin_for(0.05)
    elapsed_s = time.monotonic() - wall_start
    return [(cpu_s(pid) - cpu) / elapsed_s for pid, cpu in zip(pids, cpu_start, strict=True)]


def publish_only(serialized: bool) -> None:
    """The bare publisher of figure 1, in this (child) process until SIGINT: Odometry,
    TwistStamped and JointState under /floor_bytes or /floor_objects, published every 20 ms from
    a thread as vehicle_sim publishes its outputs in wall-clock mode (``serialized``) or as
    message objects; no simulation."""
    rclpy.init()
    seam = LiveSeam('publish_only', namespace='/floor_bytes' if serialized else '/floor_objects')
    node = seam.rclpy_node
    vehicle = Vehicle(VehicleConfig(model='bicycle'), 0.001)
    outputs = VehicleOutputs(seam, 'map', 'base_link', vehicle.joint_names, serialized)
    state = vehicle.state()

    def publish_every_20_ms() -> None:
        next_s = time.monotonic()
        while rclpy.ok():
            next_s += 0.02
            time.sleep(max(0.0, next_s - time.monotonic()))
            try:
                outputs.publish_state(time.time_ns(), state)
            except Exception:
                if rclpy.ok():
                    raise
                return  # SIGINT shut the context down

    threading.Thread(target=publish_every_20_ms, daemon=True).start()
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass


def median_and_range(shares: Sequence[float]) -> str:
    """``'1.85 % [1.70-2.00]'``: the median and range of CPU shares (fractions of a core)."""
    return (f'{100 * statistics.median(shares):.2f} % '
            f'[{100 * min(shares):.2f}-{100 * max(shares):.2f}]')


def forward_and_turning() -> Twist:
    twist = Twist()
    twist.linear.x, twist.angular.z = 1.0, 0.3
    return twist


def alone_share(kind: str, probe: Probe, seconds: float) -> float:
    """CPU share of one core of ``kind`` ('vehicle_sim', 'bytes', 'objects') running by itself
    over ``seconds``, after its start-up."""
    if kind == 'vehicle_sim':
        process = NodeProcess(NODE, {'model': 'bicycle'}, namespace='/alone')
        pid, topic = process.process.pid, '/alone/ground_truth'
    else:
        process = subprocess.Popen([sys.executable, __file__, f'--publish-{kind}'])
        pid, topic = process.pid, f'/floor_{kind}/ground_truth'
    try:
        probe.spin_until(lambda: probe.node.count_publishers(topic) > 0, 30.0)
        probe.spin_for(2.0)
        return cpu_shares([pid], probe, seconds)[0]
    finally:
        if kind == 'vehicle_sim':
            process.stop()
        else:
            process.send_signal(signal.SIGINT)
            process.wait()


def wall_clock_run(probe: Probe, seconds: float, windows: int) -> None:
    """Figures 1 and 4."""
    kinds = ('vehicle_sim', 'bytes', 'objects')
    shares = {kind: [] for kind in kinds}
    for _ in range(windows):  # in turn, so that all three see the same phases of the machine
        for kind in kinds:
            shares[kind].append(alone_share(kind, probe, seconds))
    node = NodeProcess(NODE, {'model': 'bicycle'}, namespace='/wall')
    try:
        probe.spin_until(lambda: probe.node.count_publishers('/wall/ground_truth') > 0, 30.0)
        arrivals = probe.record_arrivals(Odometry, '/wall/ground_truth')
        for name, msg_type in OUTPUTS[1:]:
            probe.record(msg_type, f'/wall/{name}')
        command = probe.publisher(Twist, '/wall/cmd_vel')
        probe.spin_until(lambda: len(arrivals) > 10, 30.0)
        first = len(arrivals)
        loaded = cpu_shares([node.process.pid], probe, seconds, command)[0]
    finally:
        node.stop()
    print(f'1. wall clock 1000/50 Hz, CPU share of one core, each process alone, median [range] '
          f'of {windows} windows of {seconds:g} s taken in turn: vehicle_sim '
          f'{median_and_range(shares["vehicle_sim"])} (goal < 2 %); a bare rclpy process '
          f'publishing the same three messages at 50 Hz: {median_and_range(shares["bytes"])} '
          f'as CDR bytes as vehicle_sim does, {median_and_range(shares["objects"])} as message '
          f'objects. vehicle_sim with a 20 Hz cmd_vel and a subscriber on every output: '
          f'{100 * loaded:.2f} %')
    arrival_ns = np.array([arrival for arrival, _ in arrivals[first:]])
    stamps = np.array([stamp_ns(m.header.stamp) for _, m in arrivals[first:]])
    period_error_ns = np.abs(np.diff(stamps) - 20_000_000).max()
    latency_ms = (arrival_ns - stamps) / 1e6
    interval_ms = np.diff(arrival_ns) / 1e6
    print(f'4. wall clock publish jitter over {len(stamps)} messages: stamp period error '
          f'{period_error_ns} ns; stamp-to-arrival latency median {np.median(latency_ms):.2f} '
          f'ms, p99 {np.percentile(latency_ms, 99):.2f} ms; arrival interval std '
          f'{interval_ms.std():.2f} ms (nominal 20 ms)')


def fastest_run(probe: Probe, seconds: float) -> float:
    """Figure 2: median achieved real-time factor at real_time_factor 0."""
    node = NodeProcess(NODE, {'model': 'bicycle', 'be_reference_clock': True,
                              'real_time_factor': 0.0}, namespace='/fast')
    diagnostics = probe.record(DiagnosticArray, '/diagnostics')
    try:
        ours = '/fast/vehicle_sim: simulation'
        probe.spin_until(lambda: any(a.status[0].name == ours for a in diagnostics), 30.0)
        probe.spin_for(seconds)
    finally:
        node.stop()
    reports = [diagnostic_values(a) for a in diagnostics if a.status[0].name == ours]
    factors = [float(r['real-time factor achieved']) for r in reports
               if 'real-time factor achieved' in r]
    return statistics.median(factors[1:])


def dead_time_error_steps(probe: Probe, step_rate_hz: float) -> tuple[float, float]:
    """Figure 3: (dead time error, time constant error), in steps of ``step_rate_hz``."""
    dead_time_s, time_constant_s = 0.1, 0.2
    drive = 'model_params.differential.drive_actuators'
    params = {'model': 'differential', 'step_rate': step_rate_hz, 'pub_rate': 100.0,
              f'{drive}.dead_time': dead_time_s, f'{drive}.time_constant': time_constant_s,
              f'{drive}.max_acceleration': 0.0, 'twist_reference_max_oldness': 60.0}
    sim = ClockedVehicleSim(probe, params, f'/dead_time_{int(step_rate_hz)}')
    with sim.process:
        t0 = sim.command(1.0, 0.0, 0.0)
        sim.advance(t0 + 500_000_000)
        t_s, twist = sim.samples(t0)
    rising = (twist[:, 0] > 0.02) & (twist[:, 0] < 0.98)
    slope, intercept = np.polyfit(t_s[rising], np.log(1.0 - twist[rising, 0]), 1)
    return ((-intercept / slope - dead_time_s) * step_rate_hz,
            (-1.0 / slope - time_constant_s) * step_rate_hz)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--seconds', type=float, default=20.0, help='length of each timed window')
    parser.add_argument('--windows', type=int, default=3,
                        help='timed windows for the CPU shares of figure 1')
    parser.add_argument('--publish-bytes', action='store_true', help=argparse.SUPPRESS)
    parser.add_argument('--publish-objects', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.publish_bytes or args.publish_objects:
        publish_only(serialized=args.publish_bytes)
        return
    with loopback_domain():
        probe = Probe('bench')
        try:
            wall_clock_run(probe, args.seconds, args.windows)
            fastest = fastest_run(probe, args.seconds)
            print(f'2. reference clock, every output at 50 Hz, /clock at 100 Hz: highest '
                  f'real-time factor {fastest:.0f}x (goal >= 100x)')
            for rate in (300.0, 1000.0, 2500.0):
                dead, tau = dead_time_error_steps(probe, rate)
                print(f'3. step rate {rate:.0f} Hz: dead time measured - configured = '
                      f'{dead:+.2e} steps (time constant {tau:+.2e} steps; goal 0)')
        finally:
            probe.close()


if __name__ == '__main__':
    main()
