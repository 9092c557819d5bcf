"""vehicle_sim's clock modes over DDS: wall clock at odd step rates, and a reference clock at 10x
(then 1x, changed live) followed by another vehicle_sim (use_sim_time) and by the 20 Hz and
50 Hz timers of a node.

(Following a /clock the test publishes itself is covered in test_vehicle_sim_dynamics.py.)
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from rclpy.wait_for_message import wait_for_message
from rosgraph_msgs.msg import Clock

from wheelsim.core.vehicle_sim.timeline import PACER_MAX_LAG_S
from wheelsim.ros.conversions import stamp_ns
from wheelsim.testing.processes import (
    NodeProcess,
    Probe,
    diagnostic_values,
    ending_with_this_process,
)

MS = 1_000_000
NODE = 'wheelsim.nodes.vehicle_sim'
# No dynamics: the body follows the command from the next step on.
INSTANT = {f'model_params.differential.drive_actuators.{name}': 0.0
           for name in ('dead_time', 'time_constant', 'max_acceleration')}


# CI (2026-12-03, a loaded host): 49 of 216 steps were not 2 cm: a stall of a second, of the
# probe (its command expired) or of a node (the gap skipped), each as documented. Neither is what
# this test measures: commands never expire here and no stall is skipped.
STALL_PROOF = {'twist_reference_max_oldness': 0.0, 'max_time_jump': 600.0}


def test_wall_clock_runs_at_the_right_speed_at_any_step_rate(ros_domain_id):
    rates = (300.0, 400.0, 2500.0)
    probe = Probe()
    nodes = [NodeProcess(NODE, {'model': 'differential', 'step_rate': rate, **INSTANT,
                                **STALL_PROOF}, namespace=f'/s{int(rate)}') for rate in rates]
    try:
        outputs = {rate: probe.record_arrivals(Odometry, f'/s{int(rate)}/ground_truth')
                   for rate in rates}
        diagnostics = probe.record(DiagnosticArray, '/diagnostics')
        commands = [probe.publisher(Twist, f'/s{int(rate)}/cmd_vel') for rate in rates]
        assert probe.spin_until(lambda: all(len(o) > 5 for o in outputs.values()), 30.0)
        forward = Twist()
        forward.linear.x = 1.0
        for _ in range(30):  # 1.5 s at 1 m/s
            for command in commands:
                command.publish(forward)
            probe.spin_for(0.05)
        probe.spin_for(1.0)  # at least one diagnostics period after the start
        # Everything published until now (a busy probe lags).
        assert probe.catch_up([*outputs.values(), diagnostics]), {
            rate: node.output()[-2000:] for rate, node in zip(rates, nodes, strict=True)}
    finally:
        for node in nodes:
            node.stop()
        probe.close()
    for rate, received in outputs.items():
        arrival_ns = np.array([arrival for arrival, _ in received])
        stamps = np.array([stamp_ns(m.header.stamp) for _, m in received])
        x = np.array([m.pose.pose.position.x for _, m in received])
        assert set(np.diff(stamps)) == {20 * MS}, rate  # every 1/pub_rate, exactly
        # Stamped with the wall clock: every message arrives after its stamp, the quickest within
        # 50 ms. (When they were sent is not measured: arrival includes the probe's own lag.)
        latency_s = (arrival_ns - stamps) / 1e9
        assert 0.0 < latency_s.min() < 0.05, rate
        # Moving at 1 m/s: exactly 2 cm per 20 ms, i.e. step_rate steps of 1/step_rate s each.
        steps = np.diff(x)[(x[:-1] > 0.1) & (x[1:] < x[-1] - 0.1)]
        assert len(steps) > 20
        np.testing.assert_allclose(steps, 0.02, atol=1e-9, err_msg=f'step_rate {rate}')
        reports = [a for a in diagnostics if a.status[0].name == f'/s{int(rate)}/vehicle_sim: '
                   'simulation']
        steps_per_s = float(diagnostic_values(reports[-1])['steps per second'])
        assert steps_per_s == pytest.approx(rate, rel=0.1)


def test_rates_the_machine_cannot_sustain_are_reported(ros_domain_id):
    """step_rate and pub_rate at their maxima (100 kHz): vehicle_sim reaches a fraction of it
    and skips simulated time; /diagnostics turns WARN and says so, and a warning is logged."""
    probe = Probe()
    node = NodeProcess(NODE, {'model': 'differential', 'step_rate': 100_000.0,
                              'pub_rate': 100_000.0})
    try:
        diagnostics = probe.record(DiagnosticArray, '/diagnostics')

        def slow_reported():
            return any(a.status[0].level == DiagnosticStatus.WARN
                       and 'cannot keep up' in a.status[0].message for a in diagnostics)

        # found in CI: no WARN within 20 s. On a machine loaded three times over the node's
        # housekeeping (diagnostics due every second) ran every 1-5 s, and the WARN needs two
        # reports after a start that itself takes seconds there
        assert probe.spin_until(slow_reported, 60.0), node.output()
        assert 'below step_rate 100000 Hz: this machine cannot keep up' in node.output()
    finally:
        node.stop()
        probe.close()


# A lean node (nothing but two sim-time timers) in its own process, so that the recording probe's
# load does not make it late; prints the simulated time of every fire as JSON when stopped.
TIMER_NODE = """
import json, sys, rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
rclpy.init()
node = Node('sim_timers', parameter_overrides=[Parameter('use_sim_time', value=True)])
fires = {'50': [], '20': []}
for period, times in fires.items():
    node.create_timer(int(period) / 1000, lambda t=times: t.append(
        node.get_clock().now().nanoseconds))
try:
    rclpy.spin(node)
except (KeyboardInterrupt, ExternalShutdownException):
    pass
except RuntimeError:  # rclpy may fail taking a message while SIGINT shuts it down
    if rclpy.ok():
        raise
print(json.dumps(fires))
"""


def test_reference_clock_at_10x_drives_a_follower_and_sim_time_timers(ros_domain_id):
    probe = Probe()
    reference = NodeProcess(NODE, {'be_reference_clock': True, 'real_time_factor': 10.0},
                            namespace='/reference')
    # A follower that stalls 0.1 s (a loaded machine) misses 1 s of a 10x clock: step through it.
    follower = NodeProcess(NODE, {'use_sim_time': True, 'max_time_jump': 10.0},
                           namespace='/follower')
    timers = subprocess.Popen(ending_with_this_process([sys.executable, '-c', TIMER_NODE]),
                              stdout=subprocess.PIPE, text=True)
    try:
        clocks = probe.record(Clock, '/clock')
        ground_truth = probe.record(Odometry, '/reference/ground_truth')
        followed = probe.record(Odometry, '/follower/ground_truth')
        diagnostics = probe.record_arrivals(DiagnosticArray, '/diagnostics')
        assert probe.spin_until(lambda: len(followed) > 0 and len(ground_truth) > 0, 30.0)
        # Three reports of the 10x phase (1 Hz, wall time): two periods to measure.
        assert probe.spin_until(lambda: sum(
            requested(a) == 10.0 for _, a in reference_reports(diagnostics)) >= 3, 60.0)
        # Then at 1x, where a loaded machine delays the timer node's callbacks far less.
        request = SetParameters.Request(
            parameters=[Parameter('real_time_factor', value=1.0).to_parameter_msg()])
        service = '/reference/vehicle_sim/set_parameters'
        assert probe.call(SetParameters, service, request).results[0].successful
        # The time now from a new subscription: at 10x the recordings (1000 /clock and 1000
        # ground truths a second) lag a busy probe by seconds (a loaded CI run had taken fewer
        # than two reports of the 10x phase when it counted them by wall time).
        received, clock = wait_for_message(Clock, probe.node, '/clock', time_to_wait=60.0)
        assert received, 'no /clock within 60 s'
        real_time_from_ns = stamp_ns(clock.clock) + 100 * MS
        # 2 s of the 1x clock published, for the timer node to fire on.
        assert probe.spin_until(lambda: clocks and stamp_ns(clocks[-1].clock) >= real_time_from_ns
                                + 2_000 * MS, 60.0)
        # Every 10x report taken: a 1x report came after them, from the same publisher.
        assert probe.spin_until(lambda: any(
            requested(a) == 1.0 for _, a in reference_reports(diagnostics)), 20.0)
        timers.send_signal(signal.SIGINT)
        fires = json.loads(timers.communicate(timeout=10)[0])
    finally:
        reference.stop()
        follower.stop()
        timers.kill()
        probe.close()
    reports = [(arrival, a) for arrival, a in reference_reports(diagnostics)
               if requested(a) == 10.0]
    # The node's own measure (simulated over monotonic wall time between its reports): the
    # arrival times at a busy probe would add the probe's delays. Never faster than asked, except
    # for catching up a lag of at most the pacer's 0.1 s of wall time (a stall on a loaded
    # machine; a CI run saw 11.03x over one period and 10.0x over the next); slower only when
    # the machine is saturated (2 shared cores).
    sim_s = np.array([float(diagnostic_values(a)['simulated time [s]']) for _, a in reports])
    achieved = np.array([float(diagnostic_values(a)['real-time factor achieved'])
                         for _, a in reports])
    sim_step_s, achieved = np.diff(sim_s), achieved[1:]
    wall_step_s = sim_step_s / achieved
    assert len(achieved) >= 1, achieved
    assert np.all(sim_step_s <= 10.0 * (wall_step_s + PACER_MAX_LAG_S) + 0.01), (sim_s, achieved)
    assert 6.0 < sim_step_s.sum() / wall_step_s.sum(), achieved
    # Exact where it is vehicle_sim's doing; a busy receiver (2 shared cores) may drop messages
    # or run a timer late, so from the receivers' side: on the grid, and mostly one period apart.
    clock_ns = np.array([stamp_ns(c.clock) for c in clocks])
    assert_on_grid(clock_ns, 10 * MS)
    for received in (ground_truth, followed):
        assert_on_grid(np.array([stamp_ns(m.header.stamp) for m in received]), 20 * MS)
    for period_ms, all_times in fires.items():
        # A sim-time timer fires when /clock reaches its due time, so it is on time when /clock
        # hits every multiple of its period: fires on the 10 ms ticks, typically a period apart.
        assert set(np.array(all_times) % (10 * MS)) == {0}
        times = [t for t in all_times if t > real_time_from_ns]
        intervals, counts = np.unique(np.diff(times), return_counts=True)
        assert intervals[counts.argmax()] == int(period_ms) * MS, (intervals, counts)


def reference_reports(diagnostics: list) -> list:
    """The ``(arrival, message)`` pairs of the reference vehicle_sim's simulation reports."""
    return [(arrival, a) for arrival, a in diagnostics
            if a.status[0].name == '/reference/vehicle_sim: simulation']


def requested(array: DiagnosticArray) -> float:
    return float(diagnostic_values(array)['real-time factor requested'])


def assert_on_grid(times_ns: np.ndarray, period_ns: int) -> None:
    """Times on one grid of ``period_ns``, the most frequent interval being one period."""
    assert set((times_ns - times_ns[0]) % period_ns) == {0}
    intervals, counts = np.unique(np.diff(times_ns), return_counts=True)
    assert intervals[0] == period_ns and intervals[counts.argmax()] == period_ns
