"""Drive the simulated vehicle wheel by wheel from a gamepad: tank or arcade (wheel_teleop).

    ros2 launch wheelsim sim.launch.py                         # in one terminal
    ros2 launch wheelsim joy_teleop.launch.py mapping:=tank    # in another, the pad plugged in

joy's ``joy_node`` reads the pad (``device_id``) and repeats a held stick at 20 Hz;
wheelsim's ``wheel_teleop`` maps the sticks to wheel joint velocities on ``wheel_commands``,
which vehicle_sim takes beside cmd_vel (docs/teleop.md). For a differential or omni vehicle: a
car takes cmd_vel (teleop.launch.py). Do not run it next to a controller that also commands the
vehicle (demo.launch.py, nav2.launch.py): the last command of either wins. Without the joy
package installed the launch fails, saying what to install; nothing is started.
"""

from functools import partial

from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from wheelsim.bringup.arguments import as_given, checked, number
from wheelsim.bringup.packages import apt_package, in_namespace, require
from wheelsim.bringup.params_files import check_node_values


def _teleop_parameters(context: LaunchContext) -> dict:
    """wheel_teleop's parameters, checked as the node checks them (RuntimeError naming the
    launch arguments given on the command line, or this file when none was, and the
    parameter: the launch fails, nothing started)."""
    mapping = LaunchConfiguration('mapping').perform(context)
    enable_button = number('enable_button',
                           LaunchConfiguration('enable_button').perform(context), int)
    teleop = {'mapping': mapping, 'enable_button': enable_button}
    label = ' '.join(as_given(context, list(teleop))) or 'joy_teleop.launch.py'
    check_node_values(label, 'wheel_teleop', teleop)
    return teleop


def _nodes(teleop: dict, context: LaunchContext):
    device_id = number('device_id', LaunchConfiguration('device_id').perform(context), int)
    return [
        Node(package='joy', executable='joy_node', name='joy_node', output='screen',
             parameters=[{'device_id': device_id, 'autorepeat_rate': 20.0}]),
        Node(package='wheelsim', executable='wheel_teleop', name='wheel_teleop',
             output='screen', parameters=[teleop]),
    ]


def _checked_then_started(context: LaunchContext) -> list:
    """wheel_teleop's parameters checked (read once), then joy required, then the nodes
    started with those parameters: a bad parameter is reported before a missing joy."""
    teleop = _teleop_parameters(context)
    return [require({'joy': apt_package('joy')}, 'joy_teleop.launch.py'),
            in_namespace(partial(_nodes, teleop))]


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the vehicle to drive (its wheel_commands)'),
        DeclareLaunchArgument(
            'mapping', default_value='arcade',
            description='arcade: left stick throttle and turn; tank: one stick per side'),
        DeclareLaunchArgument(
            'enable_button', default_value='-1',
            description='Joy button to hold while driving (-1: none)'),
        DeclareLaunchArgument(
            'device_id', default_value='0', description='The pad: /dev/input/js<device_id>'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Follow /clock (clock modes 2 and 3)'),
    ]
    # enable_button is checked with wheel_teleop's parameters (_teleop_parameters), next.
    check = checked(booleans=['use_sim_time'], numbers={'device_id': int},
                    choices={'mapping': ['arcade', 'tank']}, namespaces=['namespace'])
    return LaunchDescription([*arguments, check, OpaqueFunction(function=_checked_then_started)])
