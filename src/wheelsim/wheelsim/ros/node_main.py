"""``main()`` of a wheelsim node: one clear error line for bad start-up input, clean shutdown.

    def main(args=None) -> int:
        return run_node(VehicleSim, 'vehicle_sim', args)

Signals: SIGINT and SIGTERM only set a stop request (:class:`StopRequest`). The signal also
wakes the executor at once (Python's wake-up fd, read by a small thread that triggers a guard
condition), and the executor never waits longer than :data:`SHUTDOWN_POLL_S` anyway, so the node
stops at once whenever the signal comes (during start-up, in a callback, while waiting). rclpy's
own signal handling is not installed: with it, a node sometimes missed a SIGINT and blocked in
``rcl_wait`` until killed (seen on Jazzy and Kilted, under load).

Should the shutdown itself hang (seen three times in CI as a launch stopped; the two times since
this watchdog inside rclpy's ``Node.destroy_node``, in the rcl node's and, for the process's last
node, the Fast DDS participant's teardown; docs/reliability.md), the first signal has armed a
watchdog (:mod:`faulthandler`; a signal during start-up arms it when the node would start spinning):
:data:`SHUTDOWN_TIMEOUT_S` later it prints every thread's Python stack to standard error, which
shows where it hung, and ends the process with exit code 1.

A crash (a segmentation fault in a library, say) prints every thread's Python stack to standard
error before the process dies (:func:`faulthandler.enable`), so a rare one can be traced.

Exit codes: 0 after SIGINT, SIGTERM or an external shutdown, 2 when the node cannot start
because of its parameters or arguments (the message names the parameter, the value and the
allowed range; no stack trace). Once running, a failing callback is logged and skipped
(:func:`spin_until_stopped`): no message ends a node.

:func:`run_node` ends the process itself once the node is destroyed and rclpy is shut down
(which also finishes rcl's logging): the interpreter's own teardown of the loaded modules is
skipped, because with numba loaded it alone took 0.3 to 2.5 s on a loaded 2-core machine, more
than the 1 s a node has to exit. Compose nodes in one process through their classes, not
through ``main()``.
"""

from __future__ import annotations

import faulthandler
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from typing import NoReturn

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from wheelsim.core.params import ParameterError

EXIT_BAD_INPUT = 2
SHUTDOWN_POLL_S = 1.0  # the longest the executor waits before it looks at the stop request
#: From the first SIGINT or SIGTERM to the watchdog's traceback and exit 1 (launch escalates to
#: SIGTERM after 5 s).
SHUTDOWN_TIMEOUT_S = 3.0
CALLBACK_ERROR_PERIOD_S = 5.0  # throttle of the error logged for a failed callback


class StopRequest:
    """Set by SIGINT or SIGTERM (Python handlers, run by the main thread between two executor
    waits); the node's loop ends when it is set. :meth:`wake` makes a signal wake a node's
    executor at once."""

    def __init__(self) -> None:
        self.signal_name = ''
        self._running = False  # the node is built and spinning (see wake)
        for sig in (signal.SIGINT, signal.SIGTERM):
            signal.signal(sig, self._on_signal)
        self._read_fd, write_fd = os.pipe()
        os.set_blocking(write_fd, False)
        signal.set_wakeup_fd(write_fd, warn_on_full_buffer=False)

    def _on_signal(self, signum: int, _frame: object) -> None:
        first = not self.signal_name
        self.signal_name = signal.Signals(signum).name
        if first and self._running:
            self._arm_watchdog()

    @staticmethod
    def _arm_watchdog() -> None:
        """Traceback and exit 1 unless the process has ended within SHUTDOWN_TIMEOUT_S."""
        faulthandler.dump_traceback_later(SHUTDOWN_TIMEOUT_S, exit=True, file=sys.stderr)

    def __bool__(self) -> bool:
        return bool(self.signal_name)

    def wake(self, node: Node) -> None:
        """From now on a signal triggers a guard condition of ``node``: its executor wakes.
        Called when the node starts spinning; from then on the first signal arms the shutdown
        watchdog (see the module doc)."""
        guard = node.create_guard_condition(lambda: None)

        def forward() -> None:
            while os.read(self._read_fd, 1):  # one byte per signal, written by the C handler
                guard.trigger()

        threading.Thread(target=forward, name='signal wake-up', daemon=True).start()
        self._running = True
        if self.signal_name:  # it came during start-up: the shutdown starts now
            self._arm_watchdog()


def spin_until_stopped(node: Node, stop: StopRequest) -> None:
    """Spin ``node`` on the global executor until ``stop`` is set or its context shuts down.

    An exception escaping a callback (a message no check foresaw, such as a ``/clock`` with a
    negative time, which rclpy's own time source cannot take) is logged as an error, at most
    every :data:`CALLBACK_ERROR_PERIOD_S`, with the number so far; the node keeps running with
    the state it had.
    """
    executor = rclpy.get_global_executor()
    executor.add_node(node)
    stop.wake(node)
    failures = 0
    try:
        while not stop and node.context.ok():
            try:
                executor.spin_once(timeout_sec=SHUTDOWN_POLL_S)
            except ExternalShutdownException:
                raise
            except Exception as err:  # noqa: BLE001 - any callback: logged, never fatal
                if stop or not node.context.ok():
                    break
                failures += 1
                node.get_logger().error(
                    f'a callback failed and was skipped ({failures} so far): {err!r}',
                    throttle_duration_sec=CALLBACK_ERROR_PERIOD_S)
    finally:
        executor.remove_node(node)


def _error(program: str, text: str) -> int:
    print(f'{program}: error: {text}', file=sys.stderr, flush=True)
    return EXIT_BAD_INPUT


def end_process(code: int) -> NoReturn:
    """Flush standard output and error and end the process with ``code``, skipping the
    interpreter's teardown (see the module doc)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_node(
    factory: Callable[[], Node], program: str, args: Sequence[str] | None = None
) -> NoReturn:
    """Initialise rclpy with ``args``, build the node with ``factory``, spin until a stop,
    then end the process with the exit code (:func:`end_process`).

    ``program`` names the executable in error messages.
    """
    end_process(_run(factory, program, args))


def _run(factory: Callable[[], Node], program: str, args: Sequence[str] | None) -> int:
    """:func:`run_node`'s work; returns the exit code."""
    faulthandler.enable(file=sys.stderr, all_threads=True)
    stop = StopRequest()
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as err:  # noqa: BLE001 - rcl reports bad --ros-args as RCLError
        text = str(err).split(', at /')[0]  # drop the C source locations rcl appends
        return _error(program, f'invalid ROS arguments: {text}')
    try:
        node = factory()
    except (ParameterError, ParameterException) as err:
        refused = str(err)
    else:
        refused = None
    if refused is not None:
        code = _error(program, refused)  # first: the message must not depend on the shutdown
        # The node was built up to the refused parameter, its rcl node and DDS participant
        # included; unreachable now, but in reference cycles, which only a collection frees.
        # Without it end_process would leave the participant's shared memory in /dev/shm.
        gc.collect()
        rclpy.try_shutdown()
        return code
    try:
        spin_until_stopped(node, stop)
    except ExternalShutdownException:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0
