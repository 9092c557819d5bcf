"""Configuration of the controller: algorithm, vehicle, rate, gains, goal tolerances, output limits.

One frozen-dataclass declaration (see :mod:`wheelsim.core.params`) gives the ROS parameters of
the ``controller`` node, their validation and their documentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from wheelsim.core import frames
from wheelsim.core.params import ParameterError, group, param
from wheelsim.core.planning.config import (
    planned_acceleration_mps2,
    planned_lateral_acceleration_mps2,
)
from wheelsim.core.tracking.policy import POLICY_PARAMETER, load_policy
from wheelsim.core.units import MIN_RATE_HZ
from wheelsim.core.vehicle.description import (
    NO_LIMIT_TOP_SPEED_MPS,
    FromVehicle,
    VehicleDescription,
    VehicleParameters,
    top_speed_mps,
)

ALGORITHMS = ('feedforward', 'pure_pursuit', 'stanley', 'policy')
MODELS = ('bicycle', 'differential', 'omni')
AUTO = 'auto'
#: The value of a numeric parameter that takes the vehicle's (vehicle_description).
FROM_VEHICLE = -1.0
#: The value of ``limits.min_linear_x`` that takes minus the vehicle's top speed.
REVERSE_FROM_VEHICLE = 1.0
#: What the speed limits taken from the vehicle become without a speed limit (their docs).
_TOP_SPEED_STAND_IN = f'({NO_LIMIT_TOP_SPEED_MPS:g} m/s for a vehicle without a speed limit)'
#: Largest steering angle the controller takes (rad): an unlimited steering becomes this.
MAX_STEERING_RAD = 1.55
#: Stand-ins where the vehicle has no limit (or the figure does not apply to its model); the
#: parameters' descriptions name them.
_UNLIMITED = {'yaw_rate': 2.0, 'wheel_base': 2.0}


def _gain(default: float, description: str, unit: str, high: float = 100.0) -> float:
    return param(default, description, unit=unit, min_value=0.0, max_value=high)


def _positive(default: float, description: str, unit: str, high: float) -> float:
    return param(default, description, unit=unit, min_value=0.0, min_exclusive=True, max_value=high)


@dataclass(frozen=True)
class FeedforwardConfig:
    """The trajectory-tracking law with feedforward (Kanayama et al. 1990, as in seed 000).

    With the pose error (e_x, e_y) in the body frame and e_theta = planned yaw - yaw:
    vx = v_ref cos(e_theta) + k_x e_x,  wz = w_ref + v_ref k_y e_y + k_theta sin(e_theta).
    Omni bases correct both position errors directly: vy = vy_ref + k_x e_y.
    """

    k_x: float = _gain(
        1.0, 'Gain on the position error along the body x axis (omni: also y); algorithm '
        'stanley ends a differential base point to point with it too.', '1/s'
    )
    k_y: float = _gain(
        1.0, 'Gain on the lateral position error, scaled by the planned speed.', '1/m^2'
    )
    k_theta: float = _gain(2.0, 'Gain on the heading error; algorithms stanley and policy turn '
                           "a base that is not a car on the spot with it too (at the goal; "
                           "stanley also at a leg's start).", '1/s')


@dataclass(frozen=True)
class PurePursuitConfig:
    """Regulated pure pursuit (Macenski et al. 2023, as Nav2's controller)."""

    lookahead_time: float = _gain(1.5, 'Lookahead distance per unit of speed.', 's', 20.0)
    min_lookahead: float = _positive(0.6, 'Shortest lookahead distance.', 'm', 100.0)
    max_lookahead: float = _positive(3.0, 'Longest lookahead distance.', 'm', 100.0)
    regulated_min_radius: float = _gain(
        0.9, 'Below this turning radius the speed is scaled down in proportion (0: off).', 'm'
    )
    approach_distance: float = _gain(
        0.5, 'Within this distance of the goal the speed is scaled down in proportion.', 'm'
    )
    min_approach_speed: float = _positive(
        0.05, 'Lowest speed while approaching the goal.', 'm/s', 10.0
    )
    rotate_to_heading_angle: float = param(
        0.785,
        'Differential: turn on the spot when the path direction is further off than this on '
        "the way (0: never); at a leg's start every law but a policy turns a base that is not "
        'a car from 45 degrees off.',
        unit='rad',
        min_value=0.0,
        max_value=math.pi,
    )
    k_theta: float = _gain(
        2.0, 'Gain on the heading error when turning on the spot (omni: always).', '1/s'
    )

    def __post_init__(self) -> None:
        if self.min_lookahead > self.max_lookahead:
            raise ParameterError(
                'min_lookahead',
                self.min_lookahead,
                f'must be <= max_lookahead = {self.max_lookahead}',
            )


@dataclass(frozen=True)
class StanleyConfig:
    """Stanley steering (Thrun et al. 2006): the front axle (on differential and omni bases a
    virtual one, ``wheel_base`` ahead) is steered onto the path it traces when base_link follows
    the plan (see :mod:`wheelsim.core.tracking.stanley`)."""

    k: float = _gain(1.5, 'Gain on the front axle cross-track error.', '1/s')
    softening: float = _positive(
        0.5, 'Speed added in the cross-track term (smooth at rest).', 'm/s', 100.0
    )
    k_s: float = _gain(1.0, 'Gain on the along-track error (schedule).', '1/s')


@dataclass(frozen=True)
class GoalConfig:
    """When the goal counts as reached (then a zero command is published once)."""

    xy_tolerance: float = _positive(0.1, 'Distance to the final pose.', 'm', 100.0)
    yaw_tolerance: float = param(
        0.2,
        'Heading error at the final pose (differential and omni turn on the spot to meet it; '
        'car-like vehicles are not held to it).',
        unit='rad',
        min_value=0.0,
        min_exclusive=True,
        max_value=math.pi,
    )
    timeout: float = _positive(
        10.0,
        'Give up (stop, warn) this long after the planned arrival if the goal is not reached.',
        's',
        3600.0,
    )
    max_speed: float = _gain(
        0.1,
        'The goal counts as reached only when the measured speed (odom) is at most this; at the '
        'goal but faster (a vehicle catching up with its schedule), a stop is commanded first '
        '(0: not checked).',
        'm/s',
    )
    max_yaw_rate: float = _gain(
        0.1,
        'The goal counts as reached only when the measured yaw rate (odom) is at most this; at '
        'the goal but turning faster (still turning onto the final heading), the turn is '
        'slowed first, so the vehicle comes to rest within yaw_tolerance (0: not checked).',
        'rad/s',
    )


@dataclass(frozen=True)
class PolicyConfig:
    """A Python policy as the law (``algorithm: policy``; see
    :mod:`wheelsim.core.tracking.policy`)."""

    callable: str = param(
        '',
        "algorithm policy: 'package.module:name' of a callable taking the observation of "
        'wheelsim.sim.PathTrackingEnv and returning its action (the module on PYTHONPATH).',
        read_only=True,
    )
    preview_distance: float = _gain(
        0.5, "How far along the path the observation's preview_heading_rad looks.", 'm')


def _from_vehicle(description: str, unit: str, high: float, positive: bool = True) -> float:
    """A parameter whose default -1 takes the vehicle's value (vehicle_description), else in
    (0, ``high``], or [0, ``high``] unless ``positive``."""
    return param(FROM_VEHICLE, description + ' -1: from the vehicle (vehicle_description).',
                 unit=unit, min_value=0.0, min_exclusive=positive, max_value=high,
                 special=(FROM_VEHICLE, 'from the vehicle'))


@dataclass(frozen=True)
class OutputLimitsConfig:
    """Limits on every published command (0 for an acceleration: no limit)."""

    max_linear_x: float = _from_vehicle(
        f'Highest forward speed; the vehicle\'s top speed {_TOP_SPEED_STAND_IN}.', 'm/s', 100.0)
    min_linear_x: float = param(
        REVERSE_FROM_VEHICLE,
        'Lowest speed (negative: reversing allowed that fast). 1: minus the vehicle\'s top '
        f'speed {_TOP_SPEED_STAND_IN}, from vehicle_description.',
        unit='m/s',
        min_value=-100.0,
        max_value=0.0,
        special=(REVERSE_FROM_VEHICLE, "minus the vehicle's top speed"),
    )
    max_linear_y: float = _from_vehicle(
        'Highest sideways speed (omni only; others always 0); the vehicle\'s top speed '
        f'{_TOP_SPEED_STAND_IN}.', 'm/s', 100.0, positive=False)
    max_angular_z: float = _from_vehicle(
        'Highest yaw rate; the vehicle\'s (on the spot; a car: at top speed and full lock; '
        f'{_UNLIMITED["yaw_rate"]:g} rad/s for a vehicle without a speed limit, or a car without '
        'a steering limit below 90 deg).', 'rad/s', 100.0)
    max_linear_acceleration: float = _from_vehicle(
        'Highest change of the linear command (0: no limit); the vehicle\'s.', 'm/s^2', 1000.0,
        positive=False)
    max_angular_acceleration: float = _gain(
        4.0, 'Highest change of the yaw rate command.', 'rad/s^2', 1000.0
    )


@dataclass(frozen=True)
class UntimedPlanConfig:
    """The schedule given here to a plan without times (Nav2's)."""

    max_acceleration: float = _from_vehicle(
        "Highest acceleration and braking of the schedule given to a plan without times "
        "(Nav2's). From the vehicle: as the planner plans (0.8 x the vehicle's, at most "
        '0.08 m / tau^2 for a drive of time constant tau).', 'm/s^2', 100.0)
    max_lateral_acceleration: float = _from_vehicle(
        'Highest lateral acceleration of that schedule. From the vehicle: as the planner plans '
        '(1 m/s^2, at most 0.08 m / tau^2).', 'm/s^2', 100.0)


@dataclass(frozen=True)
class ControllerConfig(frames.FrameNames):
    """Everything the ``controller`` node is configured with."""

    algorithm: str = param(
        'feedforward',
        'Tracking law: feedforward (trajectory tracking with feedforward, seed 000), '
        'pure_pursuit (regulated pure pursuit), stanley (front-axle steering; on differential and '
        'omni bases a virtual front axle wheel_base ahead), policy (a Python policy, '
        'policy.callable).',
        choices=ALGORITHMS,
    )
    model: str = param(
        AUTO,
        'Vehicle model: omni uses linear.y; differential and omni may turn on the spot; bicycle '
        'commands stay within the steering limit. auto: the model vehicle_sim describes on '
        'vehicle_description.',
        choices=(AUTO, *MODELS),
        read_only=True,
    )
    wheel_base: float = _from_vehicle(
        'Bicycle: distance between the axles (Stanley front axle, steering limit); differential '
        "and omni: how far ahead Stanley's virtual front axle is (the vehicle's wheel base; "
        f'{_UNLIMITED["wheel_base"]:g} m for a differential vehicle, which has none).', 'm', 100.0)
    max_steering_angle: float = _from_vehicle(
        'Bicycle: steering limit; commands keep |yaw rate| <= tan(limit) / wheel_base * |speed| '
        f'(an unlimited steering: {MAX_STEERING_RAD:g}); differential and omni: the steering '
        f"limit of Stanley's virtual front axle ({MAX_STEERING_RAD:g}: a base that turns on "
        'the spot has no steering limit, its yaw rate limit bounds it).', 'rad',
        MAX_STEERING_RAD)
    control_rate: float = param(20.0, 'Rate of the control loop in ROS time.', unit='Hz',
                                min_value=MIN_RATE_HZ, max_value=1000.0)
    enable_stamped_cmd_vel: bool = param(
        True,
        'Publish cmd_vel as geometry_msgs/TwistStamped (true) or Twist (false): Nav2\'s '
        'parameter, whose default is false on Jazzy, true from Kilted.',
        read_only=True,
    )
    plan_clock_tolerance: float = _positive(
        2.0,
        'A plan whose first pose is stamped within this of the controller clock keeps its '
        'stamps; otherwise (another clock, an old plan, one delivered late) it goes on from '
        'the nearest point to the vehicle.',
        's',
        1e6,
    )
    lead_time: float = _from_vehicle(
        "Make up for the vehicle's actuator delay: feedforward and Stanley take the planned "
        "speed and turn rate this far ahead on the schedule, pure pursuit the plan's speed "
        'where the vehicle will be then; 0: none. Every law: the latest pose is moved on to the '
        'control step with the commands sent since, which the vehicle follows this much later '
        '(0: with the measured twist). '
        'From the vehicle: its actuators\' lag (see docs/planning_control.md).', 's', 10.0,
        positive=False)
    max_schedule_lag: float = _gain(
        1.0,
        'When the vehicle falls further behind its schedule than this, the schedule waits for it '
        '(a late start, a stall) instead of running away (0: never waits).',
        'm',
    )
    pose_timeout: float = _positive(
        1.0, 'Stop (publish zero) when the latest pose is older than this.', 's', 3600.0
    )
    map_frame: str = frames.map_frame()
    base_frame: str = frames.base_frame()
    frame_prefix: str = frames.frame_prefix()
    feedforward: FeedforwardConfig = group(FeedforwardConfig)
    pure_pursuit: PurePursuitConfig = group(PurePursuitConfig)
    stanley: StanleyConfig = group(StanleyConfig)
    policy: PolicyConfig = group(PolicyConfig)
    goal: GoalConfig = group(GoalConfig)
    limits: OutputLimitsConfig = group(OutputLimitsConfig)
    untimed_plans: UntimedPlanConfig = group(UntimedPlanConfig)

    def __post_init__(self) -> None:
        self.check_frames()
        if self.algorithm == 'policy':
            load_policy(self.policy.callable)
        elif self.policy.callable:
            raise ParameterError(POLICY_PARAMETER, self.policy.callable,
                                 f"is used by algorithm policy only; algorithm is "
                                 f"{self.algorithm}: set algorithm policy or leave it ''")

    @property
    def max_curvature_inv_m(self) -> float:
        """Bicycle: the curvature the steering limit allows (1/m); 0 (none) for the others."""
        if self.model != 'bicycle':
            return 0.0
        return math.tan(self.max_steering_angle) / self.wheel_base


#: Every parameter that takes its default from the vehicle, with the value meaning so.
VEHICLE_DEFAULTS = {
    'model': AUTO, 'wheel_base': FROM_VEHICLE, 'max_steering_angle': FROM_VEHICLE,
    'lead_time': FROM_VEHICLE, 'limits.max_linear_x': FROM_VEHICLE,
    'limits.min_linear_x': REVERSE_FROM_VEHICLE, 'limits.max_linear_y': FROM_VEHICLE,
    'limits.max_angular_z': FROM_VEHICLE, 'limits.max_linear_acceleration': FROM_VEHICLE,
    'untimed_plans.max_acceleration': FROM_VEHICLE,
    'untimed_plans.max_lateral_acceleration': FROM_VEHICLE,
}


#: The laws that use some feedforward gains on some vehicles (:func:`_feedforward_shared`).
FEEDFORWARD_SHARING = ('stanley', 'policy')


def _feedforward_shared(algorithm: str, model: str) -> tuple[str, ...]:
    """The feedforward gains another law uses with the vehicle ``model`` (``auto``: any):
    ``k_theta`` turning a base that is not a car on the spot (Stanley, policy: at the goal;
    Stanley also at a leg's start), ``k_x`` ending a differential base's leg point to point
    (Stanley)."""
    shared = []
    if algorithm in FEEDFORWARD_SHARING and model != 'bicycle':
        shared.append('k_theta')
    if algorithm == 'stanley' and model in (AUTO, 'differential'):
        shared.append('k_x')
    return tuple(shared)


def unused_parameters(algorithm: str, model: str = AUTO) -> dict[str, str]:
    """{``group.``, or a parameter's name: why} of the tracking laws' parameters that
    ``algorithm`` does not use on a vehicle of ``model`` (``auto``: whichever): the other laws'
    groups, but the feedforward gains it shares with that vehicle."""
    unused = {}
    for other in ALGORITHMS:
        if other == algorithm:
            continue
        why = f'only algorithm {other} uses it, and algorithm is {algorithm}'
        shared = _feedforward_shared(algorithm, model) if other == 'feedforward' else ()
        if not shared:
            if other == 'feedforward' and algorithm in FEEDFORWARD_SHARING:
                why = f'only algorithm {other} uses it on a {model} vehicle, and algorithm is ' \
                      f'{algorithm}'
            unused[f'{other}.'] = why
            continue
        for gain in fields(FeedforwardConfig):
            if gain.name not in shared:
                unused[f'feedforward.{gain.name}'] = why
    return unused


def lead_time_of(description: VehicleDescription) -> float:
    """The lead time (s) that makes up for the vehicle's actuators: the drive's dead time plus
    time constant."""
    return description.drive.lag_s


def _rules(description: VehicleDescription) -> list[FromVehicle]:
    d = description
    car = d.model == 'bicycle'
    speed = top_speed_mps(d)
    steering = d.max_steering_angle
    return [
        FromVehicle('model', AUTO, d.model, d.model),
        FromVehicle('wheel_base', FROM_VEHICLE, d.wheel_base or _UNLIMITED['wheel_base'],
                    d.wheel_base if car else None, unit='m'),
        FromVehicle('max_steering_angle', FROM_VEHICLE,
                    min(steering or MAX_STEERING_RAD, MAX_STEERING_RAD) if car
                    else MAX_STEERING_RAD, steering if car else None, 'at_most', 'rad'),
        FromVehicle('lead_time', FROM_VEHICLE, lead_time_of(d), unit='s'),
        FromVehicle('limits.max_linear_x', FROM_VEHICLE, speed, d.max_speed, 'at_most', 'm/s'),
        FromVehicle('limits.min_linear_x', REVERSE_FROM_VEHICLE, -speed,
                    None if d.max_speed is None else -d.max_speed, 'at_least', 'm/s'),
        FromVehicle('limits.max_linear_y', FROM_VEHICLE, speed,
                    d.max_speed if d.model == 'omni' else None, 'at_most', 'm/s'),
        FromVehicle('limits.max_angular_z', FROM_VEHICLE,  # a car's: its steering limit too
                    d.max_yaw_rate or _UNLIMITED['yaw_rate'], None if car else d.max_yaw_rate,
                    'at_most', 'rad/s'),
        FromVehicle('limits.max_linear_acceleration', FROM_VEHICLE, d.max_acceleration or 0.0,
                    d.max_acceleration, 'at_most', 'm/s^2'),
        FromVehicle('untimed_plans.max_acceleration', FROM_VEHICLE, planned_acceleration_mps2(d),
                    d.max_acceleration, 'at_most', 'm/s^2'),
        FromVehicle('untimed_plans.max_lateral_acceleration', FROM_VEHICLE,
                    planned_lateral_acceleration_mps2(d), unit='m/s^2'),
    ]


#: Resolution of the "from the vehicle" parameters: ``with_vehicle(config, description)`` gives
#: the completed configuration and the contradiction warnings, ``waiting_for_vehicle(config)``
#: the parameters still waiting.
VEHICLE = VehicleParameters('controller', VEHICLE_DEFAULTS, _rules)
with_vehicle = VEHICLE.resolve
waiting_for_vehicle = VEHICLE.waiting
