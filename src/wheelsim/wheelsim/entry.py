"""The ``wheelsim`` executable's entry point: it loads the command (:mod:`wheelsim.cli`, about
0.2 s of imports) so that a Ctrl-C or SIGTERM meanwhile ends it as one later does, with one
line and exit 130, not with a traceback or a silent kill. Imports nothing heavy before that."""

from __future__ import annotations

import signal
import sys

from wheelsim.run.held_signals import EXIT_INTERRUPTED


def main() -> int:
    # found in review: a SIGTERM before the command took it over (as Ctrl-C) killed the
    # process without a word; the command sets its own handlers once loaded
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        from wheelsim import cli
    except KeyboardInterrupt:
        print('wheelsim: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED
    return cli.main()
