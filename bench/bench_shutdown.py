"""SIGINT and SIGTERM to the four nodes at random moments beside a busy core: how soon each
process ends (wheelsim.testing.signals, the soak test's rounds).

    source env.sh
    python bench/bench_shutdown.py               # 50 rounds: 50 signals per node, about 3 min
    python bench/bench_shutdown.py --rounds 10

Prints, per node and in all, the median and largest seconds from the signal to the end of the
process, how many ended unclean or later than 1 s, and how many signals landed before the
executable took them over (Python's default end), then the whole command's wall and CPU time.
"""

from __future__ import annotations

import argparse
import resource
import signal
import statistics
import sys
import time

from wheelsim.nodes import NAMES
from wheelsim.ros.dds_domain import loopback_domain
from wheelsim.testing.signals import EXIT_WITHIN_S, before_take_over, describe, stop_rounds


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--rounds', type=int, default=50)
    parser.add_argument('--seed', default='bench')
    args = parser.parse_args()
    started = time.monotonic()
    with loopback_domain():
        stops = stop_rounds(args.seed, (signal.SIGINT, signal.SIGTERM), args.rounds)
    for name in (*NAMES, 'all'):
        mine = [s for s in stops if name in ('all', s.node)]
        seconds = [s.seconds for s in mine]
        early = sum(before_take_over(s.signal, s.code, s.output) for s in mine)
        print(f'{name:13s} {len(mine):3d} signals: median {statistics.median(seconds):.3f} s, '
              f'max {max(seconds):.3f} s; not clean within {EXIT_WITHIN_S:g} s: '
              f'{sum(not s.clean for s in mine)}; before the take-over: {early}')
    for stop in stops:
        if not stop.clean:
            print(describe(stop))
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    print(f'whole command: {time.monotonic() - started:.0f} s wall, '
          f'{sum(u.ru_utime + u.ru_stime for u in usage):.0f} s CPU (with the busy core)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
