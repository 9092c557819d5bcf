"""The vehicle described once: what the other nodes need to know of the simulated vehicle.

vehicle_sim publishes it on ``vehicle_description`` (std_msgs/String, transient local) as a JSON
document; the planner, the controller and the localization's wheel odometry take their defaults
from it, wheel_teleop its wheels. It holds the URDF (geometry, joints, joint limits, the
wheels' radius) and what a URDF cannot hold: the kinematic model, the speed and acceleration
limits, the steering limit and rate, and the actuators' dead times and time constants.
Format (``format`` and ``version`` first; a reader refuses other versions)::

    {"format": "wheelsim/vehicle_description", "version": 1,
     "model": "bicycle" | "differential" | "omni",
     "base_frame": "base_link",                      # with the frame prefix
     "geometry": {"wheel_base": m | null, "track": m | null, "base_link_offset": m,
                  "steered_axle_behind": bool | null, "drive_on_steered_wheel": bool | null},
     "limits": {"max_speed": m/s | null, "max_acceleration": m/s^2 | null,
                "max_deceleration": m/s^2 | null, "max_jerk": m/s^3 | null,
                "max_yaw_rate": rad/s | null,
                "max_steering_angle": rad | null, "max_steering_rate": rad/s | null,
                "max_curvature": 1/m | null},
     "actuators": {"drive": {"dead_time": s, "time_constant": s},
                   "steering": {"dead_time": s, "time_constant": s} | null},
     "urdf": "<?xml ...>"}

``null`` means "does not apply" (no steering on a differential base) or "no limit"; a reader
takes a limit of 0 as null too, as vehicle_sim's parameters mean it, and refuses a negative one
(:func:`parse_description`). Units SI, frames REP-103. ``max_speed`` is the top speed of
base_link driving straight (the wheels' rim speed limit); ``max_yaw_rate`` the fastest turn on
the spot (differential, omni) or at top speed (bicycle); ``max_curvature`` =
tan(max_steering_angle) / wheel_base (bicycle).
"""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from wheelsim.core.params import from_flat, to_flat
from wheelsim.core.vehicle.config import (
    MODELS,
    BicycleConfig,
    DifferentialConfig,
    DriveActuatorConfig,
    VehicleConfig,
)

ConfigT = TypeVar('ConfigT')
FORMAT = 'wheelsim/vehicle_description'
VERSION = 1
NO_LIMIT_TOP_SPEED_MPS = 2.0
"""The top speed [m/s] taken for a vehicle without a speed limit (``max_speed`` null): the
controller's speed limits and wheel_teleop's full stick (:func:`top_speed_mps`). The planner
plans such a vehicle at 1 m/s (0.8 x this would be 1.6)."""


class DescriptionError(ValueError):
    """A vehicle description that cannot be read; says why."""


def _limit(value: float) -> float | None:
    """A vehicle limit, None where 0 means none."""
    return None if value == 0 else float(value)


@dataclass(frozen=True)
class Actuator:
    """A first-order actuator behind a dead time (s)."""

    dead_time: float
    time_constant: float

    @property
    def lag_s(self) -> float:
        """Dead time plus time constant: how far the response trails the command (s)."""
        return self.dead_time + self.time_constant


@dataclass(frozen=True)
class VehicleDescription:
    """The document (see the module doc) as a value; ``None`` fields: not applicable / none."""

    model: str
    base_frame: str
    wheel_base: float | None
    track: float | None
    base_link_offset: float
    steered_axle_behind: bool | None
    drive_on_steered_wheel: bool | None
    max_speed: float | None
    max_acceleration: float | None
    max_deceleration: float | None
    max_jerk: float | None
    max_yaw_rate: float | None
    max_steering_angle: float | None
    max_steering_rate: float | None
    max_curvature: float | None
    drive: Actuator
    steering: Actuator | None
    urdf: str

    def to_json(self) -> str:
        """The JSON document vehicle_sim publishes."""
        fields = asdict(self)
        document = {
            'format': FORMAT,
            'version': VERSION,
            'model': self.model,
            'base_frame': self.base_frame,
            'geometry': {name: fields[name] for name in _GEOMETRY},
            'limits': {name: fields[name] for name in _LIMITS},
            'actuators': {'drive': fields['drive'], 'steering': fields['steering']},
            'urdf': self.urdf,
        }
        return json.dumps(document, indent=1)


_GEOMETRY = ('wheel_base', 'track', 'base_link_offset', 'steered_axle_behind',
             'drive_on_steered_wheel')
_LIMITS = ('max_speed', 'max_acceleration', 'max_deceleration', 'max_jerk', 'max_yaw_rate',
           'max_steering_angle', 'max_steering_rate', 'max_curvature')


def describe(config: VehicleConfig, urdf: str = '', base_frame: str = 'base_link'
             ) -> VehicleDescription:
    """The description of the vehicle vehicle_sim simulates with ``config``."""
    active = config.active
    drive: DriveActuatorConfig = config.drive
    max_speed = _limit(drive.max_velocity)
    steering = steered_behind = on_steered = max_angle = steer_rate = curvature = None
    wheel_base = track = None
    if isinstance(active, BicycleConfig):
        wheel_base = active.wheel_base
        steered_behind, on_steered = active.reverse, active.drive_on_steered_wheel
        actuator = active.steering_actuator
        steering = Actuator(actuator.dead_time, actuator.time_constant)
        max_angle = _limit(actuator.max_position)
        steer_rate = _limit(actuator.max_velocity)
        if max_angle is not None and max_angle < math.pi / 2:
            curvature = math.tan(max_angle) / wheel_base
        yaw_rate = None if max_speed is None or curvature is None else max_speed * curvature
    elif isinstance(active, DifferentialConfig):
        track = active.track
        yaw_rate = None if max_speed is None else 2.0 * max_speed / track
    else:
        wheel_base, track = active.wheel_base, active.track
        yaw_rate = None if max_speed is None else 2.0 * max_speed / (wheel_base + track)
    return VehicleDescription(
        model=config.model, base_frame=base_frame, wheel_base=wheel_base, track=track,
        base_link_offset=active.base_link_offset, steered_axle_behind=steered_behind,
        drive_on_steered_wheel=on_steered, max_speed=max_speed,
        max_acceleration=_limit(drive.max_acceleration),
        max_deceleration=_limit(drive.deceleration_limit), max_jerk=_limit(drive.max_jerk),
        max_yaw_rate=yaw_rate, max_steering_angle=max_angle, max_steering_rate=steer_rate,
        max_curvature=curvature, drive=Actuator(drive.dead_time, drive.time_constant),
        steering=steering, urdf=urdf,
    )


def top_speed_mps(description: VehicleDescription) -> float:
    """The vehicle's top speed [m/s]; :data:`NO_LIMIT_TOP_SPEED_MPS` if it has none (``None``,
    the only "no limit" a description holds)."""
    return NO_LIMIT_TOP_SPEED_MPS if description.max_speed is None else description.max_speed


def _number(section: dict[str, Any], name: str, where: str) -> float | None:
    value = section.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise DescriptionError(f'{where}.{name} = {value!r}: expected a finite number or null')
    return float(value)


def _limit_number(limits: dict[str, Any], name: str) -> float | None:
    """A limit of the document: None for null (no limit, as :func:`describe` writes it) or 0
    (no limit, as vehicle_sim's parameters say it); DescriptionError for a negative one (a
    negative top speed would invert every command)."""
    value = _number(limits, name, 'limits')
    if value is None:
        return None
    if value < 0:
        raise DescriptionError(f'limits.{name} = {value!r}: expected a number >= 0 (0: no limit) '
                               'or null')
    return _limit(value)


def _actuator(value: Any, where: str) -> Actuator | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise DescriptionError(f'{where} = {value!r}: expected an object or null')
    times = [_number(value, name, where) for name in ('dead_time', 'time_constant')]
    if any(t is None or t < 0 for t in times):
        raise DescriptionError(f'{where}: dead_time and time_constant must be numbers >= 0')
    return Actuator(*times)


def parse_description(text: str) -> VehicleDescription:
    """The description in a JSON document (see the module doc); raises
    :class:`DescriptionError` naming the field for anything else."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as err:
        raise DescriptionError(f'not JSON: {err}') from None
    if not isinstance(document, dict) or document.get('format') != FORMAT:
        raise DescriptionError(f'not a {FORMAT} document')
    if document.get('version') != VERSION:
        raise DescriptionError(f'version {document.get("version")!r}: this reader knows '
                               f'version {VERSION}')
    model = document.get('model')
    if model not in MODELS:
        raise DescriptionError(f'model = {model!r}: expected one of {", ".join(MODELS)}')
    sections = {}
    for name in ('geometry', 'limits', 'actuators'):
        sections[name] = document.get(name)
        if not isinstance(sections[name], dict):
            raise DescriptionError(f'{name}: expected an object')
    geometry, limits, actuators = sections['geometry'], sections['limits'], sections['actuators']
    drive = _actuator(actuators.get('drive'), 'actuators.drive')
    if drive is None:
        raise DescriptionError('actuators.drive: required')
    flags = {name: geometry.get(name) for name in ('steered_axle_behind',
                                                  'drive_on_steered_wheel')}
    return VehicleDescription(
        model=model, base_frame=str(document.get('base_frame', 'base_link')),
        wheel_base=_number(geometry, 'wheel_base', 'geometry'),
        track=_number(geometry, 'track', 'geometry'),
        base_link_offset=_number(geometry, 'base_link_offset', 'geometry') or 0.0,
        steered_axle_behind=flags['steered_axle_behind'],
        drive_on_steered_wheel=flags['drive_on_steered_wheel'],
        **{name: _limit_number(limits, name) for name in _LIMITS},
        drive=drive, steering=_actuator(actuators.get('steering'), 'actuators.steering'),
        urdf=str(document.get('urdf', '')),
    )


def wheel_radius_m(urdf: str) -> float:
    """The radius [m] of the wheels of a vehicle_sim URDF: the cylinder of the child link of its
    first continuous joint (every wheel of a vehicle_sim vehicle has the same);
    DescriptionError saying why for a URDF that gives none (no stand-in fits a radius)."""
    if not urdf.strip():
        raise DescriptionError('no urdf given')
    try:
        robot = ET.fromstring(urdf)
    except ET.ParseError as err:
        raise DescriptionError(f'urdf: not XML ({err})') from None
    child = robot.find("joint[@type='continuous']/child")
    if child is None:
        raise DescriptionError('urdf: no wheel (no continuous joint)')
    wheel = child.get('link')
    cylinders = {link.get('name'): link.find('visual/geometry/cylinder')
                 for link in robot.iter('link')}
    cylinder = cylinders.get(wheel)
    radius = None if cylinder is None else cylinder.get('radius')
    try:
        radius_m = float(radius)
    except (TypeError, ValueError):  # no cylinder, no radius, not a number
        radius_m = math.nan
    if not 0.0 < radius_m < math.inf:
        raise DescriptionError(f'urdf: wheel {wheel}: no cylinder of a finite radius > 0 '
                               f'(radius {radius!r})')
    return radius_m


@dataclass(frozen=True)
class FromVehicle:
    """A parameter that takes its default from the vehicle description.

    ``name``: the dotted parameter name; ``sentinel``: the value meaning "from the vehicle" (the
    parameter's default); ``value``: what it then becomes; ``vehicle``: the vehicle's own figure
    an explicit value is compared with (None: no comparison), ``check``: ``'equal'``,
    ``'at_most'`` or ``'at_least'`` (an explicit value contradicts the vehicle otherwise),
    ``unit`` for the message, and ``zero_unbounded``: 0 means no bound (exceeding any figure
    of an ``'at_most'`` check).
    """

    name: str
    sentinel: Any
    value: Any
    vehicle: Any = None
    check: str = 'equal'
    unit: str = ''
    zero_unbounded: bool = False


def _contradicts(given: Any, rule: FromVehicle) -> bool:
    if rule.vehicle is None:
        return False
    if rule.check == 'equal':
        if isinstance(given, str):
            return given != rule.vehicle
        return not math.isclose(given, rule.vehicle, rel_tol=1e-6, abs_tol=1e-9)
    if rule.check == 'at_most':
        return given > rule.vehicle * (1 + 1e-9) or (rule.zero_unbounded and given == 0)
    return given < rule.vehicle * (1 + 1e-9)  # at_least (the vehicle's figure is negative)


def _text(value: Any, unit: str, zero_unbounded: bool = False) -> str:
    if isinstance(value, str):
        return f"'{value}'"
    return f'{value:.6g}{" " + unit if unit else ""}' + (
        ' (unbounded)' if zero_unbounded and value == 0 else '')


def apply_vehicle(config: ConfigT, rules: list[FromVehicle], node: str
                  ) -> tuple[ConfigT, list[str]]:
    """``config`` (a parameter dataclass) with every "from the vehicle" value replaced, and one
    message per explicit value that contradicts the vehicle (naming both values)."""
    flat = to_flat(config)
    resolved = dict(flat)
    messages = []
    for rule in rules:
        given = flat[rule.name]
        if given == rule.sentinel:
            resolved[rule.name] = rule.value
        elif _contradicts(given, rule):
            relation = 'differs from' if rule.check == 'equal' else 'exceeds'
            given_text = _text(given, rule.unit, rule.zero_unbounded)
            messages.append(
                f'{node} parameter {rule.name} = {given_text} {relation} the '
                f"vehicle's {_text(rule.vehicle, rule.unit)} (vehicle_description); using "
                f'{given_text} as set')
    return from_flat(type(config), resolved), messages


def waiting_for(config: Any, sentinels: dict[str, Any]) -> list[str]:
    """The parameters of ``config`` left to the vehicle description: those at their "from the
    vehicle" value (``sentinels``: parameter name -> that value)."""
    flat = to_flat(config)
    return [name for name, sentinel in sentinels.items() if flat[name] == sentinel]


@dataclass(frozen=True)
class VehicleParameters:
    """The parameters of one node that take their defaults from the vehicle: ``sentinels``
    (parameter name -> its "from the vehicle" value) and ``rules`` (the description -> each
    parameter's :class:`FromVehicle`)."""

    node: str
    sentinels: dict[str, Any]
    rules: Callable[[VehicleDescription], list[FromVehicle]]

    def resolve(self, config: ConfigT, description: VehicleDescription
                ) -> tuple[ConfigT, list[str]]:
        """``config`` with every "from the vehicle" parameter taken from ``description``, and
        a message per explicit parameter that contradicts the vehicle (explicit values win)."""
        return apply_vehicle(config, self.rules(description), self.node)

    def waiting(self, config: Any) -> list[str]:
        """The parameters of ``config`` that wait for a vehicle description."""
        return waiting_for(config, self.sentinels)
