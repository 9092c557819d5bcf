"""Which ROS packages a launch file may start, checked against the ROS install before it starts.

- :func:`require`: an action, placed before every process of a launch file, that fails the launch
  with one line naming each missing package and its Ubuntu package when a package the launch
  cannot do without is not installed, so that a launch never fails half-way with nodes running.
- :func:`optional`: an action giving the actions of an optional tool (RViz, PlotJuggler, the
  keyboard teleop, Nav2) only when all its packages are installed; otherwise one line says what
  is missing and how to install it, and the rest of the launch runs.

A package counts as installed when the ament index of the sourced workspaces has it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from ament_index_python.packages import PackageNotFoundError, get_package_prefix
from launch.action import Action
from launch.actions import LogInfo, OpaqueFunction
from launch.condition import Condition
from launch.launch_context import LaunchContext


def installed(package: str) -> bool:
    """Whether ``package`` is in the ament index of the sourced workspaces."""
    try:
        get_package_prefix(package)
    except PackageNotFoundError:
        return False
    return True


def apt_package(package: str) -> str:
    """The Ubuntu package of ROS package ``package`` for the sourced distro (Jazzy by default)."""
    distro = os.environ.get('ROS_DISTRO') or os.environ.get('WHEELSIM_DISTRO') or 'jazzy'
    return f"ros-{distro}-{package.replace('_', '-')}"


def _missing_text(missing: Sequence[str], apt: Sequence[str]) -> str:
    return (f"{', '.join(missing)} not installed (sudo apt install "
            f"{' '.join(dict.fromkeys(apt))})")


def require(packages: dict[str, str], what: str) -> OpaqueFunction:
    """Fail the launch at once unless every package of ``{package: apt name}`` is installed."""

    def check(_context: LaunchContext) -> list[Action]:
        missing = [package for package in packages if not installed(package)]
        if missing:
            raise RuntimeError(
                f'{what} needs {_missing_text(missing, [packages[p] for p in missing])}; '
                'nothing was started')
        return []

    return OpaqueFunction(function=check)


def optional(
    packages: dict[str, str],
    what: str,
    actions: Callable[[LaunchContext], list[Action]],
    condition: Condition | None = None,
) -> OpaqueFunction:
    """``actions(context)`` when every package of ``{package: apt name}`` is installed; otherwise
    one line saying that ``what`` does not start and how to install it."""

    def start(context: LaunchContext) -> list[Action]:
        missing = [package for package in packages if not installed(package)]
        if missing:
            text = _missing_text(missing, [packages[p] for p in missing])
            return [LogInfo(msg=f'wheelsim: {what} not started: {text}')]
        return actions(context)

    return OpaqueFunction(function=start, condition=condition)
