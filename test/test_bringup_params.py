"""Params files: every preset is read by ROS (rcl) and accepted by the nodes it configures.

A misspelled or unknown key fails (with the closest declared name); a value out of range or a
broken cross-field rule fails because the real node classes are built from the file. The URDF of
every preset parses, its waypoints lie in free space of the shipped map, and the Nav2 files
configure exactly the Nav2 servers nav2.launch.py starts, with the cmd_vel type of each distro.
"""


import numpy as np
import pytest
import yaml
from bringup_support import (
    PARAMS_DIR,
    REPO,
    SUPPORTED_DISTROS,
    VEHICLE_PRESETS,
    WHEELSIM_NODES,
    built_node,
    node_module,
    params_file_overrides,
    parse_launch_file,
    preset_vehicles,
    ros_context,
    section_node_names,
)
from urdf_parser_py.urdf import URDF

from wheelsim.bringup.params_files import vehicle_sim_values
from wheelsim.core.params import flatten, from_flat, unknown_keys
from wheelsim.core.planning import config as planning
from wheelsim.core.tracking import config as tracking
from wheelsim.core.vehicle.config import MODELS, vehicle_config_from_params
from wheelsim.core.vehicle.description import describe
from wheelsim.core.vehicle.joints import wheel_layout
from wheelsim.core.vehicle.urdf import build_urdf
from wheelsim.nodes.planner import parameter_specs as planning_specs

NAV2_DIR = PARAMS_DIR / 'nav2'
NAV2_COMMON = NAV2_DIR / 'reduced.yaml'
MAP_YAML = PARAMS_DIR / 'maps' / 'room.yaml'
#: Parameters every ROS node accepts besides the ones it declares.
ROS_BUILTIN = ('use_sim_time', 'start_type_description_service')


def declared_names(node: str) -> list[str]:
    return [spec.name for spec in node_module(node).parameter_specs()]


def unknown_parameters(node: str, given: dict) -> list[str]:
    names = [n for n in given if n not in ROS_BUILTIN and not n.startswith('qos_overrides.')]
    return [f'{key} (did you mean {hint}?)' if hint else key
            for key, hint in unknown_keys(declared_names(node), names)]


def test_the_issue_s_presets_exist():
    names = {p.stem for p in VEHICLE_PRESETS}
    assert {'indoor_differential', 'ackermann_car', 'forklift', 'mecanum_omni',
            'all_vehicles'} <= names
    assert {f'{kind}_{distro}' for distro in SUPPORTED_DISTROS for kind in ('reduced', 'stock')
            } | {'reduced', 'stock_wheelsim'} <= {p.stem for p in NAV2_DIR.glob('*.yaml')}


@pytest.mark.parametrize('path', VEHICLE_PRESETS, ids=lambda p: p.name)
def test_preset_sections_are_for_wheelsim_nodes(path):
    unknown = set(section_node_names(path)) - set(WHEELSIM_NODES) - {'**'}
    assert not unknown, f'{path.name}: sections for nodes no launch file starts: {unknown}'


@pytest.mark.parametrize('node', WHEELSIM_NODES)
@pytest.mark.parametrize('path', VEHICLE_PRESETS, ids=lambda p: p.name)
def test_preset_has_no_unknown_key_and_builds_the_node(path, node, ros_domain_id):
    given = params_file_overrides([path], node, namespace='/robot1')
    root = params_file_overrides([path], node)
    assert repr(sorted(given.items())) == repr(sorted(root.items())), 'namespace changes values'
    unknown = unknown_parameters(node, given)
    assert not unknown, f'{path.name}: {node} declares no parameter {unknown}'
    with ros_context([path]) as context, built_node(node, context):  # a bad value raises
        pass


def test_the_launch_files_read_a_robot_s_nested_section_and_name_a_bad_file(tmp_path):
    """Found in review: the launch files read top-level keys only (a robot's nested section was
    ignored) and a value before ros__parameters was a traceback."""
    path = tmp_path / 'robot.yaml'
    path.write_text('robot1:\n  vehicle_sim:\n    ros__parameters: {model: omni}\n')
    assert vehicle_sim_values([str(path)], 'robot1', {'seed': 2}) == {'model': 'omni', 'seed': 2}
    assert vehicle_sim_values([str(path)], '', {}) == {}
    path.write_text('vehicle_sim: 3\n')
    with pytest.raises(RuntimeError, match=f'^{path}: section vehicle_sim: a value before '
                                           'ros__parameters'):
        vehicle_sim_values([str(path)], '', {})


def test_a_launch_value_a_later_section_of_the_file_replaces_is_refused(tmp_path):
    """Found in review: the launch files took their own values (model:=omni) to win, but ROS
    merges them into the file's section of the node, and a later /** section wins: the URDF
    and the checks described another vehicle than the node ran."""
    path = tmp_path / 'robot.yaml'
    path.write_text('/vehicle_sim: {ros__parameters: {seed: 1}}\n'
                    '/**/vehicle_sim: {ros__parameters: {model: bicycle}}\n')
    with pytest.raises(RuntimeError, match=f"^{path}: vehicle_sim.model: the launch sets 'omni', "
                                           "but a later section of the file gives vehicle_sim "
                                           "'bicycle'"):
        vehicle_sim_values([str(path)], '', {'model': 'omni'})
    assert vehicle_sim_values([str(path)], '', {'seed': 2}) == {'seed': 2, 'model': 'bicycle'}


@pytest.mark.parametrize('model', MODELS)
def test_all_vehicles_builds_every_model_chosen_at_launch(model, tmp_path, ros_domain_id):
    """model:= reaches vehicle_sim and the controller (sim.launch.py): each model must start."""
    overlay = tmp_path / 'model.yaml'
    overlay.write_text(yaml.safe_dump({f'/**/{node}': {'ros__parameters': {'model': model}}
                                       for node in ('vehicle_sim', 'controller')}))
    with ros_context([PARAMS_DIR / 'all_vehicles.yaml', overlay]) as context:
        for node in ('vehicle_sim', 'controller'):
            with built_node(node, context):
                pass


def test_a_misspelled_key_is_reported_with_the_declared_name(tmp_path, ros_domain_id):
    text = (PARAMS_DIR / 'indoor_differential.yaml').read_text()
    broken = tmp_path / 'typo.yaml'
    broken.write_text(text.replace('track: 0.5', 'trak: 0.5'))
    given = params_file_overrides([broken], 'vehicle_sim')
    assert unknown_parameters('vehicle_sim', given) == [
        'model_params.differential.trak (did you mean model_params.differential.track?)']


def test_a_value_out_of_range_stops_the_node(tmp_path, ros_domain_id):
    from wheelsim.core.params import ParameterError

    text = (PARAMS_DIR / 'indoor_differential.yaml').read_text()
    broken = tmp_path / 'range.yaml'
    broken.write_text(text.replace('track: 0.5', 'track: -0.5'))
    with ros_context([broken]) as context, pytest.raises(ParameterError, match='track'), \
            built_node('vehicle_sim', context):
        pass


@pytest.mark.parametrize('prefix', ['', 'robot1/'])
@pytest.mark.parametrize('path', VEHICLE_PRESETS, ids=lambda p: p.name)
def test_preset_urdf_parses_with_every_joint_the_vehicle_publishes(path, prefix):
    for model, values in preset_vehicles(path):
        config = vehicle_config_from_params(values)
        robot = URDF.from_xml_string(build_urdf(config, prefix))
        assert robot.get_root() == prefix + 'base_link', model
        moving = {j.name for j in robot.joints if j.type != 'fixed'}
        expected = {prefix + w.joint for w in wheel_layout(config)}
        expected |= {prefix + w.steering.joint for w in wheel_layout(config) if w.steering}
        assert moving == expected, f'{path.name} ({model})'
        linked = {j.child for j in robot.joints} | {robot.get_root()}
        assert linked == {link.name for link in robot.links}, f'{path.name} ({model})'


def load_map():
    """(free-cell mask with rows from the top, resolution, origin) of the shipped map."""
    meta = yaml.safe_load(MAP_YAML.read_text())
    data = (MAP_YAML.parent / meta['image']).read_bytes()
    magic, _, size, maximum, *_ = data.split(b'\n', 4)
    assert magic == b'P5' and maximum == b'255'
    width, height = (int(v) for v in size.split())
    pixels = np.frombuffer(data[-width * height:], dtype=np.uint8).reshape(height, width)
    occupancy = (255 - pixels) / 255.0  # negate: 0 -> white = free
    return occupancy < meta['free_thresh'], meta['resolution'], meta['origin']


def test_map_is_a_room_with_walls_and_free_start():
    free, resolution, origin = load_map()
    assert not free[0].any() and not free[-1].any(), 'outer walls missing'
    assert free.mean() > 0.8
    column = round((0.0 - origin[0]) / resolution)
    row = free.shape[0] - 1 - round((0.0 - origin[1]) / resolution)
    assert free[row, column], 'the world origin, where vehicles start, is not free'


@pytest.mark.parametrize('x, y, obstacle', [
    (1.0, -2.6, True),     # the table in the west part
    (10.0, 0.3, True),     # the shelf on the first inner wall ...
    (12.3, 0.3, False),    # ... and the 1.4 m aisle beside it
    (8.9, -3.3, False),    # the aisle beside the second shelf ...
    (11.0, -3.3, True),    # ... and that shelf
    (15.0, 3.1, True),     # the partition in the east part ...
    (16.9, 3.1, False),    # ... and its door, the narrow passage
    (16.42, 3.1, False), (17.38, 3.1, False), (16.38, 3.1, True), (17.42, 3.1, True),
])
def test_map_has_furniture_aisles_and_a_narrow_door(x, y, obstacle):
    from wheelsim.core.world.map_file import load_map_file

    assert load_map_file(str(MAP_YAML)).occupancy_map().is_obstacle(x, y) is obstacle, (x, y)


def test_map_files_are_up_to_date_with_their_generator():
    import subprocess
    import sys

    result = subprocess.run([sys.executable, str(REPO / 'tools' / 'gen_map.py'), '--check'],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize('path', VEHICLE_PRESETS, ids=lambda p: p.name)
def test_preset_waypoints_lie_in_free_space_of_the_map(path):
    free, resolution, origin = load_map()
    planner = yaml.safe_load(path.read_text()).get('/**/planner', {}).get('ros__parameters', {})
    waypoints = np.asarray(planner.get('waypoints', []), dtype=float).reshape(-1, 3)
    assert len(waypoints), f'{path.name}: no demo waypoints'
    for x, y, _ in waypoints:
        column = int((x - origin[0]) / resolution)
        row = free.shape[0] - 1 - int((y - origin[1]) / resolution)
        assert 0 <= row < free.shape[0] and 0 <= column < free.shape[1], (x, y)
        assert free[row, column], f'{path.name}: waypoint ({x}, {y}) is in a wall'


def _section(path, node):
    tree = yaml.safe_load(path.read_text()).get(f'/**/{node}', {})
    return dict(flatten(tree.get('ros__parameters', {})))


@pytest.mark.parametrize('path', VEHICLE_PRESETS, ids=lambda p: p.name)
def test_presets_describe_the_vehicle_once_and_never_contradict_it(path):
    """Model, geometry and steering are vehicle_sim's alone; planner and controller take them
    from its vehicle_description, and what they do set stays within the vehicle."""
    controller, planner = _section(path, 'controller'), _section(path, 'planner')
    for copied in ('model', 'wheel_base', 'max_steering_angle'):
        assert copied not in controller, f'{path.name}: controller repeats {copied}'
    assert 'model' not in planner, f'{path.name}: planner repeats model'
    vehicle = vehicle_config_from_params(preset_vehicles(path)[0][1])
    description = describe(vehicle)
    declared = {spec.name for spec in planning_specs()}
    planner_config, planner_conflicts = planning.with_vehicle(
        from_flat(planning.PlannerConfig, {k: v for k, v in planner.items() if k in declared}),
        description)
    controller_config, controller_conflicts = tracking.with_vehicle(
        from_flat(tracking.ControllerConfig, controller), description)
    assert planner_conflicts == controller_conflicts == []
    assert planner_config.holonomic == (vehicle.model == 'omni')
    assert controller_config.model == planner_config.model == vehicle.model
    if description.max_curvature is not None:
        assert 0 < planner_config.limits.max_curvature <= description.max_curvature, \
            'plans too tight to steer'
    assert planner_config.limits.max_speed <= controller_config.limits.max_linear_x
    if planner_config.reverses:  # found in review: the car planned reversing at 3 m/s, 1 allowed
        reverse_mps = planner_config.limits.motion_limits(reverse=True).max_speed_mps
        assert reverse_mps <= -controller_config.limits.min_linear_x, \
            'plans reversing faster than the controller backs up (min_linear_x)'


# --- Nav2 ------------------------------------------------------------------------------------

def nav2_launched_nodes() -> set[str]:
    launch = parse_launch_file(REPO / 'launch' / 'nav2.launch.py')
    return {node.executable for node in launch.nodes}


def test_nav2_sections_are_for_the_servers_nav2_launch_starts():
    started = nav2_launched_nodes()
    for path in NAV2_DIR.glob('reduced*.yaml'):
        for name in section_node_names(path):
            assert name in started | {'local_costmap', 'global_costmap'}, \
                f'{path.name}: section for {name}, which nav2.launch.py does not start'
    for server in ('controller_server', 'planner_server', 'behavior_server', 'bt_navigator'):
        assert server in section_node_names(NAV2_COMMON), server


@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_nav2_cmd_vel_type_per_distro(distro, ros_domain_id):
    files = [NAV2_COMMON, NAV2_DIR / f'reduced_{distro}.yaml']
    for server in ('controller_server', 'behavior_server'):
        given = params_file_overrides(files, server, namespace='/robot1')
        assert given['enable_stamped_cmd_vel'] is (distro != 'jazzy'), (distro, server)


@pytest.mark.parametrize('server,namespace', [
    ('controller_server', '/'), ('planner_server', '/'), ('behavior_server', '/'),
    ('bt_navigator', '/'), ('local_costmap', '/local_costmap'),
    ('global_costmap', '/global_costmap')])
def test_nav2_plugins_have_sections_and_frames_are_wheelsim_s(server, namespace, ros_domain_id):
    given = params_file_overrides([NAV2_COMMON], server, namespace=namespace)
    assert given, f'ROS gives {server} no parameter from reduced.yaml'
    lists = [k for k, v in given.items() if k.endswith('plugins') or k == 'navigators']
    for key in lists:
        for plugin in given[key]:
            assert f'{plugin}.plugin' in given, f'{server}: {key} names {plugin} without a section'
    frames = {k: v for k, v in given.items() if k.endswith('frame')}
    assert set(frames.values()) <= {'map', 'odom', 'base_link'}, frames


@pytest.mark.parametrize('distro', SUPPORTED_DISTROS)
def test_bt_navigator_gets_its_distro_s_error_code_key_only(distro, ros_domain_id):
    """navigation2 1.3.13 (Jazzy) reads error_code_names; 1.4.2 (Kilted) reads
    error_code_name_prefixes and throws when error_code_names is set
    (nav2_behavior_tree/include/nav2_behavior_tree/bt_action_server_impl.hpp:91-93)."""
    files = [NAV2_COMMON, NAV2_DIR / f'reduced_{distro}.yaml']
    given = params_file_overrides(files, 'bt_navigator', namespace='/robot1')
    key, other = (('error_code_names', 'error_code_name_prefixes') if distro == 'jazzy'
                  else ('error_code_name_prefixes', 'error_code_names'))
    assert given.get(key), f'{distro}: bt_navigator gets no {key}'
    assert other not in given, f'{distro}: bt_navigator must not get {other}'
    if distro == 'jazzy':
        assert set(given[key]) == {'compute_path_error_code', 'follow_path_error_code'}
    else:
        assert {'compute_path', 'follow_path'} <= set(given[key])
