"""The trajectory-tracking law with feedforward (Kanayama et al. 1990; seed 000's controller).

The reference is the trajectory at the current time. With the position error rotated into the
body frame, (e_x, e_y) = R(-yaw) (p_ref - p), and e_theta = wrap(yaw_ref - yaw):

    vx = v_ref cos(e_theta) + k_x e_x
    wz = w_ref + v_ref k_y e_y + k_theta sin(e_theta)

The feedforward terms (v_ref, w_ref) drive the vehicle along the plan; the feedback terms pull
it back. Linearised about the reference at constant speed v, the lateral error obeys
e_y'' + k_theta e_y' + k_y v^2 e_y = 0: stable for positive gains, natural frequency
v sqrt(k_y), damping k_theta / (2 v sqrt(k_y)).

An omni base (holonomic) corrects its position directly in both body axes:
(vx, vy) = R(e_theta) (vx_ref, vy_ref) + k_x (e_x, e_y), wz = w_ref + k_theta sin(e_theta).
"""

from __future__ import annotations

import math

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import TrajectoryPoint
from wheelsim.core.tracking.config import FeedforwardConfig
from wheelsim.core.tracking.reference import BodyTwist


def feedforward_twist(
    reference: TrajectoryPoint,
    pose: Pose2D,
    gains: FeedforwardConfig,
    holonomic: bool,
    ahead: TrajectoryPoint | None = None,
) -> BodyTwist:
    """The body twist command (before output limits) tracking ``reference`` from ``pose``.

    ``ahead`` (default: ``reference``) supplies the feedforward velocities: the reference a
    little later on the schedule makes up for the actuators' delay.
    """
    ahead = reference if ahead is None else ahead
    dx, dy = reference.x_m - pose.x_m, reference.y_m - pose.y_m
    cos_yaw, sin_yaw = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    error_x = cos_yaw * dx + sin_yaw * dy
    error_y = -sin_yaw * dx + cos_yaw * dy
    error_yaw = float(wrap_angle(reference.yaw_rad - pose.yaw_rad))
    if holonomic:
        cos_e, sin_e = math.cos(error_yaw), math.sin(error_yaw)
        return BodyTwist(
            cos_e * ahead.vx_mps - sin_e * ahead.vy_mps + gains.k_x * error_x,
            sin_e * ahead.vx_mps + cos_e * ahead.vy_mps + gains.k_x * error_y,
            ahead.wz_radps + gains.k_theta * math.sin(error_yaw),
        )
    speed = ahead.vx_mps
    return BodyTwist(
        speed * math.cos(error_yaw) + gains.k_x * error_x,
        0.0,
        ahead.wz_radps + speed * gains.k_y * error_y + gains.k_theta * math.sin(error_yaw),
    )
