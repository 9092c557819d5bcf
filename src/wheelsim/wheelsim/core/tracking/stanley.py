"""Stanley steering (Thrun et al. 2006), on the front axle's own path.

Designed for car-like vehicles; differential and omni bases are steered the same way through a
virtual front axle ``wheel_base`` ahead, and turn at the yaw rate that steering implies.

The plan is for base_link (on the fixed axle). When base_link follows it, the front axle,
``wheel_base`` ahead, traces another curve: the plan's poses shifted by ``wheel_base`` along
their heading (:func:`front_axle_trajectory`). Its direction at each point is the plan's
heading plus the steady-state steering angle atan(wheel_base * curvature), so steering the front
axle onto this curve needs no separate curvature feedforward and leaves no offset in turns:

    steer = wrap(front_path_yaw - yaw) + atan2(k * e_front, softening + |v|)

where e_front is the front axle's distance from its path, positive when the path lies to its
left. The steering is clamped to the steering limit and turned into a yaw rate,
wz = v tan(steer) / wheel_base. The speed follows the schedule,
v = v_ref + k_s (scheduled - actual arc length of base_link); where that is negative (past
the goal of a schedule at rest) the vehicle backs up straight.
"""

from __future__ import annotations

import math

import numpy as np

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import Trajectory, trajectory_from_poses
from wheelsim.core.tracking.config import StanleyConfig
from wheelsim.core.tracking.reference import BodyTwist, Projection


def front_axle(pose: Pose2D, wheel_base_m: float) -> tuple[float, float]:
    """Position (m) of the point ``wheel_base_m`` ahead of base_link."""
    return (
        pose.x_m + wheel_base_m * math.cos(pose.yaw_rad),
        pose.y_m + wheel_base_m * math.sin(pose.yaw_rad),
    )


def front_axle_trajectory(trajectory: Trajectory, wheel_base_m: float) -> Trajectory:
    """The trajectory of the point ``wheel_base_m`` ahead of base_link along the plan."""
    return trajectory_from_poses(
        trajectory.t_s,
        trajectory.x_m + wheel_base_m * np.cos(trajectory.yaw_rad),
        trajectory.y_m + wheel_base_m * np.sin(trajectory.yaw_rad),
        trajectory.yaw_rad,
    )


def stanley_twist(
    front: Projection,
    pose: Pose2D,
    scheduled_speed_mps: float,
    along_track_error_m: float,
    speed_mps: float,
    config: StanleyConfig,
    wheel_base_m: float,
    max_steering_rad: float,
) -> BodyTwist:
    """The body twist command (before output limits).

    ``front`` is the front axle's nearest point on :func:`front_axle_trajectory`,
    ``along_track_error_m`` base_link's arc length minus the scheduled one, ``speed_mps`` the
    measured speed.
    """
    steer = float(wrap_angle(front.path_yaw_rad - pose.yaw_rad)) + math.atan2(
        -config.k * front.offset_m, config.softening + abs(speed_mps)
    )
    steer = min(max(steer, -max_steering_rad), max_steering_rad)
    speed = scheduled_speed_mps - config.k_s * along_track_error_m
    if speed < 0.0:  # ahead of a schedule at rest (past the goal): back up straight
        return BodyTwist(speed, 0.0, 0.0)
    return BodyTwist(speed, 0.0, speed * math.tan(steer) / wheel_base_m)
