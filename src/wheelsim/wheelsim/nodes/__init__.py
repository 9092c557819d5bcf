"""The ROS 2 nodes, one module each, and the entry points of their executables.

``vehicle_sim``, ``localization``, ``planner``, ``controller`` and ``wheel_teleop`` (setup.py's
console scripts; ``python -m wheelsim.nodes NAME --ros-args ...`` runs the same) take over
SIGINT and SIGTERM before they import their node's module, which takes about a second (rclpy,
numpy, numba), so that Ctrl-C at any moment of the start-up ends them cleanly
(:mod:`wheelsim.ros.shutdown`).
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

from wheelsim.ros.shutdown import take_over_signals

NAMES = ('vehicle_sim', 'localization', 'planner', 'controller', 'wheel_teleop')


def node_module(name: str) -> ModuleType:
    """The module of node ``name``, imported with OpenBLAS (loaded by numpy) limited to one
    thread unless ``OPENBLAS_NUM_THREADS`` is set: a node's arrays are too small for more, and
    OpenBLAS's idle threads spin (about 0.1 s of CPU at start-up)."""
    os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
    return importlib.import_module(f'{__name__}.{name}')


def main(name: str) -> NoReturn:
    """Run node ``name`` (one of :data:`NAMES`) with the process's command-line arguments."""
    take_over_signals(name)  # a signal during the imports ends the process at once
    node_module(name).main()


def vehicle_sim() -> NoReturn:
    main('vehicle_sim')


def localization() -> NoReturn:
    main('localization')


def planner() -> NoReturn:
    main('planner')


def controller() -> NoReturn:
    main('controller')


def wheel_teleop() -> NoReturn:
    main('wheel_teleop')
