"""``python -m wheelsim.nodes NAME [--ros-args ...]``: run node NAME as its executable does."""

import sys

from wheelsim.nodes import NAMES, main

if len(sys.argv) < 2 or sys.argv[1] not in NAMES:
    sys.exit(f'usage: python -m wheelsim.nodes {{{",".join(NAMES)}}} [--ros-args ...]')
name = sys.argv.pop(1)
main(name)
