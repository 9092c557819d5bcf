"""Drive the simulated vehicle from the keyboard (teleop_twist_keyboard in its own terminal).

    ros2 launch wheelsim sim.launch.py          # in one terminal
    ros2 launch wheelsim teleop.launch.py       # in another: an xterm window opens, type there

The keyboard node needs a terminal of its own: it is started with ``terminal`` as prefix
(default ``xterm -e``). Without a display, run it directly instead:
``ros2 run teleop_twist_keyboard teleop_twist_keyboard``. vehicle_sim takes cmd_vel as Twist
or TwistStamped (``stamped``), so either works. teleop_twist_keyboard 2.4.x refuses a
``frame_id`` without ``stamped:=true``, so ``frame_id`` is passed only with ``stamped:=true``.
Do not run it next to a controller that also publishes cmd_vel (demo.launch.py,
nav2.launch.py): the two would fight. Running this file asks for the keyboard teleop: without
teleop_twist_keyboard installed it fails, saying what to install.
"""

import shlex
import shutil

from launch.actions import DeclareLaunchArgument
from launch.launch_context import LaunchContext
from launch.launch_description import LaunchDescription
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

from wheelsim.bringup.arguments import boolean, checked
from wheelsim.bringup.packages import apt_package, in_namespace, require


def teleop_parameters(stamped: str, frame_id: str) -> dict:
    """teleop_twist_keyboard's parameters: ``frame_id`` only when stamped (2.4.x raises
    "'frame_id' can only be set when 'stamped' is True" otherwise); RuntimeError unless
    ``stamped`` is a boolean."""
    is_stamped = boolean('stamped', stamped)
    return {'stamped': is_stamped, **({'frame_id': frame_id} if is_stamped else {})}


def terminal_prefix(terminal: str) -> str:
    """``terminal``; RuntimeError, before anything starts, when it names no command (launch
    gives its nodes no terminal: the keyboard node would read no keys) or one that is not
    installed (launch would log a traceback and go on without the keyboard node)."""
    try:
        words = shlex.split(terminal)
    except ValueError as err:  # an unclosed quote
        raise RuntimeError(f'terminal:={terminal}: cannot be split into words ({err}); nothing '
                           'was started') from None
    if not any(words):
        raise RuntimeError(
            f'terminal:={terminal}: names no command; the keyboard node reads keys from a '
            "terminal of its own, which launch does not give it: name one (e.g. 'xterm -e'), "
            'or run the keyboard node in a terminal of your own: ros2 run '
            'teleop_twist_keyboard teleop_twist_keyboard; nothing was started')
    if shutil.which(words[0]) is None:
        raise RuntimeError(
            f'terminal:={terminal}: {words[0]} is not installed; install it, give another '
            "terminal:= (e.g. 'gnome-terminal --'), or run the keyboard node in a terminal of "
            'your own: ros2 run teleop_twist_keyboard teleop_twist_keyboard; nothing was started')
    return terminal


def _teleop(context: LaunchContext):
    parameters = teleop_parameters(LaunchConfiguration('stamped').perform(context),
                                   LaunchConfiguration('frame_id').perform(context))
    terminal = terminal_prefix(LaunchConfiguration('terminal').perform(context))
    return [Node(package='teleop_twist_keyboard', executable='teleop_twist_keyboard',
                 name='teleop_twist_keyboard', output='screen',
                 prefix=terminal, parameters=[parameters])]


def generate_launch_description():
    arguments = [
        DeclareLaunchArgument(
            'namespace', default_value='',
            description='Namespace of the vehicle to drive (its cmd_vel)'),
        DeclareLaunchArgument(
            'stamped', default_value='false',
            description='Publish geometry_msgs/TwistStamped instead of Twist'),
        DeclareLaunchArgument(
            'frame_id', default_value='base_link',
            description='Frame of the TwistStamped commands (used only with stamped:=true)'),
        DeclareLaunchArgument(
            'use_sim_time', default_value='false',
            description='Stamp commands with /clock time (clock modes 2 and 3)'),
        DeclareLaunchArgument(
            'terminal', default_value='xterm -e',
            description='Command that opens the terminal the keyboard node reads from'),
    ]
    teleop = in_namespace(_teleop)
    required = require({'teleop_twist_keyboard': apt_package('teleop_twist_keyboard')},
                        'teleop.launch.py')
    check = checked(booleans=['stamped', 'use_sim_time'], namespaces=['namespace'])
    return LaunchDescription([*arguments, check, required, teleop])
