"""``main()`` of a wheelsim node: one clear error line for bad start-up input, clean shutdown.

    def main(args=None) -> int:
        return run_node(VehicleSim, 'vehicle_sim', args)

Exit codes: 0 after SIGINT or an external shutdown, 2 when the node cannot start because of its
parameters or arguments (the message names the parameter, the value and the allowed range; no
stack trace), 1 if the node fails later.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from wheelsim.core.params import ParameterError

EXIT_BAD_INPUT = 2


def _shuts_down_soon(timeout_s: float = 1.0) -> bool:
    """Whether the rclpy context is shut down, or is within ``timeout_s`` (rclpy's signal
    handler shuts it down on SIGINT and SIGTERM, a moment after the interrupt is raised)."""
    deadline_s = time.monotonic() + timeout_s
    while rclpy.ok():
        if time.monotonic() > deadline_s:
            return False
        time.sleep(0.01)
    return True


def _error(program: str, text: str) -> int:
    print(f'{program}: error: {text}', file=sys.stderr, flush=True)
    return EXIT_BAD_INPUT


def run_node(
    factory: Callable[[], Node], program: str, args: Sequence[str] | None = None
) -> int:
    """Initialise rclpy with ``args``, build the node with ``factory``, spin until shutdown.

    ``program`` names the executable in error messages.
    """
    try:
        rclpy.init(args=args)
    except Exception as err:  # noqa: BLE001 - rcl reports bad --ros-args as RCLError
        text = str(err).split(', at /')[0]  # drop the C source locations rcl appends
        return _error(program, f'invalid ROS arguments: {text}')
    try:
        node = factory()
    except (ParameterError, ParameterException) as err:
        code = _error(program, str(err))  # first: the message must not depend on the shutdown
        rclpy.try_shutdown()
        return code
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if not _shuts_down_soon():
            raise
        # Ctrl-C or SIGTERM arrived inside a callback or while rclpy was building a received
        # message (the KeyboardInterrupt surfaces as that call's error): part of a clean
        # shutdown, not a failure of the node.
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
