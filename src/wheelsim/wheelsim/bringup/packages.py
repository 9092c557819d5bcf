"""Which ROS packages a launch file may start, and when its processes start.

- :func:`require`: an action that fails the launch with one line naming each missing package and
  its Ubuntu package when a package the launch cannot do without is not installed.
- :func:`optional`: the actions of an optional tool (RViz, PlotJuggler, Nav2) when all its
  packages are installed. Otherwise, when the user asked for the tool on the command line
  (``rviz:=true`` given to ``ros2 launch``), the launch fails saying what to install; when not
  (the argument's default, or a value an including launch file set), one line says that the tool
  does not start and how to install it, and the rest of the launch runs.
- :func:`rviz`: RViz with a configuration file, through :func:`optional` (argument ``rviz``).
- :func:`processes`: the process actions of a launch file, started only once the whole launch
  description has been evaluated.
- :func:`ends_launch`: the ``on_exit`` of a process whose exit ends the launch (non-zero
  exit code when it failed).

A launch that fails therefore leaves no process behind: every check of every launch file (a
missing package, a bad argument or parameters file) runs while the launch description is
evaluated, before any process starts, and launch starts no process once it is shutting down.
This matters because launch (3.4, Jazzy: ros2/launch#747) loses track of the processes started
in the same evaluation as an action that raises: they would outlive the failed launch. A process
that exits once started ends the launch through its ``on_exit`` action (:func:`ends_launch`),
which stops every other process.

A package counts as installed when the ament index of the sourced workspaces has it.
"""

from __future__ import annotations

import copy
import signal
from collections.abc import Callable

import yaml
from ament_index_python.packages import PackageNotFoundError, get_package_prefix
from launch.action import Action
from launch.actions import GroupAction, LogInfo, OpaqueFunction, Shutdown, TimerAction
from launch.condition import Condition
from launch.conditions import IfCondition
from launch.events.process import ProcessExited
from launch.launch_context import LaunchContext
from launch.some_substitutions_type import SomeSubstitutionsType
from launch.substitutions import LaunchConfiguration
from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
from launch_ros.actions import Node, PushROSNamespace, SetParameter

from wheelsim.ros.distro import ros_distro

Build = Callable[[LaunchContext], list[Action]]


def installed(package: str) -> bool:
    """Whether ``package`` is in the ament index of the sourced workspaces."""
    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


def apt_package(package: str) -> str:
    """The Ubuntu package of ROS package ``package`` for the sourced distro (Jazzy by default)."""
    distro = ros_distro() or 'jazzy'
    return f"ros-{distro}-{package.replace('_', '-')}"


def _missing(packages: dict[str, str]) -> tuple[str, str] | None:
    """``(missing packages, "install <apt packages>")`` in words, or None if none is missing."""
    missing = [package for package in packages if not installed(package)]
    if not missing:
        return None
    verb = 'is' if len(missing) == 1 else 'are'
    apt = ' '.join(dict.fromkeys(packages[package] for package in missing))
    return f"{', '.join(missing)} {verb} not installed", f'install {apt}'


def require(packages: dict[str, str], what: str) -> OpaqueFunction:
    """Fail the launch at once unless every package of ``{package: apt name}`` is installed."""

    def check(_context: LaunchContext) -> list[Action]:
        if missing := _missing(packages):
            raise RuntimeError(f'{what}: {missing[0]}; {missing[1]}; nothing was started')
        return []

    return OpaqueFunction(function=check)


def processes(build: Build, condition: Condition | None = None) -> OpaqueFunction:
    """The actions ``build(context)`` returns, evaluated now and executed once the whole launch
    description has been evaluated.

    ``build`` runs where this action stands, so that whatever is wrong (it raises) fails the
    launch before any process of it starts. The actions it returns run in the launch's next
    event round (a zero-period ``TimerAction``), with the launch configurations ``build`` saw
    (namespace, remappings, global parameters of the enclosing groups); launch executes no
    process action once a failure has begun its shutdown.
    """

    def defer(context: LaunchContext) -> list[Action]:
        actions = build(context)
        if not actions:
            return []
        configurations = {name: copy.copy(value)
                          for name, value in context.launch_configurations.items()}

        def restore(later: LaunchContext) -> list[Action]:
            later.launch_configurations.update(configurations)
            return []

        return [TimerAction(period=0.0, actions=[
            GroupAction([OpaqueFunction(function=restore), *actions])])]

    return OpaqueFunction(function=defer, condition=condition)


def command_line_value(context: LaunchContext, argument: str) -> str | None:
    """The text of the last ``argument:=...`` given to ``ros2 launch``, or None."""
    values = [value for name, _, value in (item.partition(':=') for item in context.argv)
              if name == argument]
    return values[-1] if values else None


def optional(packages: dict[str, str], what: str, build: Build,
             argument: str | None = None) -> OpaqueFunction:
    """``build(context)`` as :func:`processes` when every package of ``{package: apt name}`` is
    installed; ``argument``, if given, is the launch argument switching the tool on (nothing
    happens while it is false).

    A package missing: with ``argument:=<true>`` on the command line, RuntimeError (the launch
    fails, nothing started) saying what to install; otherwise one line saying that ``what`` does
    not start, what to install, and (with ``argument``) that ``argument:=false`` silences it.
    """

    def start(context: LaunchContext) -> list[Action]:
        missing = _missing(packages)
        if missing is None:
            return build(context)
        if argument is None:
            return [LogInfo(msg=f'wheelsim: {missing[0]}: {what} not started; {missing[1]}')]
        value = command_line_value(context, argument)
        if value is not None:
            raise RuntimeError(f'{argument}:={value} asks for {what}, but {missing[0]}: '
                               f'{missing[1]}, or pass {argument}:=false; nothing was started')
        return [LogInfo(msg=f'wheelsim: {missing[0]}: {what} not started; {missing[1]} or '
                            f'pass {argument}:=false')]

    condition = None if argument is None else IfCondition(LaunchConfiguration(argument))
    return processes(start, condition)


#: The launch-context global that :func:`ends_launch` sets once an exit has asked for the
#: shutdown.
_SHUTDOWN_ASKED = 'wheelsim_shutdown_asked'


def ends_launch(name: str) -> Callable[[ProcessExited, LaunchContext], list[Action]]:
    """The ``on_exit`` of a process the launch cannot run without (``Node(on_exit=...)``): its
    exit ends the launch. A failure (exit code other than 0, or a signal other than SIGINT or
    SIGTERM, which stop it) before the launch is shutting down also makes ``ros2 launch`` exit
    1: launch (3.4) exits non-zero only for an exception, so this raises one, naming the
    process and its code; launch then shuts down as for ``Shutdown``. Once the launch is
    shutting down it does nothing. A clean exit asks for the shutdown with a ``Shutdown``
    event, once: launch handles it after the events already queued (the exits of other
    processes stopped by the same signal), and launch_ros shuts its ROS adapter down on every
    shutdown event, a second one raising (exit 1 after Ctrl-C)."""

    def on_exit(event: ProcessExited, context: LaunchContext) -> list[Action]:
        if context.is_shutdown:
            return []
        code = event.returncode
        if code not in (0, -signal.SIGINT, -signal.SIGTERM):
            raise RuntimeError(f'{_full_name(event, name)} exited with code {code}: the launch '
                               'ends')
        if context.get_locals_as_dict().get(_SHUTDOWN_ASKED):
            return []
        context.extend_globals({_SHUTDOWN_ASKED: True})
        return [Shutdown(reason=f'{_full_name(event, name)} exited')]

    return on_exit


def _full_name(event: ProcessExited, name: str) -> str:
    """The exited node's fully qualified name (``/robot1/controller``: launch_ros's
    ``Node.node_name``, which tells two robots' nodes apart), else ``name``."""
    node = event.action
    if isinstance(node, Node) and node.is_node_name_fully_specified():
        return node.node_name
    return name


def in_namespace(build: Build) -> GroupAction:
    """``build``'s actions (:func:`processes`) under the ``namespace`` launch argument, every
    node with the ``use_sim_time`` launch argument as its parameter."""
    return GroupAction([
        PushROSNamespace(LaunchConfiguration('namespace')),
        SetParameter('use_sim_time', LaunchConfiguration('use_sim_time')),
        processes(build),
    ])


def rviz(config: SomeSubstitutionsType, frame_prefix: SomeSubstitutionsType = '') -> OpaqueFunction:
    """RViz with the configuration file ``config`` when the ``rviz`` argument is true
    (:func:`optional`); with a ``frame_prefix`` (``robot1/``: every frame of the robot carries
    it), its fixed frame is the configuration's with that prefix (``rviz2 -f``), so that the
    view and its "2D Goal Pose" are in the robot's frames. Its use_sim_time comes from the
    enclosing ``SetParameter``."""

    def start(context: LaunchContext) -> list[Action]:
        path, prefix = (perform_substitutions(context, normalize_to_list_of_substitutions(x))
                        for x in (config, frame_prefix))
        return [Node(package='rviz2', executable='rviz2', name='rviz2', output='log',
                     arguments=rviz_arguments(path, prefix))]

    return optional({'rviz2': apt_package('rviz2')}, 'RViz', start, argument='rviz')


def rviz_arguments(config_path: str, frame_prefix: str) -> list[str]:
    """rviz2's command-line arguments for the configuration file ``config_path`` and the
    robot's ``frame_prefix`` (see :func:`rviz`): its fixed frame (RViz's default ``map`` where
    it names none) with the prefix, unless it has it already. A file that cannot be read is
    left to rviz2 to report."""
    arguments = ['-d', config_path]
    if not frame_prefix:
        return arguments
    try:
        with open(config_path) as config_file:
            view = yaml.safe_load(config_file) or {}
    except (OSError, yaml.YAMLError):
        return arguments
    options = (view.get('Visualization Manager') or {}).get('Global Options') or {}
    fixed = str(options.get('Fixed Frame') or 'map')
    return arguments + ['-f', fixed if fixed.startswith(frame_prefix) else frame_prefix + fixed]
