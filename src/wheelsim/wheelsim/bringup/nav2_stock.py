"""Stock Nav2 parameters with wheelsim's overrides: what nav2_bringup.launch.py gives Nav2.

nav2_bringup's ``bringup_launch.py`` takes one ``params_file``. nav2_bringup.launch.py writes it
from two files: Nav2's own ``nav2_bringup/params/nav2_params.yaml`` of the installed release,
unchanged, and wheelsim's overrides of that release (``params/nav2/stock_<distro>.yaml``),
merged key by key over it. Values the overrides take from the simulated vehicle are written as
placeholders (:data:`PLACEHOLDERS`), filled from the vehicle_sim parameters the launch starts
the simulator with, so the costmaps' footprint is the one vehicle_sim collides with and AMCL
starts where the vehicle does.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wheelsim.bringup.params_files import simulated_vehicle
from wheelsim.core import yaml_numbers
from wheelsim.core.world.footprint import footprint_of

#: Placeholder -> what it becomes (the vehicle's, from vehicle_sim's parameters).
#: bringup_launch.py arguments only Kilted's has (navigation2 1.4.2): the stock parameters
#: enable keepout and speed filters that need masks; wheelsim has none, as Nav2's loopback
#: simulation (tb3_loopback_simulation_launch.py) passes them.
KILTED_ARGUMENTS = {'use_keepout_zones': 'False', 'use_speed_zones': 'False'}
PLACEHOLDERS = {
    'WHEELSIM_FOOTPRINT': 'footprint polygon in the base frame, as Nav2\'s footprint string',
    'WHEELSIM_START_X': 'initial_pose.x [m], map frame',
    'WHEELSIM_START_Y': 'initial_pose.y [m], map frame',
    'WHEELSIM_START_YAW': 'initial_pose.yaw [rad], map frame',
}


def vehicle_values(label: str, sim_values: Mapping[str, Any]) -> dict[str, Any]:
    """Each placeholder's value for the vehicle vehicle_sim simulates with ``sim_values``."""
    config, settings = simulated_vehicle(label, sim_values)
    corners = footprint_of(settings.footprint, config).corners
    start = settings.initial_pose
    return {
        'WHEELSIM_FOOTPRINT': '[' + ', '.join(f'[{x:.6g}, {y:.6g}]' for x, y in corners) + ']',
        'WHEELSIM_START_X': float(start.x),
        'WHEELSIM_START_Y': float(start.y),
        'WHEELSIM_START_YAW': float(math.remainder(start.yaw, 2.0 * math.pi)),
    }


def merge_overrides(stock: Mapping[str, Any], overrides: Mapping[str, Any],
                    path: str = '') -> dict[str, Any]:
    """``stock`` with ``overrides`` merged in key by key (mappings merge, anything else is
    replaced). A top-level key (a node) that ``stock`` lacks, or a mapping over a value that is
    not one, raises ValueError naming the key: a misspelt node would otherwise be ignored."""
    merged = dict(stock)
    for key, value in overrides.items():
        where = f'{path}.{key}' if path else str(key)
        if not path and key not in stock:
            raise ValueError(f'{where}: no such node in the stock Nav2 parameters '
                             f'(nodes: {", ".join(sorted(map(str, stock)))})')
        if isinstance(value, Mapping):
            base = stock.get(key, {})
            if not isinstance(base, Mapping):
                raise ValueError(f'{where}: a mapping over the stock value {base!r}')
            merged[key] = merge_overrides(base, value, where)
        else:
            merged[key] = value
    return merged


def fill_placeholders(tree: Any, values: Mapping[str, Any]) -> Any:
    """``tree`` with every string equal to a key of ``values`` replaced by its value."""
    if isinstance(tree, Mapping):
        return {key: fill_placeholders(value, values) for key, value in tree.items()}
    if isinstance(tree, list):
        return [fill_placeholders(value, values) for value in tree]
    if isinstance(tree, str) and tree in values:
        return values[tree]
    return tree


def nav2_parameters(stock_file: str, overrides_file: str,
                    vehicle: Mapping[str, Any]) -> dict[str, Any]:
    """The stock file with the overrides merged in and the placeholders filled."""
    trees = []
    for name in (stock_file, overrides_file):
        with open(name) as stream:
            tree = yaml_numbers.load(stream) or {}
        if not isinstance(tree, Mapping):
            raise ValueError(f'{name}: not a ROS parameters file (a mapping of nodes)')
        trees.append(tree)
    try:
        merged = merge_overrides(*trees)
    except ValueError as err:
        raise ValueError(f'{overrides_file}: {err}') from None
    unknown = _placeholders_in(merged) - set(vehicle)
    if unknown:
        raise ValueError(f'{overrides_file}: unknown placeholder(s) {sorted(unknown)}; known: '
                         f'{sorted(PLACEHOLDERS)}')
    return fill_placeholders(merged, vehicle)


def _placeholders_in(tree: Any) -> set[str]:
    if isinstance(tree, Mapping):
        return set().union(*map(_placeholders_in, tree.values()))
    if isinstance(tree, list):
        return set().union(*map(_placeholders_in, tree))
    return {tree} if isinstance(tree, str) and tree.startswith('WHEELSIM_') else set()


def write_nav2_parameters(parameters: Mapping[str, Any]) -> str:
    """Write ``parameters`` to a new file in a fresh temporary folder; return its path."""
    folder = Path(tempfile.mkdtemp(prefix='wheelsim-nav2-'))
    path = folder / 'nav2_params.yaml'
    path.write_text(yaml_numbers.dump(dict(parameters), sort_keys=False))
    return str(path)
