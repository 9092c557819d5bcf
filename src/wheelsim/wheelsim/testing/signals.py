"""SIGINT and SIGTERM at random moments of the nodes' lives, beside a busy core (the shutdown
test and ``bench/bench_shutdown.py``).

Each round starts every node (``wheelsim.nodes.NAMES``) as a process side by side (as under
``ros2 launch``) and gives each its signal at its own random moment after its process started:
during the imports, rclpy's initialisation, the node's construction or while it spins (the
start-up takes 1-2.5 s on 2 busy cores). :func:`stop_rounds` returns one :class:`Stop` per signal.
"""

from __future__ import annotations

import itertools
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from wheelsim.nodes import NAMES
from wheelsim.testing.processes import NodeProcess, ending_with_this_process, stopped_cleanly

EXIT_WITHIN_S = 1.0  # the promise (wheelsim.ros.shutdown)
LATEST_SIGNAL_S = 3.0  # after the process started
GIVE_UP_S = 5.0  # a node still running this long after its signal is killed and counted


@contextmanager
def busy_core() -> Iterator[None]:
    """A process that keeps one core busy meanwhile (the CI machine has two)."""
    process = subprocess.Popen(ending_with_this_process([sys.executable, '-c',
                                                         'while True: pass']))
    try:
        yield
    finally:
        process.kill()
        process.wait()


def before_take_over(sig: signal.Signals, code: int | None, output: str) -> bool:
    """True if the signal landed in the interpreter's own start-up, before the executable took
    the signals over (wheelsim.ros.shutdown): Python's default handling ended the process
    (SIGINT: KeyboardInterrupt, which wheelsim's handler never raises; SIGTERM: its default
    action), and nothing of wheelsim ran."""
    if sig == signal.SIGINT:
        return (code == -signal.SIGINT or (code == 1 and 'KeyboardInterrupt' in output)) \
            and not _RAISED_INTERRUPTED.search(output)
    return code == -signal.SIGTERM and not output


#: The exception line of a traceback of wheelsim's Interrupted (not a source line quoted in a
#: traceback, such as ``class Interrupted(BaseException):`` when Python's KeyboardInterrupt
#: came while wheelsim.ros.shutdown was imported: seen in a CI soak round).
_RAISED_INTERRUPTED = re.compile(r'^(?:wheelsim\.ros\.shutdown\.)?Interrupted\b', re.MULTILINE)


#: What CPython prints where it catches an exception in its own start-up and goes on: a
#: callback's ("Exception ignored in"), and site's for a .pth file ("Error processing line").
_SWALLOWED = ('Exception ignored in', 'Error processing line')


def dropped_by_python(output: str) -> bool:
    """True if Python dropped the KeyboardInterrupt of a SIGINT that came before the executable
    took the signals over: raised inside a callback (the weakref callbacks of importlib's module
    locks run at every import) or while site runs a venv's .pth file, it is printed and lost.
    CPython's own start-up does both before any code of the program, so no program closes this
    window (seen twice in CI soak rounds, 0.01 s after the start); the next signal ends the
    process, as ``ros2 launch`` follows an unanswered SIGINT with SIGTERM."""
    return any(mark in output for mark in _SWALLOWED) and 'KeyboardInterrupt' in output


@dataclass(frozen=True)
class Stop:
    """One signal to one node: when it came, how the process ended and how soon."""

    node: str
    signal: signal.Signals
    moment_s: float  # after the process started
    code: int | None  # None: still running GIVE_UP_S after the signal (then killed)
    seconds: float  # from the signal (the second one if Python dropped the first) to the end
    output: str
    resent: bool = False  # Python dropped the first signal (dropped_by_python): sent again

    @property
    def clean(self) -> bool:
        """Exit 0 (or a known clean end, :func:`stopped_cleanly`), or Python's default end
        before wheelsim took the signals over, within :data:`EXIT_WITHIN_S`."""
        ended = self.code is not None and (
            stopped_cleanly(self.node, self.code, self.output)
            or before_take_over(self.signal, self.code, self.output))
        return ended and self.seconds <= EXIT_WITHIN_S


def one_round(rng: random.Random, sig: signal.Signals) -> list[Stop]:
    """Start every node, signal each at a random moment after its start."""
    nodes = {name: NodeProcess(f'wheelsim.nodes.{name}') for name in NAMES}
    try:
        started = time.monotonic()
        moments = {name: rng.uniform(0.0, LATEST_SIGNAL_S) for name in NAMES}
        sent: dict[str, float] = {}
        resent: set[str] = set()
        ended: dict[str, tuple[int | None, float]] = {}
        while len(ended) < len(nodes):
            for name, node in nodes.items():
                now = time.monotonic()
                if name not in sent and now >= started + moments[name]:
                    node.process.send_signal(sig)
                    sent[name] = now
                if name in sent and name not in ended:
                    code = node.process.poll()
                    if code is None and name not in resent and \
                            now - sent[name] > EXIT_WITHIN_S and dropped_by_python(node.output()):
                        node.process.send_signal(sig)  # as ros2 launch would, with SIGTERM
                        sent[name] = now
                        resent.add(name)
                    elif code is not None or now - sent[name] > GIVE_UP_S:
                        ended[name] = (code, time.monotonic() - sent[name])
            time.sleep(0.005)
    finally:
        for node in nodes.values():
            node.stop(timeout_s=1.0)
    return [Stop(name, sig, moments[name], *ended[name], nodes[name].output(),
                 name in resent) for name in NAMES]


def stop_rounds(seed: str, signals: Sequence[signal.Signals], rounds: int) -> list[Stop]:
    """``rounds`` rounds beside a busy core, the signals taking turns; seeded by ``seed``."""
    rng = random.Random(seed)
    with busy_core():
        return [stop for _, sig in zip(range(rounds), itertools.cycle(signals))
                for stop in one_round(rng, sig)]


def describe(stop: Stop) -> str:
    """One stop for a failure message: the node's last output, or from a crash's stacks on."""
    crash = stop.output.find('Fatal Python error')
    output = stop.output[crash:crash + 4000] if crash >= 0 else stop.output[-2000:]
    again = ' (dropped by Python, sent again)' if stop.resent else ''
    return (f'{stop.node}: {stop.signal.name} {stop.moment_s:.2f} s after the start{again}, '
            f'exit code {stop.code} after {stop.seconds:.2f} s\n{output}')
