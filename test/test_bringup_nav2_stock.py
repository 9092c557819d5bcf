"""Stock Nav2 (nav2_bringup.launch.py): wheelsim's files against the Nav2 facts they rely on.

Besides running Nav2 1.3.13 for real (test/nav2, Jazzy), the stock bring-up of both releases is
checked statically against test/nav2_upstream_facts.yaml, a table of what navigation2 1.3.13
(Jazzy) and 1.4.2 (Kilted) hold, each fact with file:line at the tag (tools/check_nav2_facts.py
re-checks the table against a navigation2 clone): every override key is a stock key or a
parameter the node declares, every argument passed to bringup_launch.py exists in that distro,
and the frames and topics of the stock parameters are the ones wheelsim provides
(docs/interface.md). The merging itself runs here, and ROS' own parameter parser reads the
merged file.
"""

from __future__ import annotations

import math
import re

import pytest
import yaml
from bringup_support import (
    EXTERNAL_EXECUTABLES,
    PARAMS_DIR,
    REPO,
    SUPPORTED_DISTROS,
    VEHICLE_PRESETS,
    params_file_overrides,
    parse_launch_file,
)

from wheelsim.bringup.nav2_stock import (
    KILTED_ARGUMENTS,
    PLACEHOLDERS,
    fill_placeholders,
    laser_height_warnings,
    merge_overrides,
    nav2_pace_warning,
    nav2_parameters,
    vehicle_values,
)
from wheelsim.bringup.params_files import (
    robot_description,
    simulated_vehicle,
    vehicle_sim_values,
)
from wheelsim.core.params_file import node_parameters

FACTS = yaml.safe_load((REPO / 'test' / 'nav2_upstream_facts.yaml').read_text())
NAV2_DIR = PARAMS_DIR / 'nav2'
WHEELSIM_SIDE = NAV2_DIR / 'stock_wheelsim.yaml'
LAUNCH = REPO / 'launch' / 'nav2_bringup.launch.py'
#: What wheelsim provides (docs/interface.md): frames, vehicle_sim's and localization's
#: topics (relative names, no namespace under this launch).
WHEELSIM_FRAMES = {'map', 'odom', 'base_link'}
VEHICLE_SIM_IN_CMD_VEL = 'cmd_vel'
VEHICLE_SIM_OUT_SCAN = 'scan'
LOCALIZATION_OUT_ODOM = 'odom'


def stock_value(key: str, distro: str):
    value = FACTS['stock_values']['keys'][key]['value']
    return value[distro] if isinstance(value, dict) else value


def leaf_keys(tree, path=''):
    """Dotted keys of every leaf of a params file tree, without ``ros__parameters``."""
    for key, value in tree.items():
        here = path if key == 'ros__parameters' else (f'{path}.{key}' if path else str(key))
        if isinstance(value, dict):
            yield from leaf_keys(value, here)
        else:
            yield here


def stock_tree_from_facts(distro: str) -> dict:
    """A params tree holding exactly the stock values the facts table records for ``distro``
    (node paths of one or two levels, as in nav2_params.yaml)."""
    tree: dict = {}
    for key in FACTS['stock_values']['keys']:
        parts = key.split('.')
        nodes = 2 if parts[0] in ('local_costmap', 'global_costmap') else 1
        node = tree
        for part in parts[:nodes]:
            node = node.setdefault(part, {})
        node = node.setdefault('ros__parameters', {})
        for part in parts[nodes:-1]:
            node = node.setdefault(part, {})
        node[parts[-1]] = stock_value(key, distro)
    return tree


# --- the merge ------------------------------------------------------------------------------

def test_overrides_merge_key_by_key_and_keep_every_other_stock_value():
    stock = {'amcl': {'ros__parameters': {'base_frame_id': 'base_footprint', 'alpha1': 0.2}},
             'local_costmap': {'local_costmap': {'ros__parameters': {'robot_radius': 0.22}}}}
    overrides = {'amcl': {'ros__parameters': {'alpha1': 0.5, 'initial_pose': {'x': 1.0}}},
                 'local_costmap': {'local_costmap': {'ros__parameters': {'footprint': 'F'}}}}
    merged = merge_overrides(stock, overrides)
    assert merged['amcl']['ros__parameters'] == {'base_frame_id': 'base_footprint',
                                                 'alpha1': 0.5, 'initial_pose': {'x': 1.0}}
    assert merged['local_costmap']['local_costmap']['ros__parameters'] == {
        'robot_radius': 0.22, 'footprint': 'F'}
    assert stock['amcl']['ros__parameters']['alpha1'] == 0.2  # the input is not changed
    assert fill_placeholders({'a': ['F', {'b': 'F'}], 'c': 'G'}, {'F': 1}) == {
        'a': [1, {'b': 1}], 'c': 'G'}


@pytest.mark.parametrize('overrides, message', [
    ({'amlc': {'ros__parameters': {}}}, 'amlc: no such node in the stock Nav2 parameters'),
    ({'amcl': {'ros__parameters': {'alpha1': {'x': 1}}}},
     'amcl.ros__parameters.alpha1: a mapping over the stock value 0.2'),
])
def test_a_misspelt_node_or_a_mapping_over_a_value_is_an_error_naming_it(overrides, message):
    with pytest.raises(ValueError, match=message):
        merge_overrides({'amcl': {'ros__parameters': {'alpha1': 0.2}}}, overrides)


def test_an_unknown_placeholder_is_an_error_naming_the_file(tmp_path):
    stock, overrides = tmp_path / 'stock.yaml', tmp_path / 'overrides.yaml'
    stock.write_text('amcl:\n  ros__parameters:\n    alpha1: 0.2\n')
    overrides.write_text('amcl:\n  ros__parameters:\n    alpha1: WHEELSIM_ALPHA\n')
    with pytest.raises(ValueError, match=r"overrides.yaml: unknown placeholder\(s\) "
                                         r"\['WHEELSIM_ALPHA'\]"):
        nav2_parameters(str(stock), str(overrides), {'WHEELSIM_FOOTPRINT': '[]'})


# found in review: a missing nav2_params_file or nav2_overrides_file failed the launch with a
# bare "[Errno 2] No such file or directory", naming neither the argument nor what was wrong
@pytest.mark.parametrize('argument', ['nav2_params_file', 'nav2_overrides_file'])
@pytest.mark.parametrize('content, problem', [
    (None, r'not a readable YAML file \(\[Errno 2\] No such file or directory: .*\)'),
    ('amcl: [1,\n', r'not a readable YAML file \(.*\)'),
    (b'\xff\xfe', r'not a readable YAML file \(.*codec can.t decode.*\)'),
    ('- amcl\n', r'not a ROS parameters file \(a mapping of nodes\)')],
    ids=['missing', 'not YAML', 'not UTF-8', 'a list'])
def test_a_nav2_file_that_cannot_be_read_is_an_error_naming_the_argument(
        tmp_path, argument, content, problem):
    files = {'nav2_params_file': tmp_path / 'stock.yaml',
             'nav2_overrides_file': tmp_path / 'overrides.yaml'}
    for path in files.values():
        path.write_text('amcl:\n  ros__parameters:\n    alpha1: 0.2\n')
    bad = files[argument]
    bad.unlink()
    if isinstance(content, bytes):
        bad.write_bytes(content)
    elif content is not None:
        bad.write_text(content)
    with pytest.raises(RuntimeError, match=f'^{argument}:={re.escape(str(bad))}: {problem}; '
                                           'nothing was started$'):
        nav2_parameters(*(str(path) for path in files.values()), {'WHEELSIM_FOOTPRINT': '[]'})


# --- the override files against the facts ---------------------------------------------------

@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_every_override_is_a_stock_key_or_a_declared_parameter_of_that_release(distro):
    overrides = yaml.safe_load((NAV2_DIR / f'stock_{distro}.yaml').read_text())
    known = set(FACTS['stock_values']['keys']) | {
        key for key, fact in FACTS['declared_parameters'].items() if distro in fact}
    keys = list(leaf_keys(overrides))
    assert keys, 'no override at all'
    unknown = [key for key in keys if key not in known]
    assert not unknown, f'stock_{distro}.yaml: not in nav2_upstream_facts.yaml: {unknown}'
    placeholders = {v for v in map(str, _leaves(overrides)) if v.startswith('WHEELSIM_')}
    assert placeholders <= set(PLACEHOLDERS), placeholders - set(PLACEHOLDERS)


def _leaves(tree):
    for value in tree.values():
        yield from (_leaves(value) if isinstance(value, dict) else [value])


@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_the_merged_file_gives_the_nodes_the_vehicle_as_ros_parses_it(distro, tmp_path,
                                                                     ros_domain_id):
    """The stock values of the facts table with the overrides merged in, read by rcl's parser:
    the costmaps get vehicle_sim's footprint, AMCL the start pose, the rest stays stock."""
    stock = tmp_path / 'nav2_params.yaml'
    stock.write_text(yaml.safe_dump(stock_tree_from_facts(distro)))
    preset = PARAMS_DIR / 'indoor_differential.yaml'
    sim_values = vehicle_sim_values([str(preset), str(WHEELSIM_SIDE)], '',
                                    {'initial_pose.x': 1.5, 'initial_pose.yaw': 3.5})
    merged = tmp_path / 'merged.yaml'
    merged.write_text(yaml.safe_dump(nav2_parameters(
        str(stock), str(NAV2_DIR / f'stock_{distro}.yaml'),
        vehicle_values(str(preset), sim_values))))
    amcl = params_file_overrides([merged], 'amcl')
    assert amcl['set_initial_pose'] is True
    assert (amcl['initial_pose.x'], amcl['initial_pose.y']) == (1.5, 0.0)
    assert amcl['initial_pose.yaw'] == pytest.approx(3.5 - 2 * math.pi)
    assert amcl['base_frame_id'] == 'base_footprint'
    costmap = params_file_overrides([merged], 'local_costmap', namespace='/local_costmap')
    corners = yaml.safe_load(costmap['footprint'])
    assert len(corners) >= 3 and all(len(c) == 2 for c in corners)
    half_track = 0.25  # indoor_differential: 0.5 m track, the footprint covers the wheels
    assert max(y for _, y in corners) >= half_track
    assert costmap['robot_radius'] == 0.22  # still there; a footprint wins over it
    assert params_file_overrides([merged], 'collision_monitor')['cmd_vel_out_topic'] == 'cmd_vel'


@pytest.mark.parametrize('preset', VEHICLE_PRESETS, ids=lambda p: p.stem)
def test_every_preset_gives_a_footprint_and_a_urdf_with_base_footprint(preset):
    sim_values = vehicle_sim_values([str(preset), str(WHEELSIM_SIDE)], '', {})
    values = vehicle_values(preset.name, sim_values)
    assert set(values) == set(PLACEHOLDERS)
    corners = yaml.safe_load(values['WHEELSIM_FOOTPRINT'])
    if sim_values.get('footprint'):
        flat = [float(v) for corner in corners for v in corner]
        assert flat == pytest.approx(list(sim_values['footprint']), abs=1e-5)
    assert '<link name="base_footprint"' in robot_description(preset.name, sim_values)


#: The stock costmap layers that drop a preset's scan: a laser above the local costmap's voxel
#: grid (0.8 m) or both costmaps' max_obstacle_height (2 m) leaves them blind.
BLIND_LAYERS = {'indoor_differential': [], 'mecanum_omni': [],
                'all_vehicles': ["local_costmap's voxel_layer"],
                'ackermann_car': ["local_costmap's voxel_layer"],
                'forklift': ["local_costmap's voxel_layer", "global_costmap's obstacle_layer"]}


@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_a_laser_at_the_top_of_the_voxel_grid_is_dropped(distro):
    """Found in review: VoxelLayer keeps a point only below the grid's top (worldToMap3D:
    mz < size_z), so a laser at exactly 16 x 0.05 m is dropped."""
    [warning] = laser_height_warnings(stock_tree_from_facts(distro), 0.8)
    assert "local_costmap's voxel_layer" in warning
    assert laser_height_warnings(stock_tree_from_facts(distro), 0.79) == []


@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
@pytest.mark.parametrize('preset', VEHICLE_PRESETS, ids=lambda p: p.stem)
def test_a_laser_the_stock_costmaps_cannot_see_is_warned_of(preset, distro):
    sim_values = vehicle_sim_values([str(preset), str(WHEELSIM_SIDE)], '', {})
    scan_z_m = simulated_vehicle(preset.name, sim_values)[1].scan.z
    warnings = laser_height_warnings(stock_tree_from_facts(distro), scan_z_m)
    assert [w for layer in BLIND_LAYERS[preset.stem] for w in warnings if layer in w] == warnings
    assert len(warnings) == len(BLIND_LAYERS[preset.stem])
    for warning in warnings:
        assert f'the laser is {scan_z_m:g} m above the base frame' in warning
        assert ('origin_z + z_voxels x z_resolution = 0.8 m' in warning
                or 'scan.max_obstacle_height = 2 m' in warning)


def test_a_laser_below_a_layer_s_min_obstacle_height_is_warned_of_too():
    layer = {'plugin': 'nav2_costmap_2d::ObstacleLayer', 'observation_sources': 'front rear',
             'front': {'min_obstacle_height': 0.3, 'max_obstacle_height': 2.0},
             'rear': {'data_type': 'PointCloud2'}}
    tree = {'global_costmap': {'global_costmap': {'ros__parameters': {
        'plugins': ['obstacle_layer'], 'obstacle_layer': layer}}}}
    assert laser_height_warnings(tree, 2.0) == []  # max_obstacle_height keeps its bound
    [warning] = laser_height_warnings(tree, 0.1)
    assert ("global_costmap's obstacle_layer keeps of front (front.min_obstacle_height = 0.3 m)"
            in warning)
    assert laser_height_warnings(tree, 0.3) == []


def test_a_pace_other_than_real_time_is_warned_of():
    """Nav2's loops run on wall time (controller_server.cpp: rclcpp::WallRate, 1.3.13 and
    1.4.2): at 4x each gets a quarter of its cycles per simulated second."""
    assert nav2_pace_warning(1.0) is None
    warning = nav2_pace_warning(4.0)
    assert warning.startswith("wheelsim: warning: real_time_factor 4: Nav2's controller")
    assert 'each gets 0.25 x its cycles' in warning
    assert 'a vanishing share its cycles' in nav2_pace_warning(0.0)


def test_the_wheelsim_side_makes_vehicle_sim_the_clock_at_20_hz_with_base_footprint():
    values = node_parameters([WHEELSIM_SIDE], '/vehicle_sim')
    assert values == {'be_reference_clock': True, 'footprint_frame': 'base_footprint',
                      'clock_rate': 20.0, 'pub_rate': 20.0}


# --- frames, topics and the command chain -----------------------------------------------------

@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_stock_frames_and_topics_are_the_ones_wheelsim_provides(distro):
    footprint_frame = node_parameters([WHEELSIM_SIDE], '/vehicle_sim')['footprint_frame']
    keys = FACTS['stock_values']['keys']
    for key in keys:
        value = stock_value(key, distro)
        if key.endswith(('frame', 'frame_id')):
            assert value in WHEELSIM_FRAMES | {footprint_frame}, (key, value)
    assert stock_value('collision_monitor.base_frame_id', distro) == footprint_frame
    assert stock_value('amcl.base_frame_id', distro) == footprint_frame
    scans = [stock_value(k, distro) for k in keys if k.endswith(('scan.topic', 'scan_topic'))]
    assert len(scans) == 4 and {s.lstrip('/') for s in scans} == {VEHICLE_SIM_OUT_SCAN}
    assert {stock_value(k, distro).lstrip('/') for k in keys if k.endswith('odom_topic')} == {
        LOCALIZATION_OUT_ODOM}
    # controller/behaviours -> cmd_vel_nav -> velocity smoother -> cmd_vel_smoothed ->
    # collision monitor -> cmd_vel -> vehicle_sim
    sources = FACTS['sources']
    assert all(distro in sources[name] for name in (
        'controller_cmd_vel_remapped_to_cmd_vel_nav', 'behaviors_cmd_vel_remapped_to_cmd_vel_nav',
        'velocity_smoother_reads_cmd_vel_nav'))
    smoothed = sources['velocity_smoother_publishes_cmd_vel_smoothed']['text'].strip('"')
    assert stock_value('collision_monitor.cmd_vel_in_topic', distro) == smoothed
    assert stock_value('collision_monitor.cmd_vel_out_topic', distro) == VEHICLE_SIM_IN_CMD_VEL


def test_the_launch_passes_bringup_only_arguments_of_each_release():
    launch = parse_launch_file(LAUNCH)
    [bringup] = [i for i in launch.includes if i.external]
    assert bringup.external == ['<share:nav2_bringup>/launch/bringup_launch.py']
    assert bringup.external[0].split('>/')[1] == FACTS['launch_arguments']['file'].split(
        'nav2_bringup/')[1]
    names = FACTS['launch_arguments']['names']
    kilted_only = set(KILTED_ARGUMENTS)
    for distro in SUPPORTED_DISTROS:
        declared = {name for name, lines in names.items() if distro in lines}
        passed = set(bringup.arguments) | (kilted_only if distro != 'jazzy' else set())
        assert passed <= declared, f'{distro}: bringup_launch.py declares no {passed - declared}'
    assert not kilted_only & {n for n, lines in names.items() if 'jazzy' in lines}
    assert {'use_localization', 'use_sim_time', 'params_file', 'map'} <= set(bringup.arguments)


def test_the_launch_starts_the_map_server_as_nav2_s_loopback_simulation_does():
    started = {(node.package, node.executable) for node in parse_launch_file(LAUNCH).nodes}
    assert started == {('nav2_map_server', 'map_server'),
                       ('nav2_lifecycle_manager', 'lifecycle_manager')}
    assert started <= set(EXTERNAL_EXECUTABLES)
    text = LAUNCH.read_text()
    assert "name='lifecycle_manager_map_server'" in text  # the loopback simulation's name
    for parameter in ('yaml_filename', 'autostart', 'node_names'):
        assert f"'{parameter}'" in text
    assert {'map_server.yaml_filename', 'lifecycle_manager.autostart',
            'lifecycle_manager.node_names'} <= set(FACTS['declared_parameters'])


def test_facts_name_both_releases_and_every_fact_has_both_or_says_which():
    assert {d: r['tag'] for d, r in FACTS['releases'].items()} == {
        'jazzy': '1.3.13', 'kilted': '1.4.2'}
    for key, fact in FACTS['stock_values']['keys'].items():
        assert set(SUPPORTED_DISTROS) <= set(fact), key
    for key, fact in FACTS['declared_parameters'].items():
        assert set(SUPPORTED_DISTROS) <= set(fact), key


def test_the_docs_name_the_checked_releases():
    for doc in (REPO / 'docs' / 'bringup.md', REPO / 'README.md'):
        text = doc.read_text()
        assert 'nav2_bringup.launch.py' in text, doc.name
    bringup = (REPO / 'docs' / 'bringup.md').read_text()
    for release in FACTS['releases'].values():
        assert release['tag'] in bringup and release['commit'][:12] in bringup
