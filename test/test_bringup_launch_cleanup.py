"""A launch leaves no process behind, here where RViz, PlotJuggler and teleop_twist_keyboard are
not installed.

Each case runs a launch file as ``ros2 launch`` does (``wheelsim.testing.ros2_launch``) in a
session of its own, as a terminal runs it. With the defaults the launch says in one line that
the tool is not installed, runs the rest until Ctrl-C (SIGINT to the session's process group,
once every node is in the ROS graph) and ends. With the tool asked for on the command line, or a
bad argument, it fails with a clear message before starting anything. Either way, once the launch
process has ended, no process of its session is alive: a process it started and lost track of
keeps the session (ros2/launch#747 left twelve nodes of multi_robot.launch.py running).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from bringup_support import PARAMS_DIR, launch_tooling_problem

PROBLEM = launch_tooling_problem()
if PROBLEM is None:
    from wheelsim.bringup.packages import installed

    PROBLEM = next((f'{package} is installed here: these cases are about it missing'
                    for package in ('rviz2', 'plotjuggler', 'teleop_twist_keyboard',
                                    'nav2_bringup') if installed(package)), None)
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM))

SIM = ['/vehicle_sim', '/localization', '/robot_state_publisher']
LOOP = [*SIM, '/planner', '/controller']
RVIZ_MISSING = ('wheelsim: rviz2 is not installed: RViz not started; install ros-'
                '{distro}-rviz2 or pass rviz:=false')
NAV2_MISSING = 'Nav2 (the simulation runs without it) not started; install ros-{distro}-nav'


def session_processes(session: int) -> list[str]:
    """``pid command`` of every live (not zombie) process of the session ``session``."""
    alive = []
    for entry in Path('/proc').iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / 'stat').read_text().rsplit(')', 1)[1].split()
            command = (entry / 'cmdline').read_bytes().replace(b'\0', b' ').decode()
        except OSError:
            continue  # ended meanwhile
        if int(fields[3]) == session and fields[0] != 'Z':
            alive.append(f'{entry.name} {command[:200]}')
    return alive


class Launch:
    """``ros2 launch wheelsim FILE ARGUMENTS`` in a session of its own, output in a file."""

    def __init__(self, tmp_path: Path, file_name: str, arguments: list[str]) -> None:
        self.log = tmp_path / 'launch.txt'
        with open(self.log, 'w') as stream:
            self.process = subprocess.Popen(
                [sys.executable, '-m', 'wheelsim.testing.ros2_launch', 'wheelsim', file_name,
                 *arguments], stdout=stream, stderr=subprocess.STDOUT, start_new_session=True)

    def text(self) -> str:
        return self.log.read_text()

    def interrupt(self) -> None:
        """Ctrl-C in the launch's terminal: SIGINT to its whole process group."""
        os.killpg(self.process.pid, signal.SIGINT)

    def wait(self, timeout_s: float) -> int:
        """The launch's exit code once it ended, and no process of its session alive (any left
        is killed, so that a failing test leaves nothing either)."""
        try:
            returncode = self.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            pytest.fail(f'the launch did not end within {timeout_s} s:\n{self.text()[-4000:]}')
        left = session_processes(self.process.pid)
        if left:
            os.killpg(self.process.pid, signal.SIGKILL)
        assert not left, f'left running after the launch ended: {left}\n{self.text()[-4000:]}'
        return returncode


def graph_nodes(observer) -> set[str]:
    """Fully qualified names of the nodes ``observer`` (a Probe) sees in the ROS graph."""
    return {f"{namespace.rstrip('/')}/{name}"
            for name, namespace in observer.node.get_node_names_and_namespaces()}


@pytest.mark.parametrize(('file_name', 'nodes', 'lines'), [
    ('sim.launch.py', SIM, [RVIZ_MISSING]),
    ('demo.launch.py', LOOP, [RVIZ_MISSING]),
    ('multi_robot.launch.py',
     [f'/{robot}{node}' for robot in ('robot1', 'robot2') for node in LOOP]
     + ['/robot1_map_placement', '/robot2_map_placement'], [RVIZ_MISSING]),
    ('nav2.launch.py', SIM, [RVIZ_MISSING, NAV2_MISSING]),
    ('nav2_bringup.launch.py', SIM, [RVIZ_MISSING, NAV2_MISSING]),
])
def test_defaults_run_without_the_tools_and_ctrl_c_leaves_nothing(
        tmp_path, probe, file_name, nodes, lines):
    launch = Launch(tmp_path, file_name, [])
    up = probe.spin_until(
        lambda: launch.process.poll() is not None or set(nodes) <= graph_nodes(probe), 90.0)
    seen = graph_nodes(probe)
    launch.interrupt()
    returncode = launch.wait(30.0)
    text = launch.text()
    assert up and set(nodes) <= seen, f'nodes up: {sorted(seen)}\n{text[-4000:]}'
    assert returncode == 0, text[-4000:]
    distro = os.environ.get('WHEELSIM_DISTRO', 'jazzy')
    for line in lines:
        assert text.count(line.format(distro=distro)) == 1, f'{line!r} not once:\n{text[-4000:]}'


@pytest.mark.parametrize(('file_name', 'arguments', 'message'), [
    ('sim.launch.py', ['rviz:=true'], 'rviz:=true asks for RViz, but rviz2 is not installed: '
                                      'install ros-{distro}-rviz2, or pass rviz:=false'),
    ('sim.launch.py', ['plotjuggler:=true'],
     'plotjuggler:=true asks for PlotJuggler, but plotjuggler, plotjuggler_ros are not '
     'installed: install ros-{distro}-plotjuggler-ros, or pass plotjuggler:=false'),
    ('demo.launch.py', ['rviz:=true'], 'rviz:=true asks for RViz'),
    ('multi_robot.launch.py', ['rviz:=true'], 'rviz:=true asks for RViz'),
    ('nav2.launch.py', ['rviz:=1'], 'rviz:=1 asks for RViz'),
    ('nav2_bringup.launch.py', ['rviz:=True'], 'rviz:=True asks for RViz'),
    ('teleop.launch.py', [], 'teleop.launch.py: teleop_twist_keyboard is not installed; '
                             'install ros-{distro}-teleop-twist-keyboard; nothing was started'),
    ('joy_teleop.launch.py', ['mapping:=tank'], 'joy_teleop.launch.py: joy is not installed; '
                                                'install ros-{distro}-joy; nothing was started'),
    # robot1 is evaluated before robot2's preset is found missing: robot1 must not start.
    ('multi_robot.launch.py', ['robot2_preset:=no_such_preset'], 'no_such_preset.yaml'),
    ('nav2.launch.py', ['rviz:=false', 'real_time_factor:=fast'],
     'real_time_factor:=fast is invalid: must be a number'),
])
def test_a_launch_failing_before_the_start_starts_nothing(
        tmp_path, ros_domain_id, file_name, arguments, message):
    launch = Launch(tmp_path, file_name, arguments)
    returncode = launch.wait(60.0)
    text = launch.text()
    assert returncode != 0, text[-4000:]
    assert message.format(distro=os.environ.get('WHEELSIM_DISTRO', 'jazzy')) in text, text
    assert 'process started' not in text, text


def test_a_required_node_failing_at_start_ends_the_launch_and_leaves_nothing(
        tmp_path, ros_domain_id):
    """The controller refuses its parameters once started: its exit (on_exit Shutdown) ends
    the launch, which stops every other process."""
    params = tmp_path / 'bad_controller.yaml'
    params.write_text((PARAMS_DIR / 'indoor_differential.yaml').read_text()
                      + '\ncontroller:\n  ros__parameters:\n    control_rate: -5.0\n')
    launch = Launch(tmp_path, 'demo.launch.py', [f'params_file:={params}', 'rviz:=false'])
    launch.wait(60.0)
    text = launch.text()
    assert 'parameter control_rate = -5.0 is invalid' in text, text[-4000:]
    assert text.count('process started') == len(LOOP), text[-4000:]
