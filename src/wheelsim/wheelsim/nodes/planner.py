"""planner: timed paths through the ``waypoints`` parameter or to each ``goal_pose``.

Inputs: ``pose`` (geometry_msgs/PoseWithCovarianceStamped, map frame: where the vehicle is),
``goal_pose`` (geometry_msgs/PoseStamped, map frame: RViz's "2D Goal Pose"), ``odom``
(nav_msgs/Odometry: its body twist, how fast the vehicle moves; none stamped within
:data:`ODOM_MAX_AGE_S` means at rest).
Output: ``plan`` (nav_msgs/Path in the map frame; reliable, transient local, depth 1 so that a
controller started later still gets it).

Time origin of ``plan``: ``header.stamp`` is the moment the trajectory starts (t = 0), the
planner's ROS time when it planned; each pose is stamped at that moment plus its planned time
(strictly increasing). A reader on the same clock (wall, ``/clock``, either) can use the stamps
as they are; a reader on another clock uses the differences ``pose.stamp - header.stamp``.

The waypoint path is planned once the planner's clock runs and (with ``start_at_current_pose``)
a pose has arrived, and again when a planning parameter or the vehicle changes (after a goal:
that goal again, from the latest pose, unless ``waypoints`` changed); every goal is planned at once
from the latest pose, starting at the vehicle's latest speed along the path (a new goal while
it drives keeps it going rather than braking to rest). Goals and poses in another frame are
taken through static transforms (``/tf_static``); those in a frame none joins to the map
frame, non-finite goals or poses, and goals no path can reach are refused with a warning and no
plan. The math is :mod:`wheelsim.core.planning.planner` (parameters:
docs/planning_control.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import numpy as np
from geometry_msgs.msg import PoseStamped, PoseWithCovarianceStamped
from nav_msgs.msg import Odometry, Path

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Floats3, Pose2D
from wheelsim.core.params import ParameterError, ParamSpec, from_flat, specs
from wheelsim.core.planning.config import (
    FROM_VEHICLE,
    PlannerConfig,
    waiting_for_vehicle,
    with_vehicle,
)
from wheelsim.core.planning.path import PlanningError, path_shape
from wheelsim.core.planning.planner import plan_to_goal, plan_waypoints
from wheelsim.core.planning.timing import velocity_in_map
from wheelsim.core.planning.trajectory import Trajectory
from wheelsim.core.units import NS_PER_S
from wheelsim.ros import qos
from wheelsim.ros.conversions import (
    fill_planar,
    planar_standard_deviations,
    stamp_ns,
    stamped_pose2d,
    time_msg,
    twist2d,
)
from wheelsim.ros.inputs import MapPoses, checked_twist
from wheelsim.ros.node_main import run_node
from wheelsim.ros.parameters import NodeParameters
from wheelsim.ros.seam import NodeSeam
from wheelsim.ros.vehicle_description import VehicleDefaults

RETRY_PERIOD_S = 0.2  # how often a pending waypoint plan checks its preconditions
#: An odom twist stamped longer ago than this (on the node's clock) is not used: the odometry
#: stopped, and the vehicle counts as at rest.
ODOM_MAX_AGE_S = 1.0


def parameter_specs() -> list[ParamSpec]:
    """Every parameter the node declares (for the headless runner and the docs)."""
    return specs(PlannerConfig)


def planner_config(values: Mapping[str, Any]) -> PlannerConfig:
    """The configuration ``values`` (dotted names, as declared: before the vehicle completes
    them) make; ParameterError unless valid, also for a ``limits.max_reverse_speed`` above the
    ``limits.max_speed`` given, which would cap it."""
    config = from_flat(PlannerConfig, values)
    limits = config.limits
    if limits.max_speed != FROM_VEHICLE and limits.max_reverse_speed > limits.max_speed:
        raise ParameterError('limits.max_reverse_speed', limits.max_reverse_speed,
                             f'must be at most limits.max_speed ({limits.max_speed:g} m/s), '
                             'which caps it, or 0 (max_speed)')
    return config


def check_parameters(values: Mapping[str, Any]) -> None:
    """Raise ParameterError unless ``values`` (dotted names) make a valid configuration
    (:func:`planner_config`)."""
    planner_config(values)


def path_message(trajectory: Trajectory, start_ns: int, frame_id: str) -> Path:
    """``nav_msgs/Path`` of ``trajectory`` starting at ``start_ns`` (see the module doc)."""
    msg = Path()
    time_msg(start_ns, msg.header.stamp)
    msg.header.frame_id = frame_id
    poses = []
    for t_s, x_m, y_m, yaw_rad in zip(trajectory.t_s.tolist(), trajectory.x_m.tolist(),
                                      trajectory.y_m.tolist(), trajectory.yaw_rad.tolist(),
                                      strict=True):
        pose = PoseStamped()
        header, planar = pose.header, pose.pose
        time_msg(start_ns + round(t_s * NS_PER_S), header.stamp)
        header.frame_id = frame_id
        fill_planar(planar.position, planar.orientation, (x_m, y_m, yaw_rad))
        poses.append(pose)
    msg.poses = poses
    return msg


class Planner:
    """The planner node, on ``seam`` (:mod:`wheelsim.ros.seam`)."""

    name = 'planner'

    def __init__(self, seam: NodeSeam) -> None:
        self.seam = seam
        self.params = NodeParameters(seam)
        self._vehicle: VehicleDefaults[PlannerConfig] | None = None  # after the declaration
        self._settings = self.params.declare(specs(PlannerConfig), self._config,
                                             self._on_settings)
        self.params.freeze('use_sim_time', 'plans are timed on the clock chosen at start-up')
        self.params.report_unknown()
        declared = self._settings.config
        self._pose: Floats3 | None = None  # the latest (map frame, as MapPoses.planar gives it)
        self._pose_covariance: np.ndarray | None = None  # the latest pose's, a copy
        self._twist: Floats3 = (0.0, 0.0, 0.0)  # the latest odom body twist, checked when used
        self._twist_stamp_ns = 0  # its header's stamp
        self._replan_pending = False  # the latest plan's again: to _goal, else the waypoints
        self._goal: Pose2D | None = None  # the goal of the latest plan (None: the waypoints')
        self._plan = seam.create_publisher(Path, 'plan', qos.LATCHED)
        self._map_poses = MapPoses(seam, declared.full_map_frame)
        seam.create_subscription(PoseWithCovarianceStamped, 'pose', self._on_pose, qos.DEFAULT)
        seam.create_subscription(PoseStamped, 'goal_pose', self._on_goal, qos.DEFAULT)
        seam.create_subscription(Odometry, 'odom', self._on_odom, qos.DEFAULT)
        self._vehicle = VehicleDefaults(
            seam, declared, with_vehicle, waiting_for_vehicle, self._on_resolved)
        seam.create_timer(RETRY_PERIOD_S, self._plan_waypoints_when_ready)
        count = len(declared.waypoints) // 3
        self.seam.logger.info(
            f'planning in {declared.full_map_frame}: {count} waypoint{"" if count == 1 else "s"}, '
            'goals on goal_pose'
        )

    @property
    def config(self) -> PlannerConfig | None:
        """The configuration in use: the parameters completed from the vehicle description
        (None while some still wait for it)."""
        return self._vehicle.config

    def _config(self, values: Mapping[str, Any]) -> PlannerConfig:
        """:func:`planner_config`, refused also when the vehicle described cannot have it (a
        live ``holonomic`` true for a vehicle that is not omni)."""
        config = planner_config(values)
        if self._vehicle is not None:
            self._vehicle.check(config)
        return config

    def _on_settings(self, new: PlannerConfig, old: PlannerConfig) -> None:
        self._vehicle.declare(new)
        if new.waypoints != old.waypoints:  # found in review: a goal went, the route came back
            self._goal = None
        self._replan_pending = self._goal is not None or bool(new.waypoints)

    def _on_resolved(self, config: PlannerConfig) -> None:
        limits = config.limits
        self.seam.logger.info(
            f'planning for the {config.model} vehicle: max_speed {limits.max_speed:.3g} m/s, '
            f'max_acceleration {limits.max_acceleration:.3g} m/s^2, max_curvature '
            + (f'{limits.max_curvature:.3g} 1/m' if limits.max_curvature else 'unbounded')
            + (', reversing allowed' if config.reverses else '')
            + (f' at up to {min(limits.max_reverse_speed, limits.max_speed):.3g} m/s'
               if config.reverses and limits.max_reverse_speed else ''))
        self._replan_pending = self._goal is not None or bool(config.waypoints)  # (again)

    def _on_pose(self, msg: PoseWithCovarianceStamped) -> None:
        _, frame_id, x_m, y_m, yaw_rad = stamped_pose2d(msg)
        pose = self._map_poses.planar(x_m, y_m, yaw_rad, frame_id, 'pose')
        if pose is not None:
            self._pose = pose
            self._pose_covariance = msg.pose.covariance.copy()  # rclpy: a numpy array

    def _on_odom(self, msg: Odometry) -> None:
        self._twist = twist2d(msg.twist.twist)
        self._twist_stamp_ns = stamp_ns(msg.header.stamp)

    def _velocity(self, pose: Pose2D | None) -> tuple[float, float]:
        """The vehicle's velocity (m/s, map frame) at ``pose``: the latest odom body twist
        turned by its heading; at rest without a pose, without an odom twist stamped within
        :data:`ODOM_MAX_AGE_S` of now, or with one refused (warning)."""
        age_s = (self.seam.now_ns() - self._twist_stamp_ns) / NS_PER_S
        if pose is None or not abs(age_s) <= ODOM_MAX_AGE_S:
            return 0.0, 0.0
        twist = checked_twist(self._twist, self._map_poses.warnings)
        if twist is None:
            return 0.0, 0.0
        vx_mps, vy_mps, _ = twist
        return velocity_in_map(pose, vx_mps, vy_mps)

    def _plan_waypoints_when_ready(self) -> None:
        if self.config is None:
            self._vehicle.log_waiting()
            return
        if not self._replan_pending or self.seam.now_ns() == 0:
            return
        if self._goal is not None:
            self._replan_pending = False
            self._plan_goal(self._goal)
            return
        if self.config.start_at_current_pose and self._pose is None:
            self.seam.logger.info(
                'waypoint plan waits for the first pose', throttle_duration_sec=10.0
            )
            return
        self._replan_pending = False
        pose = None if self._pose is None else Pose2D(*self._pose)
        sd = (0.0, 0.0) if self._pose_covariance is None \
            else planar_standard_deviations(self._pose_covariance)
        velocity = self._velocity(pose)
        self._publish('waypoints',
                      lambda warnings: plan_waypoints(self.config, pose, warnings, *sd, velocity))

    def _on_goal(self, msg: PoseStamped) -> None:
        goal = self._map_poses.pose(msg.pose, msg.header.frame_id, 'goal_pose')
        if goal is None:
            return
        if self._pose is None:
            self._map_poses.warnings.warn(
                'goal early', f'goal {tuple(goal)} ignored: no pose received yet')
            return
        if self.config is None:
            waiting = self._vehicle.waiting_for()
            why = (f'{", ".join(waiting)} still wait for vehicle_description' if waiting
                   else self._vehicle.problem)
            self._map_poses.warnings.warn('goal early', f'goal {tuple(goal)} ignored: {why}')
            return
        self._plan_goal(goal)

    def _plan_goal(self, goal: Pose2D) -> None:
        """Plan to ``goal`` (map frame) from the latest pose, at the latest speed."""
        start = Pose2D(*self._pose)
        velocity = self._velocity(start)
        if self._publish(f'goal {_pose_text(goal)}', lambda warnings: plan_to_goal(
                self.config, start, goal, warnings, velocity)):
            self._goal = goal

    def _publish(self, what: str, plan) -> bool:
        """Publish the plan ``plan(warnings)`` gives for ``what``; False (logged) if none."""
        warnings: list[str] = []
        try:
            trajectory = plan(warnings)
        except PlanningError as err:
            self._map_poses.warnings.warn('no plan', f'no plan for the {what}: {err}')
            return False
        except (ArithmeticError, ValueError, np.linalg.LinAlgError) as err:
            # Numbers the math cannot handle (a bug to report): the node keeps running.
            self._map_poses.warnings.warn(
                'planner failed', f'no plan for the {what}: the planner failed: {err!r}')
            return False
        for warning in warnings:
            self.seam.logger.warning(f'plan for the {what}: {warning}')
        start_ns = self.seam.now_ns()
        self._plan.publish(path_message(trajectory, start_ns, self.config.full_map_frame))
        self._goal = None  # (a goal's plan sets it again)
        end = trajectory.end()
        shape = path_shape(trajectory.x_m, trajectory.y_m)
        self._map_poses.warnings.info('plan', (
            f'plan for the {what}: {len(trajectory)} poses, {shape.length_m:.2f} m, max '
            f'curvature {shape.max_curvature_inv_m:.3g} 1/m, total turning '
            f'{shape.total_turning_rad:.2f} rad, {trajectory.duration_s:.1f} s, ending at '
            + _pose_text(Pose2D(end.x_m, end.y_m, end.yaw_rad))))
        return True


def _pose_text(pose: Pose2D) -> str:
    """A pose in a log line, its heading in (-pi, pi] (a plan's end may have turned past it)."""
    return f'({pose.x_m:.2f} m, {pose.y_m:.2f} m, {wrap_angle(pose.yaw_rad):.2f} rad)'


def main(args=None) -> NoReturn:
    run_node(Planner, args)



if __name__ == '__main__':  # python -m wheelsim.nodes.planner
    main()
