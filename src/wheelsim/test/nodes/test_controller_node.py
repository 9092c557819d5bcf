"""The controller node over DDS: a real process on the test's domain; the test process sends
plans and poses, and closes the loop with a kinematic vehicle that integrates ``cmd_vel``."""

from __future__ import annotations

import math
import os
import re

import numpy as np
import pytest
from geometry_msgs.msg import (
    PoseStamped,
    PoseWithCovarianceStamped,
    Twist,
    TwistStamped,
    Vector3Stamped,
)
from nav_msgs.msg import Odometry, Path
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import from_flat
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.planning.planner import plan_to_goal
from wheelsim.nodes.planner import path_message
from wheelsim.ros import qos
from wheelsim.ros.conversions import quaternion_from_yaw, stamp_ns, time_msg
from wheelsim.testing.configs import FIXED_CONTROLLER, FIXED_PLANNER
from wheelsim.testing.processes import NodeProcess, Probe

NODE = 'wheelsim.nodes.controller'
PLANNER = from_flat(PlannerConfig, {**FIXED_PLANNER, 'limits.max_speed': 0.8})
#: Every vehicle value given: the controller needs no vehicle_description here.
FIXED = {name: value for name, value in FIXED_CONTROLLER.items() if name != 'model'}


class Plant:
    """A unicycle (or omni) in the test process: integrates the latest cmd_vel at 50 Hz of wall
    time and publishes ``pose`` and ``odom``, as vehicle_sim and localization would."""

    def __init__(self, probe: Probe, pose: Pose2D, stamped: bool = True) -> None:
        self.probe = probe
        self.pose = np.array(pose, dtype=float)
        self.twist = np.zeros(3)
        self.commands: list = []
        self.freeze = False  # stop moving
        self.silent = False  # stop publishing poses
        self._pose_pub = probe.publisher(PoseWithCovarianceStamped, 'pose')
        self._odom_pub = probe.publisher(Odometry, 'odom')
        probe.node.create_subscription(
            TwistStamped if stamped else Twist, 'cmd_vel', self._on_command, 10
        )
        self._last_ns = probe.node.get_clock().now().nanoseconds
        probe.node.create_timer(0.02, self._step)

    def _on_command(self, msg) -> None:
        twist = msg.twist if isinstance(msg, TwistStamped) else msg
        self.commands.append(msg)
        self.twist = np.array([twist.linear.x, twist.linear.y, twist.angular.z])

    def _step(self) -> None:
        now = self.probe.node.get_clock().now().nanoseconds
        dt, self._last_ns = (now - self._last_ns) / 1e9, now
        if not self.freeze:
            x, y, yaw = self.pose
            vx, vy, wz = self.twist
            self.pose += dt * np.array(
                [
                    vx * math.cos(yaw) - vy * math.sin(yaw),
                    vx * math.sin(yaw) + vy * math.cos(yaw),
                    wz,
                ]
            )
        if self.silent:
            return
        msg = PoseWithCovarianceStamped()
        time_msg(now, msg.header.stamp)
        msg.header.frame_id = 'map'
        msg.pose.pose.position.x, msg.pose.pose.position.y = (
            float(self.pose[0]),
            float(self.pose[1]),
        )
        msg.pose.pose.orientation = quaternion_from_yaw(float(self.pose[2]))
        self._pose_pub.publish(msg)
        odom = Odometry()
        time_msg(now, odom.header.stamp)
        odom.twist.twist.linear.x, odom.twist.twist.angular.z = (
            float(self.twist[0]),
            float(self.twist[2]),
        )
        self._odom_pub.publish(odom)


def send_plan(probe, trajectory, frame='map', offset_s=0.0):
    publisher = probe.publisher(Path, 'plan', qos.LATCHED)
    # Both of the controller's plan subscriptions (transient local and volatile) matched.
    assert probe.spin_until(lambda: publisher.get_subscription_count() >= 2, 20)
    start = probe.node.get_clock().now().nanoseconds + round(offset_s * 1e9)
    publisher.publish(path_message(trajectory, start, frame))
    return publisher


@pytest.mark.parametrize(
    ('model', 'algorithm'),
    [('differential', 'feedforward'), ('omni', 'pure_pursuit'), ('bicycle', 'stanley')],
)
def test_closes_the_loop_to_the_goal_and_stops(probe, model, algorithm):
    params = {**FIXED, 'model': model, 'algorithm': algorithm, 'control_rate': 20.0}
    with NodeProcess(NODE, params) as node:
        plant = Plant(probe, Pose2D(0.0, 0.3, 0.0))
        errors = probe.record(Vector3Stamped, 'tracking_error')
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output()
        )
        goal = Pose2D(4.0, 1.0, 0.5)
        trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), goal)
        send_plan(probe, trajectory)
        assert probe.spin_until(
            lambda: 'goal reached' in node.output(), trajectory.duration_s + 15
        ), node.output()

        def stopped() -> bool:  # the last command taken is the zero (a busy probe takes it late)
            last = plant.commands[-1].twist
            return (last.linear.x, last.linear.y, last.angular.z) == (0.0, 0.0, 0.0)

        assert probe.spin_until(stopped, 60.0), plant.commands[-1]
        # Within the goal tolerance (0.1 m), plus what it drives while the zero command travels.
        assert math.hypot(plant.pose[0] - goal.x_m, plant.pose[1] - goal.y_m) < 0.11
        # Commands came at the control rate, stamped, in base_link.
        stamps = np.array([stamp_ns(c.header.stamp) for c in plant.commands]) / 1e9
        assert np.median(np.diff(stamps)) == pytest.approx(0.05, abs=0.005)
        assert plant.commands[0].header.frame_id == 'base_link'
        # The start was 0.3 m left of the plan: the first errors say so, the last are small.
        assert errors[0].vector.y == pytest.approx(0.3, abs=0.05)
        assert abs(errors[-1].vector.y) < 0.1  # goal.xy_tolerance
        count = len(plant.commands)
        probe.spin_for(1.0)
        assert len(plant.commands) == count  # nothing after the stop
        assert node.stop_cleanly(), node.output()


def test_a_goal_given_up_then_one_reached_log_both(probe):
    """Found in review: the two messages shared one logging call, whose severity rclpy fixes
    at its first use: after a goal given up, "goal reached" was an error of the callback."""
    with NodeProcess(NODE, {**FIXED, 'model': 'differential', 'goal.timeout': 0.5}) as node:
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0))
        plant.freeze = True  # the vehicle does not move: the goal is given up
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output()
        )
        trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(0.5, 0.0, 0.0))
        send_plan(probe, trajectory)
        assert probe.spin_until(lambda: 'goal not reached' in node.output(),
                                trajectory.duration_s + 30), node.output()
        plant.freeze = False
        send_plan(probe, plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(0.5, 0.0, 0.0)))
        assert probe.spin_until(lambda: 'goal reached' in node.output(),
                                trajectory.duration_s + 30), node.output()
        assert 'Logger severity' not in node.output()
        assert node.stop_cleanly(), node.output()


def test_unstamped_commands_and_refused_input(probe):
    # pose_timeout: the last good pose stays usable while the test waits, however busy.
    params = {**FIXED_CONTROLLER, 'enable_stamped_cmd_vel': False, 'pose_timeout': 60.0}
    with NodeProcess(NODE, params) as node:
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0), stamped=False)
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output()
        )
        trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(6.0, 0.0, 0.0))
        send_plan(probe, trajectory, frame='odom')  # another frame: refused
        assert probe.spin_until(lambda: 'plan ignored: its frame is "odom"' in node.output(),
                                20), node.output()
        probe.spin_for(0.5)  # ten control periods in which nothing may come
        assert not plant.commands
        publisher = send_plan(probe, trajectory)
        assert probe.spin_until(lambda: len(plant.commands) > 10, 60), node.output()
        assert isinstance(plant.commands[-1], Twist)
        assert plant.twist[0] > 0.1
        # Non-finite poses are refused.
        plant.freeze = True
        bad = PoseWithCovarianceStamped()
        bad.header.frame_id = 'map'
        bad.pose.pose.position.x = math.nan
        plant._pose_pub.publish(bad)
        assert probe.spin_until(lambda: 'pose ignored: position.x is nan' in node.output(), 20), (
            node.output())
        # A twist no vehicle has (the fuzz test saw it overflow the predicted pose into
        # NaN tracking errors) is refused, naming the range.
        errors = probe.record(Vector3Stamped, 'tracking_error')
        plant.silent = True
        good = PoseWithCovarianceStamped()
        good.header.frame_id = 'map'
        time_msg(probe.node.get_clock().now().nanoseconds, good.header.stamp)
        plant._pose_pub.publish(good)
        fast = Odometry()
        fast.twist.twist.linear.x, fast.twist.twist.linear.y = 1e308, -1e308
        fast.twist.twist.angular.z = 100.0
        plant._odom_pub.publish(fast)
        assert probe.spin_until(lambda: 'odom twist ignored' in node.output(), 30), (
            node.output())
        # Errors computed after that: a fresh pose, and an error stamped after it.
        time_msg(probe.node.get_clock().now().nanoseconds, good.header.stamp)
        plant._pose_pub.publish(good)
        assert probe.catch_up([errors], 60.0), node.output()
        assert all(math.isfinite(e.vector.x) and math.isfinite(e.vector.y)
                   for e in errors), errors
        assert 'must be finite and within +-1e+06' in node.output()
        plant.silent = False
        # An empty plan stops the vehicle.
        stop = Path()
        stop.header.frame_id = 'map'
        publisher.publish(stop)
        assert probe.spin_until(lambda: 'empty plan: stopping' in node.output(), 60)
        assert probe.spin_until(lambda: plant.twist.tolist() == [0.0, 0.0, 0.0], 60), plant.twist
        output = node.output()
        assert 'plan ignored: its frame is "odom"' in output
        # found in review: accepted live, the loop stopped without a word (no /clock)
        request = SetParameters.Request()
        request.parameters = [Parameter('use_sim_time', Parameter.Type.BOOL,
                                        True).to_parameter_msg()]
        response = probe.call(SetParameters, '/controller/set_parameters', request)
        assert response.results[0].reason == ('use_sim_time cannot change while the node runs: '
                                              'the control loop runs on the clock chosen at '
                                              'start-up')
        assert node.stop_cleanly(), node.output()


def test_a_pose_in_a_frame_static_transforms_put_beyond_1e9_m_is_refused(probe):
    """The fuzz test's case: /tf_static placed odom -1e308 m from map, a pose in odom came out
    finite at -1e308 m in map, and the nearest-point search overflowed into -inf/NaN tracking
    errors. A frame the static transforms put beyond +-1e9 m is refused with a warning."""
    from tf2_msgs.msg import TFMessage

    from wheelsim.ros.conversions import transform_stamped
    from wheelsim.ros.static_frames import STATIC_TF_QOS

    # pose_timeout: the last good pose stays usable while the test waits, however busy.
    with NodeProcess(NODE, {**FIXED_CONTROLLER, 'pose_timeout': 60.0}) as node:
        static = probe.publisher(TFMessage, '/tf_static', STATIC_TF_QOS)
        static.publish(TFMessage(transforms=[
            transform_stamped(0, 'map', 'odom', (-1e308, 0.0, 0.0))]))
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0))
        send_plan(probe, plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(20.0, 0.0, 0.0)))
        errors = probe.record(Vector3Stamped, 'tracking_error')
        assert probe.spin_until(lambda: len(errors) > 5, 20), node.output()
        plant.silent = True
        in_odom = PoseWithCovarianceStamped()
        in_odom.header.frame_id = 'odom'
        refused = ('pose ignored: the static transforms put "odom" at (-1e+308, 0) m from "map", '
                   'beyond +-1e+09 m')

        def finite() -> bool:
            return all(math.isfinite(e.vector.x) and math.isfinite(e.vector.y) for e in errors)

        def send_in_odom() -> int:
            now_ns = probe.node.get_clock().now().nanoseconds
            time_msg(now_ns, in_odom.header.stamp)
            plant._pose_pub.publish(in_odom)
            return now_ns

        sent_ns = send_in_odom()

        def refused_or_overflowed() -> bool:
            nonlocal sent_ns
            now_ns = probe.node.get_clock().now().nanoseconds
            if now_ns - sent_ns > 200_000_000:  # again until the transform has come too
                sent_ns = send_in_odom()
            return refused in node.output() or not finite()

        assert probe.spin_until(refused_or_overflowed, 20), node.output()
        assert finite(), [e.vector for e in errors][-3:]
        # The pose in odom as the latest pose, and the control steps half a second after it: a
        # node that warned and still used it would publish -inf/NaN errors there.
        last_ns = send_in_odom()
        assert probe.catch_up([errors], 20, until_ns=last_ns + 500_000_000), node.output()
        assert finite(), [e.vector for e in errors][-3:]
        assert refused in node.output()
        assert node.stop_cleanly(), node.output()


def test_a_pose_the_odom_twist_moves_past_1e9_m_stops_the_vehicle(probe):
    """The pose is moved on by the odom twist to the control step's time: from x = 1e9 m (taken)
    that passes the bound the tracker holds, and the controller stops with an error."""
    # pose_timeout: the far pose stays the latest usable one while the test waits.
    with NodeProcess(NODE, {**FIXED_CONTROLLER, 'pose_timeout': 60.0}) as node:
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0))
        send_plan(probe, plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(20.0, 0.0, 0.0)))
        assert probe.spin_until(lambda: plant.twist[0] > 0.1, 60), node.output()
        plant.silent = True
        odom = Odometry()
        odom.twist.twist.linear.x = 1.0
        plant._odom_pub.publish(odom)
        far = PoseWithCovarianceStamped()
        far.header.frame_id = 'map'
        far.pose.pose.position.x = 1e9
        time_msg(probe.node.get_clock().now().nanoseconds - 100_000_000, far.header.stamp)
        plant._pose_pub.publish(far)
        stopping = 'with x and y within +-1e+09 m; got'
        assert probe.spin_until(lambda: stopping in node.output()
                                and plant.twist.tolist() == [0.0, 0.0, 0.0], 60), node.output()
        output = node.output()
        assert ': stopping' in output and 'callback failed' not in output, output
        assert node.stop_cleanly(), node.output()


def test_a_plan_from_another_clock_starts_on_arrival_and_stale_poses_stop(probe):
    params = {**FIXED_CONTROLLER, 'pose_timeout': 0.5}
    with NodeProcess(NODE, params) as node:
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0))
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output()
        )
        trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(6.0, 0.0, 0.0))
        send_plan(probe, trajectory, offset_s=-1000.0)  # stamped 1000 s ago
        assert probe.spin_until(lambda: plant.twist[0] > 0.1, 60), node.output()
        assert "goes on from the vehicle's nearest point, 0.0 s into it" in node.output()
        silent_ns = probe.node.get_clock().now().nanoseconds
        plant.silent = True  # poses stop coming: zero, a warning
        assert probe.spin_until(lambda: 'no recent pose' in node.output(), 60), node.output()
        # The zero command follows the warning (over DDS, on a machine that may be busy).
        assert probe.spin_until(lambda: plant.twist.tolist() == [0.0, 0.0, 0.0], 60), plant.twist
        # Soon after the last pose by the controller's stamps (a busy probe takes them late):
        # pose_timeout 0.5 s, and what a busy machine adds.
        first_zero_ns = min(stamp_ns(c.header.stamp) for c in plant.commands
                            if stamp_ns(c.header.stamp) > silent_ns and c.twist.linear.x == 0.0)
        assert first_zero_ns - silent_ns < 5e9, (first_zero_ns - silent_ns) / 1e9


@pytest.mark.parametrize('params, message', [
    ({'algorithm': 'mpc'}, "parameter algorithm = 'mpc' is invalid"),
    ({'algorithm': 'policy'}, "parameter policy.callable = '' is invalid: must be "
                              "'package.module:name'"),
    ({'algorithm': 'policy', 'policy.callable': 'no_such_policies:drive'},
     'cannot import no_such_policies'),
    ({'policy.callable': 'no_such_policies:drive'}, 'is used by algorithm policy only'),
])
def test_invalid_parameters_stop_start_up_with_one_line(ros_domain_id, params, message):
    node = NodeProcess(NODE, params)
    assert node.refused(30), node.output()
    output = node.output()
    node.stop()
    assert message in output
    assert 'Traceback' not in output


def test_a_policy_module_with_a_syntax_error_stops_start_up_with_one_line(ros_domain_id, tmp_path,
                                                                          monkeypatch):
    (tmp_path / 'wheelsim_node_synerr.py').write_text('def f(:\n')
    monkeypatch.setenv('PYTHONPATH', f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}')
    node = NodeProcess(NODE, {'algorithm': 'policy', 'policy.callable': 'wheelsim_node_synerr:f'})
    assert node.refused(30), node.output()
    output = node.output()
    node.stop()
    assert ("parameter policy.callable = 'wheelsim_node_synerr:f' is invalid: cannot import "
            f"wheelsim_node_synerr: SyntaxError in {tmp_path}/wheelsim_node_synerr.py, line 1"
            in output), output
    assert 'Traceback' not in output


POLICY = """
import math

steps = 0


def drive(observation):
    \"\"\"Ahead at 0.3 m/s for 20 steps, then no action: NaN.\"\"\"
    global steps
    steps += 1
    assert observation.shape == (10,)
    return (0.3, 0.0) if steps <= 20 else (math.nan, 0.0)
"""


def test_a_policy_drives_and_one_returning_no_action_stops_the_vehicle(probe, tmp_path,
                                                                        monkeypatch):
    (tmp_path / 'wheelsim_node_policies.py').write_text(POLICY)
    monkeypatch.setenv('PYTHONPATH', f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}')
    params = {**FIXED, 'model': 'differential', 'algorithm': 'policy',
              'policy.callable': 'wheelsim_node_policies:drive'}
    with NodeProcess(NODE, params) as node:
        plant = Plant(probe, Pose2D(0.0, 0.0, 0.0))
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output())
        send_plan(probe, plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(6.0, 0.0, 0.0)))
        assert probe.spin_until(lambda: plant.twist[0] == pytest.approx(0.3), 60), (
            node.output())
        assert probe.spin_until(lambda: 'the policy returned (nan, 0.0)' in node.output(), 60), (
            node.output())
        assert 'an action is 2 finite values (vx_mps, wz_radps): stopping' in node.output()
        assert probe.spin_until(lambda: plant.twist.tolist() == [0.0, 0.0, 0.0], 60), plant.twist
        assert node.stop_cleanly(), node.output()


def test_a_restarted_controller_goes_on_from_where_the_vehicle_is(probe):
    """A controller restarted while the vehicle is 3 m along a 6 m plan gets the latched plan,
    stamped long ago: it must drive on from there, never back towards the path's start (it
    used to reverse about 1.5 m at min_linear_x)."""
    params = dict(FIXED_CONTROLLER)
    with NodeProcess(NODE, params) as node:
        plant = Plant(probe, Pose2D(3.0, 0.0, 0.0))
        assert probe.spin_until(lambda: plant._pose_pub.get_subscription_count() > 0, 20), (
            node.output()
        )
        trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), Pose2D(6.0, 0.0, 0.0))
        send_plan(probe, trajectory, offset_s=-30.0)  # the latched plan of a run 30 s ago
        assert probe.spin_until(lambda: plant.twist[0] > 0.05, 60), node.output()
        probe.spin_for(2.0)
        speeds = [cmd.twist.linear.x for cmd in plant.commands]
        assert min(speeds) >= 0.0, (speeds, node.output())
        assert plant.pose[0] > 3.0, plant.pose
        planned = re.search(r"nearest point, ([0-9.]+) s into it", node.output())
        assert planned and float(planned.group(1)) > 1.0, node.output()


def test_takes_the_vehicle_from_vehicle_description_and_warns_once_of_contradictions(probe):
    """Without a description the controller says what it waits for; with one (a car with
    0.1 s dead time, 0.15 s lag) it takes lead time, limits and geometry from it, and an
    explicit model that contradicts the vehicle is warned about once, naming both values
    (explicit values win; the steering limit is a car's only: not compared)."""
    from std_msgs.msg import String

    from wheelsim.core.vehicle.config import vehicle_config_from_params
    from wheelsim.core.vehicle.description import describe

    params = {'model': 'differential', 'max_steering_angle': 0.8}
    with NodeProcess(NODE, params) as node:
        assert probe.spin_until(lambda: 'waiting for vehicle_description' in node.output(),
                                20), node.output()
        assert 'to set wheel_base, lead_time, limits.max_linear_x' in node.output()
        car = vehicle_config_from_params({
            'model': 'bicycle', 'model_params.bicycle.wheel_base': 1.5,
            'model_params.bicycle.drive_actuator.dead_time': 0.1,
            'model_params.bicycle.drive_actuator.time_constant': 0.15})
        description = probe.publisher(String, 'vehicle_description', qos.LATCHED)
        for _ in range(2):  # twice: warned once
            description.publish(String(data=describe(car).to_json()))
            probe.spin_for(0.5)
        assert probe.spin_until(lambda: 'lead_time 0.25 s' in node.output(), 60), node.output()
        output = node.output()
        assert ("controller parameter model = 'differential' differs from the vehicle's "
                "'bicycle' (vehicle_description); using 'differential' as set") in output
        assert output.count('differs from the vehicle') == 1
        assert ('feedforward for the differential vehicle at 20 Hz (lead_time 0.25 s, speed -2 to '
                '2 m/s)') in output
        assert node.stop_cleanly(), node.output()


@pytest.mark.parametrize('min_linear_x, warned', [(0.0, True), (-1.0, False)])
def test_a_reversing_plan_it_may_not_drive_is_named_at_once(min_linear_x, warned, capsys):
    """Found in review: with ``limits.min_linear_x: 0`` a car given a plan backing up 3 m
    stood still until the goal timed out 12 s later, and nothing said why."""
    from wheelsim.testing.stack import run_stack

    commands = []

    def record(topic, msg, _time_ns):
        if topic == '/cmd_vel':
            commands.append(msg.twist.linear.x)

    run_stack('ackermann_car', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0},
        'planner': {'waypoints': [-3.0, 0.0, 0.0]},
        'controller': {'limits.min_linear_x': min_linear_x}}, 4.0, record)
    said = ('[controller]: a plan of 63 poses, 3.06 m, 5.1 s: leg 1 of 1 reverses, and '
            'limits.min_linear_x = 0 m/s allows no reversing: the vehicle will stop where it '
            'should back up (set limits.min_linear_x < 0, or plan without reversing)')
    assert (said in capsys.readouterr().err) == warned
    assert (min(commands) < 0.0) != warned  # it backs up where it may


def test_the_goal_is_reached_only_once_the_turn_onto_its_heading_has_slowed():
    """Found in review: a differential robot that came to its goal off the final heading was
    declared there while still turning at 0.88 rad/s (0.149 rad to go), and coasted on. The
    goal now waits until the measured yaw rate is at most ``goal.max_yaw_rate``."""
    from wheelsim.testing.stack import run_stack

    yaw_rates, stops = [], []

    def record(topic, msg, time_ns):
        if topic == '/ground_truth':
            yaw_rates.append((time_ns, msg.twist.twist.angular.z))
        elif topic == '/cmd_vel' and time_ns > 5e9 and not stops:
            twist = msg.twist
            if twist.linear.x == twist.linear.y == twist.angular.z == 0.0:
                stops.append(time_ns)  # the zero command of the goal reached

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0},
        'planner': {'waypoints': [2.0, 2.0, math.nan, 4.0, 2.0, math.nan],
                'start_at_current_pose': False},
    }, 20.0, record)
    assert len(stops) == 1
    yaw_rate = [rate for time_ns, rate in yaw_rates if time_ns <= stops[0]][-1]
    assert abs(yaw_rate) <= 0.12  # goal.max_yaw_rate 0.1, measured by noisy odometry


def yaw_recorder(yaws):
    """A ``run_stack`` recorder appending each ground truth's yaw [rad] to ``yaws``."""
    def record(topic, msg, _time_ns):
        if topic == '/ground_truth':
            orientation = msg.pose.pose.orientation
            yaws.append(2.0 * math.atan2(orientation.z, orientation.w))
    return record


def test_a_goal_tolerance_below_the_pose_noise_does_not_spin_a_differential_robot(capsys):
    """Found in review: with ``goal.xy_tolerance`` 5 mm and ``goal.yaw_tolerance`` 0.01 rad,
    below the noise of the pose estimate, a differential robot at its goal turned on the spot
    towards each new noisy position (2.4 rad of turning after it arrived, 1.49 rad off its
    heading) until the goal timed out. Once at the final position it now stays there (Nav2's
    stateful goal checker) and only turns onto the heading (it may still turn to drive the
    last millimetres there: the tolerance asks for them)."""
    from wheelsim.testing.stack import run_stack

    yaws = []
    run_stack('indoor_differential', {
        'planner': {'waypoints': [2.0, 0.0, 0.0]},
        'controller': {'goal.xy_tolerance': 0.005, 'goal.yaw_tolerance': 0.01}}, 20.0,
        yaw_recorder(yaws))
    assert '[controller]: goal reached' in capsys.readouterr().err
    assert abs(yaws[-1]) < 0.02


def test_an_odom_that_stopped_coming_is_no_measure_of_the_speed(capsys):
    """Found in review: with localization gone and poses still coming (another localizer), the
    controller took the last odom twist, 0.26 m/s, for the vehicle's speed for ever: it never
    found the vehicle slow enough at its goal (0.088 m off) and gave up."""
    from geometry_msgs.msg import PoseWithCovarianceStamped
    from nav_msgs.msg import Odometry

    from wheelsim.testing.stack import run_stack

    class Localizer:
        """Poses from the truth all along, odometry for the first 2 s only."""
        name = 'localizer'

        def __init__(self, seam):
            self.seam = seam
            self.pose = seam.create_publisher(PoseWithCovarianceStamped, 'pose', 10)
            self.odom = seam.create_publisher(Odometry, 'odom', 10)
            seam.create_subscription(Odometry, 'ground_truth', self.relay, 10)

        def relay(self, truth):
            pose = PoseWithCovarianceStamped(header=truth.header, pose=truth.pose)
            self.pose.publish(pose)
            if self.seam.now_ns() < 3_000_000_000:  # the run starts at 1 s
                self.odom.publish(Odometry(header=truth.header, child_frame_id='base_link',
                                           twist=truth.twist))

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0},
        'planner': {'waypoints': [3.0, 0.0, 0.0]}}, 20.0, lambda *_: None, Localizer,
        without=('localization',))
    err = capsys.readouterr().err
    assert '[controller]: goal reached' in err and 'goal not reached' not in err, err


class Nav2StylePlans:
    """Nav2's planner_server with NavFn, as the controller meets it: every second a path from
    the vehicle's latest pose to ``GOAL`` (5 cm apart, every pose stamped alike, orientations
    at the identity but the last, the goal's: navfn_planner.cpp), until the vehicle is within
    0.5 m of the goal."""

    name = 'nav2_style_planner'
    GOAL = (-8.0, 0.0, math.pi)

    def __init__(self, seam):
        self.seam = seam
        self.pose = None
        self.plan = seam.create_publisher(Path, 'plan', qos.DEFAULT)
        seam.create_subscription(PoseWithCovarianceStamped, 'pose', self.on_pose, qos.DEFAULT)
        seam.create_timer(1.0, self.replan)

    def on_pose(self, msg):
        self.pose = (msg.pose.pose.position.x, msg.pose.pose.position.y)

    def replan(self):
        if self.pose is None or math.dist(self.pose, self.GOAL[:2]) < 0.5:
            return
        count = max(2, round(math.dist(self.pose, self.GOAL[:2]) / 0.05) + 1)
        points = np.linspace(self.pose, self.GOAL[:2], count)
        self.plan.publish(nav2_path(points, self.GOAL[2], self.seam.now_ns()))


def nav2_path(points, goal_yaw_rad, stamp_ns_, frame='map'):
    """A nav_msgs/Path as Nav2's grid planners give it (see :class:`Nav2StylePlans`)."""
    msg = Path()
    msg.header.frame_id = frame
    time_msg(stamp_ns_, msg.header.stamp)
    for x_m, y_m in points:
        pose = PoseStamped(header=msg.header)
        pose.pose.position.x, pose.pose.position.y = float(x_m), float(y_m)
        msg.poses.append(pose)
    if msg.poses:
        msg.poses[-1].pose.orientation = quaternion_from_yaw(goal_yaw_rad)
    return msg


@pytest.mark.parametrize('start_yaw_rad, arrival_limit_s', [(math.pi, 14.0), (0.0, 17.0)])
def test_nav2_grid_planner_paths_are_driven_forwards_and_replans_keep_the_speed(
        capsys, start_yaw_rad, arrival_limit_s):
    """Found in review: a path going west with NavFn's identity orientations was read as a
    reversing leg (the vehicle swerved 0.99 m off it, commanded backwards), and a path
    replaced every second, as Nav2 replans, was timed from rest each time, holding the vehicle
    to a fraction of its top speed. Found with the real planner_server: a path leaving behind
    the vehicle was started backing up while turning (-0.8 m/s, 0.96 m), as the feedforward law
    does at a heading error of pi; a vehicle that turns on the spot now turns first."""
    from wheelsim.testing.stack import run_stack

    commands, speeds, poses = [], [], []

    def record(topic, msg, time_ns):
        if topic == '/cmd_vel':
            commands.append(msg.twist.linear.x)
        elif topic == '/ground_truth':
            speeds.append(msg.twist.twist.linear.x)
            position, orientation = msg.pose.pose.position, msg.pose.pose.orientation
            poses.append((time_ns / 1e9, position.x, position.y,
                          2.0 * math.atan2(orientation.z, orientation.w)))

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0,
                        'initial_pose.yaw': start_yaw_rad}}, 25.0, record, Nav2StylePlans,
        without=('planner',))
    err = capsys.readouterr().err
    assert '[controller]: goal reached' in err, err
    assert max(speeds) > 0.7  # the preset's top speed is 0.8 m/s
    assert min(commands) > -0.1  # forwards (but for the last centimetres at the goal)
    assert max(abs(y_m) for _, _, y_m, _ in poses) < 0.05
    assert max(abs(x_m) for _, x_m, _, _ in poses if x_m > -0.05) < 0.05  # turned on the spot
    moving = [yaw_rad for _, x_m, _, yaw_rad in poses if x_m < -0.2]
    assert max(abs(math.remainder(yaw_rad - math.pi, math.tau)) for yaw_rad in moving) < 0.2
    assert math.dist(poses[-1][1:3], Nav2StylePlans.GOAL[:2]) < 0.1
    arrival_s = next(t_s for t_s, *position, _ in poses
                     if math.dist(position, Nav2StylePlans.GOAL[:2]) < 0.1)
    # facing west: 12.8 s; replans timed from rest: 18.2 s (the first plan comes at 2 s; 8 m at
    # 0.8 m/s); facing east, the turn adds about 3 s
    assert arrival_s < arrival_limit_s


class ScriptedPlans:
    """Sends :attr:`SCRIPT`'s paths at their simulated times [s]: ``('east', x0, x1)`` a Nav2
    style path along y = 0 (the same message each time it is named alike; a fourth item: the
    goal's heading, else 0), ``'cancel'`` an
    empty path in frame ``odom``, ``('point', x)`` a path of one pose (a third item: its
    heading, else 0)."""

    name = 'scripted_plans'
    SCRIPT = [(2.0, ('east', 0.0, 3.0)), (3.0, 'cancel'), (5.0, ('east', 0.0, 3.0)),
              (15.0, ('east', 0.0, 3.0)), (21.0, ('east', 3.0, 9.0)), (22.5, ('point', 3.0))]

    def __init__(self, seam):
        self.seam = seam
        self.sent = {}
        self.plan = seam.create_publisher(Path, 'plan', qos.DEFAULT)
        self.script = list(self.SCRIPT)
        seam.create_timer(0.05, self.on_timer)

    def on_timer(self):
        now_ns = self.seam.now_ns()
        while self.script and self.script[0][0] * 1e9 <= now_ns:
            _, what = self.script.pop(0)
            if what == 'cancel':
                msg = nav2_path([], 0.0, now_ns, frame='odom')
            elif what[0] == 'point':
                msg = nav2_path([(what[1], 0.0)], what[2] if len(what) > 2 else 0.0, now_ns)
            else:
                count = round((what[2] - what[1]) / 0.05) + 1
                points = np.column_stack([np.linspace(what[1], what[2], count), np.zeros(count)])
                goal_yaw_rad = what[3] if len(what) > 3 else 0.0
                msg = self.sent.setdefault(what, nav2_path(points, goal_yaw_rad, now_ns))
            self.plan.publish(msg)


def test_cancels_replays_and_plans_it_cannot_follow_stop_or_restart_the_vehicle(capsys):
    """Found in review: an empty path (a cancel) in another frame than map was refused and
    the vehicle drove on; the next plan's first commands jumped from the old command (1.79 m/s
    at rest); the same plan sent again, after a cancel or its goal, was dropped without a word;
    a one-pose path (Nav2's plan for a goal where the vehicle stands) was refused and the old
    plan driven on."""
    from wheelsim.testing.stack import run_stack

    commands, speeds = [], []

    def record(topic, msg, time_ns):
        if topic == '/cmd_vel':
            commands.append((time_ns / 1e9, msg.twist.linear.x))
        elif topic == '/ground_truth':
            speeds.append((time_ns / 1e9, msg.pose.pose.position.x, msg.twist.twist.linear.x))

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0},
        'controller': {'limits.max_linear_acceleration': 1.0}}, 25.0, record, ScriptedPlans,
        without=('planner',))
    err = capsys.readouterr().err

    def speed_at(t_s):
        return next(v for t, _, v in speeds if t >= t_s)

    # the cancel at 3 s stops it, and the plan sent again at 5 s starts from rest
    assert speed_at(2.9) > 0.3 and abs(speed_at(4.9)) < 0.02
    assert '[controller]: empty plan: stopping' in err
    first = [v for t, v in commands if 5.0 <= t <= 5.3]
    assert first and max(first) <= 1.0 * 0.35 + 1e-9  # max_linear_acceleration, 7 steps
    # the goal is reached, and reached again when the plan is sent once more at 15 s
    assert err.count('[controller]: goal reached') == 2, err
    # the one-pose path at 22.5 s stops the vehicle on its way to x = 9 m
    assert 'plan refused: path needs at least 2 distinct points; stopping' in err
    assert speed_at(22.4) > 0.3 and abs(speeds[-1][2]) < 0.02 and speeds[-1][1] < 8.0


class PlanToAHeading(ScriptedPlans):
    SCRIPT = [(1.5, ('point', 5.0)), (2.0, ('east', 0.0, 2.0, math.pi / 2))]


class ReplanInTheGoalCell(ScriptedPlans):
    """Smac 2D and Theta* plan one pose, the goal's, for a vehicle in the goal's cell; NavFn
    the cell's centre and the goal (navigation2 1.3.13, as a real planner_server gave it)."""
    SCRIPT = [(2.0, ('east', 0.0, 2.0)), (4.5, ('east', 1.9500000001, 2.0, math.pi / 2)),
              (5.0, ('point', 2.0, math.pi / 2))]


def test_at_the_end_of_a_plan_without_times_it_turns_onto_the_goal_heading(capsys):
    """Found in review: a plan without times ended facing along the path, the last pose's
    orientation (the goal's, which Nav2's planners put there) ignored."""
    from wheelsim.testing.stack import run_stack

    yaws = []
    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0}},
        12.0, yaw_recorder(yaws), PlanToAHeading, without=('planner',))
    err = capsys.readouterr().err
    assert '[controller]: goal reached' in err
    assert abs(yaws[-1] - math.pi / 2) < 0.1  # goal.yaw_tolerance, noisy localization
    # the diff review: a plan refused while the controller was idle went unlogged
    assert err.count('[controller]: plan refused: path needs at least 2 distinct points') == 1


def test_a_replan_of_one_pose_at_the_goal_keeps_the_plan_with_its_heading(capsys):
    """Found in the diff review: a one-pose replan from the goal's cell stopped the vehicle in
    its final turn (0.72 rad short of the goal's heading) and the goal was never reached. With
    the real planner_server (NavFn), two-pose replans there were each followed as a new plan,
    the vehicle nudged back and forth and turned 229 degrees the long way round."""
    from wheelsim.testing.stack import run_stack

    yaws = []
    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0}},
        12.0, yaw_recorder(yaws), ReplanInTheGoalCell, without=('planner',))
    err = capsys.readouterr().err
    assert '[controller]: goal reached' in err and 'plan refused' not in err, err
    assert 'a plan of 2 poses' not in err, err
    assert abs(yaws[-1] - math.pi / 2) < 0.1


class ReplanWhileTurningAtTheGoal:
    """A Nav2 style plan 2 m east to a goal facing north; once the vehicle turns there, a
    replan of the same goal from 0.15 m back (NavFn's from a neighbouring start cell)."""

    name = 'replan_at_goal'
    GOAL_YAW_RAD = math.pi / 2

    def __init__(self, seam):
        self.seam = seam
        self.plan = seam.create_publisher(Path, 'plan', qos.DEFAULT)
        self.replanned_at_yaw_rad = None
        seam.create_subscription(Odometry, 'ground_truth', self.on_truth, qos.DEFAULT)
        self.timer = seam.create_timer(2.0, self.first_plan)

    def first_plan(self):
        self.seam.destroy_timer(self.timer)
        points = np.column_stack([np.linspace(0.0, 2.0, 41), np.zeros(41)])
        self.plan.publish(nav2_path(points, self.GOAL_YAW_RAD, self.seam.now_ns()))

    def on_truth(self, msg):
        orientation = msg.pose.pose.orientation
        yaw_rad = 2.0 * math.atan2(orientation.z, orientation.w)
        if self.replanned_at_yaw_rad is None and msg.pose.pose.position.x > 1.9 \
                and yaw_rad > 0.3:
            self.replanned_at_yaw_rad = yaw_rad
            points = np.column_stack([np.linspace(1.85, 2.0, 4), np.zeros(4)])
            self.plan.publish(nav2_path(points, self.GOAL_YAW_RAD, self.seam.now_ns()))


def test_a_replan_of_the_goal_once_there_keeps_the_plan(capsys):
    """Found with the real planner_server (NavFn), replanning every second as Nav2 does: a
    replan from 0.11 m off the goal came while the vehicle, done with the position, turned
    onto the goal's heading; followed as a new plan, it turned back 108 degrees, drove 0.1 m
    and turned again (2.5 s). Now the plan goes on."""
    from wheelsim.testing.stack import run_stack

    yaws = []
    stand_in = {}

    class Planner(ReplanWhileTurningAtTheGoal):
        def __init__(self, seam):
            super().__init__(seam)
            stand_in['planner'] = self

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0}},
        14.0, yaw_recorder(yaws), Planner, without=('planner',))
    err = capsys.readouterr().err
    replanned_at_yaw_rad = stand_in['planner'].replanned_at_yaw_rad
    assert replanned_at_yaw_rad is not None
    assert '[controller]: goal reached' in err, err
    assert 'a plan of 4 poses' not in err, err
    after = yaws[next(k for k, yaw in enumerate(yaws) if yaw >= replanned_at_yaw_rad):]
    assert min(after) > replanned_at_yaw_rad - 0.1  # it did not turn back
    assert abs(yaws[-1] - math.pi / 2) < 0.1


class ReplanAfterAMove(ReplanWhileTurningAtTheGoal):
    """As :class:`ReplanWhileTurningAtTheGoal`, but once the vehicle turns at its goal it is
    put 3 m back (``initialpose``), and the replan of the same goal comes from there."""

    name = 'replan_after_a_move'

    def __init__(self, seam):
        super().__init__(seam)
        self.initialpose = seam.create_publisher(PoseWithCovarianceStamped, 'initialpose',
                                                 qos.DEFAULT)
        self.moved = self.replanned = False

    def on_truth(self, msg):
        position = msg.pose.pose.position
        orientation = msg.pose.pose.orientation
        if not self.moved and position.x > 1.9 and 2.0 * math.atan2(orientation.z,
                                                                     orientation.w) > 0.3:
            self.moved = True
            move = PoseWithCovarianceStamped()
            move.header.frame_id = 'map'
            move.pose.pose.position.x = -1.0
            self.initialpose.publish(move)
        elif self.moved and not self.replanned and position.x < -0.5:
            self.replanned = True
            points = np.column_stack([np.linspace(-1.0, 2.0, 61), np.zeros(61)])
            self.plan.publish(nav2_path(points, self.GOAL_YAW_RAD, self.seam.now_ns()))


def test_a_replan_of_the_goal_from_elsewhere_is_followed(capsys):
    """Found in the diff review: once the vehicle had come to its final position, any plan
    ending at the same goal was dropped, wherever the vehicle was then: put 3 m back, it
    turned on the spot there and reported the goal reached."""
    from wheelsim.testing.stack import run_stack

    positions = []

    def record(topic, msg, _time_ns):
        if topic == '/ground_truth':
            positions.append(msg.pose.pose.position.x)

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0}},
        20.0, record, ReplanAfterAMove, without=('planner',))
    err = capsys.readouterr().err
    assert min(positions) < -0.5, 'never moved back'
    assert 'following a plan of 61 poses, 3.00 m' in err, err
    assert err.count('[controller]: goal reached') == 1, err
    assert abs(positions[-1] - 2.0) < 0.1


class NearAndFarPlans(ScriptedPlans):
    """At 5 s the vehicle drives at about x = 2 m: a 3 m plan from there, then one from 5 m."""
    SCRIPT = [(2.0, ('east', 0.0, 6.0)), (5.0, ('east', 2.0, 5.0)), (5.05, ('east', 5.0, 8.0))]


def test_only_a_plan_starting_near_the_vehicle_starts_at_its_speed(capsys):
    """Found in the diff review: a plan 20 m away was timed from the vehicle's speed, as if it
    started where the vehicle is."""
    from wheelsim.testing.stack import run_stack

    run_stack('indoor_differential', {
        'vehicle_sim': {'initial_pose.x': 0.0, 'initial_pose.y': 0.0, 'initial_pose.yaw': 0.0}},
        5.5, lambda *_: None, NearAndFarPlans, without=('planner',))
    durations = [float(s) for s in re.findall(
        r'following a plan of 61 poses, 3.00 m, ([0-9.]+) s \(timed here\)',
        capsys.readouterr().err)]
    assert len(durations) == 2
    near_s, far_s = durations
    assert far_s - near_s >= 0.3, durations  # the far one from rest
