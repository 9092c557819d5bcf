"""The closed loop without Nav2: sim.launch.py plus the wheelsim planner and controller.

    ros2 launch wheelsim demo.launch.py
    ros2 launch wheelsim demo.launch.py preset:=ackermann_car plotjuggler:=true
    ros2 launch wheelsim demo.launch.py params_file:=/path/to/my_robot.yaml

The planner follows the ``waypoints`` of the params file, and plans anew to every goal sent
with RViz's "2D Goal Pose" tool; the controller tracks the plan. Every argument of
sim.launch.py (model, localization_mode, rviz, plotjuggler, ...) is accepted too.
"""

from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node, PushROSNamespace, SetParameter, SetRemap
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    preset = LaunchConfiguration('preset')
    params_file = LaunchConfiguration('params_file')
    namespace = LaunchConfiguration('namespace')
    frame_prefix = LaunchConfiguration('frame_prefix')
    use_namespaced_tf = LaunchConfiguration('use_namespaced_tf')
    use_sim_time = LaunchConfiguration('use_sim_time')
    log_level = LaunchConfiguration('log_level')

    arguments = [
        DeclareLaunchArgument(
            'preset', default_value='indoor_differential',
            description='Shipped vehicle preset: indoor_differential, ackermann_car, forklift, '
                        'mecanum_omni or all_vehicles (with model:=...)'),
        DeclareLaunchArgument(
            'params_file',
            default_value=[share, '/params/', preset, '.yaml'],
            description='ROS parameters file for every wheelsim node (vehicle, localization, '
                        'waypoints, controller); default: the preset\'s'),
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
            description='Every node follows /clock (clock modes 2 and 3)'),
        DeclareLaunchArgument(
            'log_level', default_value='info',
            description='Log level of the wheelsim nodes (debug, info, warn, error)'),
    ]

    simulation = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'sim.launch.py'])),
        launch_arguments={
            'params_file': params_file,
            'namespace': namespace,
            'frame_prefix': frame_prefix,
            'use_namespaced_tf': use_namespaced_tf,
            'use_sim_time': use_sim_time,
            'log_level': log_level,
        }.items())

    # value_type str: an empty prefix stays '' (a plain substitution would be YAML-parsed to null)
    overrides = {'frame_prefix': ParameterValue(frame_prefix, value_type=str)}
    ros_args = ['--ros-args', '--log-level', log_level]
    tracking = GroupAction([
        PushROSNamespace(namespace),
        SetParameter('use_sim_time', use_sim_time),
        SetRemap('/tf', 'tf', condition=IfCondition(use_namespaced_tf)),
        SetRemap('/tf_static', 'tf_static', condition=IfCondition(use_namespaced_tf)),
        Node(package='wheelsim', executable='planner', name='planner', output='screen',
             parameters=[params_file, overrides], arguments=ros_args),
        Node(package='wheelsim', executable='controller', name='controller', output='screen',
             parameters=[params_file, overrides], arguments=ros_args),
    ])
    return LaunchDescription([*arguments, simulation, tracking])
