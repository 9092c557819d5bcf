"""Regulated pure pursuit (Coulter 1992; regulation as in Macenski et al. 2023, Nav2).

Steer along the circle through base_link tangent to the heading that meets the path one
lookahead distance ahead of the nearest point: with the lookahead point at (l_x, l_y) in the
body frame, curvature = 2 l_y / (l_x^2 + l_y^2). The lookahead grows with speed
(lookahead_time * |v|, clamped). The speed is the plan's, the larger of its values at the
nearest and at the lookahead point, reduced on tight curves (radius below
``regulated_min_radius``: in proportion) and near the goal (within ``approach_distance``: in
proportion, but not below ``min_approach_speed``).

A differential vehicle turns on the spot first when the path's direction at the nearest point
is more than ``rotate_to_heading_angle`` off its heading. An omni base drives towards the
lookahead point (linear.x and linear.y; the chord's direction turned back by
asin(curvature * chord / 2), the angle between a chord of the path's curvature and its
tangent) while its yaw follows the plan.

Reversing (a leg driven backwards): the lookahead point lies behind, the same circle through it
is driven backwards (vx < 0, wz = vx * curvature), and the heading a differential vehicle turns
to is the path's direction + pi. The lookahead never reaches past the end of the leg (a cusp,
as Nav2 does), and the speed is reduced on approaching it as on approaching the goal.
"""

from __future__ import annotations

import math

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.planning.trajectory import Trajectory
from wheelsim.core.tracking.config import PurePursuitConfig
from wheelsim.core.tracking.reference import BodyTwist, Projection


def pure_pursuit_twist(
    trajectory: Trajectory,
    nearest: Projection,
    pose: Pose2D,
    speed_mps: float,
    config: PurePursuitConfig,
    model: str,
    lead_time_s: float = 0.0,
    end_s_m: float | None = None,
    reverse: bool = False,
) -> BodyTwist:
    """The body twist command (before output limits); ``speed_mps`` is the measured speed.

    The plan's speed and the distance left are taken where the vehicle will be
    ``lead_time_s`` from now at its present speed (making up for actuator delay).
    ``end_s_m`` is the arc length where the leg being driven ends (default: the path's end),
    ``reverse`` whether it is driven backwards.
    """
    end_s_m = trajectory.length_m if end_s_m is None else end_s_m
    lookahead_m = min(
        max(config.lookahead_time * abs(speed_mps), config.min_lookahead), config.max_lookahead
    )
    target = trajectory.at_arc_length(min(nearest.s_m + lookahead_m, end_s_m))
    dx, dy = target.x_m - pose.x_m, target.y_m - pose.y_m
    cos_yaw, sin_yaw = math.cos(pose.yaw_rad), math.sin(pose.yaw_rad)
    ahead_x = cos_yaw * dx + sin_yaw * dy
    ahead_y = -sin_yaw * dx + cos_yaw * dy
    distance_sq = ahead_x * ahead_x + ahead_y * ahead_y
    soon_s_m = nearest.s_m + abs(speed_mps) * lead_time_s
    remaining_m = end_s_m - soon_s_m
    # The plan's speed: its larger value here or at the lookahead point (moving off from rest,
    # the plan is still at 0 here; braking at the end, it is lower ahead).
    planned = trajectory.at_arc_length(soon_s_m)
    speed = max(target.v_mps, planned.v_mps, config.min_approach_speed)
    if config.approach_distance > 0 and remaining_m < config.approach_distance:
        speed = max(
            speed * max(remaining_m, 0.0) / config.approach_distance, config.min_approach_speed
        )
    if model == 'omni':
        heading_error = float(wrap_angle(planned.yaw_rad - pose.yaw_rad))
        # Along the chord, turned back by the angle between a chord of the path's curvature
        # and its tangent, so that a base on a curved path does not cut the corner.
        curvature = trajectory.value_at_arc_length(nearest.s_m + lookahead_m / 2,
                                                    'curvature_inv_m')
        half_chord = min(abs(curvature) * math.sqrt(distance_sq) / 2.0, 1.0)
        course = math.atan2(ahead_y, ahead_x) - math.copysign(math.asin(half_chord), curvature)
        return BodyTwist(
            speed * math.cos(course),
            speed * math.sin(course),
            planned.wz_radps + config.k_theta * heading_error,
        )
    facing = nearest.path_yaw_rad + (math.pi if reverse else 0.0)
    heading_error = float(wrap_angle(facing - pose.yaw_rad))
    if model == 'differential' and 0 < config.rotate_to_heading_angle < abs(heading_error):
        return BodyTwist(0.0, 0.0, config.k_theta * heading_error)
    if distance_sq <= 0:
        return BodyTwist(0.0, 0.0, 0.0)
    curvature = 2.0 * ahead_y / distance_sq
    if config.regulated_min_radius > 0 and abs(curvature) * config.regulated_min_radius > 1.0:
        speed = max(
            speed / (abs(curvature) * config.regulated_min_radius), config.min_approach_speed
        )
    velocity = -speed if reverse else speed
    return BodyTwist(velocity, 0.0, velocity * curvature)
