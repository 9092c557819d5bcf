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

import yaml

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
    """The stock file (the launch's ``nav2_params_file``) with the overrides
    (``nav2_overrides_file``) merged in and the placeholders filled. RuntimeError naming the
    argument and the file for a file that cannot be read as a ROS parameters file."""
    trees = []
    for argument, name in (('nav2_params_file', stock_file),
                           ('nav2_overrides_file', overrides_file)):
        try:
            with open(name, encoding='utf-8') as stream:
                tree = yaml_numbers.load(stream) or {}
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
            problem = ' '.join(str(err).split())
            raise RuntimeError(f'{argument}:={name}: not a readable YAML file ({problem}); '
                               'nothing was started') from None
        if not isinstance(tree, Mapping):
            raise RuntimeError(f'{argument}:={name}: not a ROS parameters file (a mapping of '
                               'nodes); nothing was started')
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


#: Nav2's costmap layers that take a laser scan, with their own height limits (navigation2
#: 1.3.13 and 1.4.2, nav2_costmap_2d/plugins): the layer's ``min/max_obstacle_height`` (0, 2 m),
#: each observation source's (0, 0 m), and, for the voxel layer, the grid's top
#: ``origin_z + z_voxels * z_resolution`` (0 + 10 x 0.2 m).
OBSTACLE_LAYERS = {'nav2_costmap_2d::ObstacleLayer': False, 'nav2_costmap_2d::VoxelLayer': True}


def _heights_kept(layer: Mapping[str, Any], source_name: str, voxels: bool
                  ) -> tuple[float, float, str, str, bool]:
    """(lowest, highest) height [m] at which ``layer`` keeps a point of its source
    ``source_name``, the parameters that set each (the source's first where they tie), and
    whether the highest is kept (the voxel grid's top is not: VoxelLayer's worldToMap3D needs
    ``mz < z_voxels``)."""
    source = layer[source_name]
    limits = [(float(source.get('min_obstacle_height', 0.0)),
               float(source.get('max_obstacle_height', 0.0)), f'{source_name}.'),
              (float(layer.get('min_obstacle_height', 0.0)),
               float(layer.get('max_obstacle_height', 2.0)), '')]
    low, low_prefix = max(((low, prefix) for low, _, prefix in limits), key=lambda x: x[0])
    high, high_prefix = min(((high, prefix) for _, high, prefix in limits), key=lambda x: x[0])
    high_why = f'{high_prefix}max_obstacle_height'
    if voxels:
        top_m = (float(layer.get('origin_z', 0.0))
                 + int(layer.get('z_voxels', 10)) * float(layer.get('z_resolution', 0.2)))
        if top_m <= high:
            return low, top_m, f'{low_prefix}min_obstacle_height', (
                'origin_z + z_voxels x z_resolution'), False
    return low, high, f'{low_prefix}min_obstacle_height', high_why, True


def laser_height_warnings(parameters: Mapping[str, Any], scan_z_m: float) -> list[str]:
    """One warning per costmap layer of ``parameters`` (a Nav2 params file's tree) that drops
    every point of a laser scan taken ``scan_z_m`` above the base frame (the scan lies in that
    plane): a laser above a voxel grid or a ``max_obstacle_height`` leaves the costmap blind."""
    warnings = []
    for node in ('local_costmap', 'global_costmap'):
        outer = parameters.get(node)
        inner = outer.get(node) if isinstance(outer, Mapping) else None
        values = inner.get('ros__parameters') if isinstance(inner, Mapping) else None
        if not isinstance(values, Mapping):
            continue
        for name in values.get('plugins') or ():
            layer = values.get(name)
            if not isinstance(layer, Mapping) or layer.get('plugin') not in OBSTACLE_LAYERS:
                continue
            for source_name in str(layer.get('observation_sources', '')).split():
                source = layer.get(source_name)
                if not isinstance(source, Mapping) or source.get(
                        'data_type', 'LaserScan') != 'LaserScan':
                    continue
                low, high, low_why, high_why, top_kept = _heights_kept(
                    layer, source_name, OBSTACLE_LAYERS[layer['plugin']])
                if not low <= scan_z_m < high and not (top_kept and scan_z_m == high):
                    limit = (f'{high_why} = {high:g} m' if scan_z_m > high
                             else f'{low_why} = {low:g} m')
                    warnings.append(
                        f'wheelsim: warning: the laser is {scan_z_m:g} m above the base frame, '
                        f'out of what {node}\'s {name} keeps of {source_name} ({limit}): that '
                        'costmap sees no obstacle in the scan; give nav2_params_file:= with '
                        'that layer raised to the laser')
    return warnings


def nav2_pace_warning(real_time_factor: float) -> str | None:
    """The warning for Nav2 on a /clock ``real_time_factor`` times real time (not 1): Nav2's
    controller server, behaviours, behaviour tree, costmap updates and velocity smoother run on
    wall time (``rclcpp::WallRate`` or a wall timer, navigation2 1.3.13 and 1.4.2), so each gets
    ``1 / real_time_factor`` of its cycles per simulated second (0: as fast as possible)."""
    if real_time_factor == 1.0:
        return None
    share = ('a vanishing share' if real_time_factor == 0.0
             else f'{1.0 / real_time_factor:.3g} x')
    return (f'wheelsim: warning: real_time_factor {real_time_factor:g}: Nav2\'s controller, '
            'behaviours, behaviour tree, costmap updates and velocity smoother run on wall time, '
            f'so each gets {share} its cycles (and the smoother its accelerations) per simulated '
            'second: tracking at this pace is not what it is at 1 (docs/bringup.md)')
