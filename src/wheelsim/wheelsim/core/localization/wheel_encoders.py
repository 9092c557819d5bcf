"""Wheel odometry from encoders: the body motion the wheel joints report, as a robot computes it.

With ``odometry_source: joint_states`` the localization integrates the wheel joints of
``joint_states`` (vehicle_sim's rims) instead of perturbing the ground truth, so everything the
wheels do that the ground does not (slip, spin, lock, sliding in a turn) becomes odometry error,
and so do the robot's own calibration errors:

- each wheel's angle is counted in encoder ticks, ``resolution`` per revolution (0 = exact):
  the joint angles (wrapped to (-pi, pi] in ``joint_states``) are unwrapped, the count is
  ``floor(angle / tick)`` and the measured turn is the change of count times the tick;
- the arc a wheel rolled is its measured turn times the radius the robot believes,
  ``wheel_radius * (1 + wheel_radius_error)``;
- the body increment over a sample is the exact arc (constant curvature) through the wheels'
  arcs: differential ``ds = (s_l + s_r) / 2``, ``dyaw = (s_r - s_l) / track``; bicycle ``ds``
  the fixed axle's mean, ``dyaw = ds tan(delta) / wheel_base`` with ``delta`` the steering
  joints' angle (negative ``wheel_base``: steered axle behind), and with the steering beyond
  :data:`STEERED_WHEELS_TAN` (turning about the fixed axle, whose wheels then hardly roll
  forwards) the steered wheels' arcs instead, ``ds = mean(s_i cos delta_i)``, ``dyaw =
  mean(s_i sin delta_i) / wheel_base`` (exact at any angle); omni the mecanum least squares
  ``(dx, dy, dyaw)`` with the lever ``(wheel_base + track) / 2``;
- the increment is moved from the kinematic reference point to base_link
  (``base_link_offset`` ahead), as vehicle_sim places them.

Joint names are vehicle_sim's (``Vehicle.joint_names``) with the ``frame_prefix``.
"""

from __future__ import annotations

import collections
import math
from collections.abc import Sequence
from dataclasses import dataclass, fields, replace

from wheelsim.core.geometry.angles import wrap_angle
from wheelsim.core.geometry.se2 import Floats3, compose_floats, integrate_twist, inverse_floats
from wheelsim.core.params import ParameterError, param
from wheelsim.core.vehicle.description import DescriptionError, VehicleDescription, wheel_radius_m

AUTO = 'auto'
ENCODER_MODELS = ('differential', 'bicycle', 'omni')
KEPT_SAMPLES = 256  # encoder poses remembered, to pair a ground-truth stamp with its sample
WHEELS = {
    'differential': ('left_wheel_joint', 'right_wheel_joint'),
    'omni': ('front_left_wheel_joint', 'front_right_wheel_joint', 'rear_left_wheel_joint',
             'rear_right_wheel_joint'),
}
BICYCLE_FIXED = (('fixed_left_wheel_joint', 'fixed_right_wheel_joint'), ('fixed_wheel_joint',))
BICYCLE_STEERING = (('steering_left_joint', 'steering_right_joint'), ('steering_joint',))
BICYCLE_STEERED = (('steered_left_wheel_joint', 'steered_right_wheel_joint'),
                   ('steered_wheel_joint',))
#: |tan| of the steering (about 84 degrees) beyond which a bicycle's odometry takes the steered
#: wheels' arcs: ``ds tan(delta)`` from the fixed axle is rounding noise times a huge factor.
STEERED_WHEELS_TAN = 10.0


@dataclass(frozen=True)
class EncoderConfig:
    """The robot's own idea of its wheels (``encoders.*``), used with
    ``odometry_source: joint_states``: with ``model`` auto vehicle_sim's (:func:`with_vehicle`),
    else as given, off vehicle_sim's to model a mis-calibrated robot."""

    model: str = param(
        AUTO, "Kinematic model the wheel odometry assumes; auto: vehicle_sim's, with its "
        'geometry (wheel_radius, track, wheel_base and base_link_offset from '
        'vehicle_description; none of them may then be given); a model: the geometry as given '
        '(a mis-calibrated robot where it differs from the vehicle\'s)',
        choices=(AUTO, *ENCODER_MODELS), read_only=True,
    )
    wheel_radius: float = param(
        0.28, 'Wheel radius the odometry assumes (vehicle_sim: half the tyre/wheel diameter); '
        "model auto: the vehicle's",
        unit='m', min_value=0.0, min_exclusive=True, max_value=10.0,
    )
    wheel_radius_error: float = param(
        0.0, 'Relative error of that radius: the odometry computes with wheel_radius x '
        '(1 + this), e.g. 0.01 for wheels 1 % smaller than believed', unit='1',
        min_value=-0.5, max_value=0.5,
    )
    track: float = param(
        1.4, "Distance between the left and right wheels (differential, omni); model auto: the "
        "vehicle's", unit='m',
        min_value=0.0, min_exclusive=True, max_value=100.0,
    )
    wheel_base: float = param(
        2.0, 'Fixed to steered axle (bicycle; negative when the steered axle is behind), front '
        "to rear axle (omni); not 0; model auto: the vehicle's", unit='m', min_value=-100.0,
        max_value=100.0,
    )
    base_link_offset: float = param(
        0.0, "base_link ahead of the kinematic reference point (as vehicle_sim); model auto: the "
        "vehicle's", unit='m',
        min_value=-100.0, max_value=100.0,
    )
    resolution: int = param(
        0, 'Encoder ticks per wheel revolution (0 = exact angles)', min_value=0,
        max_value=10_000_000,
    )

    def __post_init__(self) -> None:
        if self.wheel_base == 0.0:
            raise ParameterError('wheel_base', 0.0, 'must not be 0')

    def check_geometry_not_given(self) -> None:
        """With model auto, refuse a geometry parameter given (one off its default): the
        vehicle's would override it. ParameterError naming it (``encoders.`` on the name)."""
        if self.model != AUTO:
            return
        for name in GEOMETRY:
            if getattr(self, name) != _DEFAULTS[name]:
                raise ParameterError(
                    f'encoders.{name}', getattr(self, name),
                    "is the vehicle's while encoders.model is auto (vehicle_description): give "
                    'encoders.model too, to set the geometry')


#: The parameters of the wheel geometry, the vehicle's with model auto, and those each model's
#: odometry uses.
GEOMETRY = ('wheel_radius', 'track', 'wheel_base', 'base_link_offset')
USED_GEOMETRY = {'differential': ('wheel_radius', 'track', 'base_link_offset'),
                 'bicycle': ('wheel_radius', 'wheel_base', 'base_link_offset'),
                 'omni': GEOMETRY}
_DEFAULTS = {f.name: f.default for f in fields(EncoderConfig)}


def with_vehicle(config: EncoderConfig, vehicle: VehicleDescription) -> EncoderConfig:
    """``config`` with model auto made the ``vehicle``'s model and geometry (the wheel radius
    from its URDF; a steered axle behind as a negative wheel base), else as it is. Raises
    DescriptionError, saying why, when the vehicle's URDF gives no wheel radius."""
    if config.model != AUTO:
        return config
    wheel_base = config.wheel_base  # a differential base has none (the odometry uses none)
    if vehicle.wheel_base is not None:
        wheel_base = -vehicle.wheel_base if vehicle.steered_axle_behind else vehicle.wheel_base
    return replace(config, model=vehicle.model, wheel_radius=wheel_radius_m(vehicle.urdf),
                   track=config.track if vehicle.track is None else vehicle.track,
                   wheel_base=wheel_base, base_link_offset=vehicle.base_link_offset)


def geometry_mismatches(config: EncoderConfig, vehicle: VehicleDescription) -> list[str]:
    """The ``encoders.*`` that differ from the ``vehicle``'s geometry (vehicle_sim's
    description; the wheel radius from its URDF, not checked without one), each as
    ``"encoders.track = 1.4 m, the vehicle's 0.5 m"``; empty when the odometry computes with the
    vehicle's own (always with model auto)."""
    if config.model == AUTO:
        return []
    if config.model != vehicle.model:
        return [f"encoders.model = '{config.model}', the vehicle's '{vehicle.model}'"]
    wheel_base = vehicle.wheel_base
    if wheel_base is not None and vehicle.steered_axle_behind:
        wheel_base = -wheel_base
    try:
        wheel_radius = wheel_radius_m(vehicle.urdf)
    except DescriptionError:
        wheel_radius = None
    described = {'wheel_radius': wheel_radius, 'track': vehicle.track, 'wheel_base': wheel_base,
                 'base_link_offset': vehicle.base_link_offset}
    return [f"encoders.{name} = {getattr(config, name):g} m, the vehicle's {described[name]:g} m"
            for name in USED_GEOMETRY[config.model] if described[name] is not None
            and not math.isclose(getattr(config, name), described[name], rel_tol=1e-9,
                                 abs_tol=1e-12)]


def _exact(names: Sequence[str], candidates: tuple[tuple[str, ...], ...], prefix: str):
    for group in candidates:
        if all(prefix + name in names for name in group):
            return tuple(prefix + name for name in group)
    return None


class EncoderOdometry:
    """Integrates wheel joint angles into a pose in its own start frame (see the module doc).

    :meth:`update` with every ``joint_states`` sample; :meth:`pose_at` gives the pose at the
    latest sample at or before a stamp (the localization pairs it with ground truth).
    """

    def __init__(self, config: EncoderConfig, frame_prefix: str = '') -> None:
        """ValueError for model auto: make it the vehicle's first (:func:`with_vehicle`)."""
        if config.model == AUTO:
            raise ValueError("encoders.model auto: resolve it with the vehicle's description "
                             '(with_vehicle) first')
        self.config = config
        self._prefix = frame_prefix
        self._radius = config.wheel_radius * (1.0 + config.wheel_radius_error)
        self._tick = 2.0 * math.pi / config.resolution if config.resolution else 0.0
        self._wheels: tuple[str, ...] | None = None  # the fixed wheels, then the steered
        self._fixed = 0  # how many of them are fixed
        self._steering: tuple[str, ...] = ()
        self._poses: collections.deque[tuple[int, Floats3]] = collections.deque(
            maxlen=KEPT_SAMPLES
        )
        self.restart()

    @property
    def latest_stamp_ns(self) -> int | None:
        return self._poses[-1][0] if self._poses else None

    def restart(self) -> None:
        """Forget the wheels' past (a time jump back): the next sample starts at the origin."""
        self._unwrapped: list[float] = []  # each wheel's angle since the start [rad]
        self._last: list[float] = []  # the last wrapped joint angles [rad]
        self._counted: list[float] = []  # what was counted so far [rad, or ticks]
        self.pose: Floats3 = (0.0, 0.0, 0.0)
        self._poses.clear()

    def reconfigured(self, config: EncoderConfig, same_wheels: bool) -> EncoderOdometry:
        """This odometry with ``config`` (the same prefix) from the next sample on, its pose
        kept. ``same_wheels`` (a live change of ``encoders.*`` on the same vehicle): the motion
        since the last sample is integrated with the new values from the wheels' angles so
        far, none lost and none counted twice, a tick count going on at the new resolution;
        otherwise (another vehicle) the wheels start afresh at the next sample."""
        other = EncoderOdometry(config, self._prefix)
        if same_wheels:
            other._wheels, other._fixed, other._steering = (self._wheels, self._fixed,
                                                            self._steering)
            other._last, other._unwrapped = list(self._last), list(self._unwrapped)
            other._counted = [math.floor(angle / other._tick) if other._tick else angle
                              for angle in self._unwrapped]
        other.pose = self.pose
        other._poses.extend(self._poses)
        return other

    def _joints(self, names: Sequence[str]) -> None:
        if self.config.model == 'bicycle':
            wheels = _exact(names, BICYCLE_FIXED, self._prefix)
            steering = _exact(names, BICYCLE_STEERING, self._prefix)
            if wheels is None or steering is None:
                raise ValueError(
                    f'joint_states has no bicycle wheels and steering joints '
                    f'({self._prefix}fixed_*_wheel_joint, {self._prefix}steering*_joint): '
                    f'{list(names)}')
            self._steering = steering
            steered = _exact(names, BICYCLE_STEERED, self._prefix)
            self._fixed = len(wheels)
            if steered is not None and len(steered) == len(steering):
                wheels += steered
        else:
            wheels = tuple(self._prefix + name for name in WHEELS[self.config.model])
            if not all(name in names for name in wheels):
                raise ValueError(f'joint_states lacks the {self.config.model} wheel joints '
                                 f'{list(wheels)}: {list(names)}')
            self._fixed = len(wheels)
        self._wheels = wheels

    def _measured_turns(self, angles: Sequence[float]) -> list[float]:
        turns = []
        for i, angle in enumerate(angles):
            self._unwrapped[i] += wrap_angle(angle - self._last[i])
            self._last[i] = angle
            count = math.floor(self._unwrapped[i] / self._tick) if self._tick else (
                self._unwrapped[i])
            turns.append((count - self._counted[i]) * (self._tick or 1.0))
            self._counted[i] = count
        return turns

    def update(self, stamp_ns: int, names: Sequence[str], positions: Sequence[float]) -> None:
        """One ``joint_states`` sample: joint names and positions [rad]. ValueError if the
        model's joints are missing or a value is not finite."""
        if self._wheels is None:
            self._joints(names)
        index = {name: i for i, name in enumerate(names)}
        try:
            angles = [float(positions[index[name]]) for name in self._wheels]
            steering = [float(positions[index[name]]) for name in self._steering]
        except (KeyError, IndexError):
            raise ValueError(f'joint_states lacks a position of {list(self._wheels)}') from None
        if not all(math.isfinite(v) for v in angles + steering):
            raise ValueError(f'joint_states positions are not finite: {angles + steering}')
        if not self._last:
            self._last = list(angles)
            self._unwrapped = [0.0] * len(angles)
            self._counted = [0.0] * len(angles)
        else:
            arcs = [turn * self._radius for turn in self._measured_turns(angles)]
            increment = self._increment(arcs, steering)
            self.pose = compose_floats(self.pose, increment)
        if self._poses and stamp_ns < self._poses[-1][0]:
            self._poses.clear()
        self._poses.append((int(stamp_ns), self.pose))

    def _increment(self, arcs: list[float], steering: list[float]) -> Floats3:
        config = self.config
        if config.model == 'differential':
            left, right = arcs
            forward, sideways, turn = 0.5 * (left + right), 0.0, (right - left) / config.track
        elif config.model == 'omni':
            front_left, front_right, rear_left, rear_right = arcs
            lever = 0.5 * (config.wheel_base + config.track)
            forward = 0.25 * (front_left + front_right + rear_left + rear_right)
            sideways = 0.25 * (-front_left + front_right + rear_left - rear_right)
            turn = 0.25 * (-front_left + front_right - rear_left + rear_right) / lever
        else:
            fixed, steered = arcs[:self._fixed], arcs[self._fixed:]
            tan_centre = centre_steering_tan(steering)
            sideways = 0.0
            if steered and abs(tan_centre) > STEERED_WHEELS_TAN:
                forward = sum(arc * math.cos(angle)
                              for arc, angle in zip(steered, steering, strict=True)) / len(steered)
                turn = sum(arc * math.sin(angle) for arc, angle in
                           zip(steered, steering, strict=True)) / len(steered) / config.wheel_base
            else:
                forward = sum(fixed) / len(fixed)
                turn = forward * tan_centre / config.wheel_base
        at_reference = integrate_twist(0.0, 0.0, 0.0, forward, sideways, turn, 1.0)
        offset = (config.base_link_offset, 0.0, 0.0)
        if offset[0] == 0.0:
            return at_reference
        return compose_floats(compose_floats(inverse_floats(offset), at_reference), offset)

    def pose_at(self, stamp_ns: int) -> Floats3 | None:
        """The pose at the latest sample at or before ``stamp_ns`` (None before the first)."""
        for stamp, pose in reversed(self._poses):
            if stamp <= stamp_ns:
                return pose
        return None


def centre_steering_tan(steering: Sequence[float]) -> float:
    """tan of the virtual centre wheel's angle from the steering joints: one joint is the
    centre wheel; two Ackermann joints give ``cot(centre) = (cot(left) + cot(right)) / 2``."""
    if len(steering) == 1:
        return math.tan(steering[0])
    tan_left, tan_right = math.tan(steering[0]), math.tan(steering[1])
    if tan_left == 0.0 or tan_right == 0.0:
        return 0.0
    if tan_left + tan_right == 0.0:  # both at 90 degrees, opposite ways: turning on the spot
        return math.inf
    return 2.0 * tan_left * tan_right / (tan_left + tan_right)
