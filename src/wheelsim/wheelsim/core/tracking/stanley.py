"""Stanley steering (Thrun et al. 2006), on the front axle's own path.

Designed for car-like vehicles; differential and omni bases are steered the same way through a
virtual front axle ``wheel_base`` ahead, and turn at the yaw rate that steering implies.

The plan is for base_link (on the fixed axle). When base_link follows it, the front axle,
``wheel_base`` ahead (:func:`steered_point`), traces another curve: the plan's poses shifted by
``wheel_base`` along their heading (:func:`steered_point_trajectory`). Its direction at each
point is the plan's heading plus the steady-state steering angle atan(wheel_base * curvature),
so steering the front axle onto this curve needs no separate curvature feedforward and leaves no
offset in turns:

    steer = wrap(front_path_yaw - yaw) + atan2(k * e_front, softening + |v|)

where e_front is the front axle's distance from its path, positive when the path lies to its
left. The steering is clamped to the steering limit and turned into a yaw rate,
wz = v tan(steer) / wheel_base. The speed follows the schedule,
v = v_ref + k_s (scheduled - actual arc length of base_link); where that is negative (past
the goal of a schedule at rest) the vehicle backs up straight.

In reverse the same law steers the mirror image: seen backwards (heading yaw + pi) a car is
steered at its rear, and the point ``wheel_base`` *behind* base_link moves in the direction
yaw + pi - steer. So that point is led onto the path it traces when base_link backs along the
plan, with yaw + pi for the heading, and the steering angle found is negated; the speed is the
schedule's (negative) speed, corrected along the direction of travel.
"""

from __future__ import annotations

import math

import numpy as np

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import Leg, Trajectory, trajectory_from_poses
from wheelsim.core.tracking.config import StanleyConfig
from wheelsim.core.tracking.reference import BodyTwist, Projection


def steered_point(pose: Pose2D, wheel_base_m: float, reverse: bool = False) -> tuple[float, float]:
    """Position (m) of the point Stanley steers: ``wheel_base_m`` ahead of base_link (behind
    when reversing)."""
    reach = -wheel_base_m if reverse else wheel_base_m
    return pose.x_m + reach * math.cos(pose.yaw_rad), pose.y_m + reach * math.sin(pose.yaw_rad)


def steered_point_trajectory(trajectory: Trajectory, wheel_base_m: float, leg: Leg) -> Trajectory:
    """The trajectory of :func:`steered_point` along the leg ``leg`` of the plan (its times and
    arc lengths from the leg's start)."""
    rows = slice(leg.first, leg.last + 1)
    reach = -wheel_base_m if leg.reverse else wheel_base_m
    yaw = trajectory.yaw_rad[rows]
    return trajectory_from_poses(
        trajectory.t_s[rows],
        trajectory.x_m[rows] + reach * np.cos(yaw),
        trajectory.y_m[rows] + reach * np.sin(yaw),
        yaw,
    )


def stanley_twist(
    front: Projection,
    pose: Pose2D,
    scheduled_vx_mps: float,
    along_track_error_m: float,
    speed_mps: float,
    config: StanleyConfig,
    wheel_base_m: float,
    max_steering_rad: float,
    reverse: bool = False,
) -> BodyTwist:
    """The body twist command (before output limits).

    ``front`` is the steered point's nearest point on :func:`steered_point_trajectory`,
    ``scheduled_vx_mps`` the plan's forward speed (negative when reversing),
    ``along_track_error_m`` base_link's arc length minus the scheduled one, ``speed_mps`` the
    measured speed; ``reverse`` for a leg driven backwards (see the module doc).
    """
    heading = pose.yaw_rad + math.pi if reverse else pose.yaw_rad
    steer = float(wrap_angle(front.path_yaw_rad - heading)) + math.atan2(
        -config.k * front.offset_m, config.softening + abs(speed_mps)
    )
    steer = min(max(steer, -max_steering_rad), max_steering_rad)
    direction = -1.0 if reverse else 1.0
    speed = scheduled_vx_mps - direction * config.k_s * along_track_error_m
    if speed * direction < 0.0:  # ahead of a schedule at rest (past the goal): back straight
        return BodyTwist(speed, 0.0, 0.0)
    return BodyTwist(speed, 0.0, speed * math.tan(direction * steer) / wheel_base_m)
