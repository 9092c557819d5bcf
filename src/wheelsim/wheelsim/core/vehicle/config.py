"""Vehicle configuration: the ``model`` and ``model_params.<model>.*`` parameter tree.

Names, meanings and defaults follow the reference simulator (see docs/core.md), extended with
``max_deceleration``, ``max_jerk``, per-wheel slip and proportional mecanum acceleration.

Conventions shared by every leaf:

- a limit of ``0`` means "no limit" (velocity, acceleration, jerk, time constant, position);
- ``-1`` means "derived from another parameter", as the reference's defaults were:
  ``max_deceleration`` = ``max_acceleration``, ``vis_track_*`` = 0.7 x ``wheel_base``,
  tire/wheel diameters = 0.25 x ``wheel_base`` (bicycle), 0.4 x ``track`` (differential),
  0.25 x ``track`` (omni);
- actuator leaves may change while the simulation runs; the model and the geometry are read only.

Drive actuators act on the ground speed of a wheel's rim in m/s (so the seed's ``max_velocity``
keeps its meaning); the tire diameter converts that speed into the wheel joint's rad/s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from wheelsim.core.params import ParameterError, from_flat, group, param, specs

MODELS = ('bicycle', 'differential', 'omni')
DERIVED = -1.0


def _derived(description: str, derived_from: str, high: float, positive: bool,
             **options: Any) -> Any:
    """A parameter whose default -1 is derived (``derived_from``), else in (0, ``high``], or
    [0, ``high``] unless ``positive``."""
    return param(DERIVED, f'{description} (-1 = {derived_from})', min_value=0.0,
                 min_exclusive=positive, max_value=high, special=(DERIVED, derived_from),
                 **options)


def _dead_time(what: str) -> Any:
    return param(0.2, f'Transport delay of the {what}', unit='s', min_value=0.0, max_value=10.0)


def _time_constant(default: float, what: str) -> Any:
    return param(
        default,
        f'First-order low-pass time constant of the {what} (0 = none)',
        unit='s',
        min_value=0.0,
        max_value=100.0,
    )


def _bias(what: str, unit: str) -> Any:
    return param(
        0.0, f'Command imperfection: offset added to the {what} reference (a zero that is off)',
        unit=unit, min_value=-100.0, max_value=100.0,
    )


def _dead_band(what: str, unit: str) -> Any:
    return param(
        0.0, f'Command imperfection: {what} references within +-this (after bias and noise) '
        'become 0, the actuator does not move (0 = none)', unit=unit, min_value=0.0,
        max_value=100.0,
    )


def _resolution(what: str, unit: str) -> Any:
    return param(
        0.0, f'Command imperfection: the {what} reference is rounded to a multiple of this '
        '(quantisation; 0 = continuous)', unit=unit, min_value=0.0, max_value=100.0,
    )


def _noise(what: str, unit: str) -> Any:
    return param(
        0.0, f'Command imperfection: standard deviation of white Gaussian noise added to the '
        f'{what} reference at every step, seeded by vehicle_sim\'s seed (0 = none)', unit=unit,
        min_value=0.0, max_value=100.0,
    )


@dataclass(frozen=True)
class DriveActuatorConfig:
    """A velocity-controlled drive: command imperfections -> dead time -> saturation -> low pass
    -> acceleration limits."""

    dead_time: float = _dead_time('speed command')
    time_constant: float = _time_constant(0.4, 'speed response')
    max_velocity: float = param(
        2.0, 'Rim speed limit (0 = no limit)', unit='m/s', min_value=0.0, max_value=1000.0
    )
    max_acceleration: float = param(
        2.0,
        'Limit on the rate at which the speed magnitude grows (0 = no limit)',
        unit='m/s^2',
        min_value=0.0,
        max_value=1000.0,
    )
    max_deceleration: float = _derived(
        'Limit on the rate at which the speed magnitude shrinks when braking; 0 = no limit',
        'same as max_acceleration', 1000.0, positive=False, unit='m/s^2')
    max_jerk: float = param(
        0.0,
        'Limit on the rate of change of acceleration: S-curve speed profiles (0 = no limit)',
        unit='m/s^3',
        min_value=0.0,
        max_value=100000.0,
    )
    bias: float = _bias('speed', 'm/s')
    dead_band: float = _dead_band('speed', 'm/s')
    resolution: float = _resolution('speed', 'm/s')
    noise_stddev: float = _noise('speed', 'm/s')

    @property
    def deceleration_limit(self) -> float:
        """The braking limit in m/s^2 with the -1 sentinel resolved (0 still means none)."""
        return self.max_acceleration if self.max_deceleration == DERIVED else self.max_deceleration


@dataclass(frozen=True)
class SteeringActuatorConfig:
    """A position-controlled steering: command imperfections -> dead time -> position limit ->
    low pass -> rate limit."""

    dead_time: float = _dead_time('steering command')
    time_constant: float = _time_constant(0.05, 'steering angle')
    max_velocity: float = param(
        2.0, 'Steering rate limit (0 = no limit)', unit='rad/s', min_value=0.0, max_value=1000.0
    )
    max_position: float = param(
        math.pi / 6,
        'Steering angle limit either side of straight ahead: in (0, pi/2) when the fixed '
        'axle drives; with drive_on_steered_wheel up to pi, or 0 = no limit, turns all '
        'around',
        unit='rad',
        min_value=0.0,
        max_value=math.pi,
    )
    bias: float = _bias('steering angle', 'rad')
    dead_band: float = _dead_band('steering angle', 'rad')
    resolution: float = _resolution('steering angle', 'rad')
    noise_stddev: float = _noise('steering angle', 'rad')


def _friction() -> Any:
    return param(
        0.0, 'Tyre-road friction coefficient mu: the acceleration of the reference point '
        '(speeding up, braking and turning together) is at most mu x 9.81 m/s^2; asked for '
        'more, the wheels spin, lock or slide (0 = no limit)', unit='1', min_value=0.0,
        max_value=10.0,
    )


def _geometry(default: float, description: str, **limits: float) -> Any:
    return param(default, description, unit='m', read_only=True, **limits)


def _offset() -> Any:
    return _geometry(
        0.0,
        'Distance from the kinematic reference point (fixed axle, wheel axle or wheel centre) '
        'to base_link, along +x',
        min_value=-100.0,
        max_value=100.0,
    )


def _diameter(derived_from: str) -> Any:
    return _derived('Wheel diameter: draws the wheels and turns rim speed into joint rad/s',
                    derived_from, 10.0, positive=True, unit='m', read_only=True)


@dataclass(frozen=True)
class SingleTrackConfig:
    """The dynamic single-track model of the bicycle (docs/fidelity.md); off: kinematic."""

    enabled: bool = param(
        False, 'Dynamic single-track model: lateral tyre slip and understeer at speed, the '
        'kinematic bicycle at low speed (needs friction_coefficient > 0 and fixed-axle drive)',
        read_only=True,
    )
    mass: float = param(
        1000.0, 'Vehicle mass', unit='kg', min_value=0.0, min_exclusive=True, max_value=1e6
    )
    yaw_inertia: float = _derived(
        'Moment of inertia about the vertical axis through the centre of mass',
        'mass x d x (wheel_base - d), d = cg_to_fixed_axle', 1e9, positive=True, unit='kg*m^2')
    cg_to_fixed_axle: float = _derived(
        'Distance from the fixed axle to the centre of mass, towards the steered axle',
        'wheel_base / 2', 100.0, positive=True, unit='m')
    cg_height: float = param(
        0.0, 'Height of the centre of mass above the ground: speeding up moves normal load from '
        'the axle ahead to the one behind, braking the other way (0: no load transfer)',
        unit='m', min_value=0.0, max_value=10.0,
    )
    cornering_stiffness_steered: float = param(
        20.0, 'Normalised cornering stiffness of the steered axle: lateral force per radian of '
        'slip angle per newton of normal load, at friction 1 (CommonRoad C_S,f)', unit='1/rad',
        min_value=0.0, min_exclusive=True, max_value=1000.0,
    )
    cornering_stiffness_fixed: float = param(
        20.0, 'Normalised cornering stiffness of the fixed axle (CommonRoad C_S,r)',
        unit='1/rad', min_value=0.0, min_exclusive=True, max_value=1000.0,
    )
    blend_speed_low: float = param(
        0.5, 'Below this speed the model is the kinematic bicycle', unit='m/s', min_value=0.0,
        min_exclusive=True, max_value=100.0,
    )
    blend_speed_high: float = param(
        1.0, 'Above this speed the model is fully dynamic; in between the two are blended '
        'linearly (>= blend_speed_low)', unit='m/s', min_value=0.0, min_exclusive=True,
        max_value=100.0,
    )

    def __post_init__(self) -> None:
        if self.blend_speed_high < self.blend_speed_low:
            raise ParameterError(
                'blend_speed_high', self.blend_speed_high,
                f'must be >= blend_speed_low ({self.blend_speed_low:g} m/s)',
            )


@dataclass(frozen=True)
class BicycleConfig:
    """Car-like (Ackermann) vehicle: a fixed axle and a steered axle ``wheel_base`` apart."""

    wheel_base: float = _geometry(
        2.0, 'Distance between the fixed and the steered axle', min_value=0.0,
        max_value=100.0, min_exclusive=True,
    )
    drive_on_steered_wheel: bool = param(
        False, 'Drive the steered wheel(s) (true) or the fixed axle (false)', read_only=True
    )
    reverse: bool = param(
        False, 'Steered axle behind the fixed axle (true, e.g. a forklift) or in front (false)',
        read_only=True,
    )
    base_link_offset: float = _offset()
    vis_track_fixed: float = _derived(
        'Wheel spacing of the fixed axle, 0 = one wheel', '0.7 x wheel_base', 100.0,
        positive=False, unit='m', read_only=True)
    vis_track_steered: float = _derived(
        'Wheel spacing of the steered axle, 0 = one wheel; sets the left/right Ackermann '
        'angles', '0.7 x wheel_base', 100.0, positive=False, unit='m', read_only=True)
    vis_tire_diameter: float = _diameter('0.25 x wheel_base')
    friction_coefficient: float = _friction()
    drive_actuator: DriveActuatorConfig = group(DriveActuatorConfig)
    steering_actuator: SteeringActuatorConfig = group(SteeringActuatorConfig)
    dynamics: SingleTrackConfig = group(SingleTrackConfig)

    def __post_init__(self) -> None:
        limit = self.steering_actuator.max_position
        if not self.drive_on_steered_wheel and not 0.0 < limit < math.pi / 2:
            raise ParameterError(
                'steering_actuator.max_position', limit,
                'must be in (0, pi/2) when drive_on_steered_wheel is false (fixed-axle drive '
                'cannot turn at or beyond 90 degrees)',
            )
        if self.dynamics.enabled:
            self._check_dynamics()

    def _check_dynamics(self) -> None:
        if self.friction_coefficient == 0.0:
            raise ParameterError(
                'friction_coefficient', 0.0,
                'must be > 0 when dynamics.enabled is true (the tyre forces scale with it)',
            )
        if self.drive_on_steered_wheel:
            raise ParameterError(
                'drive_on_steered_wheel', True,
                'must be false when dynamics.enabled is true (the single-track model drives the '
                'centre of mass; the driven axle does not change its lateral dynamics)',
            )
        if not 0.0 < self.cg_m < self.wheel_base:
            raise ParameterError(
                'dynamics.cg_to_fixed_axle', self.dynamics.cg_to_fixed_axle,
                f'must be below wheel_base ({self.wheel_base:g} m): the centre of mass lies '
                'between the axles',
            )

    @property
    def cg_m(self) -> float:
        """Distance from the fixed axle to the centre of mass [m]."""
        cg = self.dynamics.cg_to_fixed_axle
        return 0.5 * self.wheel_base if cg == DERIVED else cg

    @property
    def gyration_sq_m2(self) -> float:
        """Yaw inertia over mass [m^2] (the single-track model needs only this ratio)."""
        inertia = self.dynamics.yaw_inertia
        if inertia == DERIVED:
            return self.cg_m * (self.wheel_base - self.cg_m)
        return inertia / self.dynamics.mass

    @property
    def signed_wheel_base_m(self) -> float:
        """Fixed to steered axle along +x: +wheel_base, or -wheel_base with ``reverse``."""
        return -self.wheel_base if self.reverse else self.wheel_base

    @property
    def track_fixed_m(self) -> float:
        return 0.7 * self.wheel_base if self.vis_track_fixed == DERIVED else self.vis_track_fixed

    @property
    def track_steered_m(self) -> float:
        if self.vis_track_steered == DERIVED:
            return 0.7 * self.wheel_base
        return self.vis_track_steered

    @property
    def wheel_radius_m(self) -> float:
        if self.vis_tire_diameter == DERIVED:
            return 0.125 * self.wheel_base
        return 0.5 * self.vis_tire_diameter


def _slip(side: str) -> Any:
    return param(
        0.0,
        f'Fraction of the {side} wheel rim speed lost to slip: ground speed = rim speed x '
        f'(1 - slip)',
        min_value=0.0,
        max_value=1.0,
    )


@dataclass(frozen=True)
class DifferentialConfig:
    """Two independently driven wheels on one axle (tank steering)."""

    track: float = _geometry(
        1.4, 'Distance between the left and the right wheel', min_value=0.0, max_value=100.0,
        min_exclusive=True,
    )
    base_link_offset: float = _offset()
    vis_tire_diameter: float = _diameter('0.4 x track')
    slip_left: float = _slip('left')
    slip_right: float = _slip('right')
    friction_coefficient: float = _friction()
    drive_actuators: DriveActuatorConfig = group(DriveActuatorConfig)

    @property
    def wheel_radius_m(self) -> float:
        if self.vis_tire_diameter == DERIVED:
            return 0.2 * self.track
        return 0.5 * self.vis_tire_diameter


@dataclass(frozen=True)
class OmniConfig:
    """Four mecanum wheels at (+-wheel_base/2, +-track/2), rollers at 45 degrees (X layout)."""

    wheel_base: float = _geometry(
        1.4, 'Distance between the front and the rear axle', min_value=0.0, max_value=100.0,
        min_exclusive=True,
    )
    track: float = _geometry(
        1.2, 'Distance between the left and the right wheels', min_value=0.0, max_value=100.0,
        min_exclusive=True,
    )
    base_link_offset: float = _offset()
    vis_wheel_diameter: float = _diameter('0.25 x track')
    proportional_acceleration: bool = param(
        True,
        'Change all four wheel speeds in proportion, so the direction of travel is held while '
        'accelerating (false: each wheel is limited on its own)',
    )
    friction_coefficient: float = _friction()
    drive_actuators: DriveActuatorConfig = group(DriveActuatorConfig)

    @property
    def lever_m(self) -> float:
        """The mecanum lever (wheel_base + track) / 2 of the wheel kinematics."""
        return 0.5 * (self.wheel_base + self.track)

    @property
    def wheel_radius_m(self) -> float:
        if self.vis_wheel_diameter == DERIVED:
            return 0.125 * self.track
        return 0.5 * self.vis_wheel_diameter


@dataclass(frozen=True)
class ModelParamsConfig:
    """One parameter group per model; only the one named by ``model`` is simulated."""

    bicycle: BicycleConfig = group(BicycleConfig)
    differential: DifferentialConfig = group(DifferentialConfig)
    omni: OmniConfig = group(OmniConfig)


ModelConfig = BicycleConfig | DifferentialConfig | OmniConfig


@dataclass(frozen=True)
class VehicleConfig:
    """The whole vehicle: which model, and the parameters of every model."""

    model: str = param(
        'bicycle', 'Vehicle model to simulate', choices=MODELS, read_only=True
    )
    model_params: ModelParamsConfig = group(ModelParamsConfig)

    @property
    def active(self) -> ModelConfig:
        """The parameter group of the selected model."""
        return getattr(self.model_params, self.model)

    @property
    def drive(self) -> DriveActuatorConfig:
        """The drive actuator parameters of the selected model (shared by all its wheels)."""
        active = self.active
        if isinstance(active, BicycleConfig):
            return active.drive_actuator
        return active.drive_actuators


def vehicle_config_from_params(values: Mapping[str, Any]) -> VehicleConfig:
    """Validated :class:`VehicleConfig` from flat dotted keys; absent keys take defaults.

    Raises :class:`ParameterError` naming the full parameter path, the value and the allowed
    range. Keys that name no vehicle parameter are ignored (see ``params.unknown_keys``).
    """
    return from_flat(VehicleConfig, values)


VEHICLE_PARAM_SPECS = specs(VehicleConfig)
