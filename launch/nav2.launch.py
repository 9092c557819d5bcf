"""Nav2 drives the simulated vehicle: sim.launch.py, a map server with the shipped map, Nav2.

    ros2 launch wheelsim nav2.launch.py
    ros2 launch wheelsim nav2.launch.py map:=/path/to/my_map.yaml namespace:=robot1

Send goals with RViz's "2D Goal Pose" tool. wheelsim's localization publishes map -> odom, so
there is no AMCL. The light option: four Nav2 servers started here directly (not through
nav2_bringup), costmaps from the map only, Regulated Pure Pursuit publishing cmd_vel straight
to vehicle_sim. Nav2's parameters come from two files: params/nav2/reduced.yaml, common to
every distro, then params/nav2/reduced_<ROS_DISTRO>.yaml with what differs between distros
(Jazzy publishes cmd_vel as Twist, Kilted as TwistStamped; vehicle_sim takes either). They suit
the indoor_differential preset (footprint, speeds). nav2_params_file:= may name other plugins:
the launch requires the packages of the plugins its two files name. Stock Nav2 through
nav2_bringup, with the velocity smoother, collision monitor and AMCL: nav2_bringup.launch.py.
"""

from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
    SetEnvironmentVariable,
)
from launch.conditions import IfCondition
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitution import Substitution
from launch.substitutions import EnvironmentVariable, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, PushROSNamespace, SetParameter, SetRemap
from launch_ros.substitutions import FindPackageShare

from wheelsim.bringup.arguments import checked
from wheelsim.bringup.nav2_plugins import plugin_packages
from wheelsim.bringup.packages import apt_package, installed, optional

NAVIGATION_NODES = ['controller_server', 'planner_server', 'behavior_server', 'bt_navigator']
#: The Nav2 packages started here, whatever the Nav2 params files name (their plugins'
#: packages are required too: _nav2_packages).
NAV2_PACKAGES = ['nav2_map_server', 'nav2_lifecycle_manager', 'nav2_controller', 'nav2_planner',
                 'nav2_behaviors', 'nav2_bt_navigator', 'nav2_costmap_2d']


def _nav2_packages(context) -> dict[str, str]:
    """{package: what to install} of the Nav2 started here: the servers (navigation2) and the
    packages of the plugins the two Nav2 params files name (each its own)."""
    files = [LaunchConfiguration('nav2_params_file').perform(context),
             LaunchConfiguration('nav2_distro_params_file').perform(context)]
    packages = {package: apt_package('navigation2') for package in NAV2_PACKAGES}
    for package in plugin_packages(files):
        packages.setdefault(package, apt_package(package))
    return packages


def _navigation(context):
    """Nav2, or the line saying which package it lacks."""
    return [optional(_nav2_packages(context), 'Nav2 (the simulation runs without it)',
                     _nav2_nodes)]


class _MapPublished(Substitution):
    """sim.launch.py's ``publish_map``: false when Nav2 starts (its map server serves the map),
    empty (vehicle_sim publishes it) when a package of it is missing."""

    def perform(self, context) -> str:
        return 'false' if all(installed(package) for package in _nav2_packages(context)) else ''

    def describe(self) -> str:
        return "'false' if Nav2 starts, else ''"


def _nav2_nodes(_context):
    """The Nav2 servers and their lifecycle managers."""
    map_file = LaunchConfiguration('map')
    nav2_params = [LaunchConfiguration('nav2_params_file'),
                   LaunchConfiguration('nav2_distro_params_file')]
    autostart = LaunchConfiguration('autostart')
    common = {'output': 'screen',
              'arguments': ['--ros-args', '--log-level', LaunchConfiguration('nav2_log_level')]}
    return [
        Node(package='nav2_map_server', executable='map_server', name='map_server',
             parameters=[{'yaml_filename': map_file}], **common),
        Node(package='nav2_lifecycle_manager', executable='lifecycle_manager',
             name='lifecycle_manager_map',
             parameters=[{'autostart': autostart, 'node_names': ['map_server']}], **common),
        Node(package='nav2_controller', executable='controller_server',
             name='controller_server', parameters=nav2_params, **common),
        Node(package='nav2_planner', executable='planner_server', name='planner_server',
             parameters=nav2_params, **common),
        Node(package='nav2_behaviors', executable='behavior_server', name='behavior_server',
             parameters=nav2_params, **common),
        Node(package='nav2_bt_navigator', executable='bt_navigator', name='bt_navigator',
             parameters=nav2_params, **common),
        Node(package='nav2_lifecycle_manager', executable='lifecycle_manager',
             name='lifecycle_manager_navigation',
             parameters=[{'autostart': autostart, 'node_names': NAVIGATION_NODES}], **common),
    ]


#: sim.launch.py's arguments this file sets itself or cannot serve, and why; the values it
#: gives them anyway (taken).
REFUSED = {
    'map_yaml': 'map:= gives the map of Nav2 and vehicle_sim',
    'publish_map': "Nav2's map server publishes map here (vehicle_sim when Nav2 is missing)",
    'rviz_config': 'nav2.rviz is the view here',
    'tracking': "this launch is for Nav2's planner and controller (wheelsim's would drive the "
                'same vehicle)',
}
HARMLESS = {'tracking': ('false',)}


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    preset = LaunchConfiguration('preset')
    params_file = LaunchConfiguration('params_file')
    namespace = LaunchConfiguration('namespace')
    use_namespaced_tf = LaunchConfiguration('use_namespaced_tf')
    use_sim_time = LaunchConfiguration('use_sim_time')

    arguments = [
        DeclareLaunchArgument(
            'preset', default_value='indoor_differential',
            description='Shipped vehicle preset (the Nav2 parameters suit indoor_differential)'),
        DeclareLaunchArgument(
            'params_file', default_value=[share, '/params/', preset, '.yaml'],
            description='ROS parameters file of the wheelsim nodes, instead of the '
                        'preset\'s (not both)'),
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of every node and topic, Nav2 included'),
        DeclareLaunchArgument(
            'use_namespaced_tf', default_value='true',
            description='Publish and read TF on <namespace>/tf, as Nav2 expects of namespaced '
                        'robots'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Every node follows /clock (clock modes 2 and 3)'),
        DeclareLaunchArgument(
            'map', default_value=PathJoinSubstitution([share, 'params', 'maps', 'room.yaml']),
            description='Map YAML file of the world: served by the Nav2 map server, simulated '
                        'by vehicle_sim'),
        DeclareLaunchArgument(
            'nav2_params_file',
            default_value=PathJoinSubstitution([share, 'params', 'nav2', 'reduced.yaml']),
            description='Nav2 parameters common to every ROS distro'),
        DeclareLaunchArgument(
            'nav2_distro_params_file',
            default_value=[share, '/params/nav2/reduced_',
                           EnvironmentVariable('ROS_DISTRO', default_value='jazzy'), '.yaml'],
            description='Nav2 parameters of this ROS distro (cmd_vel type), applied over '
                        'nav2_params_file'),
        DeclareLaunchArgument(
            'autostart', default_value='true',
            description='Configure and activate the Nav2 servers at start'),
        DeclareLaunchArgument(
            'nav2_log_level', default_value='info', description='Log level of the Nav2 servers'),
    ]

    simulation = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'sim.launch.py'])),
        launch_arguments={
            'params_file': params_file,
            'namespace': namespace,
            'use_namespaced_tf': use_namespaced_tf,
            'use_sim_time': use_sim_time,
            'rviz_config': PathJoinSubstitution([share, 'rviz', 'nav2.rviz']),
            # the world vehicle_sim simulates is the map Nav2's map server serves (the file
            # read and checked before anything starts); vehicle_sim publishes none (unless
            # Nav2 is missing)
            'map_yaml': LaunchConfiguration('map'),
            'publish_map': _MapPublished(),
        }.items())

    navigation = GroupAction([
        PushROSNamespace(namespace),
        SetParameter('use_sim_time', use_sim_time),
        SetRemap('/tf', 'tf', condition=IfCondition(use_namespaced_tf)),
        SetRemap('/tf_static', 'tf_static', condition=IfCondition(use_namespaced_tf)),
        OpaqueFunction(function=_navigation),
    ])
    return LaunchDescription([
        SetEnvironmentVariable('RCUTILS_LOGGING_BUFFERED_STREAM', '1'),
        *arguments, checked(booleans=['use_namespaced_tf', 'use_sim_time', 'autostart'],
                            presets=['preset'], replaced_by={'preset': 'params_file'},
                            log_levels=['nav2_log_level'], namespaces=['namespace'],
                            refused=REFUSED,
                            harmless=HARMLESS),
        simulation, navigation,
    ])
