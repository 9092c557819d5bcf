"""Point-to-point control of a differential vehicle onto a goal position (seed 004's law).

Used when a schedule has ended but the vehicle is not at the goal: with the schedule at rest, a
tracking law for nonholonomic vehicles cannot remove a sideways error. With the goal at
(e_x, e_y) in the body frame, the vehicle turns towards it (or, when it lies behind, turns its
back to it and reverses) and drives once roughly facing it:

    alpha = atan2(e_y, e_x) (forward) or atan2(-e_y, -e_x) (reversing),
    wz = k_theta * alpha,  vx = k_x * e_x when |alpha| < pi/4, else 0.

The final heading is met afterwards, on the spot (see :mod:`tracking_controller`).
"""

from __future__ import annotations

import math

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.tracking.reference import BodyTwist

#: Drive only when the goal lies within this angle of the (forward or backward) heading.
DRIVE_WITHIN_RAD = math.pi / 4


def point_to_point_twist(
    goal_x_m: float, goal_y_m: float, pose: Pose2D, k_x: float, k_theta: float
) -> BodyTwist:
    """The body twist command (before output limits) taking ``pose`` to the goal position."""
    dx, dy = goal_x_m - pose.x_m, goal_y_m - pose.y_m
    cos_yaw, sin_yaw = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    error_x = cos_yaw * dx + sin_yaw * dy
    error_y = -sin_yaw * dx + cos_yaw * dy
    alpha = math.atan2(error_y, error_x) if error_x >= 0 else math.atan2(-error_y, -error_x)
    speed = k_x * error_x if abs(alpha) < DRIVE_WITHIN_RAD else 0.0
    return BodyTwist(speed, 0.0, k_theta * alpha)
