"""Two robots side by side: each demo.launch.py loop in its own namespace, one TF tree, one RViz.

    ros2 launch wheelsim multi_robot.launch.py
    ros2 launch wheelsim multi_robot.launch.py robot2_preset:=ackermann_car robot2_y:=-5.0

robot1 and robot2 run in the namespaces ``robot1`` and ``robot2`` (topics ``/robot1/cmd_vel``, ...)
with the frame prefixes ``robot1/`` and ``robot2/`` on the global /tf: ``robot1/map ->
robot1/odom -> robot1/base_link`` and the same for robot2. Two static transforms place both map
frames in a shared ``map`` frame, robot2's ``robot2_y`` metres to the side, so one RViz shows
both robots and their plans.
"""

import math

from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
)
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, SetParameter
from launch_ros.substitutions import FindPackageShare

from wheelsim.bringup.arguments import checked, number
from wheelsim.bringup.packages import ends_launch, processes, rviz
from wheelsim.bringup.params_files import vehicle_sim_values
from wheelsim.shipped import shipped_params_dir

ROBOTS = ('robot1', 'robot2')


_EACH = 'each robot has its own (robot1, robot2)'
_PRESETS = "robot1_preset:= and robot2_preset:= choose each robot's vehicle"
#: The included launch files' arguments this file sets itself or cannot serve, and why; the
#: values it gives them (taken).
REFUSED = {
    'preset': _PRESETS, 'params_file': _PRESETS, 'namespace': _EACH, 'frame_prefix': _EACH,
    'use_namespaced_tf': _EACH,
    'plotjuggler': 'not with two robots (sim.launch.py namespace:=robot1 plotjuggler:=true '
                   'plots one)',
    'plotjuggler_layout': 'not with two robots',
    'rviz_config': 'multi_robot.rviz shows both robots',
}
HARMLESS = {'use_namespaced_tf': ('false',), 'plotjuggler': ('false',)}


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    use_sim_time = LaunchConfiguration('use_sim_time')

    arguments = [
        DeclareLaunchArgument(
            'robot1_preset', default_value='indoor_differential',
            description='Vehicle preset of robot1 (a params file name in share/wheelsim/params)'),
        DeclareLaunchArgument(
            'robot2_preset', default_value='mecanum_omni',
            description='Vehicle preset of robot2 (a params file name in share/wheelsim/params)'),
        DeclareLaunchArgument(
            'robot2_y', default_value='-4.0',
            description='Sideways offset of robot2\'s map frame from robot1\'s [m]'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Every node follows /clock (clock modes 2 and 3)'),
        DeclareLaunchArgument(
            'rviz', default_value='true',
            description='Start RViz showing both robots: without rviz2, one line says so and '
                        'the rest runs, unless rviz:=true was given (then the launch fails)'),
    ]

    # One scoped group per robot, so that one robot's launch arguments do not leak to the other.
    robots = [GroupAction([
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution([share, 'launch', 'demo.launch.py'])),
            launch_arguments={
                'params_file': [share, '/params/', LaunchConfiguration(f'{robot}_preset'),
                                '.yaml'],
                'namespace': robot,
                'frame_prefix': f'{robot}/',
                'use_namespaced_tf': 'false',
                'use_sim_time': use_sim_time,
                'rviz': 'false',
                'plotjuggler': 'false',
            }.items())
    ]) for robot in ROBOTS]
    viewer = GroupAction([SetParameter('use_sim_time', use_sim_time),
                          rviz(PathJoinSubstitution([share, 'rviz', 'multi_robot.rviz']))])
    # robot2_y is checked where it is read (_map_frames), before anything starts as well.
    check = checked(booleans=['use_sim_time', 'rviz'],
                    presets=[f'{robot}_preset' for robot in ROBOTS], refused=REFUSED,
                    harmless=HARMLESS)
    return LaunchDescription([*arguments, check, OpaqueFunction(function=_no_reference_clock),
                              *robots, processes(_map_frames), viewer])


def _no_reference_clock(context):
    """RuntimeError when a robot's vehicle_sim would be the reference clock (clock mode 3, from
    ``overrides_file:=``): each robot's vehicle_sim would publish its own ``/clock`` on the one
    global topic, each from 0. Both robots follow one clock only in mode 2 (use_sim_time:=true
    and another ``/clock`` source)."""
    # sim.launch.py's argument, which both robots' includes take from the command line
    overrides_file = context.launch_configurations.get('overrides_file', '')
    for robot in ROBOTS:
        preset = LaunchConfiguration(f'{robot}_preset').perform(context)
        files = [str(shipped_params_dir() / f'{preset}.yaml'), overrides_file]
        if vehicle_sim_values(files, robot, {}).get('be_reference_clock', False):
            raise RuntimeError(
                f'{" + ".join(path for path in files if path)}: vehicle_sim.be_reference_clock: '
                f'true would make each robot\'s vehicle_sim publish /clock, each from 0 '
                '(clock mode 3 takes one vehicle_sim): set it false; use_sim_time:=true '
                'follows another /clock source; nothing was started')
    return []


def _map_frames(context):
    """The static transforms placing each robot's map frame in the shared ``map``; one ending
    ends the launch, as any wheelsim node does. A ``robot2_y`` that is no finite number fails
    the launch (this runs before any process starts: ``processes``)."""
    text = LaunchConfiguration('robot2_y').perform(context)
    offset_m = number('robot2_y', text)
    if not math.isfinite(offset_m):
        raise RuntimeError(f'robot2_y:={text} is invalid: must be a finite number')
    return [
        Node(package='tf2_ros', executable='static_transform_publisher',
             name=f'{robot}_map_placement', output='log',
             arguments=['--y', repr(offset), '--frame-id', 'map',
                        '--child-frame-id', f'{robot}/map'],
             parameters=[{'use_sim_time': LaunchConfiguration('use_sim_time')}],
             on_exit=ends_launch(f'{robot}_map_placement'))
        for robot, offset in zip(ROBOTS, (0.0, offset_m), strict=True)
    ]
