"""``main()`` of a wheelsim node: one clear error line for bad start-up input, clean shutdown.

    def main(args=None) -> int:
        return run_node(VehicleSim, 'vehicle_sim', args)

Exit codes: 0 after SIGINT or an external shutdown, 2 when the node cannot start because of its
parameters or arguments (the message names the parameter, the value and the allowed range; no
stack trace), 1 if the node fails later.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node

from wheelsim.core.params import ParameterError

EXIT_BAD_INPUT = 2


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
        rclpy.try_shutdown()
        return _error(program, str(err))
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except Exception:
        if rclpy.ok():
            raise
        # Ctrl-C or SIGTERM shut the context down while a callback was publishing: that
        # callback's error is part of a clean shutdown, not a failure of the node.
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
