"""Configuration of the controller: algorithm, vehicle, rate, gains, goal tolerances, output limits.

One frozen-dataclass declaration (see :mod:`wheelsim.core.params`) gives the ROS parameters of
the ``controller`` node, their validation and their documentation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from wheelsim.core import frames
from wheelsim.core.params import ParameterError, group, param

ALGORITHMS = ('feedforward', 'pure_pursuit', 'stanley')
MODELS = ('bicycle', 'differential', 'omni')


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
        1.0, 'Gain on the position error along the body x axis (omni: also y).', '1/s'
    )
    k_y: float = _gain(
        1.0, 'Gain on the lateral position error, scaled by the planned speed.', '1/m^2'
    )
    k_theta: float = _gain(2.0, 'Gain on the heading error.', '1/s')


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
        'Differential: turn on the spot first when the path direction is further off than '
        'this (0: never).',
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


@dataclass(frozen=True)
class OutputLimitsConfig:
    """Limits on every published command (0 for an acceleration: no limit)."""

    max_linear_x: float = _positive(2.0, 'Highest forward speed.', 'm/s', 100.0)
    min_linear_x: float = param(
        -0.3,
        'Lowest speed (negative: reversing allowed that fast).',
        unit='m/s',
        min_value=-100.0,
        max_value=0.0,
    )
    max_linear_y: float = _gain(1.0, 'Highest sideways speed (omni only; others always 0).', 'm/s')
    max_angular_z: float = _positive(2.0, 'Highest yaw rate.', 'rad/s', 100.0)
    max_linear_acceleration: float = _gain(
        2.0, 'Highest change of the linear command.', 'm/s^2', 1000.0
    )
    max_angular_acceleration: float = _gain(
        4.0, 'Highest change of the yaw rate command.', 'rad/s^2', 1000.0
    )


@dataclass(frozen=True)
class ControllerConfig(frames.FrameNames):
    """Everything the ``controller`` node is configured with."""

    algorithm: str = param(
        'feedforward',
        'Tracking law: feedforward (trajectory tracking with feedforward, seed 000), '
        'pure_pursuit (regulated pure pursuit), stanley (front-axle steering; on differential and '
        'omni bases a virtual front axle wheel_base ahead).',
        choices=ALGORITHMS,
    )
    model: str = param(
        'bicycle',
        'Vehicle model: omni uses linear.y; differential and omni may turn on the spot; bicycle '
        'commands stay within the steering limit.',
        choices=MODELS,
        read_only=True,
    )
    wheel_base: float = _positive(
        2.0, 'Bicycle: distance between the axles (Stanley front axle, steering limit).', 'm', 100.0
    )
    max_steering_angle: float = param(
        math.pi / 6,
        'Bicycle: steering limit; commands keep |yaw rate| <= tan(limit) / wheel_base * |speed|.',
        unit='rad',
        min_value=0.0,
        min_exclusive=True,
        max_value=1.55,
    )
    control_rate: float = _positive(20.0, 'Rate of the control loop in ROS time.', 'Hz', 1000.0)
    enable_stamped_cmd_vel: bool = param(
        True,
        'Publish cmd_vel as geometry_msgs/TwistStamped (true) or Twist (false), as Nav2.',
        read_only=True,
    )
    plan_clock_tolerance: float = _positive(
        2.0,
        'A plan whose first pose is stamped within this of the controller clock keeps its '
        'stamps; otherwise (another clock, an old plan) it starts when it is received.',
        's',
        1e6,
    )
    lead_time: float = param(
        0.0,
        "Make up for the vehicle's actuator delay (set about dead time plus time constant): "
        'feedforward and Stanley take the planned speed and turn rate this far ahead on the '
        "schedule, pure pursuit the plan's speed where the vehicle will be then; 0: none.",
        unit='s',
        min_value=0.0,
        max_value=10.0,
    )
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
    goal: GoalConfig = group(GoalConfig)
    limits: OutputLimitsConfig = group(OutputLimitsConfig)

    def __post_init__(self) -> None:
        self.check_frames()

    @property
    def max_curvature_inv_m(self) -> float:
        """Bicycle: the curvature the steering limit allows (1/m); 0 (none) for the others."""
        if self.model != 'bicycle':
            return 0.0
        return math.tan(self.max_steering_angle) / self.wheel_base
