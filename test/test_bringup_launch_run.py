"""The launch files run for real (launch / launch_ros from ../shared/ros-launch or a ROS install):
nodes start, topics flow, TF is complete, optional tools missing here are reported in one line,
and every process exits cleanly at shutdown (test_bringup_launch_cleanup.py: the tools asked
for, a launch failing, and what a launch leaves behind).

Each case runs the launch file as ``ros2 launch`` does (``bringup_support.Launch``) with
graph_probe.py beside it, which waits until every node the case names is in the ROS graph and
counts the messages on every topic for at least WINDOW_S seconds and until each topic the case
waits for has had one. Then launch shuts down (``ros2 launch -n``, SIGINT to launch, which sends
SIGINT to every process), and launch's own lines say which processes started and how each
ended. RViz, PlotJuggler, teleop_twist_keyboard and Nav2 do not exist on these machines: the
launches must say so and run the rest.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest
import yaml
from bringup_support import PARAMS_DIR, Launch, launch_tooling_problem

from wheelsim.testing import processes

PROBLEM = launch_tooling_problem()
pytestmark = pytest.mark.skipif(PROBLEM is not None, reason=str(PROBLEM))

CORE_TOPICS = ('ground_truth', 'twist_actual', 'joint_states', 'odom', 'pose', 'tf')
WINDOW_S = 3.0  # the probe counts at least these seconds once every node is up
GRAPH_PROBE = Path(__file__).with_name('graph_probe.py')
STARTED = re.compile(r'^\[INFO\] \[([\w.-]+-\d+)\]: process started with pid \[(\d+)\]', re.M)
ENDED = re.compile(r'^\[(?:INFO|ERROR)\] \[([\w.-]+-\d+)\]: process has (?:finished cleanly '
                   r'\[pid \d+\]|died \[pid \d+, exit code (-?\d+))', re.M)


def process_events(text, shutdown_at):
    """(processes started, process exits) in launch's output ``text``, whose first
    ``shutdown_at`` characters were printed before the shutdown began: ``[{'name'}]`` and
    ``[{'name', 'returncode', 'during_shutdown'}]``."""
    started = [{'name': m.group(1)} for m in STARTED.finditer(text)]
    exits = [{'name': m.group(1), 'returncode': int(m.group(2) or 0),
              'during_shutdown': m.start() >= shutdown_at} for m in ENDED.finditer(text)]
    return started, exits


def launch(tmp_path, ros_domain_id, file_name, *arguments, nodes, expect=(), frames_on=None,
           env=None, static_transforms_on=None):
    """Run ``ros2 launch wheelsim FILE args`` (``env``: more environment variables) until
    graph_probe.py has seen every node of ``nodes`` up and counted the messages of at least
    ``WINDOW_S`` seconds, including one on every topic of ``expect`` and every transform of
    ``frames_on`` ({TFMessage topic: ['parent -> child', ...]}); then shut it down. Returns
    (summary, launch's output); the summary has ``launch_returncode``, ``ended_by``
    ('shutdown', or 'launch ended itself' when it ended first), ``processes_started``,
    ``process_exits`` and the probe's result under ``probe`` (None when the launch ended
    first). Fails if anything of the launch's session outlives it, or if the probe gave up
    (its 90 s) before it saw every topic and frame it waited for.

    A robot_state_publisher of ``nodes`` is waited for until it has published its static
    transforms: it shows in the graph while its node is still being built, and a SIGINT then
    ends it with a traceback and exit -2 (seen once in CI on a loaded machine). They come on
    its namespace's ``tf_static``, or on ``static_transforms_on`` where the launch remaps them
    (then name each one's frames in ``frames_on``)."""
    expect = [*expect, *((static_transforms_on or name.rpartition('/')[0] + '/tf_static')
                         for name in nodes if name.endswith('/robot_state_publisher'))]
    environment = {**os.environ, **(env or {}), 'ROS_DOMAIN_ID': str(ros_domain_id)}
    probe_out = tmp_path / 'probe.json'
    run = Launch(tmp_path, file_name, list(arguments), env=environment, noninteractive=True)
    probe = subprocess.Popen([sys.executable, str(GRAPH_PROBE), str(probe_out),
                              '--nodes', ','.join(nodes), '--expect', ','.join(expect),
                              '--window', str(WINDOW_S), '--timeout', '90',
                              *[option for topic, frames in (frames_on or {}).items()
                                for frame in frames for option in ('--frame', topic, frame)]],
                             env=environment)
    while probe.poll() is None and run.process.poll() is None:
        time.sleep(0.1)
    shutdown_at = len(run.text())
    ended_first = run.process.poll() is not None
    if ended_first:
        probe.kill()
    else:
        run.shut_down()
    returncode = run.wait(60.0)
    probe.wait(timeout=60)
    text = run.text()
    started, exits = process_events(text, shutdown_at)
    summary = {'launch_returncode': returncode,
               'ended_by': 'launch ended itself' if ended_first else 'shutdown',
               'processes_started': started, 'process_exits': exits, 'probe': None}
    if not ended_first:
        assert probe_out.exists(), f'graph_probe.py failed (exit {probe.returncode})'
        if probe.returncode != 0:  # its result is written: a hung teardown is not the launch's
            warnings.warn(f'graph_probe.py: exit {probe.returncode} after writing its result: '
                          'its teardown hung (rmw / Fast DDS) and faulthandler ended it',
                          stacklevel=2)
        summary['probe'] = json.loads(probe_out.read_text())
        assert summary['probe']['up'], f'not every node of {nodes} came up:\n{text[-4000:]}'
        assert not summary['probe']['missing'], (
            f"never seen: {summary['probe']['missing']}\n{text[-4000:]}")
    return summary, text


def publishers(summary, topic):
    """(publishers, latched) of ``topic`` in the probe's graph; (0, False) if it has none."""
    info = next((i for i in summary['probe']['topics'].values() if i['topic'] == topic), {})
    return info.get('publishers', 0), info.get('latched', False)


def topics(summary, namespace=''):
    """{topic: messages in the window} for the topics under ``namespace``."""
    prefix = '/' + namespace.strip('/') + '/' if namespace.strip('/') else '/'
    return {info['topic'][len(prefix):]: info.get('messages', 0)
            for info in summary['probe']['topics'].values()
            if info['topic'].startswith(prefix)}


def frames(summary, topic='/tf'):
    return {frame for info in summary['probe']['topics'].values() if info['topic'] == topic
            for frame in info.get('frames', [])}


def output_of(text, exits):
    """The printed lines of the processes in ``exits`` (launch prefixes them ``[name-N]``)."""
    names = tuple(f"[{e['name']}]" for e in exits)
    return '\n'.join(line for line in text.splitlines() if line.startswith(names))[-4000:]


# The harness's robot_state_publisher is a Python STAND-IN with rclpy's default signal handling
# (the real one is C++). On Kilted's rclpy, a SIGINT that lands while it takes a joint_states
# message turns the KeyboardInterrupt into "RuntimeError: Unable to convert call argument '0' to
# Python object" inside take_message and the stand-in exits 1 (reproduced about 2 in 100
# SIGINTs). wheelsim's nodes do not install rclpy's handlers (ros/node_main.py) and are held to
# a clean exit; only this failure of the stand-in, shown by its own output, is let through.
# On a loaded machine the stand-in has also failed to end within launch's SIGINT and SIGTERM
# timeouts (5 s each) and was killed (-9; Jazzy CI, forklift preset, our nodes exited 0): that is
# let through too, for the stand-in only. And on Jazzy's rclpy a SIGINT that shuts its context
# down while rclpy.spin builds its next wait set ends it with "RCLError: failed to initialize
# wait set: the given context is not valid" and exit 1 (Jazzy CI, two-robot launch); when it
# lands while the stand-in's joint_states callback runs, the callback's publish fails with
# "RCLError: Failed to publish: publisher's context is invalid" (Jazzy, two-robot launch, a full
# test run of 2026-11-26; our nodes exited 0). The harness's static_transform_publisher is a
# Python stand-in too, and has been killed the same way (-9; Kilted, two-robot launch,
# 2026-11-29, every wheelsim node exited 0): the same rules hold for it.
STANDINS = ('robot_state_publisher', 'static_transform_publisher')
STANDIN_SHUTDOWN_FAILURES = (
    "RuntimeError: Unable to convert call argument '0' to Python object",
    'RCLError: failed to initialize wait set: the given context is not valid',
    "RCLError: Failed to publish: publisher's context is invalid",
)
KILLED_BY_LAUNCH = (-signal.SIGTERM, -signal.SIGKILL)


def standin_shutdown_failure(text, process_exit):
    """True if ``process_exit`` is one of the harness's stand-ins failing at shutdown as
    described above: one of its rclpy shutdown races, or killed by launch's escalation."""
    standin = process_exit['name'].rsplit('-', 1)[0]
    if not (standin in STANDINS and process_exit['during_shutdown']
            and f'STAND-IN {standin}' in output_of(text, [process_exit])):
        return False
    return process_exit['returncode'] in KILLED_BY_LAUNCH or (
        process_exit['returncode'] == 1
        and any(failure in output_of(text, [process_exit])
                for failure in STANDIN_SHUTDOWN_FAILURES))


def shut_down_cleanly(text, process_exit):
    """True if ``process_exit``, at shutdown, is clean: exit 0, one of the stand-in's failures
    above, or the one middleware teardown hang let through with a warning
    (``wheelsim.testing.processes.stopped_cleanly``)."""
    return standin_shutdown_failure(text, process_exit) or processes.stopped_cleanly(
        process_exit['name'], process_exit['returncode'], output_of(text, [process_exit]))


HUNG_IN_DESTROY_NODE = '\n'.join(f'[controller-5] {line}' for line in (
    'Timeout (0:00:00.949561)!',
    'Thread 0x00007f242e7236c0 (most recent call first):',
    '  File "/w/build/jazzy/wheelsim/wheelsim/ros/shutdown.py", line 141 in _watch',
    '  File "/usr/lib/python3.11/threading.py", line 982 in run',
    '',
    'Thread 0x00007f245de82640 (most recent call first):',
    '  File "/w/.venv/jazzy/lib/python3.11/site-packages/rclpy/node.py", line 1965 in destroy_node',
    '  File "/w/build/jazzy/wheelsim/wheelsim/ros/seam.py", line 170 in destroy',
    '  File "/w/build/jazzy/wheelsim/wheelsim/ros/node_main.py", line 151 in _run',
    '  File "/w/build/jazzy/wheelsim/wheelsim/ros/node_main.py", line 104 in run_node',
))


def test_only_a_hang_in_rclpy_destroy_node_is_let_through():
    """The faulthandler output of a teardown hung in rclpy's destroy_node (as seen in the demo
    run of 2026-11-27, before the seam; paths shortened) is let through with a warning; a hang
    in wheelsim's own code, another process's output, a crash and another exit code are not."""
    hung = {'name': 'controller-5', 'returncode': 1, 'during_shutdown': True}
    with pytest.warns(UserWarning, match="controller-5: the shutdown hung in rclpy's teardown"):
        assert shut_down_cleanly(HUNG_IN_DESTROY_NODE, hung)
    in_own_code = HUNG_IN_DESTROY_NODE.replace(
        'rclpy/node.py", line 1965 in destroy_node',
        'wheelsim/ros/node_main.py", line 120 in spin_until_stopped')
    assert not shut_down_cleanly(in_own_code, hung)
    assert not shut_down_cleanly(HUNG_IN_DESTROY_NODE, {**hung, 'name': 'planner-4'})
    crash = HUNG_IN_DESTROY_NODE.replace('Timeout (0:00:00.949561)!',
                                         'Fatal Python error: Aborted')
    assert not shut_down_cleanly(crash, hung)
    assert not shut_down_cleanly(HUNG_IN_DESTROY_NODE, {**hung, 'returncode': 2})
    assert shut_down_cleanly(HUNG_IN_DESTROY_NODE, {**hung, 'returncode': 0})


#: A launch whose process ends it (``ends_launch``), with launch_ros's ROS adapter running (as
#: Nav2's component container makes it), shut down as Ctrl-C does once the process runs.
SHUT_DOWN_WITH_A_ROS_ADAPTER = """
import sys
from launch import LaunchDescription, LaunchService
from launch.actions import ExecuteProcess, OpaqueFunction, RegisterEventHandler, Shutdown
from launch.event_handlers import OnProcessStart
from launch_ros.ros_adapters import get_ros_node
from wheelsim.bringup.packages import ends_launch

sleeper = ExecuteProcess(cmd=['sleep', '60'], name='sleeper', on_exit=ends_launch('sleeper'))
service = LaunchService()
service.include_launch_description(LaunchDescription([
    OpaqueFunction(function=lambda context: get_ros_node(context) and []),
    sleeper,
    RegisterEventHandler(OnProcessStart(target_action=sleeper,
                                        on_start=[Shutdown(reason='as Ctrl-C')])),
]))
sys.exit(service.run())
"""


def test_a_process_stopped_by_the_shutdown_leaves_the_exit_code_0(ros_domain_id):
    """Found in review: Ctrl-C ended nav2_bringup.launch.py (Nav2's servers composed) with
    exit 1 and 'Cannot shutdown a ROS adapter that is not running': each node stopped by the
    shutdown asked for one more through ``ends_launch``, and launch_ros shuts its ROS adapter
    down on every shutdown event."""
    result = subprocess.run([sys.executable, '-c', SHUT_DOWN_WITH_A_ROS_ADAPTER],
                            capture_output=True, text=True, timeout=120, check=False,
                            preexec_fn=processes.default_sigint)  # CI runs with it ignored
    output = result.stdout + result.stderr
    assert 'process started' in output and 'exit code -2' in output, output
    assert result.returncode == 0, output
    assert 'ERROR] [launch]' not in output, output


#: A launch of two processes that end it (``ends_launch``), with launch_ros's ROS adapter
#: running, stopped one after the other by the signals named in argv (SIGINT as a Ctrl-C that
#: launch does not hear, where it ignores SIGINT as a shell's background job does): the loop
#: waits until each has exited, so that launch has both exits queued, in that order, before it
#: handles either.
TWO_STOPPED_AT_ONCE = """
import os, signal, sys, threading, time
from launch import LaunchDescription, LaunchService
from launch.actions import ExecuteProcess, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnProcessStart
from launch_ros.ros_adapters import get_ros_node
from wheelsim.bringup.packages import ends_launch

signals = [signal.Signals[name] for name in sys.argv[1:]]
started = []

def stop_both(context):
    started.append(context.locals.event.pid)
    if len(started) < 2:
        return []
    deadline = time.monotonic() + 30.0
    for pid, signum in zip(started, signals):
        os.kill(pid, signum)
        # gone from /proc once launch's child watcher has reaped it (its exit noticed)
        while os.path.exists(f'/proc/{pid}'):
            if time.monotonic() > deadline:
                raise RuntimeError('the processes did not exit within 30 s')
            time.sleep(0.01)
    # and both exits handed to the event loop: asyncio's watcher thread of each ends right
    # after it (found in CI under load: the second's came after launch handled the first's)
    while any('waitpid-' in thread.name for thread in threading.enumerate()):
        if time.monotonic() > deadline:
            raise RuntimeError("asyncio's child watcher threads did not end within 30 s")
        time.sleep(0.01)
    return []

service = LaunchService()
service.include_launch_description(LaunchDescription([
    OpaqueFunction(function=lambda context: get_ros_node(context) and []),
    RegisterEventHandler(OnProcessStart(on_start=[OpaqueFunction(function=stop_both)])),
    *[ExecuteProcess(cmd=['sleep', '60'], name=name, on_exit=ends_launch(name))
      for name in ('first', 'second')],
]))
sys.exit(service.run())
"""


def stop_two_at_once(first: str, second: str) -> tuple[int, str]:
    result = subprocess.run([sys.executable, '-c', TWO_STOPPED_AT_ONCE, first, second],
                            capture_output=True, text=True, timeout=120, check=False,
                            preexec_fn=processes.default_sigint)  # CI runs with it ignored
    return result.returncode, result.stdout + result.stderr


def test_processes_stopped_at_once_end_the_launch_once_with_exit_code_0(ros_domain_id):
    """Found in CI (2026-12-06, Nav2's servers composed, launch not hearing the Ctrl-C): two
    wheelsim nodes stopped by one SIGINT each asked for a shutdown through ``ends_launch``
    before launch handled the first, and the second shut launch_ros's ROS adapter down again:
    exit 1, 'Cannot shutdown a ROS adapter that is not running'."""
    returncode, output = stop_two_at_once('SIGINT', 'SIGINT')
    assert output.count('exit code -2') == 2, output
    assert output.count('was required: shutting down') == 1, output
    assert returncode == 0, output
    assert 'ERROR] [launch]' not in output, output


def test_a_crash_queued_behind_a_clean_exit_still_fails_the_launch(ros_domain_id):
    """Found in review: with the shutdown asked only once, a process killed (SIGKILL, as a
    crash) right after another stopped cleanly, its exit queued before launch handled the
    first, ended the launch with exit 0."""
    returncode, output = stop_two_at_once('SIGINT', 'SIGKILL')
    assert 'second exited with code -9: the launch ends' in output, output
    assert returncode == 1, output


def assert_ran_and_shut_down_cleanly(summary, text, expected_processes):
    where = f'\n{text[-4000:]}'
    assert summary['launch_returncode'] == 0, where
    assert summary['ended_by'] == 'shutdown', where
    names = sorted(p['name'].split('-')[0] for p in summary['processes_started'])
    assert names == sorted(expected_processes), where
    early = [e for e in summary['process_exits'] if not e['during_shutdown']]
    assert not early, f'processes ended before the shutdown: {early}{where}'
    bad = [e for e in summary['process_exits'] if not shut_down_cleanly(text, e)]
    assert not bad, f'unclean exits at shutdown: {bad}\n{output_of(text, bad)}{where}'
    assert len(summary['process_exits']) == len(summary['processes_started']), where


SIM = ['vehicle_sim', 'localization', 'robot_state_publisher']
LOOP = [*SIM, 'planner', 'controller']
LOCALIZATION_FRAMES = {'/tf': ['map -> odom', 'odom -> base_link']}


def graph_names(names, *namespaces):
    """``names`` (of nodes or topics) fully qualified in each of ``namespaces`` (default the
    root one)."""
    return [f"/{namespace + '/' if namespace else ''}{name}"
            for namespace in namespaces or ('',) for name in names]


@pytest.mark.parametrize('preset', sorted(p.stem for p in PARAMS_DIR.glob('*.yaml')))
def test_sim_launch_runs_every_preset(tmp_path, ros_domain_id, preset):
    summary, text = launch(tmp_path, ros_domain_id, 'sim.launch.py', f'preset:={preset}',
                           nodes=graph_names(SIM), expect=graph_names(CORE_TOPICS),
                           frames_on=LOCALIZATION_FRAMES)
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    seen = topics(summary)
    for topic in CORE_TOPICS:
        assert seen.get(topic, 0) > 0, f'no {topic} messages: {seen}'
    assert {'map -> odom', 'odom -> base_link'} <= frames(summary)
    assert 'wheelsim: rviz2 is not installed: RViz not started; install ros-' in text


@pytest.mark.parametrize('publish_map', [None, 'false'])
def test_sim_launch_with_a_map_file_shows_the_world(tmp_path, ros_domain_id, publish_map):
    """map_yaml:= (the teleop case): vehicle_sim publishes the map, latched, with the scan and
    the footprint wheelsim.rviz shows; with publish_map:=false (a map server would serve it)
    nothing publishes map."""
    summary, text = launch(tmp_path, ros_domain_id, 'sim.launch.py', 'rviz:=false',
                           f'map_yaml:={PARAMS_DIR / "maps" / "room.yaml"}',
                           *([f'publish_map:={publish_map}'] if publish_map else []),
                           nodes=graph_names(SIM),
                           expect=['/scan', '/footprint'])
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    seen = topics(summary)
    assert seen.get('scan', 0) > 0 and seen.get('footprint', 0) > 0, seen
    assert publishers(summary, '/map') == ((0, False) if publish_map else (1, True))


def test_demo_launch_closes_the_loop(tmp_path, ros_domain_id):
    # The loop closes only once all five processes are up, the plan is made and the EKF has a
    # pose: the probe waits for cmd_vel and tracking_error.
    summary, text = launch(tmp_path, ros_domain_id, 'demo.launch.py', 'rviz:=false',
                           'localization_mode:=ekf', nodes=graph_names(LOOP),
                           expect=['/cmd_vel', '/tracking_error', '/plan'])
    assert_ran_and_shut_down_cleanly(summary, text, LOOP)
    seen = topics(summary)
    assert seen.get('tracking_error', 0) > 0 and seen.get('cmd_vel', 0) > 0, \
        f'{seen}\n{output_of(text, summary["process_exits"])}'
    assert 'plan' in seen, seen
    assert 'RViz not started' not in text  # rviz:=false: not asked for, nothing to say


def test_sim_launch_takes_every_boolean_spelling_if_condition_takes(tmp_path, ros_domain_id):
    """Booleans are read as launch's IfCondition reads them (true, 1, false, 0, any case):
    tracking:=1 starts the loop, map_to_odom:=TRUE publishes map -> odom, and use_sim_time:=0
    reaches the nodes as false (as ``-p use_sim_time:=0`` it was an integer, refused)."""
    summary, text = launch(tmp_path, ros_domain_id, 'sim.launch.py', 'rviz:=False',
                           'tracking:=1', 'map_to_odom:=TRUE', 'use_sim_time:=0',
                           nodes=graph_names(LOOP), expect=['/cmd_vel'],
                           frames_on=LOCALIZATION_FRAMES)
    assert_ran_and_shut_down_cleanly(summary, text, LOOP)
    assert {'map -> odom', 'odom -> base_link'} <= frames(summary)


def test_namespaced_sim_keeps_everything_in_its_namespace(tmp_path, ros_domain_id):
    summary, text = launch(tmp_path, ros_domain_id, 'sim.launch.py', 'namespace:=robot7',
                           'frame_prefix:=robot7/', 'rviz:=false',
                           nodes=graph_names(SIM, 'robot7'),
                           expect=graph_names(CORE_TOPICS, 'robot7'),
                           frames_on={'/robot7/tf': ['robot7/map -> robot7/odom',
                                                     'robot7/odom -> robot7/base_link']})
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    seen = topics(summary, 'robot7')
    for topic in CORE_TOPICS:
        assert seen.get(topic, 0) > 0, f'no /robot7/{topic} messages: {seen}'
    assert {'robot7/map -> robot7/odom', 'robot7/odom -> robot7/base_link'} <= frames(
        summary, '/robot7/tf')


def test_reference_clock_mode_publishes_clock(tmp_path, ros_domain_id):
    params = tmp_path / 'clock.yaml'
    params.write_text((PARAMS_DIR / 'indoor_differential.yaml').read_text()
                      + '\n/**:\n  ros__parameters:\n    use_sim_time: true\n'
                      'vehicle_sim:\n  ros__parameters:\n    be_reference_clock: true\n')
    summary, text = launch(tmp_path, ros_domain_id, 'sim.launch.py', f'params_file:={params}',
                           'use_sim_time:=true', 'rviz:=false', nodes=graph_names(SIM),
                           expect=['/clock', '/odom'])
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    seen = topics(summary)
    assert seen.get('clock', 0) > 0 and seen.get('odom', 0) > 0, seen


@pytest.mark.early
def test_multi_robot_launch_runs_two_robots(tmp_path, ros_domain_id):
    # Twelve processes start on what may be two busy cores: the probe waits for each robot's
    # loop to close (cmd_vel and tracking_error).
    robots = ('robot1', 'robot2')
    summary, text = launch(
        tmp_path, ros_domain_id, 'multi_robot.launch.py', 'rviz:=false',
        nodes=[*graph_names(LOOP, *robots), '/robot1_map_placement', '/robot2_map_placement'],
        expect=graph_names(['odom', 'cmd_vel', 'tracking_error'], *robots),
        frames_on={'/tf': [f'{robot}/{parent} -> {robot}/{child}' for robot in robots
                           for parent, child in (('map', 'odom'), ('odom', 'base_link'))],
                   '/tf_static': [f'{robot}/base_link -> {robot}/base_scan' for robot in robots]},
        static_transforms_on='/tf_static')  # the robots' transforms share /tf and /tf_static
    expected = [*LOOP, *LOOP, 'static_transform_publisher', 'static_transform_publisher']
    assert_ran_and_shut_down_cleanly(summary, text, expected)
    for robot in ('robot1', 'robot2'):
        seen = topics(summary, robot)
        logged = '\n'.join(line for line in text.splitlines() if f'] [{robot}.' in line)
        where = f'{robot}: {seen}\n{logged[-4000:]}'
        assert seen.get('odom', 0) > 0 and seen.get('cmd_vel', 0) > 0, where
        assert seen.get('tracking_error', 0) > 0, where
        assert {f'{robot}/map -> {robot}/odom', f'{robot}/odom -> {robot}/base_link'} <= frames(
            summary)


def test_nav2_launch_without_nav2_runs_the_simulation_and_says_why(tmp_path, ros_domain_id):
    """Without Nav2 the simulation runs in the world of ``map`` (found in review: it ran with
    no world, map:= given to the map server alone), and vehicle_sim publishes that map."""
    summary, text = launch(tmp_path, ros_domain_id, 'nav2.launch.py', 'rviz:=false',
                           nodes=graph_names(SIM), expect=['/odom', '/scan'])
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    assert ('Nav2 (the simulation runs without it) not started; install ros-'
            in text) and '-navigation2' in text
    seen = topics(summary)
    assert seen.get('odom', 0) > 0 and seen.get('scan', 0) > 0, seen
    assert publishers(summary, '/map') == (1, True)


def test_nav2_bringup_launch_without_nav2_runs_the_robot_on_its_clock(tmp_path, ros_domain_id):
    """Without Nav2: wheelsim as the stock bring-up's robot: the scan, /clock, base_footprint;
    no map server runs, so vehicle_sim publishes the map it simulates (latched)."""
    summary, text = launch(tmp_path, ros_domain_id, 'nav2_bringup.launch.py', 'rviz:=false',
                           nodes=graph_names(SIM),
                           expect=['/clock', '/scan', '/footprint', '/odom'],
                           frames_on={**LOCALIZATION_FRAMES, '/tf_static': [
                               'base_link -> base_footprint', 'base_link -> base_scan']})
    assert_ran_and_shut_down_cleanly(summary, text, SIM)
    assert ('nav2_bringup, nav2_map_server, nav2_lifecycle_manager are not installed: Nav2 (the '
            'simulation runs without it) not started') in text
    seen = topics(summary)
    for topic in ('clock', 'scan', 'footprint', 'odom'):
        assert seen.get(topic, 0) > 0, f'no {topic} messages: {seen}'
    assert {'base_link -> base_footprint', 'base_link -> base_scan'} <= frames(summary,
                                                                               '/tf_static')
    assert 'map -> odom' in frames(summary)
    assert publishers(summary, '/map') == (1, True)


@pytest.mark.early
@pytest.mark.parametrize('localization', ['wheelsim', 'amcl'])
def test_nav2_bringup_launch_includes_nav2_bringup_with_the_merged_parameters(
        tmp_path, ros_domain_id, localization):
    """With stand-ins of nav2_bringup (bringup_launch.py declaring the arguments of Jazzy's,
    navigation2 1.3.13, and printing them; a nav2_params.yaml of the facts' stock values), the
    map server and the lifecycle manager: the launch includes bringup with the stock
    parameters and wheelsim's overrides merged and filled, starts the map server only when
    AMCL's bring-up does not, and wheelsim's localization leaves map -> odom to AMCL.
    vehicle_sim leaves map to the map server (the stand-in publishes none)."""
    prefix = nav2_stand_ins(tmp_path / 'nav2')
    env = {'AMENT_PREFIX_PATH': f"{prefix}{os.pathsep}{os.environ.get('AMENT_PREFIX_PATH', '')}"}
    summary, text = launch(tmp_path, ros_domain_id, 'nav2_bringup.launch.py', 'rviz:=false',
                           f'localization:={localization}', env=env,
                           nodes=graph_names(SIM), expect=['/clock'],
                           frames_on={'/tf': ['odom -> base_link']})
    amcl = localization == 'amcl'
    assert_ran_and_shut_down_cleanly(
        summary, text, SIM if amcl else [*SIM, 'map_server', 'lifecycle_manager'])
    line = next(x for x in text.splitlines() if 'STAND-IN bringup_launch.py' in x)
    given = dict(item.split('=', 1) for item in line.split('STAND-IN bringup_launch.py ')[1]
                 .split())
    assert given['use_localization'] == str(amcl) and given['use_sim_time'] == 'True', given
    assert given['map'].endswith('share/wheelsim/params/maps/room.yaml'), given
    merged = yaml.safe_load(open(given['params_file']))
    costmap = merged['local_costmap']['local_costmap']['ros__parameters']
    assert costmap['robot_radius'] == 0.22 and len(yaml.safe_load(costmap['footprint'])) == 4
    assert merged['amcl']['ros__parameters']['initial_pose'] == {
        'x': 0.0, 'y': 0.0, 'z': 0.0, 'yaw': 0.0}
    if not amcl:
        assert "STAND-IN map_server ['--ros-args'" in text
    assert ('map -> odom' in frames(summary)) is not amcl
    assert 'odom -> base_link' in frames(summary)
    assert topics(summary).get('clock', 0) > 0
    assert publishers(summary, '/map') == (0, False)


def nav2_stand_ins(prefix):
    """An ament prefix with stand-in packages nav2_bringup, nav2_map_server (map_server) and
    nav2_lifecycle_manager (lifecycle_manager): the executables print their arguments and wait
    for SIGINT; bringup_launch.py declares Jazzy's arguments (test/nav2_upstream_facts.yaml) and
    prints their values."""
    facts = yaml.safe_load((PARAMS_DIR.parent / 'test' / 'nav2_upstream_facts.yaml').read_text())
    index = prefix / 'share' / 'ament_index' / 'resource_index' / 'packages'
    index.mkdir(parents=True)
    for package, executable in (('nav2_map_server', 'map_server'),
                                ('nav2_lifecycle_manager', 'lifecycle_manager')):
        (index / package).write_text('')
        script = prefix / 'lib' / package / executable
        script.parent.mkdir(parents=True)
        script.write_text(f'#!{sys.executable}\n' + STAND_IN_EXECUTABLE.format(executable))
        script.chmod(0o755)
    (index / 'nav2_bringup').write_text('')
    share = prefix / 'share' / 'nav2_bringup'
    (share / 'launch').mkdir(parents=True)
    (share / 'params').mkdir()
    names = [n for n, lines in facts['launch_arguments']['names'].items() if 'jazzy' in lines]
    (share / 'launch' / 'bringup_launch.py').write_text(STAND_IN_BRINGUP.format(names))
    stock = {'amcl': {'ros__parameters': {'base_frame_id': 'base_footprint'}},
             'local_costmap': {'local_costmap': {'ros__parameters': {'robot_radius': 0.22}}},
             'global_costmap': {'global_costmap': {'ros__parameters': {'robot_radius': 0.22}}},
             'bt_navigator': {'ros__parameters': {'default_server_timeout': 20}},
             'controller_server': {'ros__parameters': {
                 'FollowPath': {'CostCritic': {'consider_footprint': False}}}}}
    (share / 'params' / 'nav2_params.yaml').write_text(yaml.safe_dump(stock))
    return prefix


STAND_IN_EXECUTABLE = """import signal, sys, time
print('STAND-IN {0}', sys.argv[1:], flush=True)
signal.signal(signal.SIGINT, lambda *_: sys.exit(0))
while True:
    time.sleep(0.1)
"""
STAND_IN_BRINGUP = """from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, LogInfo
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    names = {0!r}
    message = ['STAND-IN bringup_launch.py']
    for name in names:
        message += [' ', name, '=', LaunchConfiguration(name)]
    return LaunchDescription([
        *[DeclareLaunchArgument(name, default_value='', description=name) for name in names],
        LogInfo(msg=message)])
"""


@pytest.mark.parametrize('failure', STANDIN_SHUTDOWN_FAILURES)
@pytest.mark.parametrize('name', STANDINS)
def test_only_the_stand_ins_known_shutdown_failures_are_let_through(name, failure):
    standin = f'{name}-3'
    text = (f'[{standin}] [WARN] [1.0] [rsp]: STAND-IN {name} (not the real one)\n'
            f'[{standin}] rclpy._rclpy_pybind11.{failure}\n')
    at_shutdown = {'name': standin, 'returncode': 1, 'during_shutdown': True}
    assert standin_shutdown_failure(text, at_shutdown)
    assert standin_shutdown_failure(text, {**at_shutdown, 'returncode': -signal.SIGKILL})
    assert not standin_shutdown_failure(text, {**at_shutdown, 'during_shutdown': False})
    assert not standin_shutdown_failure(text.replace(failure, 'RCLError: something else'),
                                        at_shutdown)
    ours = text.replace(standin, 'localization-4')
    assert not standin_shutdown_failure(ours, {**at_shutdown, 'name': 'localization-4'})
    assert not standin_shutdown_failure(ours, {**at_shutdown, 'name': 'localization-4',
                                               'returncode': -signal.SIGKILL})
