"""The closed loop without Nav2: sim.launch.py with the wheelsim planner and controller.

    ros2 launch wheelsim demo.launch.py
    ros2 launch wheelsim demo.launch.py preset:=ackermann_car plotjuggler:=true
    ros2 launch wheelsim demo.launch.py params_file:=/path/to/my_robot.yaml rviz:=false

The planner follows the ``waypoints`` of the params file and plans anew to every goal sent with
RViz's "2D Goal Pose" tool; the controller tracks the plan. Every argument is sim.launch.py's
(``ros2 launch wheelsim demo.launch.py --show-args``): this file only sets ``tracking:=true``
(``tracking:=`` given to it fails the launch).
"""

from launch.actions import IncludeLaunchDescription
from launch.launch_description import LaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from wheelsim.bringup.arguments import checked

#: sim.launch.py's arguments this file sets itself, and why; the values it gives them (taken).
REFUSED = {'tracking': 'the demo is sim.launch.py with the planner and controller '
                       '(sim.launch.py runs without them)'}
HARMLESS = {'tracking': ('true',)}


def generate_launch_description():
    share = FindPackageShare('wheelsim')
    simulation = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'sim.launch.py'])),
        launch_arguments={'tracking': 'true'}.items())
    sets = checked(refused=REFUSED, harmless=HARMLESS)
    return LaunchDescription([sets, simulation])
