"""``ros2 launch`` where the ros2 command is missing (a venv with ../shared/ros-launch's tooling).

    python -m wheelsim.testing.ros2_launch [-n] PACKAGE FILE [name:=value ...]
    python -m wheelsim.testing.ros2_launch [-n] PATH/TO/FILE.launch.py [name:=value ...]
    python -m wheelsim.testing.ros2_launch PACKAGE FILE --show-args

Runs the launch file through ``ros2launch.api.launch_a_launch_file``, the call ``ros2 launch``
makes. Interactively (the default) SIGINT, as Ctrl-C sends it to the terminal's whole process
group, shuts the launch down as ``ros2 launch`` does: launch sends its processes no SIGINT of
its own (they have the terminal's), SIGTERM after launch's ``sigterm_timeout`` of 5 s to any
still running, SIGKILL after ``sigkill_timeout``. With ``-n`` (``--noninteractive``, as
``ros2 launch -n``) a SIGINT to the launch process alone shuts it down, and launch sends SIGINT
to every process. Exits with the launch's return code. ``-s``/``--show-args`` (anywhere after
the file, as ``ros2 launch`` takes it) lists the launch file's arguments with
``ros2launch.api.print_arguments_of_launch_file`` instead.
"""

from __future__ import annotations

import os
import sys

from ros2launch.api import (
    get_share_file_path_from_package,
    launch_a_launch_file,
    print_arguments_of_launch_file,
)

SHOW_ARGS = ('-s', '--show-args', '--show-arguments')  # ros2 launch's spellings


def main(argv: list[str]) -> int:
    noninteractive = bool(argv) and argv[0] in ('-n', '--noninteractive')
    if noninteractive:
        argv = argv[1:]
    if not argv:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    if os.path.isfile(argv[0]):
        path, arguments = argv[0], argv[1:]
    else:
        if len(argv) < 2:
            print(f'ros2_launch: {argv[0]} is not a file; give PACKAGE FILE', file=sys.stderr)
            return 2
        path = get_share_file_path_from_package(package_name=argv[0], file_name=argv[1])
        arguments = argv[2:]
    if any(argument in SHOW_ARGS for argument in arguments):
        print_arguments_of_launch_file(launch_file_path=path)
        return 0
    return launch_a_launch_file(launch_file_path=path, launch_file_arguments=arguments,
                                noninteractive=noninteractive)


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
