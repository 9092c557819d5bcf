"""Configuration of the planner: waypoints, the vehicle's motion limits, path options, frames.

One frozen-dataclass declaration (see :mod:`wheelsim.core.params`) gives the ROS parameters of
the ``planner`` node, their validation and their documentation.
"""

from __future__ import annotations

from dataclasses import dataclass

from wheelsim.core import frames
from wheelsim.core.params import ParameterError, group, param
from wheelsim.core.planning.timing import MotionLimits
from wheelsim.core.planning.waypoints import check_workspace, waypoints_from_flat
from wheelsim.core.vehicle.config import MODELS


@dataclass(frozen=True)
class PlannerLimitsConfig:
    """The limits every planned trajectory keeps (set them at or below the vehicle's)."""

    max_speed: float = param(
        1.0,
        'Highest planned speed along the path.',
        unit='m/s',
        min_value=0.0,
        min_exclusive=True,
        max_value=100.0,
    )
    max_acceleration: float = param(
        0.5,
        'Highest planned acceleration and braking along the path.',
        unit='m/s^2',
        min_value=0.0,
        min_exclusive=True,
        max_value=100.0,
    )
    max_lateral_acceleration: float = param(
        1.0,
        'Highest planned lateral (centripetal) acceleration speed^2 * curvature.',
        unit='m/s^2',
        min_value=0.0,
        min_exclusive=True,
        max_value=100.0,
    )
    max_yaw_rate: float = param(
        1.0,
        'Highest planned yaw rate.',
        unit='rad/s',
        min_value=0.0,
        min_exclusive=True,
        max_value=100.0,
    )
    max_curvature: float = param(
        1.0,
        'Highest path curvature (1 / smallest turning radius); where the smooth curve through '
        'the waypoints bends more it is optimised to keep it, and only legs that cannot be bent '
        'become continuous-curvature Dubins legs. A car: tan(max_steer)/wheel_base. '
        '0: unbounded (differential and omni only).',
        unit='1/m',
        min_value=0.0,
        max_value=1000.0,
    )
    max_curvature_rate: float = param(
        0.0,
        'Highest rate of change of the curvature while driving (a car: steering rate / '
        'wheel_base); 0: no limit.',
        unit='1/(m*s)',
        min_value=0.0,
        max_value=1000.0,
    )

    workspace_radius: float = param(
        1000.0,
        'Waypoints, goals and the start of every plan must lie within this distance of the map '
        "frame's origin; anything beyond is refused (it bounds a plan's length and memory).",
        unit='m',
        min_value=0.0,
        min_exclusive=True,
        max_value=100_000.0,
    )
    max_plan_poses: int = param(
        200_000,
        'A plan needing more poses than this (length / path_resolution) is refused.',
        min_value=2,
        max_value=10_000_000,
    )

    def motion_limits(self) -> MotionLimits:
        """The limits as the time scaling takes them."""
        return MotionLimits(
            max_speed_mps=self.max_speed,
            max_acceleration_mps2=self.max_acceleration,
            max_lateral_acceleration_mps2=self.max_lateral_acceleration,
            max_yaw_rate_radps=self.max_yaw_rate,
            max_curvature_rate_inv_ms=self.max_curvature_rate,
        )


@dataclass(frozen=True)
class PlannerConfig(frames.FrameNames):
    """Everything the ``planner`` node is configured with."""

    waypoints: tuple[float, ...] = param(
        (),
        'Points the path passes through, as flat x, y, theta triples in the map frame; theta '
        '.nan where the heading is free, e.g. [2.0, 0.0, .nan, 2.0, 2.0, 1.57]. Empty: plan '
        'only to goal_pose messages.',
        unit='m, m, rad',
    )
    start_at_current_pose: bool = param(
        True,
        'Begin the waypoint path at the current pose (its position and heading); false: the '
        'path begins at the first waypoint.',
    )
    model: str = param(
        'auto',
        'Vehicle model the plans are for: a bicycle (car) may get reversing legs (allow_reverse); '
        'auto: the model vehicle_sim describes on vehicle_description.',
        choices=('auto', *MODELS),
        read_only=True,
    )
    allow_reverse: bool = param(
        True,
        'Bicycle (car) only: a leg the smooth curve cannot drive within max_curvature becomes a '
        'Reeds-Shepp path that may back up (cusps, where the schedule stops); false: a forward '
        'Dubins path. Irrelevant for differential and omni bases (no curvature bound needed).',
    )
    holonomic: bool = param(
        False,
        'Omni bases only: the heading is planned apart from the direction of travel, turning '
        'smoothly between the given waypoint and goal headings (free ones are not constrained) '
        'while the base moves sideways as needed; false: the vehicle faces along the path.',
    )
    path_resolution: float = param(
        0.05,
        'Spacing of the poses of the published plan.',
        unit='m',
        min_value=0.005,
        max_value=1.0,
    )
    map_frame: str = frames.map_frame()
    frame_prefix: str = frames.frame_prefix()
    limits: PlannerLimitsConfig = group(PlannerLimitsConfig)

    @property
    def reverses(self) -> bool:
        """Whether fallback legs may reverse: a car allowed to."""
        return self.allow_reverse and self.model == 'bicycle'

    def __post_init__(self) -> None:
        self.check_frames()
        try:
            waypoints = waypoints_from_flat(self.waypoints, where='the waypoint list')
            check_workspace(waypoints.xy_m, self.limits.workspace_radius, 'waypoint')
        except ValueError as err:
            raise ParameterError('waypoints', list(self.waypoints), str(err)) from None
        count = len(waypoints)
        if count == 1 and not self.start_at_current_pose:
            raise ParameterError(
                'waypoints',
                list(self.waypoints),
                'one waypoint makes a path only with start_at_current_pose true',
            )
