"""ROS parameters files as a node gets them, and the vehicle the launch files build from them.

A launch file reads the same files vehicle_sim reads, so that what it derives from the vehicle
(robot_state_publisher's URDF, the footprint Nav2's costmaps get) is the simulated vehicle.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.params_file import (
    ParamsFileError,
    none_applies,
    read_sections,
    section_parameters,
)
from wheelsim.core.vehicle.config import VehicleConfig, vehicle_config_from_params
from wheelsim.core.vehicle_sim.config import VehicleSimSettings
from wheelsim.core.vehicle_sim.description import vehicle_sim_urdf
from wheelsim.shipped import shipped_params_dir


def node_values(params_files: Sequence[str], namespace: str, node: str,
                overrides: Mapping[str, Any]) -> dict[str, Any]:
    """The parameters node ``node`` in ``namespace`` gets from ``params_files`` (given
    together, empty names skipped) and the launch's ``overrides``, as ROS gives them:
    launch_ros passes ``overrides`` as a params file of one section named by the node's full
    name, which rcl merges into the files' section of that name, so a later section of the
    files (``/**``, ``/**/vehicle_sim``) would win over them. RuntimeError naming the file and
    the section for a params file ROS would refuse, and naming the parameter for an override
    that a section of the files would replace."""
    fqn = _full_name(namespace, node)
    files = [path for path in params_files if path]
    try:
        values = section_parameters(read_sections(files, {fqn: overrides}), fqn)
    except ParamsFileError as err:
        raise RuntimeError(str(err)) from None
    for name, value in overrides.items():
        if values[name] != value:
            raise RuntimeError(
                f'{" + ".join(files)}: {node}.{name}: the launch sets {value!r}, but a later '
                f'section of the file gives {node} {values[name]!r} (ROS merges the launch\'s '
                f'parameters into the section {fqn}, where it first appears): set it in one '
                'place')
    return values


def _full_name(namespace: str, node: str) -> str:
    """``/robot1/vehicle_sim`` for ``node`` in ``namespace`` (``/robot1``, ``robot1`` or empty)."""
    return '/' + '/'.join(part for part in (namespace.strip('/'), node) if part)


def check_some_section_applies(params_files: Sequence[str], namespace: str,
                               nodes: Sequence[str]) -> None:
    """RuntimeError naming the file when one of ``params_files`` (empty names skipped) has
    sections but ROS gives none of them to any of the launch's ``nodes`` in ``namespace``
    (:func:`wheelsim.core.params_file.none_applies`: a mistyped section name, or one for another
    namespace, would leave every node at its defaults without a word)."""
    fqns = [_full_name(namespace, node) for node in nodes]
    for path in params_files:
        if not path:
            continue
        try:
            problem = none_applies(read_sections([path]), fqns)
        except ParamsFileError as err:
            raise RuntimeError(str(err)) from None
        if problem:
            raise RuntimeError(f'{path}: {problem}: a section vehicle_sim is for /vehicle_sim '
                               'only, /**/vehicle_sim for a vehicle_sim in any namespace; '
                               'nothing was started')


def vehicle_sim_values(params_files: Sequence[str], namespace: str,
                       overrides: Mapping[str, Any]) -> dict[str, Any]:
    """:func:`node_values` of vehicle_sim."""
    return node_values(params_files, namespace, 'vehicle_sim', overrides)


def is_shipped_preset(params_file: str) -> bool:
    """Whether ``params_file`` holds what one of wheelsim's shipped params files holds (read
    from the installed share folder, its source or a link to either: the same bytes)."""
    try:
        given = Path(params_file).read_bytes()
    except OSError:  # the check of the file itself says why
        return False
    return any(path.read_bytes() == given for path in shipped_params_dir().glob('*.yaml'))


def check_not_overridden(params_file: str, overrides_file: str, nodes: Sequence[str],
                         why: str) -> None:
    """RuntimeError naming each parameter that ``params_file`` gives one of ``nodes`` (no
    namespace) and that ``overrides_file``, applied over it by the launch, sets to another
    value (it would be replaced without a word); ``why`` says why the launch sets them. A
    value the two files give alike is taken."""
    replaced = []
    for node in nodes:
        given = node_values([params_file], '', node, {})
        for name, value in node_values([overrides_file], '', node, {}).items():
            if name in given and given[name] != value:
                replaced.append(f'{node}.{name}: {given[name]!r}, which this launch sets to '
                                f'{value!r}')
    if replaced:
        raise RuntimeError(f'{params_file}: {"; ".join(replaced)} ({overrides_file}: {why}): '
                           'remove them from the file; nothing was started')


def check_node_values(label: str, node: str, values: Mapping[str, Any]) -> None:
    """RuntimeError ``<label>: <node>.<parameter>: <what is allowed>`` unless wheelsim node
    ``node`` (its module in :mod:`wheelsim.nodes`) starts with ``values``: each parameter it
    declares in its range, together its rules across parameters, as the node and ``wheelsim
    run`` check them. A parameter it does not declare is left out: the node warns and goes on.
    """
    from wheelsim.run.scenario import ScenarioError, check_node_parameters

    module = importlib.import_module(f'wheelsim.nodes.{node}')
    node_specs = module.parameter_specs()
    declared = {spec.name for spec in node_specs}
    try:
        check_node_parameters(label, f'{node}.', node,
                              {k: v for k, v in values.items() if k in declared},
                              node_specs, module.check_parameters)
    except ScenarioError as err:
        raise RuntimeError(str(err)) from None


def simulated_vehicle(label: str, sim_values: Mapping[str, Any]
                      ) -> tuple[VehicleConfig, VehicleSimSettings]:
    """vehicle_sim's vehicle and settings for ``sim_values``; a bad value raises RuntimeError
    naming ``label`` (the params file) and the parameter."""
    try:
        return vehicle_config_from_params(sim_values), from_flat(VehicleSimSettings, sim_values)
    except ParameterError as err:
        raise RuntimeError(f'{label}: vehicle_sim: {err}') from None


def robot_description(label: str, sim_values: Mapping[str, Any]) -> str:
    """The URDF that vehicle_sim publishes with ``sim_values``: the vehicle, its laser and its
    footprint frame (as the node builds it)."""
    return vehicle_sim_urdf(*simulated_vehicle(label, sim_values))
