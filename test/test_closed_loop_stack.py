"""The whole loop over DDS: vehicle_sim, localization, planner and controller as four processes.

vehicle_sim is the reference clock (``/clock`` at ``SPEEDUP`` times real time; the other nodes
follow it with ``use_sim_time``). For each model and each localization mode (perfect, noisy
with its default noise) the planner plans a figure-eight through its ``waypoints`` and the
controller (default algorithm: trajectory tracking with feedforward) drives it; then the test
sends a ``goal_pose`` and the vehicle drives there. The test records ``ground_truth`` and
``plan`` and measures the true cross-track error of the vehicle against the plan and the final
distance to the goal. A last test runs the goal at ten times real time.

Vehicles: the reference simulator's defaults (drive dead time 0.2 s, time constant 0.4 s;
steering dead time 0.2 s) at a smaller size so that an 8 m figure-eight fits: car 1 m wheel
base (turning radius 1.7 m), differential 0.5 m track, omni 0.5 m x 0.5 m.

The vehicle is described once, to vehicle_sim: planner and controller get no model, geometry,
limit or lead time, only the waypoints (and the planned top speed, a planning choice). They take
the rest from ``vehicle_description``, and their logs say what they took.
"""

from __future__ import annotations

import math
import os
from pathlib import Path as FilePath

import numpy as np
import pytest
from bringup_support import REPO
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry, Path
from rclpy.wait_for_message import wait_for_message

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import trajectory_from_poses
from wheelsim.core.planning.waypoints import figure_eight
from wheelsim.core.tracking.reference import PathProgress, tracking_errors
from wheelsim.ros import qos
from wheelsim.ros.conversions import pose2d, quaternion_from_yaw, stamp_ns
from wheelsim.testing.processes import NodeProcess, Probe

EXAMPLES = REPO / 'examples'

SPEEDUP = 2.0
GEOMETRY = {
    'bicycle': {'model_params.bicycle.wheel_base': 1.0},
    'differential': {'model_params.differential.track': 0.5},
    'omni': {'model_params.omni.wheel_base': 0.5, 'model_params.omni.track': 0.5},
}
WAYPOINTS = figure_eight(8.0)
PLANNER = {'limits.max_speed': 1.0}  # the car's curvature: 0.8 tan(30 deg) / 1 m = 0.46 1/m
GOAL = Pose2D(-6.0, -3.0, math.pi)
# Bounds (m): true RMS cross-track error on the figure-eight, final distance to the goal.
RMS_BOUND = {'perfect': 0.05, 'noisy': 0.08}
GOAL_BOUND = 0.15  # the controller's goal tolerance is 0.1 m
GOAL_BOUND_10X = 0.25


def flat(waypoints):
    """The ``waypoints`` parameter: x, y, theta triples, theta NaN where free."""
    return [v for point in waypoints for v in (*point, *([math.nan] * (3 - len(point))))]


class Stack:
    """The four nodes as processes, and the probe (on simulated time) recording their output.

    ``record_truth`` records every ``ground_truth`` message (50 Hz simulated). At 10 times real
    time that is 500 messages a second, more than a busy probe takes as they come: its recording
    then lags the simulation by seconds.
    """

    def __init__(self, model: str, localization: str, speedup: float, waypoints=(),
                 record_truth: bool = True, controller=None) -> None:
        self.probe = Probe(use_sim_time=True)
        self.truth = self.probe.record(Odometry, 'ground_truth') if record_truth else None
        self.plans = self.probe.record(Path, 'plan', qos.LATCHED)
        self._goal = None
        start = waypoints[0] if waypoints else (0.0, 0.0, 0.0)
        follow = {'use_sim_time': True}
        self.nodes = {
            'vehicle_sim': NodeProcess(
                'wheelsim.nodes.vehicle_sim',
                {
                    'model': model,
                    'be_reference_clock': True,
                    'real_time_factor': speedup,
                    'clock_rate': 20.0,
                    'initial_pose.x': start[0],
                    'initial_pose.y': start[1],
                    'initial_pose.yaw': start[2],
                    **GEOMETRY[model],
                },
            ),
            'localization': NodeProcess(
                'wheelsim.nodes.localization',
                {
                    **follow,
                    'mode': localization,
                    'seed': 1,
                },
            ),
            'controller': NodeProcess(
                'wheelsim.nodes.controller',
                {
                    **follow,
                    'pose_timeout': 2.0,
                    **(controller or {}),
                },
            ),
            'planner': NodeProcess(
                'wheelsim.nodes.planner',
                {
                    **follow,
                    **PLANNER,
                    'start_at_current_pose': False,
                    'waypoints': flat(waypoints) if waypoints else [],
                },
            ),
        }

    def output(self, name: str) -> str:
        return self.nodes[name].output()

    def controller_diagnosis(self) -> str:
        """The controller's output and who publishes /clock on the test's domain: a CI run saw
        the controller's clock jump back by ~8300 s (a second /clock source was suspected)."""
        sources = sorted(f'{info.node_namespace.rstrip("/")}/{info.node_name}'
                         for info in self.probe.node.get_publishers_info_by_topic('/clock'))
        return f'/clock publishers: {sources}\n{self.output("controller")}'

    def wait_for_goal(self, count: int, timeout_s: float) -> None:
        """Until the controller has ended ``count`` plans (reached or given up)."""

        def ended() -> bool:
            text = self.output('controller')
            return text.count('goal reached') + text.count('goal not reached') >= count

        assert self.probe.spin_until(ended, timeout_s), self.controller_diagnosis()
        assert self.output('controller').count('goal reached') >= count, (
            self.controller_diagnosis())
        self.probe.spin_for(2.0 / SPEEDUP)  # one more simulated second to come to rest

    def send_goal(self, goal: Pose2D) -> None:
        if self._goal is None:
            self._goal = self.probe.publisher(PoseStamped, 'goal_pose')
        publisher = self._goal
        assert self.probe.spin_until(lambda: publisher.get_subscription_count() > 0, 20)
        msg = PoseStamped()
        msg.header.frame_id = 'map'
        msg.pose.position.x, msg.pose.position.y = goal.x_m, goal.y_m
        msg.pose.orientation = quaternion_from_yaw(goal.yaw_rad)
        publisher.publish(msg)

    def close(self) -> None:
        unclean = [name for name, node in self.nodes.items() if not node.stop_cleanly()]
        self.probe.close()
        assert not unclean, '\n'.join(f'{name}:\n{self.output(name)[-3000:]}' for name in unclean)

    def true_cross_track(self, plan: Path) -> np.ndarray:
        """Cross-track error of every ground-truth pose over the plan's schedule."""
        stamps = np.array([stamp_ns(p.header.stamp) for p in plan.poses])
        poses = np.array([pose2d(p.pose) for p in plan.poses])
        trajectory = trajectory_from_poses((stamps - stamps[0]) / 1e9, *poses.T)
        progress = PathProgress(trajectory)
        errors = []
        for msg in self.truth:
            t_s = (stamp_ns(msg.header.stamp) - stamps[0]) / 1e9
            if 0.0 <= t_s <= trajectory.duration_s:
                pose = Pose2D(*pose2d(msg.pose.pose))
                nearest = progress.nearest(pose.x_m, pose.y_m, None if progress.located else 0.0)
                scheduled = trajectory.at_time(t_s).s_m
                errors.append(tracking_errors(nearest, pose, scheduled).cross_track_m)
        return np.array(errors)

    def distance_to(self, goal: Pose2D) -> float:
        """The true distance now: from the next ``ground_truth`` on a new subscription, not from
        the recording, whose last message can be seconds old when the probe falls behind."""
        received, msg = wait_for_message(Odometry, self.probe.node, 'ground_truth',
                                         time_to_wait=10.0)
        assert received, 'no ground_truth within 10 s'
        x, y, _ = pose2d(msg.pose.pose)
        return math.hypot(x - goal.x_m, y - goal.y_m)


# The quick tier drives the differential vehicle with noisy localization (the demo's); the full
# tier every case: each model, perfect localization (the tighter bound) and the policy case,
# where the controller runs examples/feedforward_policy.py (its feedforward law as a policy of
# the Gymnasium environment). Each is 35-40 s of wall clock at SPEEDUP; the quick tier closes
# the loop of every model over DDS in test_controller_node.py, follows the figure-eight with
# every model in test_tracking_node_defaults.py and runs the policy in test_examples.py.
LONG = pytest.mark.slow


@pytest.mark.early
@pytest.mark.parametrize('localization', [pytest.param('perfect', marks=LONG), 'noisy'])
@pytest.mark.parametrize('model, algorithm', [
    ('differential', 'feedforward'), pytest.param('bicycle', 'feedforward', marks=LONG),
    pytest.param('omni', 'feedforward', marks=LONG),
    pytest.param('differential', 'policy', marks=LONG)])
def test_figure_eight_then_goal(ros_domain_id, monkeypatch, model, algorithm, localization):
    controller = {}
    if algorithm == 'policy':
        monkeypatch.setenv('PYTHONPATH', os.pathsep.join(
            [str(EXAMPLES), os.environ.get('PYTHONPATH', '')]))
        controller = {'algorithm': 'policy', 'policy.callable': 'feedforward_policy:policy'}
    stack = Stack(model, localization, SPEEDUP, WAYPOINTS, controller=controller)
    try:
        assert stack.probe.spin_until(lambda: stack.plans, 60), stack.output('planner')
        duration_s = (
            stamp_ns(stack.plans[0].poses[-1].header.stamp)
            - stamp_ns(stack.plans[0].poses[0].header.stamp)
        ) / 1e9
        stack.wait_for_goal(1, 30 + 2 * duration_s / SPEEDUP)
        # Model, geometry, limits and lead time came from vehicle_sim's description.
        described = (f'{algorithm} for the {model} vehicle at 20 Hz (lead_time 0.6 s, speed -2 to '
                     '2 m/s')
        if model == 'bicycle':
            described += ', wheel_base 1 m, steering limit 0.524 rad'
        assert described in stack.output('controller'), stack.output('controller')
        assert f'planning for the {model} vehicle' in stack.output('planner')
        # The recording holds the ground truth until the plan's end (a busy probe lags).
        plan_end_ns = stamp_ns(stack.plans[0].poses[-1].header.stamp)
        assert stack.probe.catch_up([stack.truth], 30, plan_end_ns), (
            stack.truth[-1].header.stamp, plan_end_ns)
        cross = stack.true_cross_track(stack.plans[0])
        rms = float(np.sqrt(np.mean(cross**2)))
        print(
            f'{model} {algorithm} {localization}: figure-eight RMS {rms:.3f} m, '
            f'max {np.abs(cross).max():.3f} m'
        )
        # Ground truth at 50 Hz over the whole plan; a busy probe on 2 shared cores can miss a
        # few samples (the publisher keeps the last 10), so most, not all.
        assert len(cross) > 0.8 * duration_s * 50
        assert rms < RMS_BOUND[localization]
        assert stack.distance_to(Pose2D(0.0, 0.0, 0.0)) < GOAL_BOUND
        stack.send_goal(GOAL)
        assert stack.probe.spin_until(lambda: len(stack.plans) >= 2, 30), stack.output('planner')
        stack.wait_for_goal(2, 60)
        final = stack.distance_to(GOAL)
        print(f'{model} {localization}: final distance to the goal {final:.3f} m')
        assert final < GOAL_BOUND
        # Every node ran on the kernels set-up compiled ahead of time: none loaded numba (whose
        # LLVM library is mapped into a process that imports it).
        with_numba = [name for name, node in stack.nodes.items()
                      if 'llvmlite' in FilePath(f'/proc/{node.process.pid}/maps').read_text()]
        assert with_numba == [], with_numba
    finally:
        stack.close()


@pytest.mark.alone
def test_goal_at_ten_times_real_time(ros_domain_id):
    # Nothing recorded at 500 messages a second: a probe that falls behind measures old poses
    # and takes CPU from the nodes. A loaded CI run failed with 0.61 m after "goal reached";
    # with one busy loop beside it, the recording ended 10 to 20 simulated seconds behind the
    # localization's pose and the test failed 2 times in 6.
    stack = Stack('differential', 'noisy', 10.0, record_truth=False)
    try:
        # The planner ignores goals until its first pose (with a warning): send until planned.
        for _ in range(15):
            stack.send_goal(Pose2D(5.0, 2.0, 0.5))
            if stack.probe.spin_until(lambda: stack.plans, 2.0):
                break
        assert stack.plans, stack.output('planner') + stack.output('localization')
        stack.wait_for_goal(1, 60)
        # Every millisecond of DDS delay is 10 ms of simulated delay here: more overshoot.
        assert stack.distance_to(Pose2D(5.0, 2.0, 0.5)) < GOAL_BOUND_10X
    finally:
        stack.close()
