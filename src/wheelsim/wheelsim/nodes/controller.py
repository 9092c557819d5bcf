"""controller: follows the latest ``plan`` and publishes ``cmd_vel`` at ``control_rate``.

Inputs: ``plan`` (nav_msgs/Path, map frame), ``pose`` (PoseWithCovarianceStamped, map frame),
``odom`` (nav_msgs/Odometry: its body twist is the measured speed, while it is no older than
``pose_timeout``; else the last command is).
Outputs: ``cmd_vel`` (geometry_msgs/TwistStamped in base_link, or Twist with
``enable_stamped_cmd_vel`` false, as Nav2) and ``tracking_error`` (geometry_msgs/Vector3Stamped
in the map frame: x along-track, y cross-track [m], z heading error [rad]; see
:class:`wheelsim.core.tracking.reference.TrackingErrors`): a command every control step, the
errors every step that follows a plan with a recent pose.

The loop runs on a ROS timer, so it follows the node's clock in every clock mode; each step
moves the latest pose on to the present (it may be a few milliseconds old; on a busy machine
in a run faster than real time, up to a second): from the odometry's body twist, following the
commands this node sent since through the vehicle's lag, ``lead_time``
(:mod:`wheelsim.core.tracking.prediction`). A plan whose
poses carry increasing stamps is followed on that schedule: the first pose's stamp is the
start when it lies within ``plan_clock_tolerance`` of this node's clock; otherwise (a planner on
another clock, a recorded plan, a latched plan delivered late) the schedule goes on from the
vehicle's nearest point (of near-equal ones, as where a closed path ends at its start, the one
its stamps place now nearest to). A plan without times (all
stamps equal, as Nav2's) is timed here within the output limits, from the vehicle's speed along
it (the odom twist, if it starts within ``START_SPEED_DISTANCE_M``), so that a plan replaced
every second, as Nav2 replans, keeps the vehicle going; its poses' headings tell which way each
leg is driven, unless all but the last are 0 (Nav2's grid planners leave them unset): then
forwards (a car facing away from it: backwards); at its end a vehicle that turns on the spot
turns onto the last pose's heading (the goal's).
An empty plan, in any frame, stops the vehicle, and so does a plan that cannot be followed (a
broken path, a single point: a throttled warning); but a plan within ``goal.xy_tolerance`` of
the goal of the plan followed (a replan from the goal's cell), or ending at that goal while
the vehicle, come to its final position, is within that tolerance of it, only gives its last
heading. A
plan is followed once, until its goal is reached or given up: sent again after that, it is
followed again. Other plans and poses in
another frame and non-finite poses are refused with a throttled warning (the plan followed goes
on); without a recent pose (``pose_timeout``) the controller publishes zero and the
schedule holds until poses come again. With ``algorithm: policy`` the law is a Python policy
(``policy.callable``) fed the path-tracking environment's observation
(:mod:`wheelsim.core.tracking.policy`); a policy that returns no action stops the vehicle with
a throttled error. At the goal
(or when it gives up) it publishes zero once and then nothing until the next plan.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np
from geometry_msgs.msg import PoseWithCovarianceStamped, Twist, TwistStamped, Vector3Stamped
from nav_msgs.msg import Odometry, Path

from wheelsim.core.geometry.se2 import Floats3, Pose2D
from wheelsim.core.params import ParamSpec, from_flat, specs
from wheelsim.core.planning.path import PlanningError
from wheelsim.core.planning.timing import velocity_in_map
from wheelsim.core.tracking.config import ControllerConfig, waiting_for_vehicle, with_vehicle
from wheelsim.core.tracking.controller import (
    GOAL_FAILED,
    GOAL_REACHED,
    TrackingController,
    reversing_refused,
    trajectory_from_plan,
)
from wheelsim.core.tracking.prediction import CommandHistory, predicted_pose
from wheelsim.core.tracking.reference import ZERO_TWIST, BodyTwist, TrackingErrors
from wheelsim.core.tracking.warm_up import warm_up
from wheelsim.core.units import NS_PER_S
from wheelsim.ros import qos
from wheelsim.ros.clock import timer_period_s
from wheelsim.ros.conversions import (
    fill_twist,
    pose2d,
    stamp_ns,
    stamped_pose2d,
    time_msg,
    twist2d,
)
from wheelsim.ros.inputs import WARN_PERIOD_S, MapPoses, checked_twist
from wheelsim.ros.node_main import run_node
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import NodeSeam
from wheelsim.ros.vehicle_description import VehicleDefaults

#: A plan without times that starts farther than this from the vehicle is timed from rest: it
#: starts elsewhere. Nearer, from the vehicle's speed: a replan starts where the vehicle was
#: when the planner took its pose, which at 2 m/s and half a second of planning is 1 m back.
START_SPEED_DISTANCE_M = 1.0


def parameter_specs() -> list[ParamSpec]:
    """Every parameter the node declares (for the headless runner and the docs)."""
    return specs(ControllerConfig)


def check_parameters(values: Mapping[str, Any]) -> None:
    """Raise ParameterError unless ``values`` (dotted names) make a valid configuration."""
    from_flat(ControllerConfig, values)


def _plan_key(msg: Path) -> tuple:
    """What identifies a plan: the same message arriving twice (two QoS) is followed once."""
    first, last = msg.poses[0].pose.position, msg.poses[-1].pose.position
    return (stamp_ns(msg.header.stamp), len(msg.poses), first.x, first.y, last.x, last.y)


class Controller:
    """The controller node, on ``seam`` (:mod:`wheelsim.ros.seam`)."""

    name = 'controller'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        warm_up()  # the control step's compiled kernels: loaded now, not at the first step
        self.params = NodeParameters(seam)
        self._vehicle: VehicleDefaults[ControllerConfig] | None = None  # after the declaration
        self._settings = self.params.declare(specs(ControllerConfig), self._config,
                                             self._on_settings)
        self.params.freeze('use_sim_time', 'the control loop runs on the clock chosen at '
                                           'start-up')
        self.params.report_unknown()
        config = self._settings.config
        self.tracker: TrackingController | None = None  # once the configuration is complete
        self._waiting_plan: Path | None = None  # a plan received before that
        # The latest pose (map frame, as MapPoses.planar gives it) with its stamp [ns], and the
        # latest odometry body twist (vx, vy, wz) with its stamp: plain floats, made a Pose2D
        # and a BodyTwist at the control step.
        self._pose: tuple[Floats3, int] | None = None
        self._twist: tuple[Floats3, int] | None = None
        # The commands published, with their times [s]: the pose is moved on with them.
        self._commands = CommandHistory()
        self._plan_key: tuple | None = None
        self._stale_plan: tuple | None = None  # (trajectory, description, start ns) until a pose
        self._stamped = config.enable_stamped_cmd_vel
        self._cmd_vel = self.seam.create_publisher(
            TwistStamped if self._stamped else Twist, 'cmd_vel', qos.DEFAULT
        )
        self._errors = self.seam.create_publisher(Vector3Stamped, 'tracking_error', qos.DEFAULT)
        # Filled again for every publication (a published message is valid until the next one):
        # their frames, read-only parameters, once here.
        self._command_msg = TwistStamped() if self._stamped else Twist()
        if self._stamped:
            self._command_msg.header.frame_id = config.full_base_frame
        self._errors_msg = Vector3Stamped()
        self._errors_msg.header.frame_id = config.full_map_frame
        # Latched plans (wheelsim's planner) and volatile ones (other planners) alike.
        for profile in (qos.LATCHED, qos.DEFAULT):
            self.seam.create_subscription(Path, 'plan', self._on_plan, profile)
        self._map_poses = MapPoses(seam, config.full_map_frame)
        self.seam.create_subscription(PoseWithCovarianceStamped, 'pose', self._on_pose, qos.DEFAULT)
        self.seam.create_subscription(Odometry, 'odom', self._on_odom, qos.DEFAULT)
        self._timer = self.seam.create_timer(timer_period_s(config.control_rate), self._on_timer)
        self._vehicle = VehicleDefaults(
            seam, config, with_vehicle, waiting_for_vehicle, self._on_resolved)

    @property
    def config(self) -> ControllerConfig | None:
        """The configuration in use: the parameters completed from the vehicle description
        (None while some still wait for it)."""
        return self._vehicle.config

    def _config(self, values: Mapping[str, Any]) -> ControllerConfig:
        """The configuration of ``values``, refused also when the vehicle cannot complete it
        (:meth:`VehicleDefaults.check`)."""
        config = from_flat(ControllerConfig, values)
        if self._vehicle is not None:
            self._vehicle.check(config)
        return config

    def _on_settings(self, new: ControllerConfig, old: ControllerConfig) -> None:
        self._vehicle.declare(new)
        if new.control_rate != old.control_rate:
            self.seam.destroy_timer(self._timer)
            self._timer = self.seam.create_timer(timer_period_s(new.control_rate), self._on_timer)

    def _on_resolved(self, config: ControllerConfig) -> None:
        limits = config.limits
        self.seam.logger.info(
            f'{config.algorithm} for the {config.model} vehicle at {config.control_rate:g} Hz '
            f'(lead_time {config.lead_time:.3g} s, speed {limits.min_linear_x:.3g} to '
            f'{limits.max_linear_x:.3g} m/s' + (
                f', wheel_base {config.wheel_base:.3g} m, steering limit '
                f'{config.max_steering_angle:.3g} rad' if config.model == 'bicycle' else '')
            + f'), cmd_vel as {"TwistStamped" if self._stamped else "Twist"}')
        if self.tracker is None:
            self.tracker = TrackingController(config)
            if self._waiting_plan is not None:
                plan, self._waiting_plan = self._waiting_plan, None
                self._on_plan(plan)
        else:
            self.tracker.config = config

    def _on_plan(self, msg: Path) -> None:
        if msg.poses and not self._map_poses.frame_matches(msg.header.frame_id, 'plan'):
            return
        if self.tracker is None:
            self._waiting_plan = msg if msg.poses else None
            self._vehicle.log_waiting()
            return
        if not msg.poses:  # a cancel, in whatever frame
            self._stop('empty plan', 'empty plan: stopping')
            return
        key = _plan_key(msg)
        if key == self._plan_key:
            return
        self._plan_key = key
        stamps = np.array([stamp_ns(p.header.stamp) for p in msg.poses], dtype=np.int64)
        poses = np.array([pose2d(p.pose) for p in msg.poses])
        if self._at_the_goal(poses):
            return
        vehicle_yaw_rad = None if self._pose is None else self._pose[0][2]
        try:
            trajectory, timed = trajectory_from_plan(
                (stamps - stamps[0]) / NS_PER_S, poses[:, 0], poses[:, 1], poses[:, 2], self.config,
                self._velocity_in_map(poses[0, :2]), vehicle_yaw_rad)
        except PlanningError as err:  # the plan replaces the one followed, which is dropped
            self._stop('plan invalid', f'plan refused: {err}; stopping', warn=True)
            self._plan_key = key  # refused once, not again as it comes on the other QoS
            return
        now = self.seam.now_ns()
        start = int(stamps[0]) if timed else now
        described = (f'a plan of {len(msg.poses)} poses, {trajectory.length_m:.2f} m, '
                     f'{trajectory.duration_s:.1f} s')
        refused = reversing_refused(trajectory, self.config)
        if refused is not None:
            self._map_poses.warnings.warn('plan reverses', f'{described}: {refused}')
        if timed and abs(start - now) > self.config.plan_clock_tolerance * NS_PER_S:
            # Another clock, or an old plan (a restarted controller gets the latched one): the
            # schedule starts where the vehicle is on the path, not at the path's start.
            self._stale_plan = (trajectory, described, start)
            self._follow_stale_plan()
            return
        self._stale_plan = None
        # a plan without times ends facing along the path; its last pose has the goal's heading
        final_yaw_rad = None if timed or not np.isfinite(poses[-1, 2]) else float(poses[-1, 2])
        self.tracker.follow(trajectory, start / NS_PER_S, final_yaw_rad=final_yaw_rad)
        self._map_poses.warnings.info('plan', f'following {described} ' + (
            'from its start' if timed else '(timed here)'))

    def _at_the_goal(self, poses: np.ndarray) -> bool:
        """Whether ``poses`` (x, y, yaw rows) replan the goal of the plan being followed from
        where the vehicle is done with its position: all within ``goal.xy_tolerance`` of the
        plan's end (replanned from the goal's cell: Nav2's NavFn then plans the start cell's
        centre and the goal, Smac 2D and Theta* one pose), or ending there while the vehicle,
        come to its final position, is still within that tolerance of it (a replan every
        second, as Nav2's, would otherwise drive it back over the centimetres it is done with).
        The plan goes on, its goal's heading the last pose's."""
        trajectory = self.tracker.trajectory
        if trajectory is None:
            return False
        end = trajectory.end()
        tolerance_m = self.config.goal.xy_tolerance
        near = np.hypot(poses[:, 0] - end.x_m, poses[:, 1] - end.y_m) <= tolerance_m
        if not near.all() and not (
                near[-1] and self.tracker.at_final_position and self._pose is not None
                and math.hypot(self._pose[0][0] - end.x_m, self._pose[0][1] - end.y_m)
                <= tolerance_m):
            return False
        if np.isfinite(poses[-1, 2]):
            self.tracker.turn_onto(float(poses[-1, 2]))
        return True

    def _stop(self, topic: str, message: str, warn: bool = False) -> None:
        """Drop the plan being followed, if any, and command a stop; forget the plans seen, so
        that the same plan sent again is followed. ``message`` is logged, throttled by
        ``topic``: as a warning always, else only if a plan was dropped."""
        self._plan_key = None
        self._stale_plan = None
        following = self.tracker.trajectory is not None
        if warn:
            self._map_poses.warnings.warn(topic, message)
        elif following:
            self._map_poses.warnings.info(topic, message)
        if following:
            self.tracker.stop()
            self._publish_command(self.seam.now_ns(), ZERO_TWIST)

    def _velocity_in_map(self, plan_start: np.ndarray) -> tuple[float, float]:
        """The vehicle's velocity (m/s, map frame): the latest odom body twist no older than
        ``pose_timeout``, turned by the latest pose's heading; at rest without either, or when
        the vehicle is farther than :data:`START_SPEED_DISTANCE_M` from ``plan_start`` (x, y):
        a plan that does not start where it is."""
        now = self.seam.now_ns()
        limit_ns = self.config.pose_timeout * NS_PER_S
        if self._pose is None or self._twist is None or now - self._twist[1] > limit_ns \
                or math.dist(self._pose[0][:2], plan_start) > START_SPEED_DISTANCE_M:
            return 0.0, 0.0
        vx_mps, vy_mps, _ = self._twist[0]
        return velocity_in_map(Pose2D(*self._pose[0]), vx_mps, vy_mps)

    def _follow_stale_plan(self) -> None:
        """Start the pending stale plan from the vehicle's nearest point once a pose exists."""
        if self._stale_plan is None or self._pose is None:
            return
        trajectory, described, start_ns = self._stale_plan
        self._stale_plan = None
        now_ns = self.seam.now_ns()
        offset_s = (start_ns - now_ns) / NS_PER_S
        planned_s = self.tracker.follow_from_nearest(
            trajectory, now_ns / NS_PER_S, Pose2D(*self._pose[0]), -offset_s)
        self._map_poses.warnings.info('plan', (
            f"following {described}: its stamps are {offset_s:+.1f} s from this node's clock "
            f'(another clock or an old plan), so it goes on from the vehicle\'s nearest point, '
            f'{planned_s:.1f} s into it'))

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        stamp, frame_id, x_m, y_m, yaw_rad = stamped_pose2d(msg)
        pose = self._map_poses.planar(x_m, y_m, yaw_rad, frame_id, 'pose')
        if pose is not None:
            self._pose = (pose, stamp)
            self._follow_stale_plan()

    def _on_odom(self, msg: Odometry) -> None:
        twist = checked_twist(twist2d(msg.twist.twist), self._map_poses.warnings)
        if twist is not None:  # a zero stamp is unset: the twist counts from its arrival
            self._twist = (twist, stamp_ns(msg.header.stamp) or self.seam.now_ns())

    def _on_timer(self) -> None:
        if self.tracker is None:
            self._vehicle.log_waiting()
            return
        if self.tracker.trajectory is None:
            return
        now = self.seam.now_ns()
        if self._pose is None or now - self._pose[1] > self.config.pose_timeout * NS_PER_S:
            age = (
                'none received'
                if self._pose is None
                else f'{(now - self._pose[1]) / NS_PER_S:.2f} s old'
            )
            self.seam.logger.warning(
                f'no recent pose ({age}; pose_timeout {self.config.pose_timeout:g} s): stopping',
                throttle_duration_sec=WARN_PERIOD_S,
            )
            self.tracker.hold(now / NS_PER_S)
            self._publish_command(now, ZERO_TWIST)
            return
        pose, stamp = self._pose
        # an odom twist as old as a pose that stops the vehicle is no measure of its speed
        twist = None
        if self._twist is not None and \
                now - self._twist[1] <= self.config.pose_timeout * NS_PER_S:
            twist = self._twist[0]
        if twist is not None and now > stamp:  # where the vehicle is by now
            pose = predicted_pose(pose, twist, stamp / NS_PER_S, now / NS_PER_S, self._commands,
                                  self.config.lead_time)
        try:
            step = self.tracker.step(now / NS_PER_S, Pose2D(*pose),
                                     None if twist is None else BodyTwist(*twist))
        except ValueError as err:  # a PolicyError, or the pose moved on by the twist past 1e9 m
            if not self.seam.live:  # a headless run ends with it, as with any node's error
                raise
            self.seam.logger.error(f'{err}: stopping', throttle_duration_sec=WARN_PERIOD_S)
            self.tracker.hold(now / NS_PER_S)
            self._publish_command(now, ZERO_TWIST)
            return
        if step.command is not None:
            self._publish_command(now, step.command)
        if step.errors is not None:
            self._publish_errors(now, step.errors)
        if step.status in (GOAL_REACHED, GOAL_FAILED):
            self._plan_key = None  # the same plan sent again is a new request
            # one call each: rclpy fixes a call site's severity at its first call
            if step.status == GOAL_REACHED:
                self.seam.logger.info(step.message)
            else:
                self.seam.logger.warning(step.message)

    def _publish_command(self, stamp: int, command: BodyTwist) -> None:
        """Publish ``command`` stamped ``stamp`` [ns] (the control step's time)."""
        self._commands.add(stamp / NS_PER_S, command)
        config = self.config
        if config is not None:  # kept while a pose young enough to act on may need them
            self._commands.forget_before(
                stamp / NS_PER_S - config.pose_timeout - config.lead_time)
        msg = self._command_msg
        if self._stamped:
            time_msg(stamp, msg.header.stamp)
            fill_twist(msg.twist, command)
        else:
            fill_twist(msg, command)
        self._cmd_vel.publish(msg)

    def _publish_errors(self, stamp: int, errors: TrackingErrors) -> None:
        msg = self._errors_msg
        time_msg(stamp, msg.header.stamp)
        vector = msg.vector
        vector.x, vector.y, vector.z = errors  # along-track, cross-track, heading
        self._errors.publish(msg)


def main(args=None) -> NoReturn:
    run_node(Controller, args)



if __name__ == '__main__':  # python -m wheelsim.nodes.controller
    main()
