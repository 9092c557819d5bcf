"""RViz configs and the PlotJuggler layout parse and name only topics the nodes really publish.

The topics come from the ROS graph: the four wheelsim node classes are built in one process
from a preset (as the launch files start them; vehicle_sim with a map file, as
``sim.launch.py map_yaml:=...``) and asked what they publish and subscribe, with which types
and QoS. Every PlotJuggler series must also be a field of that topic's message type (or a
joint the vehicles publish), so a renamed topic or field is caught.
"""

import importlib
import os
import re
import time
import xml.etree.ElementTree as ET
from contextlib import ExitStack

import pytest
import yaml
from bringup_support import (
    PARAMS_DIR,
    REPO,
    VEHICLE_PRESETS,
    WHEELSIM_NODES,
    built_node,
    parse_launch_file,
    preset_vehicles,
    ros_context,
)

from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.joints import wheel_layout

RVIZ_CONFIGS = sorted((REPO / 'rviz').glob('*.rviz'))
LAYOUT = REPO / 'plotjuggler' / 'wheelsim_layout.xml'
#: cmd_vel is Twist or TwistStamped (docs/interface.md); a layout plots both forms.
CMD_VEL_TYPES = ('geometry_msgs/msg/Twist', 'geometry_msgs/msg/TwistStamped')
#: Topics of nodes the wheelsim launch files start besides the wheelsim ones.
#: The Nav2 ones as navigation2 1.3.13 / 1.4.2 publish them: costmap_2d_publisher.cpp:73 (costmap,
#: transient local), regulated_pure_pursuit_controller.cpp:75 (received_global_plan),
#: graceful_controller.cpp 1.3.13:63 / 1.4.2:65 and MPPI's trajectory_visualizer.cpp 1.3.13:30
#: (transformed_global_plan; Kilted's MPPI: ~/transformed_global_plan).
EXTERNAL_TOPICS = {
    '/map': ('nav2.launch.py', 'map_server'),
    '/global_costmap/costmap': ('nav2.launch.py', 'planner_server'),
    '/local_costmap/costmap': ('nav2.launch.py', 'controller_server'),
    '/received_global_plan': ('nav2.launch.py', 'controller_server'),
    '/transformed_global_plan': ('nav2_bringup.launch.py', 'controller_server'),
    # costmap_2d_ros.cpp 1.3.13:229 / 1.4.2:220 (published_footprint)
    '/local_costmap/published_footprint': ('nav2.launch.py', 'controller_server'),
    # AMCL, started by nav2_bringup's localization_launch.py (test/nav2_upstream_facts.yaml)
    '/particle_cloud': ('nav2_bringup.launch.py', 'amcl'),
}
#: Nav2 nodes nav2_bringup.launch.py starts through nav2_bringup's launch files, by fact name
#: in test/nav2_upstream_facts.yaml.
NAV2_BRINGUP_NODES = {'amcl': 'amcl_publishes_particle_cloud',
                      'controller_server': 'graceful_publishes_transformed_global_plan'}


#: The map vehicle_sim simulates in the graph (and so publishes on map).
WORLD_MAP = PARAMS_DIR / 'maps' / 'room.yaml'
#: What the main RViz config shows of vehicle_sim's world: display class -> (topic, type).
WORLD_DISPLAYS = {
    'rviz_default_plugins/Map': ('map', 'nav_msgs/msg/OccupancyGrid'),
    'rviz_default_plugins/LaserScan': ('scan', 'sensor_msgs/msg/LaserScan'),
    'rviz_default_plugins/Polygon': ('footprint', 'geometry_msgs/msg/PolygonStamped'),
}


@pytest.fixture(scope='module')
def graph(tmp_path_factory):
    """{'published': {topic: types}, 'subscribed': {topic: types}, 'publisher_qos': {topic:
    [(reliability, durability) of each publisher]}} of the wheelsim nodes.

    Each node gets its own context (DDS participant), as in separate processes: in one
    participant vehicle_sim's Twist subscription and the controller's TwistStamped publisher on
    cmd_vel would clash.
    """
    from rclpy.node import Node

    from wheelsim.ros.dds_domain import require_loopback_dds, reserved_domain_id

    require_loopback_dds()
    previous = os.environ.get('ROS_DOMAIN_ID')
    preset = PARAMS_DIR / 'indoor_differential.yaml'
    world = tmp_path_factory.mktemp('world') / 'world.yaml'
    world.write_text(yaml.safe_dump(
        {'/**/vehicle_sim': {'ros__parameters': {'world': {'map_yaml': str(WORLD_MAP)}}}}))
    with reserved_domain_id() as domain_id, ExitStack() as stack:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        try:
            nodes = []
            for name in WHEELSIM_NODES:
                files = [preset, world] if name == 'vehicle_sim' else [preset]
                context = stack.enter_context(ros_context(files))
                nodes.append(stack.enter_context(built_node(name, context)))
            probe = Node('bringup_probe', context=stack.enter_context(ros_context([])))
            stack.callback(probe.destroy_node)
            yield _wait_for_graph(probe, nodes)
        finally:
            if previous is None:
                os.environ.pop('ROS_DOMAIN_ID', None)
            else:
                os.environ['ROS_DOMAIN_ID'] = previous


def _wait_for_graph(probe, nodes, timeout_s=15.0):
    """Published and subscribed topics of ``nodes`` (and the QoS of the publishers) once the
    probe has discovered them all."""
    wanted = [(seam.name, seam.namespace) for seam in nodes]
    deadline = time.monotonic() + timeout_s
    while True:
        published, subscribed = {}, {}
        if set(wanted) <= set(probe.get_node_names_and_namespaces()):
            for name, namespace in wanted:
                for topic, types in probe.get_publisher_names_and_types_by_node(name, namespace):
                    published.setdefault(topic, set()).update(types)
                for topic, types in probe.get_subscriber_names_and_types_by_node(
                        name, namespace):
                    subscribed.setdefault(topic, set()).update(types)
        if {'/ground_truth', '/odom', '/plan', '/cmd_vel', '/tracking_error', '/map', '/scan',
                '/footprint'} <= set(published) or time.monotonic() > deadline:
            publisher_qos = {topic: [(i.qos_profile.reliability, i.qos_profile.durability)
                                     for i in probe.get_publishers_info_by_topic(topic)]
                             for topic in published}
            return {'published': published, 'subscribed': subscribed,
                    'publisher_qos': publisher_qos}
        time.sleep(0.2)


def message_class(type_name: str):
    package, _, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.msg'), name)


def field_exists(type_name: str, path: list[str]) -> bool:
    """Whether ``path`` (field names) leads to a numeric field of the message type."""
    cls = message_class(type_name)
    for index, part in enumerate(path):
        fields = cls.get_fields_and_field_types()
        if part not in fields:
            return False
        kind = fields[part]
        if '/' in kind:
            cls = message_class(kind.replace('/', '/msg/', 1) if '/msg/' not in kind else kind)
        else:
            return index == len(path) - 1 and kind in (
                'double', 'float', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16',
                'uint32', 'uint64', 'boolean')
    return False


#: Vehicles beyond the presets whose joints differ: bicycles with one wheel per axle.
SINGLE_WHEEL_AXLES = [
    {'model': 'bicycle', 'model_params.bicycle.vis_track_fixed': 0.0},
    {'model': 'bicycle', 'model_params.bicycle.vis_track_steered': 0.0},
]


def joint_names(extra_vehicles=()) -> set[str]:
    """Every joint any preset's vehicle (and ``extra_vehicles``) publishes in joint_states."""
    vehicles = [values for path in VEHICLE_PRESETS for _, values in preset_vehicles(path)]
    names = set()
    for values in [*vehicles, *extra_vehicles]:
        for wheel in wheel_layout(vehicle_config_from_params(values)):
            names.add(wheel.joint)
            if wheel.steering:
                names.add(wheel.steering.joint)
    return names


def check_series(series: str, published: dict) -> None:
    """Fail unless ``series`` is a PlotJuggler series name of a published topic's field."""
    topic = max((t for t in published if series.startswith(t + '/')), key=len, default=None)
    assert topic, f'{series}: no published topic'
    path = series[len(topic) + 1:].split('/')
    types = set(published[topic]) | (set(CMD_VEL_TYPES) if topic == '/cmd_vel' else set())
    if types == {'sensor_msgs/msg/JointState'}:
        joint, field = path
        joints = joint_names(SINGLE_WHEEL_AXLES)
        assert joint in joints and field in ('position', 'velocity', 'effort'), series
        return
    assert any(field_exists(t, path) for t in types), f'{series}: no such field in {types}'


# --- RViz -------------------------------------------------------------------------------------

def rviz_topics(config: dict) -> list[tuple[str, str]]:
    """(display or tool class, topic) of every topic the config names."""
    found = []

    def visit(item):
        if isinstance(item, dict):
            for key in ('Topic', 'Description Topic'):
                if isinstance(item.get(key), dict):
                    found.append((item.get('Class', '?'), item[key]['Value']))
            for value in item.values():
                visit(value)
        elif isinstance(item, list):
            for value in item:
                visit(value)

    visit(config['Visualization Manager'])
    return found


def _absolute(topic: str) -> str:
    topic = topic if topic.startswith('/') else '/' + topic
    for robot in ('robot1', 'robot2'):  # multi_robot.rviz: the same topics per namespace
        topic = topic.replace(f'/{robot}/', '/', 1)
    return topic


@pytest.mark.parametrize('path', RVIZ_CONFIGS, ids=lambda p: p.name)
def test_rviz_config_names_only_topics_the_nodes_publish_or_read(path, graph):
    config = yaml.safe_load(path.read_text())
    assert config['Visualization Manager']['Global Options']['Fixed Frame'] == 'map'
    for kind, topic in rviz_topics(config):
        name = _absolute(topic)
        if kind.endswith(('SetInitialPose', 'SetGoal')):  # RViz publishes, a node must read
            assert name in graph['subscribed'], f'{path.name}: no node reads {name}'
        elif name in EXTERNAL_TOPICS:
            launch_file, executable = EXTERNAL_TOPICS[name]
            started = {n.executable for n in parse_launch_file(REPO / 'launch' / launch_file).nodes}
            if launch_file == 'nav2_bringup.launch.py':
                facts = yaml.safe_load((REPO / 'test' / 'nav2_upstream_facts.yaml').read_text())
                fact = facts['sources'][NAV2_BRINGUP_NODES[executable]]
                assert f'"{name[1:]}"' == fact['text'], (name, fact)
                started.add(executable)
            assert executable in started, f'{path.name}: nothing publishes {name}'
        else:
            assert name in graph['published'], f'{path.name}: no wheelsim node publishes {name}'


@pytest.mark.parametrize('path', RVIZ_CONFIGS, ids=lambda p: p.name)
def test_rviz_config_shows_what_the_issue_asks(path):
    classes = set(re.findall(r'Class: (\S+)', path.read_text()))
    for wanted in ('RobotModel', 'TF', 'Odometry', 'PoseWithCovariance', 'Path', 'SetGoal'):
        assert f'rviz_default_plugins/{wanted}' in classes, f'{path.name}: no {wanted}'


def test_main_rviz_config_shows_the_world_as_vehicle_sim_publishes_it(graph):
    """Map, scan and footprint displays on the topics vehicle_sim publishes, of their types,
    subscribing with a QoS its publishers serve: not reliable of a best-effort publisher (the
    scan), not transient local of a volatile one; the map transient local, so that an RViz
    started after vehicle_sim (or a map server) still gets the latched map."""
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    config = yaml.safe_load((REPO / 'rviz' / 'wheelsim.rviz').read_text())
    displays = {d['Class']: d for d in config['Visualization Manager']['Displays']}
    for kind, (topic, type_name) in WORLD_DISPLAYS.items():
        assert kind in displays, f'no {kind} display'
        display, name = displays[kind], '/' + topic
        assert display['Enabled'] and display['Topic']['Value'] == topic, display
        assert graph['published'].get(name) == {type_name}, (name, graph['published'].get(name))
        wanted = display['Topic']
        for reliability, durability in graph['publisher_qos'][name]:
            assert not (wanted['Reliability Policy'] == 'Reliable'
                        and reliability != ReliabilityPolicy.RELIABLE), (name, reliability)
            assert not (wanted['Durability Policy'] == 'Transient Local'
                        and durability != DurabilityPolicy.TRANSIENT_LOCAL), (name, durability)
    assert displays['rviz_default_plugins/Map']['Topic']['Durability Policy'] == 'Transient Local'


def test_main_rviz_config_has_pose_and_goal_tools():
    config = yaml.safe_load((REPO / 'rviz' / 'wheelsim.rviz').read_text())
    tools = {tool['Class'] for tool in config['Visualization Manager']['Tools']}
    assert {'rviz_default_plugins/SetInitialPose', 'rviz_default_plugins/SetGoal'} <= tools


# --- PlotJuggler ------------------------------------------------------------------------------

def layout_series(root: ET.Element) -> tuple[set[str], set[str]]:
    """(series plotted or used by custom functions, custom function names)."""
    snippets = {s.get('name') for s in root.iter('snippet')}
    used = set()
    for curve in root.iter('curve'):
        if curve.get('curve_x'):
            used |= {curve.get('curve_x'), curve.get('curve_y')}
        elif curve.get('name') not in snippets:
            used.add(curve.get('name'))
    for snippet in root.iter('snippet'):
        used.add(snippet.findtext('linked_source').strip())
        used |= {source.text.strip() for source in snippet.find('additional_sources')}
    return used, snippets


def selected_topics(root: ET.Element) -> set[str]:
    """The topics the layout preselects, as plotjuggler_ros 2.3.1 reads them: the attribute
    ``value`` of ``<selected_topics>``, split on ';' (src/parser_configuration.cpp:52-54)."""
    element = root.find('.//plugin[@ID="ROS2 Topic Subscriber"]/selected_topics')
    assert element is not None and element.get('value'), 'no <selected_topics value="a;b"/>'
    assert not list(element), 'child elements of <selected_topics> are not read by the plugin'
    return set(element.get('value').split(';'))


def test_plotjuggler_layout_names_only_fields_of_published_topics(graph):
    root = ET.parse(LAYOUT).getroot()
    used, snippets = layout_series(root)
    assert used and snippets
    for series in sorted(used):
        check_series(series, graph['published'])
    selected = selected_topics(root)
    assert selected <= set(graph['published'])
    assert {s for s in selected} >= {max((t for t in selected if s.startswith(t + '/')),
                                         key=len, default=s) for s in used}


def test_plotjuggler_layout_plots_what_the_issue_asks(graph):
    root = ET.parse(LAYOUT).getroot()
    areas = ' '.join(area.get('name') for area in root.iter('DockArea')).lower()
    for subject in ('commanded', 'actual', 'wheel speeds', 'steering angles', 'tracking',
                    'localization error'):
        assert subject in areas, subject
    used, _ = layout_series(root)
    assert '/twist_actual/twist/linear/x' in used


def test_series_check_catches_a_wrong_field(graph):
    with pytest.raises(AssertionError):
        check_series('/twist_actual/twist/linear/w', graph['published'])
    with pytest.raises(AssertionError):
        check_series('/joint_states/no_such_joint/velocity', graph['published'])
    with pytest.raises(AssertionError):
        check_series('/no_topic/x', graph['published'])


def test_plotjuggler_layout_plots_every_wheel_any_vehicle_can_have():
    used, _ = layout_series(ET.parse(LAYOUT).getroot())
    plotted = {series.split('/')[2] for series in used
               if series.startswith('/joint_states/') and series.endswith('/velocity')}
    wheels = {name for name in joint_names(SINGLE_WHEEL_AXLES) if 'wheel' in name}
    assert wheels <= plotted, f'wheels missing from the wheel-speed plot: {wheels - plotted}'


def test_namespaced_plotjuggler_layout_moves_every_topic_into_the_namespace():
    """PlotJuggler's ROS 2 plugin subscribes by absolute name and ignores the launch namespace
    (datastream_ros2.cpp:61 inits its own context without arguments): sim.launch.py writes a
    copy of the layout with every topic under the namespace (bringup.plotjuggler_layout)."""
    from wheelsim.bringup.plotjuggler_layout import namespaced_layout

    text = namespaced_layout(LAYOUT.read_text(), '/robot1')
    root = ET.fromstring(text)
    original = selected_topics(ET.parse(LAYOUT).getroot())
    assert selected_topics(root) == {'/robot1' + topic for topic in original}
    used, _ = layout_series(root)
    assert used and all(series.startswith('/robot1/') for series in used), sorted(used)[:5]
    assert namespaced_layout(LAYOUT.read_text(), '') == LAYOUT.read_text()


def test_a_frame_prefixed_robot_s_layout_names_its_prefixed_joints():
    """Found in review: with frame_prefix:=robot1/ vehicle_sim names its joints
    robot1/left_wheel_joint, and PlotJuggler its series /robot1/joint_states/robot1/
    left_wheel_joint/velocity (ros_parser.cpp parseJointStateMsg): the layout's wheel and
    steering plots stayed empty."""
    from wheelsim.bringup.plotjuggler_layout import namespaced_layout

    used, _ = layout_series(ET.fromstring(namespaced_layout(LAYOUT.read_text(), '/robot1',
                                                            'robot1/')))
    joints = sorted(series for series in used if '/joint_states/' in series)
    assert joints and all(series.startswith('/robot1/joint_states/robot1/')
                          for series in joints), joints
    used, _ = layout_series(ET.fromstring(namespaced_layout(LAYOUT.read_text(), '', 'car_')))
    assert all(series.startswith('/joint_states/car_') for series in used
               if '/joint_states/' in series)


@pytest.mark.parametrize('config', ['wheelsim.rviz', 'nav2.rviz'])
def test_rviz_s_fixed_frame_carries_the_robot_s_frame_prefix(config):
    """Found in review: with frame_prefix:=robot1/ RViz's fixed frame stayed map, which no
    transform reaches (the robot's are robot1/map, robot1/odom, ...): nothing was drawn and
    "2D Goal Pose" stamped goals the planner refused."""
    from wheelsim.bringup.packages import rviz_arguments

    path = REPO / 'rviz' / config
    fixed = yaml.safe_load(path.read_text())['Visualization Manager']['Global Options'][
        'Fixed Frame']
    path = str(path)
    assert rviz_arguments(path, '') == ['-d', path]
    assert rviz_arguments(path, 'robot1/') == ['-d', path, '-f', f'robot1/{fixed}']


def test_rviz_s_prefixed_fixed_frame_for_any_config(tmp_path):
    """Found in review: a config without a fixed frame stopped the launch with a KeyError, a
    missing one with a FileNotFoundError (rviz2 names it), and a prefixed frame got the prefix
    twice."""
    from wheelsim.bringup.packages import rviz_arguments

    bare = tmp_path / 'bare.rviz'
    bare.write_text('Panels: []\n')
    assert rviz_arguments(str(bare), 'r1/') == ['-d', str(bare), '-f', 'r1/map']  # RViz's default
    prefixed = tmp_path / 'prefixed.rviz'
    prefixed.write_text("Visualization Manager:\n  Global Options:\n    Fixed Frame: r1/odom\n")
    assert rviz_arguments(str(prefixed), 'r1/')[-1] == 'r1/odom'
    missing = str(tmp_path / 'missing.rviz')
    assert rviz_arguments(missing, 'r1/') == ['-d', missing]


@pytest.mark.parametrize(('name', 'durability'), [
    ('wheelsim.rviz', 'Transient Local'),  # the wheelsim planner latches its plan
    ('multi_robot.rviz', 'Transient Local'),
    ('nav2.rviz', 'Volatile'),  # Nav2's planner_server.cpp:150 publishes plan volatile
])
def test_plan_displays_subscribe_as_the_plan_is_published(name, durability):
    config = yaml.safe_load((REPO / 'rviz' / name).read_text())
    def displays(items):  # groups (multi_robot.rviz) hold displays of their own
        for item in items:
            yield item
            yield from displays(item.get('Displays', []))

    plans = [display for display in displays(config['Visualization Manager']['Displays'])
             if display.get('Class') == 'rviz_default_plugins/Path'
             and display['Topic']['Value'].rsplit('/', 1)[-1] == 'plan']
    assert plans, f'{name}: no plan display'
    assert {p['Topic']['Durability Policy'] for p in plans} == {durability}


def test_nav2_launch_uses_the_nav2_rviz_config():
    launch = parse_launch_file(REPO / 'launch' / 'nav2.launch.py')
    assert ['rviz/nav2.rviz'] in [paths for paths, _ in launch.share_paths]
    panels = yaml.safe_load((REPO / 'rviz' / 'nav2.rviz').read_text())['Panels']
    assert 'nav2_rviz_plugins/Navigation 2' in {panel['Class'] for panel in panels}


INTERFACE_PAGE = REPO / 'docs' / 'interface.md'
#: Topics of docs/interface.md the graph fixture's nodes (the indoor differential preset, wall
#: clock, a map file) do not use: only in another mode.
NOT_IN_THIS_MODE = {('out', '/clock'): 'reference-clock mode',
                    ('in', '/map'): 'vehicle_sim without world.map_yaml',
                    ('in', '/joint_states'): 'localization with odometry_source joint_states'}
#: Topics every rclpy node creates: not wheelsim's interface.
ROS_INFRASTRUCTURE = {'/rosout', '/parameter_events'}


def interface_topics() -> dict[str, dict[str, set[str]]]:
    """{'in': {topic: types}, 'out': {...}} from the tables of docs/interface.md (absolute
    names; `pkg/Type or Other` expanded to `pkg/msg/Type`, `pkg/msg/Other`)."""
    topics: dict[str, dict[str, set[str]]] = {'in': {}, 'out': {}}
    for line in INTERFACE_PAGE.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        direction = next((c for c in cells[:2] if c in ('in', 'out')), None)
        if direction is None:
            continue
        rest = cells[cells.index(direction) + 1:]
        names = re.findall(r'`([^`]+)`', rest[0])
        package, _, kinds = rest[1].partition('/')
        types = {f'{package}/msg/{kind.strip()}' for kind in kinds.split(' or ')} \
            if package and kinds else set()
        for name in names:
            topics[direction].setdefault(_absolute(name), set()).update(types)
    return topics


def test_the_interface_page_lists_every_topic_the_nodes_use_with_its_type(graph):
    page = interface_topics()
    for direction, key in (('out', 'published'), ('in', 'subscribed')):
        used = {t: types for t, types in graph[key].items() if t not in ROS_INFRASTRUCTURE}
        assert set(used) <= set(page[direction]), (direction, set(used) - set(page[direction]))
        for topic, types in used.items():
            assert not page[direction][topic] or types <= page[direction][topic], (topic, types)
        missing = {t for t in set(page[direction]) - set(used)
                   if (direction, t) not in NOT_IN_THIS_MODE}
        assert not missing, (direction, missing)
