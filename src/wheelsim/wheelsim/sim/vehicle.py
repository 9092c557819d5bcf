"""A simulated vehicle as vehicle_sim builds it, from a preset or a ROS 2 parameters file.

:func:`load_vehicle` reads the ``vehicle_sim`` section of a params file (the shipped presets in
``params/`` or your own) with the parsing vehicle_sim's launch files use (a section for any node,
``/**``, giving only what vehicle_sim declares, as ROS applies it), then checks every value
as the node does (:mod:`wheelsim.core.vehicle.config`, :mod:`wheelsim.core.vehicle_sim.config`):
the same file gives the same vehicle, step rate, seed, footprint and map.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from wheelsim.core.params import (
    ParameterError,
    flatten,
    from_flat,
    short_repr,
    specs,
    unknown_keys,
)
from wheelsim.core.params_file import node_parameters, preset_names_in, read_sections
from wheelsim.core.vehicle.config import (
    VEHICLE_PARAM_SPECS,
    VehicleConfig,
    vehicle_config_from_params,
)
from wheelsim.core.vehicle.model import joint_columns
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.world.footprint import Footprint, footprint_of
from wheelsim.core.world.map_file import load_map_file
from wheelsim.core.world.occupancy import MapError, OccupancyMap
from wheelsim.shipped import shipped_params_dir

#: Every parameter name vehicle_sim declares (use_sim_time is rclpy's, accepted and unused).
PARAMETER_NAMES = tuple(
    [spec.name for spec in specs(VehicleSimSettings) + VEHICLE_PARAM_SPECS] + ['use_sim_time'])


#: The node whose section of a params file :func:`load_vehicle` reads.
NODE_NAME = '/vehicle_sim'


def preset_names() -> tuple[str, ...]:
    """The shipped presets (``params/<name>.yaml`` with a vehicle_sim section:
    :func:`~wheelsim.core.params_file.preset_names_in` of :func:`shipped_params_dir`)."""
    return preset_names_in(shipped_params_dir())


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (arrays inside)
class SimVehicle:
    """A vehicle and the vehicle_sim settings it runs with (see :func:`load_vehicle`); two
    vehicles are equal (``==``) only if they are the same object.

    ``parameters``: the flat vehicle_sim parameters it was built from; ``step_period_s``: one
    physics step, ``1 / step_rate``; ``joint_names``: wheel joints, then steering joints, in
    the order of vehicle_sim's ``joint_states``; ``world``: the occupancy map of
    ``world.map_yaml`` (None without one); ``footprint``: the collision polygon in base_link.
    """

    parameters: Mapping[str, Any]
    config: VehicleConfig
    settings: VehicleSimSettings
    footprint: Footprint
    world: OccupancyMap | None

    @property
    def model(self) -> str:
        """``differential``, ``bicycle`` or ``omni``."""
        return self.config.model

    @property
    def step_period_s(self) -> float:
        return 1.0 / self.settings.step_rate

    @property
    def joint_names(self) -> tuple[str, ...]:
        return joint_columns(self.config).names

    @property
    def wheel_count(self) -> int:
        return len(joint_columns(self.config).wheel_rates)

    @property
    def collisions(self) -> bool:
        """Whether rollouts stop the footprint at the map's obstacles."""
        return self.world is not None and self.settings.world.collisions


def check_vehicle(vehicle: Any) -> SimVehicle:
    """``vehicle`` if it is a :class:`SimVehicle`; ValueError naming the argument otherwise (a
    preset name, say, where :func:`load_vehicle`'s result belongs)."""
    if not isinstance(vehicle, SimVehicle):
        given = ' '.join(repr(vehicle).split())  # one line, as an array's repr is not
        raise ValueError(f'vehicle must be a SimVehicle (ws.load_vehicle(...)), got '
                         f'{type(vehicle).__name__} {given:.60}')
    return vehicle


def _plain(value: Any, name: str) -> Any:
    """``value`` with numpy scalars and arrays (in lists and tuples too) as the Python values
    parameters take (``np.int64(3)``: 3, ``np.bool_(False)``: False, an array: a list), as a
    sweep over ``np.arange`` or ``rng.integers`` gives them. ParameterError naming ``name`` for
    a masked value (numpy.ma), which has none."""
    if np.ma.is_masked(value):
        raise ParameterError(name, np.ma.masked, 'a masked value (numpy.ma) has no value to take')
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    if isinstance(value, (list, tuple)):
        return type(value)(_plain(item, name) for item in value)
    return value


def _params_file(preset_or_params_file: str | Path) -> Path:
    text = str(preset_or_params_file)
    if '/' not in text and not text.endswith(('.yaml', '.yml')):
        path = shipped_params_dir() / f'{text}.yaml'
        if not path.is_file():
            raise ValueError(f'preset_or_params_file = {text!r}: no such preset; presets: '
                             f'{", ".join(preset_names())} (or give a params file path)')
        return path
    path = Path(text)
    if not path.is_file():
        what = 'a folder, not a params file' if path.is_dir() else 'no such file'
        raise ValueError(f'preset_or_params_file = {text!r}: {what}')
    return path


def load_vehicle(preset_or_params_file: str | Path | None = None,
                 params: Mapping[str, Any] | None = None) -> SimVehicle:
    """The vehicle vehicle_sim simulates with these parameters.

    ``preset_or_params_file``: a preset name (``'indoor_differential'``, see
    :func:`preset_names`), or the path of a ROS 2 params file whose ``vehicle_sim`` section
    (``/**/vehicle_sim``, ``vehicle_sim``, ``/**``, as ROS matches them) is used, a section for
    any node name (``/**``, ``/*``) giving only the parameters vehicle_sim declares, as ROS
    applies it; None: every parameter at its default. ``params``: vehicle_sim parameters by
    dotted name, applied over the file (``{'model': 'omni', 'seed': 3, 'world.map_yaml':
    'map.yaml'}``; numpy numbers and arrays as the Python values they hold); the names and
    ranges are those of docs/parameters.md. A relative ``world.map_yaml`` is taken from the
    current directory, as the node does.

    Raises ValueError for an unknown preset or file, a file without a section ROS gives
    vehicle_sim, ``params`` that is no mapping, an unknown parameter (naming the closest known
    one), a value out of its range (naming the parameter and the range) or an unreadable map.
    """
    if params is not None and not isinstance(params, Mapping):
        raise ValueError(f'params must be a mapping of vehicle_sim parameter names to values '
                         f'(dotted or nested), not a {type(params).__name__}')
    values: dict[str, Any] = {}
    if preset_or_params_file is not None:
        path = _params_file(preset_or_params_file)
        sections = read_sections([path])
        if not any(section.applies_to(NODE_NAME) for section in sections):
            found = ', '.join(section.name for section in sections) or 'none'
            raise ValueError(f'preset_or_params_file = {str(path)!r}: no section ROS gives '
                             f'vehicle_sim (vehicle_sim, /**/vehicle_sim, /**, /*); its '
                             f'sections: {found}')
        values.update(node_parameters([path], NODE_NAME, PARAMETER_NAMES))
    given = {name: _plain(value, name) for name, value in flatten(dict(params or {})).items()}
    values.update(given)
    for name, closest in unknown_keys(PARAMETER_NAMES, values):
        hint = f'; did you mean {closest!r}?' if closest else ''
        raise ValueError(f'unknown parameter {name!r}: vehicle_sim has no such parameter{hint}')
    try:
        config = vehicle_config_from_params(values)
        settings = from_flat(VehicleSimSettings, values)
    except ParameterError as err:
        if not given or err.name in given:
            raise
        raise ParameterError(err.name, err.value, f'{err.allowed} (params set ' + ', '.join(
            f'{name} = {short_repr(value)}' for name, value in given.items()) + ')') from None
    world = None
    if settings.world.map_yaml:
        try:
            map_file = load_map_file(settings.world.map_yaml)
        except MapError as err:
            raise ValueError(f'parameter world.map_yaml = {settings.world.map_yaml!r}: {err}'
                             ) from None
        world = map_file.occupancy_map(settings.world.occupied_threshold)
    return SimVehicle(values, config, settings, footprint_of(settings.footprint, config), world)
