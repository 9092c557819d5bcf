"""SIGINT and SIGTERM to every node at random moments beside a busy core: how soon each
process ends (wheelsim.testing.signals, the soak test's rounds).

    source env.sh
    python bench/bench_shutdown.py               # 50 rounds: 50 signals per node, about 3 min
    python bench/bench_shutdown.py --baseline main   # and main's nodes: twice as long

Prints, per node and in all, the median and largest seconds from the signal to the end of the
process, how many ended unclean or later than 1 s, how many the grace period ended (the start-up
or the teardown still running 0.6 s after the signal: exit 0, but late), and how many signals
landed before the executable took them over (Python's default end), then the whole command's
wall and CPU time.

``--baseline REV`` also signals the nodes of git revision REV (its ``src/wheelsim/wheelsim``
exported first on the nodes' ``PYTHONPATH``, set up as set-up sets up the working tree's, each
node started once uncounted), two rounds (one SIGINT, one SIGTERM) at a time in turn with the
working tree's, each pair of turns at the same moments. The moments are drawn per pair of rounds
(seed ``SEED-<round>``), so they differ from those of the soak test. Run it from the
repository's root: from ``src/wheelsim``, Python would import this tree's package first.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import signal
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from bench_node_start import set_up_baseline_nodes
from bench_runner import baseline_tree, variant_codes

from wheelsim.nodes import NAMES
from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.processes import GRACE_OVERRUN
from wheelsim.testing.signals import EXIT_WITHIN_S, Stop, before_take_over, describe, stop_rounds

SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def nodes_from(code: Path | None) -> Iterator[None]:
    """The node processes started meanwhile import wheelsim from ``code`` (None: this tree)."""
    previous = os.environ.get('PYTHONPATH')
    if code is not None:
        os.environ['PYTHONPATH'] = os.pathsep.join([str(code), *filter(None, [previous])])
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop('PYTHONPATH', None)
        else:
            os.environ['PYTHONPATH'] = previous


def report(variant: str, stops: list[Stop], width: int) -> None:
    """Per node and in all: the seconds to the end, and how many stops were not clean, late by
    the grace period, or before the take-over (``width``: of the variant's column)."""
    for name in (*NAMES, 'all'):
        mine = [s for s in stops if name in ('all', s.node)]
        seconds = [s.seconds for s in mine]
        early = sum(before_take_over(s.signal, s.code, s.output) for s in mine)
        graced = sum(GRACE_OVERRUN.search(s.output) is not None for s in mine)
        print(f'{variant:{width}s} {name:13s} {len(mine):3d} signals: median '
              f'{statistics.median(seconds):.3f} s, max {max(seconds):.3f} s; not clean within '
              f'{EXIT_WITHIN_S:g} s: {sum(not s.clean for s in mine)}; ended by the grace '
              f'period: {graced}; before the take-over: {early}')
    for stop in stops:
        if not stop.clean:
            print(describe(stop))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=50)
    parser.add_argument('--seed', default='bench')
    parser.add_argument('--baseline', metavar='REV')
    args = parser.parse_args()
    started = time.monotonic()
    with loopback_domain(), baseline_tree(args.baseline) as old_code:
        if old_code is not None:
            set_up_baseline_nodes(old_code)
        variants = variant_codes(args.baseline, old_code)
        stops: dict[str, list[Stop]] = {name: [] for name in variants}
        for turn in range(0, args.rounds, len(SIGNALS)):
            for name, code in variants.items():
                with nodes_from(code):
                    stops[name] += stop_rounds(f'{args.seed}-{turn}', SIGNALS,
                                               min(len(SIGNALS), args.rounds - turn))
    for name, mine in stops.items():
        report(name, mine, max(map(len, stops)))
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    print(f'whole command: {time.monotonic() - started:.0f} s wall, '
          f'{sum(u.ru_utime + u.ru_stime for u in usage):.0f} s CPU (with the busy core)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
