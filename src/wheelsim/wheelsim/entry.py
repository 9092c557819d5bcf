"""The ``wheelsim`` executable's entry point: it loads the command (:mod:`wheelsim.cli`, about
0.2 s of imports) so that a Ctrl-C meanwhile ends it as one later does, with one line and exit
130, not with a traceback. Imports nothing heavy before that."""

from __future__ import annotations

import sys

from wheelsim.run.held_signals import EXIT_INTERRUPTED


def main() -> int:
    try:
        from wheelsim import cli
    except KeyboardInterrupt:
        print('wheelsim: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED
    return cli.main()
