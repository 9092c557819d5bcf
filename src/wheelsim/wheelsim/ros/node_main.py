"""``main()`` of a wheelsim node: one clear error line for bad start-up input, clean shutdown.

    def main(args=None) -> NoReturn:
        run_node(VehicleSim, args)        # VehicleSim(seam), VehicleSim.name == 'vehicle_sim'

Signals (:mod:`wheelsim.ros.shutdown`): SIGINT and SIGTERM end the process within a second
whenever they come, during the start-up too; the node executables take them over before their
slow imports (:mod:`wheelsim.nodes`). rclpy's own signal handling is not installed: with it, a node
sometimes missed a SIGINT and blocked in ``rcl_wait`` until killed (seen on Jazzy and Kilted, under
load). While the node spins, the executor never waits longer than :data:`SHUTDOWN_POLL_S`.

A crash (a segmentation fault in a library, say) prints every thread's Python stack to standard
error before the process dies (:func:`faulthandler.enable`), so a rare one can be traced.

Exit codes: 0 after SIGINT, SIGTERM or an external shutdown, 2 when the node cannot start
because of its parameters or arguments (the message names the parameter, the value and the
allowed range; no stack trace), 1 when a signal did not end the main loop in time or the
middleware's teardown outlasted its limit, after that message too (with every thread's stack;
:mod:`wheelsim.ros.shutdown`). Once running, a failing callback is logged and skipped
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
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NoReturn

import rclpy
from rclpy.exceptions import ParameterException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.utilities import remove_ros_args

from wheelsim.core.params import ParameterError
from wheelsim.core.params_file import ParamsFileError, read_sections
from wheelsim.ros.seam import LiveSeam, NodeSeam
from wheelsim.ros.shutdown import Interrupted, StopRequest, exit_now, take_over_signals

EXIT_BAD_INPUT = 2
SHUTDOWN_POLL_S = 1.0  # the longest the executor waits before it looks at the stop request
CALLBACK_ERROR_PERIOD_S = 5.0  # throttle of the error logged for a failed callback


def spin_until_stopped(node: Node, stop: StopRequest) -> None:
    """Spin ``node`` on the global executor until ``stop`` is set or its context shuts down.

    An exception escaping a callback (a message no check foresaw, such as a ``/clock`` with a
    negative time, which rclpy's own time source cannot take) is logged as an error, at most
    every :data:`CALLBACK_ERROR_PERIOD_S`, with the number so far; the node keeps running with
    the state it had.
    """
    executor = rclpy.get_global_executor()
    executor.add_node(node)
    guard = node.create_guard_condition(lambda: None)
    stop.spinning(guard.trigger)
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
        stop.stopping()
        executor.remove_node(node)


def _error(program: str, text: str) -> int:
    print(f'{program}: error: {text}', file=sys.stderr, flush=True)
    return EXIT_BAD_INPUT


def end_process(code: int) -> NoReturn:
    """Flush standard output and error and end the process with ``code``, skipping the
    interpreter's teardown (see the module doc)."""
    exit_now(code)


def run_node(node_class: Callable[[NodeSeam], Any], args: Sequence[str] | None = None
             ) -> NoReturn:
    """Initialise rclpy with ``args``, build ``node_class`` on a :class:`LiveSeam` named
    ``node_class.name``, spin until a stop, then end the process with the exit code
    (:func:`end_process`).

    The node's name also names the executable in error messages. The signals are taken over
    here unless the executable did it earlier (:func:`wheelsim.ros.shutdown.take_over_signals`).
    A node class with a ``close()`` method gets it called before its seam is destroyed.
    """
    program = node_class.name
    stop = take_over_signals(program)
    try:
        code = _run(node_class, program, args, stop)
    except Interrupted:  # a signal before the node was built
        code = None
    if code is None:  # here, once the interrupted frames are gone, a collection frees them
        stop.stopping()
        _free_half_built()
        code = 0
    end_process(code)


def _arguments_problem(program: str, args: Sequence[str] | None) -> str | None:
    """Why the command line is refused once rcl has taken it, or None: an argument outside the
    ROS arguments (:func:`_non_ros_arguments`), or a ``--params-file`` that is no ROS params
    file (rcl starts the node without a word for a text file or a YAML list) or that rcl reads
    otherwise than YAML says (:func:`wheelsim.core.params_file.read_sections`)."""
    argv = list(sys.argv if args is None else args)
    others = _non_ros_arguments(argv)
    if others:
        return (f'unexpected argument{"s" * (len(others) > 1)} {" ".join(others)}: the node '
                f'takes ROS arguments only, after --ros-args (e.g. {program} --ros-args -p '
                'NAME:=VALUE)')
    try:
        read_sections(_params_files(argv[1:]))
    except ParamsFileError as err:
        return f'--params-file {err}'
    return None


def _non_ros_arguments(argv: list[str]) -> list[str]:
    """The arguments after the program's name that are not ROS's (rcl parsed and took the
    rest, deprecated remaps ``from:=to`` included): none of wheelsim's nodes takes any, so one
    is a mistake, such as ``-p NAME:=VALUE`` without ``--ros-args`` before it (rcl reads the
    ``NAME:=VALUE`` as a topic remap and the parameter keeps its default)."""
    if not any(_maybe_not_ros(argv[1:])):  # as usual: rcl need not parse (and warn) again
        return []
    return remove_ros_args(args=argv)[1:]


def _sorted_arguments(arguments: Sequence[str]) -> Iterator[tuple[bool, str]]:
    """``(inside, argument)`` for each argument: inside ``--ros-args ... [--]`` or not (the
    markers themselves count as inside)."""
    inside = False
    for argument in arguments:
        if argument == '--ros-args':
            inside = True
            yield True, argument
        elif inside:
            inside = argument != '--'
            yield True, argument
        else:
            yield False, argument


def _maybe_not_ros(arguments: Sequence[str]) -> Iterator[str]:
    """The arguments outside ``--ros-args ... [--]`` that are not deprecated remaps."""
    for inside, argument in _sorted_arguments(arguments):
        if not inside and (':=' not in argument or argument.startswith('-')):
            yield argument


def _params_files(arguments: Sequence[str]) -> list[str]:
    """The files named by ``--params-file FILE`` among the ROS arguments, in order."""
    files, follows = [], False
    for inside, argument in _sorted_arguments(arguments):
        if follows and inside:
            files.append(argument)
        follows = inside and argument == '--params-file'
    return files


def _free_half_built() -> None:
    """Free a node that was built part of the way (its rcl node and DDS participant exist,
    unreachable now but in reference cycles, which only a collection frees) and shut rclpy
    down: without it the participant's shared memory would stay in /dev/shm."""
    gc.collect()
    rclpy.try_shutdown()


def _run(node_class: Callable[[NodeSeam], Any], program: str, args: Sequence[str] | None,
         stop: StopRequest) -> int:
    """:func:`run_node`'s work; returns the exit code."""
    faulthandler.enable(file=sys.stderr, all_threads=True)
    # The imports' objects last as long as the process: kept out of the collections from here
    # on, so that an automatic one during the start-up (in whichever thread allocates), or the
    # one that frees a node abandoned by a signal or a refused parameter (_free_half_built),
    # scans only what the start-up built (the planner's: 0.03 s instead of 0.16-0.28 s beside a
    # busy core, of the 1 s a signal allows).
    gc.freeze()
    stop.starting()
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as err:  # noqa: BLE001 - rcl reports bad --ros-args as RCLError
        text = str(err).split(', at /')[0]  # drop the C source locations rcl appends
        stop.stopping()  # a signal from here on must not raise Interrupted outside run_node's try
        return _error(program, f'invalid ROS arguments: {text}')
    problem = _arguments_problem(program, args)
    if problem:
        stop.stopping()
        code = _error(program, problem)
        rclpy.try_shutdown()
        return code
    seam = None
    try:
        seam = LiveSeam(program)
        node = node_class(seam)
    except (ParameterError, ParameterException) as err:
        refused = str(err)
    except Exception:
        if not stop:
            raise
        # A signal came and the start-up then failed: a library called back from C (numba's
        # object-code hook, while it compiles) had the signal's Interrupted raised in it, which
        # Python drops there, and failed for it. It ends as the signal would have ended it.
        raise Interrupted(stop.signal_name) from None
    else:
        refused = None
    if refused is not None:  # here, once the refused frames are gone, a collection frees them
        stop.stopping()
        code = _error(program, refused)  # first: the message must not depend on the shutdown
        if seam is not None:
            seam.destroy()  # the rcl node and its DDS participant, with what was built on it
        _free_half_built()
        return code
    # The node and what its start-up loaded (numba's kernels, with numba about 160 000 objects
    # in all) last as long as the process too: a full collection scanning them would pause the
    # node's callbacks for 0.1-0.2 s.
    gc.freeze()
    try:
        spin_until_stopped(seam.rclpy_node, stop)
    except (ExternalShutdownException, Interrupted):
        pass
    finally:
        stop.stopping()
        close = getattr(node, 'close', None)
        if close is not None:
            close()
        seam.destroy()
        rclpy.try_shutdown()
    return 0
