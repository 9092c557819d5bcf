"""Configuration of the planner: waypoints, the vehicle's motion limits, path options, frames.

One frozen-dataclass declaration (see :mod:`wheelsim.core.params`) gives the ROS parameters of
the ``planner`` node, their validation and their documentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wheelsim.core import frames
from wheelsim.core.params import ParameterError, group, param
from wheelsim.core.planning.timing import MotionLimits
from wheelsim.core.planning.waypoints import check_workspace, waypoints_from_flat
from wheelsim.core.vehicle.config import MODELS
from wheelsim.core.vehicle.description import (
    FromVehicle,
    VehicleDescription,
    VehicleParameters,
)

AUTO = 'auto'
#: The value of a numeric limit that takes the vehicle's (vehicle_description).
FROM_VEHICLE = -1.0
FROM_VEHICLE_SPECIAL = (FROM_VEHICLE, 'from the vehicle')
#: Plans keep within this fraction of the vehicle's speed, acceleration and curvature limits,
#: leaving the controller room to correct.
PLANNING_MARGIN = 0.8
#: Plans for a slow drive keep their accelerations (along and across the path) so low that the
#: drive's lag costs at most this much tracking error [m]: with the controller's lead time
#: making up for the dead time, a first-order drive of time constant tau trails a planned
#: acceleration a by about a tau^2 / 2 (along the path; across it, a turn entered at speed v
#: with yaw rate w trails by v w tau^2 / 2, v w being the lateral acceleration).
LAG_ERROR_M = 0.04
#: The lateral acceleration planned when the drive's lag does not bound it lower [m/s^2].
MAX_LATERAL_ACCELERATION = 1.0


def lag_acceleration_mps2(time_constant_s: float) -> float:
    """The highest acceleration [m/s^2] a drive of time constant ``time_constant_s`` [s]
    follows within :data:`LAG_ERROR_M` (infinite for a drive without lag)."""
    if time_constant_s <= 0.0:
        return math.inf
    return 2.0 * LAG_ERROR_M / time_constant_s**2


@dataclass(frozen=True)
class PlannerLimitsConfig:
    """The limits every planned trajectory keeps (set them at or below the vehicle's)."""

    max_speed: float = param(
        FROM_VEHICLE,
        'Highest planned speed along the path. -1: 0.8 x the vehicle\'s top speed '
        '(vehicle_description; 1 m/s for a vehicle without one).',
        unit='m/s',
        min_value=0.0,
        min_exclusive=True,
        special=FROM_VEHICLE_SPECIAL,
        max_value=100.0,
    )
    max_reverse_speed: float = param(
        0.0,
        'Highest planned speed on a leg driven in reverse (a car allowed to reverse, see '
        'allow_reverse), at most max_speed (refused above a max_speed given, capped at one '
        'taken from the vehicle). 0: max_speed.',
        unit='m/s',
        min_value=0.0,
        max_value=100.0,
    )
    max_acceleration: float = param(
        FROM_VEHICLE,
        'Highest planned acceleration and braking along the path. -1: 0.8 x the vehicle\'s '
        '(vehicle_description; 0.5 m/s^2 for a vehicle without a limit), at most 0.08 m / '
        'tau^2 for a drive of time constant tau (its lag then costs at most 4 cm).',
        unit='m/s^2',
        min_value=0.0,
        min_exclusive=True,
        special=FROM_VEHICLE_SPECIAL,
        max_value=100.0,
    )
    max_lateral_acceleration: float = param(
        FROM_VEHICLE,
        'Highest planned lateral (centripetal) acceleration speed^2 * curvature. -1: 1 m/s^2, '
        'at most 0.08 m / tau^2 for a drive of time constant tau (vehicle_description).',
        unit='m/s^2',
        min_value=0.0,
        min_exclusive=True,
        special=FROM_VEHICLE_SPECIAL,
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
        FROM_VEHICLE,
        'Highest path curvature (1 / smallest turning radius); where the smooth curve through '
        'the waypoints bends more it is optimised to keep it, and only legs that cannot be bent '
        'become continuous-curvature Dubins or Reeds-Shepp legs. 0: unbounded (differential '
        'and omni). -1: from the vehicle (vehicle_description): a car 0.8 x tan(max steering) / '
        'wheel_base, others 0.',
        unit='1/m',
        min_value=0.0,
        special=FROM_VEHICLE_SPECIAL,
        max_value=1000.0,
    )
    max_curvature_rate: float = param(
        FROM_VEHICLE,
        'Highest rate of change of the curvature while driving; 0: no limit. -1: from the '
        'vehicle (vehicle_description): a car 0.8 x its steering rate / wheel_base, others 0.',
        unit='1/(m*s)',
        min_value=0.0,
        special=FROM_VEHICLE_SPECIAL,
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

    def motion_limits(self, reverse: bool = False) -> MotionLimits:
        """The limits as the time scaling takes them, on a leg driven in reverse if
        ``reverse`` (its speed at most ``max_reverse_speed`` when set)."""
        return MotionLimits(
            max_speed_mps=(min(self.max_reverse_speed, self.max_speed)
                           if reverse and self.max_reverse_speed else self.max_speed),
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
        unit='m, m, rad', nan_allowed=True,
    )
    start_at_current_pose: bool = param(
        True,
        'Begin the waypoint path at the current pose (its position and heading; a first '
        'waypoint at that position, within three standard deviations of the pose\'s '
        'covariance and 0.25 m, is already reached); false: the path begins at the first '
        'waypoint.',
    )
    model: str = param(
        AUTO,
        'Vehicle model the plans are for (a bicycle (car) has a curvature bound, '
        'max_curvature); auto: the model vehicle_sim describes on vehicle_description.',
        choices=(AUTO, *MODELS),
        read_only=True,
    )
    allow_reverse: bool = param(
        True,
        'A leg the smooth curve cannot drive (a car: beyond max_curvature; any base: where it '
        'would stop and turn back, such as a goal behind) becomes a Reeds-Shepp path that may '
        'back up (cusps, where the schedule stops); a holonomic plan instead stops at both ends '
        'of such a leg, driving it straight, and where its route turns back; false: a forward '
        'Dubins path (a loop for a goal behind; for a holonomic plan too).',
    )
    holonomic: bool = param(
        False,
        'Omni bases only (refused for another model): the heading is planned apart from the '
        'direction of travel, turning smoothly between the given waypoint and goal headings '
        '(free ones are not constrained) while the base moves sideways as needed; false: the '
        'vehicle faces along the path.',
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
        """Whether fallback legs may reverse (``allow_reverse``)."""
        return self.allow_reverse

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
        if self.holonomic and self.model not in (AUTO, 'omni'):
            raise ParameterError('holonomic', True, f"only an omni vehicle moves sideways; the "
                                                    f"model is '{self.model}'")


#: Every parameter that takes its default from the vehicle, with the value meaning so.
VEHICLE_DEFAULTS = {'model': AUTO, 'limits.max_speed': FROM_VEHICLE,
                    'limits.max_acceleration': FROM_VEHICLE,
                    'limits.max_lateral_acceleration': FROM_VEHICLE,
                    'limits.max_curvature': FROM_VEHICLE,
                    'limits.max_curvature_rate': FROM_VEHICLE}


def planned_acceleration_mps2(description: VehicleDescription) -> float:
    """The acceleration and braking [m/s^2] planned for a vehicle: 0.8 x its limit (0.5
    without one), at most what its drive's lag allows (:func:`lag_acceleration_mps2`)."""
    d = description
    return min(PLANNING_MARGIN * d.max_acceleration if d.max_acceleration else 0.5,
               lag_acceleration_mps2(d.drive.time_constant))


def planned_lateral_acceleration_mps2(description: VehicleDescription) -> float:
    """The lateral acceleration [m/s^2] planned for a vehicle: :data:`MAX_LATERAL_ACCELERATION`,
    at most what its drive's lag allows (:func:`lag_acceleration_mps2`)."""
    return min(MAX_LATERAL_ACCELERATION, lag_acceleration_mps2(description.drive.time_constant))


def _rules(description: VehicleDescription) -> list[FromVehicle]:
    d = description
    car_curvature = d.max_curvature if d.model == 'bicycle' else None
    # d curvature / dt = steering rate / (wheel_base cos^2 steer): at least rate / wheel_base.
    car_curvature_rate = (d.max_steering_rate / d.wheel_base if d.model == 'bicycle'
                          and d.max_steering_rate and d.wheel_base else None)
    return [
        FromVehicle('model', AUTO, d.model, d.model),
        FromVehicle('limits.max_speed', FROM_VEHICLE,
                    PLANNING_MARGIN * d.max_speed if d.max_speed else 1.0, d.max_speed,
                    'at_most', 'm/s'),
        FromVehicle('limits.max_acceleration', FROM_VEHICLE, planned_acceleration_mps2(d),
                    d.max_acceleration, 'at_most', 'm/s^2'),
        FromVehicle('limits.max_lateral_acceleration', FROM_VEHICLE,
                    planned_lateral_acceleration_mps2(d), unit='m/s^2'),
        FromVehicle('limits.max_curvature', FROM_VEHICLE,
                    PLANNING_MARGIN * car_curvature if car_curvature else 0.0, car_curvature,
                    'at_most', '1/m', zero_unbounded=True),
        FromVehicle('limits.max_curvature_rate', FROM_VEHICLE,
                    PLANNING_MARGIN * car_curvature_rate if car_curvature_rate else 0.0,
                    car_curvature_rate, 'at_most', '1/(m*s)', zero_unbounded=True),
    ]


#: Resolution of the "from the vehicle" parameters: ``with_vehicle(config, description)`` gives
#: the completed configuration and the contradiction warnings, ``waiting_for_vehicle(config)``
#: the parameters still waiting.
VEHICLE = VehicleParameters('planner', VEHICLE_DEFAULTS, _rules)
with_vehicle = VEHICLE.resolve
waiting_for_vehicle = VEHICLE.waiting
