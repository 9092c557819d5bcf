"""Stock Nav2 drives the simulated vehicle: nav2_bringup's own bringup_launch.py, wheelsim as robot.

    ros2 launch wheelsim nav2_bringup.launch.py                      # wheelsim's localization
    ros2 launch wheelsim nav2_bringup.launch.py localization:=amcl   # Nav2's AMCL on the scan

wheelsim stands in for the robot and its drivers: vehicle_sim (the plant, a laser scan ray-cast
on the map, collisions, the reference clock on /clock), localization (odometry and, unless AMCL
runs, map -> odom) and robot_state_publisher (the URDF with base_footprint and the laser). Nav2
comes from nav2_bringup's ``bringup_launch.py`` with the stock ``nav2_params.yaml`` of the
installed release and only wheelsim's overrides (``params/nav2/stock_<ROS_DISTRO>.yaml``) merged
over it: every Nav2 node runs on vehicle_sim's /clock; Nav2's controller and behaviours publish
``cmd_vel_nav``, the velocity smoother ``cmd_vel_smoothed`` and the collision monitor ``cmd_vel``,
which vehicle_sim takes (Twist on Jazzy, TwistStamped on Kilted).

With ``localization:=wheelsim`` (default) bringup runs with ``use_localization:=False`` and the map
server is started here, as Nav2's own loopback simulation does; with ``localization:=amcl``
bringup starts the map server and AMCL, and wheelsim's localization leaves map -> odom to AMCL.
nav2.launch.py is the lighter option (fewer Nav2 servers, no nav2_bringup).
"""

import os

import launch.logging
import yaml
from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
    SetEnvironmentVariable,
)
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import (
    EnvironmentVariable,
    EqualsSubstitution,
    LaunchConfiguration,
    PathJoinSubstitution,
)
from launch_ros.actions import Node, SetParameter
from launch_ros.substitutions import FindPackageShare

from wheelsim.bringup.arguments import checked
from wheelsim.bringup.nav2_mppi import mppi_problem, mppi_warning
from wheelsim.bringup.nav2_stock import (
    KILTED_ARGUMENTS,
    laser_height_warnings,
    nav2_pace_warning,
    nav2_parameters,
    vehicle_values,
    write_nav2_parameters,
)
from wheelsim.bringup.packages import apt_package, installed, optional
from wheelsim.bringup.params_files import (
    check_not_overridden,
    is_shipped_preset,
    simulated_vehicle,
    vehicle_sim_values,
)
from wheelsim.core.vehicle.description import describe

LOCALIZATIONS = ('wheelsim', 'amcl')
_ONE_ROBOT = ('the stock bring-up runs one robot without a namespace or frame prefix '
              '(nav2.launch.py takes namespace:=; multi_robot.launch.py runs two robots)')
#: sim.launch.py's arguments this launch sets itself or cannot serve, and why.
REFUSED = {
    'namespace': _ONE_ROBOT, 'frame_prefix': _ONE_ROBOT,
    'use_sim_time': "every node runs on vehicle_sim's /clock here",
    'map_yaml': 'map:= gives the map of Nav2 and vehicle_sim',
    'publish_map': "Nav2's map server publishes map here (vehicle_sim when Nav2 is missing)",
    'map_to_odom': 'localization:= chooses what publishes map -> odom',
    'overrides_file': "wheelsim's side of the stock bring-up (params/nav2/stock_wheelsim.yaml) "
                      'is applied here',
    'rviz_config': 'nav2.rviz is the view here',
    'tracking': "this launch is for Nav2's planner and controller (wheelsim's would drive the "
                'same vehicle)',
}
#: The values of :data:`REFUSED`'s arguments that are what this launch gives them: taken.
HARMLESS = {'namespace': ('', '/'), 'frame_prefix': ('',), 'use_sim_time': ('true',),
            'tracking': ('false',)}
#: The Nav2 packages started here besides those bringup_launch.py starts.
NAV2_PACKAGES = ['nav2_bringup', 'nav2_map_server', 'nav2_lifecycle_manager']


def _share(context, package, *parts):
    return PathJoinSubstitution([FindPackageShare(package), *parts]).perform(context)


def _check_vehicle(context):
    """Fail the launch before anything starts: a car-like
    vehicle (model bicycle) with the stock Nav2 parameters, which drive a differential or omni
    base (MPPI's DiffDrive motion model turns in place; NavFn plans paths a car cannot follow)."""
    if LaunchConfiguration('nav2_params_file').perform(context):
        return []
    label, values = _simulated(context)
    config, _ = simulated_vehicle(label, values)
    if config.model == 'bicycle':
        curvature = describe(config).max_curvature  # None: steering not limited below 90 deg
        model = ("MPPI's Ackermann motion model (AckermannConstraints.min_turning_r: "
                 f'{1.0 / curvature:.2f} m for this car)') if curvature is not None else (
            'a motion model for a car whose steering is not limited: it turns on the spot about '
            'its fixed axle, but only once its steering is across (MPPI\'s Ackermann model with '
            'min_turning_r 0 m is its DiffDrive model, which turns at once)')
        chosen_preset = LaunchConfiguration('preset').perform(context)
        other_model = ' (this preset also has a differential and an omni base: model:=' \
            'differential or model:=omni)' if chosen_preset == 'all_vehicles' and not \
            LaunchConfiguration('model').perform(context) else ''
        raise RuntimeError(
            f'{label}: a car (vehicle_sim model bicycle) cannot be driven with the stock Nav2 '
            'parameters, which drive a differential or omni base (MPPI\'s DiffDrive motion model '
            f'turns in place, NavFn plans paths a car cannot follow). Give nav2_params_file:= '
            f'with {model}, a planner for car-like robots (Smac Hybrid-A* or State Lattice)'
            f'{_car_planning_missing()}{_local_costmap_too_small(context, values)}, or drive it '
            f'with demo.launch.py{other_model}; nothing was started')
    return []


def _local_costmap_too_small(context, sim_values) -> str:
    """What the refusal adds when vehicle_sim's footprint reaches beyond the stock local
    costmap (a rolling window centred on the robot), which then finds a collision in every
    trajectory: ' and a local costmap ...'; empty otherwise."""
    footprint = sim_values.get('footprint') or []
    reach_m = max((abs(v) for v in footprint), default=0.0)
    if not installed('nav2_bringup'):
        return ''
    stock = _share(context, 'nav2_bringup', 'params', 'nav2_params.yaml')
    with open(stock, encoding='utf-8') as file:
        costmap = yaml.safe_load(file)['local_costmap']['local_costmap']['ros__parameters']
    half_m = min(costmap['width'], costmap['height']) / 2.0
    if reach_m <= half_m:
        return ''
    return (f' and a local costmap reaching past its footprint, {reach_m:g} m from base_link '
            f'(the stock one is {costmap["width"]:g} x {costmap["height"]:g} m)')


def _car_planning_missing() -> str:
    """What the installed Nav2 lacks of what a car needs (MPPI, Smac), in parentheses; empty
    when it has both or there is no Nav2."""
    if not installed('nav2_bringup'):
        return ''
    problem = mppi_problem()
    lacks = [problem.split(':')[0]] if problem else []
    if not installed('nav2_smac_planner'):
        lacks.append('no nav2_smac_planner in this Nav2')
    return f' ({"; ".join(lacks)}: this Nav2 cannot drive a car)' if lacks else ''


def _stock_wheelsim(context):
    """wheelsim's side of the stock bring-up: sim.launch.py's ``overrides_file`` here."""
    return _share(context, 'wheelsim', 'params', 'nav2', 'stock_wheelsim.yaml')


def _check_params_file(context):
    """Fail the launch before anything starts: a params file of the user's (not a shipped
    preset, which the overrides are made for, wherever it is read from) giving wheelsim's nodes
    another value of what wheelsim's side of the stock bring-up sets (it would be replaced
    without a word)."""
    params_file = LaunchConfiguration('params_file').perform(context)
    if not is_shipped_preset(params_file):
        check_not_overridden(params_file, _stock_wheelsim(context),
                             ['vehicle_sim', 'localization'],
                             "stock Nav2 runs on vehicle_sim's /clock, with base_footprint, at "
                             'the rates it keeps up with')
    return []


def _simulated(context):
    """(label, vehicle_sim's parameter values): the params file, wheelsim's stock overrides and
    the ``model`` argument, as sim.launch.py gives them to vehicle_sim."""
    files = [LaunchConfiguration('params_file').perform(context), _stock_wheelsim(context)]
    model = LaunchConfiguration('model').perform(context)
    label = ' + '.join(files) + (f' model:={model}' if model else '')
    return label, vehicle_sim_values(files, '', {'model': model} if model else {})


def _nav2(context):
    """The map server (unless AMCL's bring-up starts it) and nav2_bringup's bringup_launch.py
    with the stock parameters and wheelsim's overrides; first a warning when they run an MPPI
    controller the installed Nav2 cannot (:func:`mppi_warning`), one per costmap layer that
    cannot see the laser at its height (:func:`laser_height_warnings`), and one for a
    real_time_factor other than 1 (:func:`nav2_pace_warning`)."""
    localization = LaunchConfiguration('localization').perform(context)
    distro = os.environ.get('ROS_DISTRO') or 'jazzy'
    stock = (LaunchConfiguration('nav2_params_file').perform(context)
             or _share(context, 'nav2_bringup', 'params', 'nav2_params.yaml'))
    overrides = LaunchConfiguration('nav2_overrides_file').perform(context)
    label, sim_values = _simulated(context)
    parameters = nav2_parameters(stock, overrides, vehicle_values(label, sim_values))
    params_file = write_nav2_parameters(parameters)
    map_yaml = LaunchConfiguration('map')
    autostart = LaunchConfiguration('autostart')
    log_level = ['--ros-args', '--log-level', LaunchConfiguration('log_level')]
    bringup_arguments = {
        'map': map_yaml, 'use_sim_time': 'True', 'params_file': params_file,
        'autostart': autostart, 'use_composition': LaunchConfiguration('use_composition'),
        'log_level': LaunchConfiguration('log_level'),
        'use_localization': str(localization == 'amcl'),
    }
    if distro != 'jazzy':
        bringup_arguments.update(KILTED_ARGUMENTS)
    actions = [IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution(
            [FindPackageShare('nav2_bringup'), 'launch', 'bringup_launch.py'])),
        launch_arguments=bringup_arguments.items())]
    if localization == 'wheelsim':
        actions[:0] = [
            Node(package='nav2_map_server', executable='map_server', name='map_server',
                 output='screen', arguments=log_level,
                 parameters=[params_file, {'yaml_filename': map_yaml}]),
            Node(package='nav2_lifecycle_manager', executable='lifecycle_manager',
                 name='lifecycle_manager_map_server', output='screen', arguments=log_level,
                 parameters=[{'autostart': autostart, 'node_names': ['map_server']}]),
        ]
    warnings = [mppi_warning(parameters)]  # a known miscompiled MPPI drives away from its goals
    settings = simulated_vehicle(label, sim_values)[1]
    if settings.scan.enabled:
        warnings += laser_height_warnings(parameters, settings.scan.z)
    pace = LaunchConfiguration('real_time_factor').perform(context)
    warnings.append(nav2_pace_warning(float(pace) if pace else settings.real_time_factor))
    for warning in filter(None, warnings):  # at WARNING level, which LogInfo cannot give
        launch.logging.get_logger('launch.user').warning(warning)
    return [GroupAction([SetParameter('use_sim_time', True), *actions])]


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    preset = LaunchConfiguration('preset')
    params_file = LaunchConfiguration('params_file')
    localization = LaunchConfiguration('localization')
    map_yaml = LaunchConfiguration('map')

    arguments = [
        DeclareLaunchArgument(
            'preset', default_value='indoor_differential',
            description='Shipped vehicle preset (the stock Nav2 parameters, MPPI with a '
                        'differential motion model, suit indoor_differential)'),
        DeclareLaunchArgument(
            'params_file', default_value=[share, '/params/', preset, '.yaml'],
            description='ROS parameters file of the wheelsim nodes, instead of the '
                        'preset\'s (not both); it may not set what '
                        'params/nav2/stock_wheelsim.yaml sets to other values'),
        DeclareLaunchArgument(
            'model', default_value='',
            description='Vehicle model of vehicle_sim, overriding the params file: '
                        'differential, bicycle or omni (all_vehicles needs it; empty: the '
                        'file\'s)'),
        DeclareLaunchArgument(
            'localization', default_value='wheelsim',
            description='wheelsim: wheelsim\'s localization publishes map -> odom (bringup '
                        'with use_localization:=False); amcl: Nav2\'s AMCL on the simulated '
                        'scan does'),
        DeclareLaunchArgument(
            'map', default_value=PathJoinSubstitution([share, 'params', 'maps', 'room.yaml']),
            description='Map YAML file: the world vehicle_sim simulates and the map server '
                        'serves'),
        DeclareLaunchArgument(
            'nav2_params_file', default_value='',
            description='Nav2 parameters the overrides are merged over; empty: the stock '
                        'nav2_bringup/params/nav2_params.yaml of the installed Nav2'),
        DeclareLaunchArgument(
            'nav2_overrides_file',
            default_value=[share, '/params/nav2/stock_',
                           EnvironmentVariable('ROS_DISTRO', default_value='jazzy'), '.yaml'],
            description='wheelsim\'s overrides of the stock Nav2 parameters for this ROS '
                        'distro'),
        DeclareLaunchArgument(
            'use_composition', default_value='True',
            description='Nav2 servers in one component container (bringup_launch.py\'s '
                        'default) or as separate processes'),
        DeclareLaunchArgument(
            'autostart', default_value='true',
            description='Configure and activate the Nav2 servers at start'),
        DeclareLaunchArgument(
            'log_level', default_value='info',
            description="Log level of the Nav2 servers and of wheelsim's nodes"),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start RViz with costmaps, plans, scan and the Navigation 2 panel (as '
                        'sim.launch.py: without rviz2, one line, or a failure if rviz:=true '
                        'was given)'),
        DeclareLaunchArgument(
            'real_time_factor', default_value='',
            description='Simulated seconds per wall second of vehicle_sim, the /clock every node '
                        'runs on (empty: as in the params file, else vehicle_sim\'s default, '
                        '1.0)'),
    ]

    nav2_installed = all(installed(package) for package in NAV2_PACKAGES)
    simulation = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'sim.launch.py'])),
        launch_arguments={
            'params_file': params_file,
            'model': LaunchConfiguration('model'),
            'overrides_file': PathJoinSubstitution(
                [share, 'params', 'nav2', 'stock_wheelsim.yaml']),
            'map_yaml': map_yaml,
            # Nav2's map server serves map: vehicle_sim publishes none (unless Nav2 is missing)
            'publish_map': 'false' if nav2_installed else '',
            'map_to_odom': EqualsSubstitution(localization, 'wheelsim'),
            'use_sim_time': 'true',
            'rviz': LaunchConfiguration('rviz'),
            'rviz_config': PathJoinSubstitution([share, 'rviz', 'nav2.rviz']),
            'real_time_factor': LaunchConfiguration('real_time_factor'),
        }.items())

    navigation = optional({package: apt_package(package) for package in NAV2_PACKAGES},
                          'Nav2 (the simulation runs without it)', _nav2)
    return LaunchDescription([
        SetEnvironmentVariable('RCUTILS_LOGGING_BUFFERED_STREAM', '1'),
        *arguments,
        checked(booleans=['use_composition', 'autostart', 'rviz'],
                numbers={'real_time_factor': float},
                choices={'localization': LOCALIZATIONS}, presets=['preset'],
                replaced_by={'preset': 'params_file'},
                log_levels=['log_level'], optional=['real_time_factor'], refused=REFUSED,
                harmless=HARMLESS),
        OpaqueFunction(function=_check_params_file), OpaqueFunction(function=_check_vehicle),
        simulation, navigation,
    ])
