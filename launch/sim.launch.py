"""Simulate one vehicle: vehicle_sim, localization and robot_state_publisher; RViz, PlotJuggler.

With ``tracking:=true`` (what demo.launch.py sets) the wheelsim planner and controller close the
loop as well.

    ros2 launch wheelsim sim.launch.py
    ros2 launch wheelsim sim.launch.py preset:=forklift
    ros2 launch wheelsim sim.launch.py params_file:=/path/to/my_vehicle.yaml
    ros2 launch wheelsim sim.launch.py namespace:=robot1 frame_prefix:=robot1/ rviz:=false

robot_state_publisher gets the URDF as its ``robot_description`` parameter: it is built here,
with ``wheelsim.core.vehicle_sim.description.vehicle_sim_urdf``, from the same params file (and
``model``) that vehicle_sim reads, so the model in RViz is the simulated one, laser and
footprint frames included. No forked robot_state_publisher is needed.
"""

import tempfile
from pathlib import Path

from launch.actions import DeclareLaunchArgument, GroupAction
from launch.conditions import IfCondition
from launch.launch_description import LaunchDescription
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, PushROSNamespace, SetParameter, SetRemap
from launch_ros.substitutions import FindPackageShare

from wheelsim.bringup.arguments import as_given, boolean, checked, number
from wheelsim.bringup.packages import (
    apt_package,
    ends_launch,
    optional,
    processes,
    require,
    rviz,
)
from wheelsim.bringup.params_files import (
    check_node_values,
    check_some_section_applies,
    node_values,
    robot_description,
    vehicle_sim_values,
)
from wheelsim.bringup.plotjuggler_layout import namespaced_layout


def _wheelsim_nodes(context):
    """vehicle_sim, localization, robot_state_publisher (+ planner, controller if tracking),
    each wheelsim node's parameters checked first: a bad one fails the launch, none started."""
    params_file = LaunchConfiguration('params_file').perform(context)
    overrides_file = LaunchConfiguration('overrides_file').perform(context)
    model = LaunchConfiguration('model').perform(context)
    map_yaml = LaunchConfiguration('map_yaml').perform(context)
    publish_map = LaunchConfiguration('publish_map').perform(context)
    frame_prefix = LaunchConfiguration('frame_prefix').perform(context)
    localization_mode = LaunchConfiguration('localization_mode').perform(context)
    real_time_factor = LaunchConfiguration('real_time_factor').perform(context)
    map_to_odom = boolean('map_to_odom', LaunchConfiguration('map_to_odom').perform(context))
    tracking = boolean('tracking', LaunchConfiguration('tracking').perform(context))
    log_level = LaunchConfiguration('log_level').perform(context)

    files = [params_file, overrides_file] if overrides_file else [params_file]
    namespace = context.launch_configurations.get('ros_namespace', '')
    loop = ('planner', 'controller') if tracking else ()
    check_some_section_applies(files, namespace, ['vehicle_sim', 'localization', *loop])
    sim_overrides = {'frame_prefix': frame_prefix}
    if model:
        sim_overrides['model'] = model
    if map_yaml:
        sim_overrides['world.map_yaml'] = map_yaml
    if publish_map:
        sim_overrides['world.publish_map'] = _publish_map(publish_map, files, namespace)
    if real_time_factor:
        sim_overrides['real_time_factor'] = number('real_time_factor', real_time_factor)
    label = ' '.join([' + '.join(files), *as_given(context, [
        'model', 'map_yaml', 'publish_map', 'localization_mode', 'real_time_factor',
        'frame_prefix'])])
    sim_values = vehicle_sim_values(files, namespace, sim_overrides)
    check_node_values(label, 'vehicle_sim', sim_values)  # its map file read too
    urdf = robot_description(' + '.join(files), sim_values)
    # each node's use_sim_time: a params file's (which launch_ros gives the node after the
    # argument's value), else the launch argument's; the loop's count (without it the
    # localization's, as the one wheelsim node started)
    argument = boolean('use_sim_time', LaunchConfiguration('use_sim_time').perform(context))
    clock_nodes = loop or ('localization',)
    follows_clock = all(
        node_values(files, namespace, node, {}).get('use_sim_time', argument) is True
        for node in clock_nodes)
    _check_clock(label, ' + '.join(files), sim_values, real_time_factor, follows_clock,
                 clock_nodes)
    if sim_values.get('be_reference_clock', False):
        # Clock mode 3: vehicle_sim is the time source, so it must not itself follow /clock.
        sim_overrides['use_sim_time'] = False

    prefix = {'frame_prefix': frame_prefix}
    localization_overrides = {**prefix, 'publish_map_to_odom': map_to_odom}
    if localization_mode:
        localization_overrides['mode'] = localization_mode
    for node, overrides in [('localization', localization_overrides),
                            *((node, prefix) for node in loop)]:
        check_node_values(label, node, node_values(files, namespace, node, overrides))
    # Any of these nodes ending (a bad parameter, a crash) ends the whole launch: no half-run.
    common = {'output': 'screen', 'arguments': ['--ros-args', '--log-level', log_level]}
    nodes = [
        # robot_state_publisher is the one publisher of robot_description: vehicle_sim's copy
        # goes to vehicle_sim/robot_description, and after a live vehicle change vehicle_sim
        # sets robot_state_publisher's parameter, which republishes it.
        Node(package='wheelsim', executable='vehicle_sim', name='vehicle_sim',
             parameters=[*files, sim_overrides], on_exit=ends_launch('vehicle_sim'),
             remappings=[('robot_description', 'vehicle_sim/robot_description')], **common),
        Node(package='wheelsim', executable='localization', name='localization',
             parameters=[*files, localization_overrides],
             on_exit=ends_launch('localization'), **common),
        Node(package='robot_state_publisher', executable='robot_state_publisher',
             name='robot_state_publisher', parameters=[{'robot_description': urdf}],
             on_exit=ends_launch('robot_state_publisher'), **common),
    ]
    if tracking:
        nodes += [
            Node(package='wheelsim', executable='planner', name='planner',
                 parameters=[*files, prefix], on_exit=ends_launch('planner'), **common),
            Node(package='wheelsim', executable='controller', name='controller',
                 parameters=[*files, prefix], on_exit=ends_launch('controller'), **common),
        ]
    return nodes


def _check_clock(label, files, sim_values, real_time_factor, follows_clock, clock_nodes):
    """RuntimeError for a clock set-up that cannot run as asked: vehicle_sim the reference clock
    (mode 3) while ``clock_nodes`` stay on wall time (``follows_clock`` false: its stamps are
    simulated time, the loop never gets a recent pose), or ``real_time_factor:=`` without the
    reference clock, which alone it paces."""
    reference = sim_values.get('be_reference_clock', False)
    if reference and not follows_clock:
        raise RuntimeError(f'{label}: vehicle_sim.be_reference_clock: true makes vehicle_sim '
                           'publish /clock (clock mode 3), which the other nodes follow only '
                           'with use_sim_time:=true: give it (and no use_sim_time false for '
                           f'{", ".join(clock_nodes)} in {files}), or set be_reference_clock '
                           'false')
    if real_time_factor and not reference:
        raise RuntimeError(f'real_time_factor:={real_time_factor} paces vehicle_sim\'s '
                           f'reference clock, and be_reference_clock is false in {files}: set '
                           'it true (with use_sim_time:=true), or leave real_time_factor out')


def _publish_map(text, files, namespace):
    """The ``publish_map`` launch argument as vehicle_sim's ``world.publish_map``; a
    RuntimeError unless it is a boolean (``arguments.boolean``), or when the params files set
    the other value (a map server would serve a second map, or none would be served)."""
    publish_map = boolean('publish_map', text)
    in_files = vehicle_sim_values(files, namespace, {}).get('world.publish_map', publish_map)
    if type(in_files) is not bool or in_files != publish_map:  # 1 == True: not a bool
        written = ('true' if in_files else 'false') if isinstance(in_files, bool) \
            else repr(in_files)
        raise RuntimeError(f'publish_map:={text} contradicts world.publish_map: {written} in '
                           f'{" + ".join(files)}: set one of them')
    return publish_map


def _plotjuggler(context):
    layout = LaunchConfiguration('plotjuggler_layout').perform(context)
    namespace = context.launch_configurations.get('ros_namespace', '')
    frame_prefix = LaunchConfiguration('frame_prefix').perform(context)
    if namespace.strip('/') or frame_prefix:
        text = namespaced_layout(Path(layout).read_text(), namespace, frame_prefix)
        folder = Path(tempfile.mkdtemp(prefix='wheelsim-plotjuggler-'))
        layout = str(folder / Path(layout).name)
        Path(layout).write_text(text)
    return [Node(package='plotjuggler', executable='plotjuggler', name='plotjuggler',
                 output='log', arguments=['--layout', layout])]


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    preset = LaunchConfiguration('preset')
    namespace = LaunchConfiguration('namespace')
    use_sim_time = LaunchConfiguration('use_sim_time')
    use_namespaced_tf = LaunchConfiguration('use_namespaced_tf')

    arguments = [
        DeclareLaunchArgument(
            'preset', default_value='indoor_differential',
            description='Shipped vehicle preset: indoor_differential, ackermann_car, forklift, '
                        'mecanum_omni or all_vehicles (with model:=...)'),
        DeclareLaunchArgument(
            'params_file',
            default_value=[share, '/params/', preset, '.yaml'],
            description='ROS parameters file for every wheelsim node, instead of the '
                        'preset\'s (not both)'),
        DeclareLaunchArgument(
            'overrides_file', default_value='',
            description='A second ROS parameters file for every wheelsim node, applied over '
                        'params_file (nav2_bringup.launch.py: params/nav2/stock_wheelsim.yaml); '
                        'empty: none'),
        DeclareLaunchArgument(
            'map_yaml', default_value='',
            description='map_server YAML of the world vehicle_sim simulates (world.map_yaml, '
                        'overriding the params file); empty: as in the params file (there '
                        'empty: the map topic)'),
        DeclareLaunchArgument(
            'publish_map', default_value='',
            description='vehicle_sim publishes the map of world.map_yaml on map (true) or not '
                        '(false: a map server serves it, as nav2.launch.py and '
                        'nav2_bringup.launch.py set); empty: as in the params file (there '
                        'default true)'),
        DeclareLaunchArgument(
            'map_to_odom', default_value='true',
            description='localization publishes map -> odom (false when another localizer, '
                        "Nav2's AMCL, does: publish_map_to_odom)"),
        DeclareLaunchArgument(
            'model', default_value='',
            description='Vehicle model of vehicle_sim, overriding the params file: differential, '
                        'bicycle or omni (empty: as in the params file); planner and controller '
                        'follow its vehicle_description'),
        DeclareLaunchArgument(
            'localization_mode', default_value='',
            description='Localization mode, overriding the params file: perfect, noisy or ekf '
                        '(empty: as in the params file)'),
        DeclareLaunchArgument(
            'real_time_factor', default_value='',
            description='vehicle_sim\'s real_time_factor, overriding the params file: simulated '
                        'seconds per wall second when it is the reference clock (empty: as in '
                        'the params file)'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of every node and topic (several robots)'),
        DeclareLaunchArgument(
            'frame_prefix', default_value='',
            description='Prefix of every frame name, e.g. robot1/ (several robots in one TF tree)'),
        DeclareLaunchArgument(
            'use_namespaced_tf', default_value='true',
            description='Publish TF on <namespace>/tf as Nav2 expects of namespaced robots; '
                        'false keeps the global /tf (robots told apart by frame_prefix)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Every node follows /clock (clock mode 2; with be_reference_clock in '
                        'the params file vehicle_sim publishes /clock itself, mode 3)'),
        DeclareLaunchArgument(
            'tracking', default_value='false',
            description='Also start the wheelsim planner and controller (the closed loop, as '
                        'demo.launch.py does); they follow the params file\'s waypoints'),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start RViz with rviz_config: if rviz2 is not installed, one line says so '
                        'and the rest runs, unless rviz:=true was given (then the launch fails)'),
        DeclareLaunchArgument(
            'rviz_config',
            default_value=PathJoinSubstitution([share, 'rviz', 'wheelsim.rviz']),
            description='RViz configuration file'),
        DeclareLaunchArgument(
            'plotjuggler', default_value='false',
            description='Start PlotJuggler with plotjuggler_layout (the launch fails if it is not '
                        'installed)'),
        DeclareLaunchArgument(
            'plotjuggler_layout',
            default_value=PathJoinSubstitution([share, 'plotjuggler', 'wheelsim_layout.xml']),
            description='PlotJuggler layout file (topics without namespace, joints without '
                        'prefix: with namespace:= or frame_prefix:=, a copy with the namespaced '
                        'topics and prefixed joints is used)'),
        DeclareLaunchArgument(
            'log_level', default_value='info',
            description='Log level of the wheelsim nodes (debug, info, warn, error, fatal, unset)'),
    ]

    robot = GroupAction([
        PushROSNamespace(namespace),
        SetParameter('use_sim_time', use_sim_time),
        SetRemap('/tf', 'tf', condition=IfCondition(use_namespaced_tf)),
        SetRemap('/tf_static', 'tf_static', condition=IfCondition(use_namespaced_tf)),
        processes(_wheelsim_nodes),
        rviz(LaunchConfiguration('rviz_config'), LaunchConfiguration('frame_prefix')),
        optional({'plotjuggler': apt_package('plotjuggler_ros'),
                  'plotjuggler_ros': apt_package('plotjuggler_ros')},
                 'PlotJuggler', _plotjuggler, argument='plotjuggler'),
    ])
    required = require({'robot_state_publisher': apt_package('robot_state_publisher')},
                       'sim.launch.py')
    # Every value with a type or a fixed set checked before anything starts (the parameters'
    # values in _wheelsim_nodes).
    check = checked(booleans=['map_to_odom', 'use_namespaced_tf', 'use_sim_time', 'tracking',
                              'rviz', 'plotjuggler', 'publish_map'],
                    numbers={'real_time_factor': float}, presets=['preset'],
                    replaced_by={'preset': 'params_file'},
                    log_levels=['log_level'], namespaces=['namespace'],
                    optional=['publish_map', 'real_time_factor'])
    return LaunchDescription([*arguments, check, required, robot])
