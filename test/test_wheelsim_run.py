"""`wheelsim run` end to end, through the installed command (sweeps: test_wheelsim_sweep.py)."""

import importlib
import json
import math
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from bringup_support import REPO
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

EXPECTED_TOPICS = {
    '/ground_truth', '/twist_actual', '/joint_states', '/robot_description', '/odom', '/pose',
    '/tf', '/tf_static', '/plan', '/cmd_vel', '/tracking_error',
}
SHORT_SCENARIO = """
    name: short
    duration: 6.0
    seed: {seed}
    nodes:
      vehicle_sim: {{model: differential}}
      localization: {{mode: noisy}}
      planner:
        limits: {{max_speed: 0.5}}
        waypoints: [1.0, 0.0, .nan, 2.0, 1.0, .nan]
"""

#: A route, which every run needs (nothing publishes goal_pose in one).
WAYPOINTS = 'nodes: {planner: {waypoints: [1.0, 0.0, .nan]}}\n'


def wheelsim(*args, cwd):
    exe = shutil.which('wheelsim')
    assert exe, 'wheelsim is not on PATH: run through `make test` or after `source env.sh`'
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=600)


def read_bag(bag_dir: Path) -> dict[str, list[tuple[int, str]]]:
    """(log time, decoded message as text) per topic, decoded with the mcap reader.

    Decoded, not raw bytes: what a reader sees (the raw bytes, alignment padding included, are
    compared by test_recordings_are_identical_bytes_in_order_and_rclpy_cdr).
    """
    mcap_files = list(bag_dir.glob('*.mcap'))
    assert len(mcap_files) == 1 and (bag_dir / 'metadata.yaml').is_file()
    topics: dict[str, list[tuple[int, str]]] = {}
    with mcap_files[0].open('rb') as handle:
        reader = make_reader(handle, decoder_factories=[DecoderFactory()])
        for _, channel, message, decoded in reader.iter_decoded_messages():
            topics.setdefault(channel.topic, []).append((message.log_time, repr(decoded)))
    return topics


def write_scenario(tmp_path, seed, name='scenario.yaml'):
    path = tmp_path / name
    path.write_text(textwrap.dedent(SHORT_SCENARIO.format(seed=seed)))
    return path


@pytest.mark.early
def test_default_scenario_end_to_end(tmp_path):
    result = wheelsim('run', '--quiet', '--output', 'out', cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / 'out' / 'default'
    topics = read_bag(out / 'bag')
    assert EXPECTED_TOPICS <= set(topics), sorted(topics)
    duration_s = 90.0
    assert abs(len(topics['/ground_truth']) - (50 * duration_s + 1)) <= 1
    # The controller commands at 20 Hz, exactly in simulated time, until the goal is reached
    # (the figure-eight is planned for about 40 s).
    cmd_times = [t for t, _ in topics['/cmd_vel']]
    assert len(cmd_times) > 20 * 35
    assert {b - a for a, b in zip(cmd_times, cmd_times[1:], strict=False)} == {50_000_000}
    assert len(topics['/odom']) == len(topics['/pose']) == len(topics['/ground_truth'])
    metrics = json.loads((out / 'metrics.json').read_text())
    assert metrics['cross_track_rms_m'] < 0.15
    assert metrics['goal_position_error_m'] < 0.25
    assert metrics['scenario'] == {'name': 'default', 'file': None}  # the built-in one
    assert metrics['seed'] == 1 and metrics['passed'] is True
    timing = json.loads((out / 'timing.json').read_text())
    assert timing['simulated_time_s'] == pytest.approx(duration_s, abs=0.05)
    assert (out / 'plots' / 'report.pdf').stat().st_size > 10_000
    assert len(list((out / 'plots').glob('*.png'))) >= 6
    assert 'cross-track' in result.stdout and 'pass' in result.stdout


def test_same_seed_identical_results_and_other_seed_differs(tmp_path):
    for seed, name in ((3, 'a'), (3, 'b'), (4, 'c')):
        scenario = write_scenario(tmp_path, seed)
        result = wheelsim('run', str(scenario), '--quiet', '--no-plots', '--output', name,
                          cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
    a, b, c = (tmp_path / name / 'short' for name in 'abc')
    assert (a / 'metrics.json').read_bytes() == (b / 'metrics.json').read_bytes()
    bag_a, bag_b, bag_c = (read_bag(run / 'bag') for run in (a, b, c))
    assert bag_a == bag_b
    assert bag_a['/pose'] != bag_c['/pose']  # localization noise follows the seed
    assert bag_a['/ground_truth'] != bag_c['/ground_truth']  # and so does the closed loop


def test_what_is_recorded_changes_no_metric_and_the_bag_gives_the_same(tmp_path):
    """The metrics read every message in memory: recording all, some or no topics gives the
    same metrics.json, and the metrics of the bag read back are those too."""
    from wheelsim.report.bag_data import load_run
    from wheelsim.report.metrics import compute_metrics

    text = textwrap.dedent(SHORT_SCENARIO.format(seed=2))
    for name, record in (('every', 'all'), ('none', 'none'), ('some', '[cmd_vel]')):
        (tmp_path / name).mkdir()
        (tmp_path / name / 'short.yaml').write_text(f'{text}record: {record}\n')
        result = wheelsim('run', 'short.yaml', '--quiet', '--no-plots', '--output', 'out',
                          cwd=tmp_path / name)
        assert result.returncode == 0, result.stdout + result.stderr
    every, none, some = (tmp_path / name / 'out' / 'short' for name in ('every', 'none', 'some'))
    assert (every / 'metrics.json').read_bytes() == (none / 'metrics.json').read_bytes() == \
        (some / 'metrics.json').read_bytes()
    assert not (none / 'bag').exists()
    assert set(read_bag(some / 'bag')) == {'/cmd_vel'}
    recorded = json.loads((every / 'metrics.json').read_text())
    assert recorded['cross_track_rms_m'] is not None
    read_back = json.loads(json.dumps(compute_metrics(load_run(every / 'bag'))))
    assert read_back == {key: recorded[key] for key in read_back}


@pytest.mark.parametrize('collisions', [True, False])
def test_the_bag_gives_the_collision_count_the_run_gave(tmp_path, collisions):
    """Found in review: with world.collisions false the run's collisions was null, and its bag
    read back gave 0 (an empty collision topic): vehicle_sim publishes none then."""
    from wheelsim.report.bag_data import load_run
    from wheelsim.report.metrics import compute_metrics

    text = textwrap.dedent(SHORT_SCENARIO.format(seed=2)).replace(
        '{model: differential}', f'{{model: differential, world.collisions: {collisions}}}')
    (tmp_path / 'short.yaml').write_text(f'{text}map: room\n')
    result = wheelsim('run', 'short.yaml', '--quiet', '--no-plots', '--output', 'out',
                      cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    recorded = json.loads((tmp_path / 'out' / 'short' / 'metrics.json').read_text())
    assert recorded['collisions'] == (0 if collisions else None)
    assert recorded['min_clearance_m'] > 0.0
    read_back = compute_metrics(load_run(tmp_path / 'out' / 'short' / 'bag'))
    assert read_back['collisions'] == recorded['collisions']


def raw_messages(bag_dir: Path) -> list[tuple[str, str, int, int, bytes]]:
    """(topic, type, log time, publish time, payload) in the order the bag file holds them."""
    (mcap_file,) = bag_dir.glob('*.mcap')
    with mcap_file.open('rb') as handle:
        return [(channel.topic, schema.name, message.log_time, message.publish_time,
                 bytes(message.data))
                for schema, channel, message in make_reader(handle).iter_messages(
                    log_time_order=False)]


def test_recordings_are_identical_bytes_in_order_and_rclpy_cdr(tmp_path):
    """The recorder's serializer and rosbags' writer: two runs give the same bytes; messages are in
    the order they were published, log time = simulated time, payloads are rclpy's CDR up to
    where the data ends (the padding rmw_fastrtps counts after it is cut off)."""
    from rclpy.serialization import deserialize_message, serialize_message

    scenario = write_scenario(tmp_path, 5)
    for name in 'ab':
        result = wheelsim('run', str(scenario), '--quiet', '--no-plots', '--output', name,
                          cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
    a, b = (tmp_path / name / 'short' for name in 'ab')
    assert (a / 'metrics.json').read_bytes() == (b / 'metrics.json').read_bytes()
    compare = [sys.executable, str(REPO / 'bench' / 'compare_runs.py')]
    same = subprocess.run([*compare, str(a), str(b)], capture_output=True, text=True)
    assert same.returncode == 0 and ', 0 differences' in same.stdout, same.stdout + same.stderr
    # found in review: a folder that is no run gave a traceback
    missing = subprocess.run([*compare, str(a), str(tmp_path / 'c')], capture_output=True,
                             text=True)
    assert missing.returncode == 2 and 'Traceback' not in missing.stderr
    assert f'{tmp_path / "c"}: not a run folder of wheelsim run' in missing.stderr
    messages = raw_messages(a / 'bag')
    assert messages == raw_messages(b / 'bag')  # padding included: zeros, never leftovers
    log_times = [log_time for _, _, log_time, _, _ in messages]
    assert log_times == sorted(log_times) and log_times[0] == 1_000_000_000
    assert all(publish == log for _, _, log, publish, _ in messages)
    stamps = {}
    for topic, type_name, log_time, _, data in messages:
        package, _, type_ = type_name.split('/')
        msg = deserialize_message(data, getattr(importlib.import_module(f'{package}.msg'), type_))
        expected = bytes(serialize_message(msg))
        assert len(expected) - 8 < len(data) <= len(expected), topic  # rclpy's tail: padding
        assert all(x == y or y == 0 for x, y in zip(expected, data, strict=False)), topic
        if hasattr(msg, 'header') and topic != '/plan':
            stamp_ns = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
            assert stamp_ns <= log_time, topic
            assert stamp_ns >= stamps.get(topic, 0), topic  # each topic in stamp order
            stamps[topic] = stamp_ns
    counts = {topic: sum(1 for m in messages if m[0] == topic) for topic in stamps}
    assert counts['/ground_truth'] == counts['/odom'] == counts['/pose'] == 50 * 6 + 1


# `wheelsim run` in a process that says at its end whether it imported numba and scipy.
RUN_SAYING_IMPORTS = ('import json, sys\nfrom wheelsim.cli import main\ncode = main(sys.argv[1:])\n'
                      'print(json.dumps({m: m in sys.modules for m in ("numba", "scipy")}))\n'
                      'sys.exit(code)')
OMNI_SCENARIO = """
    name: omni
    duration: 12.0
    nodes:
      vehicle_sim: {model: omni}
      planner: {waypoints: [1.0, 0.0, .nan, 1.0, 1.0, 1.57]}
"""


@pytest.mark.parametrize('scenario', ['default', 'car_parking.yaml', 'furnished_room.yaml',
                                      'omni'])
def test_a_run_loads_no_numba_and_records_what_numba_s_jit_gives(tmp_path, scenario):
    """The kernels set-up compiled ahead of time: a run of each model, and in a world (scans,
    collisions), never imports numba, and its metrics and every recorded byte are those of the
    same run through numba's JIT (``WHEELSIM_AHEAD_OF_TIME=0``). The default run imports no
    scipy either (docs/architecture.md, "Start-up")."""
    if scenario == 'omni':
        (tmp_path / 'omni.yaml').write_text(textwrap.dedent(OMNI_SCENARIO))
        args = [str(tmp_path / 'omni.yaml')]
    else:
        args = [] if scenario == 'default' else [str(REPO / 'examples' / scenario)]
    runs = {}
    for switch in ('1', '0'):
        result = subprocess.run(
            [sys.executable, '-c', RUN_SAYING_IMPORTS, 'run', *args, '--quiet', '--no-plots',
             '--output', f'out{switch}'], cwd=tmp_path, capture_output=True, text=True,
            env={**os.environ, 'WHEELSIM_AHEAD_OF_TIME': switch}, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        (folder,) = (tmp_path / f'out{switch}').iterdir()
        runs[switch] = folder, json.loads(result.stdout.strip().splitlines()[-1])
    (ahead, ahead_imported), (jit, jit_imported) = runs['1'], runs['0']
    assert (ahead_imported['numba'], jit_imported['numba']) == (False, True)
    if scenario == 'default':
        assert not ahead_imported['scipy']
    assert (ahead / 'metrics.json').read_bytes() == (jit / 'metrics.json').read_bytes()
    assert raw_messages(ahead / 'bag') == raw_messages(jit / 'bag')


def test_without_numba_a_run_gives_the_same_results_in_plain_python(tmp_path):
    """numba is optional (docs/bringup.md): with it missing, the kernels run as plain Python,
    one warning says so, and the metrics and every recorded byte are those of the compiled
    run (jazzy review, section 5)."""
    hidden = tmp_path / 'hidden' / 'numba'
    hidden.mkdir(parents=True)
    (hidden / '__init__.py').write_text("raise ImportError('numba hidden by the test')\n")
    scenario = write_scenario(tmp_path, 1)
    folders = {}
    for label, extra in (('compiled', {}), ('plain', {
            'PYTHONPATH': f'{hidden.parent}{os.pathsep}{os.environ.get("PYTHONPATH", "")}',
            'WHEELSIM_AHEAD_OF_TIME': '0'})):
        result = subprocess.run(
            [shutil.which('wheelsim'), 'run', str(scenario), '--quiet', '--no-plots',
             '--output', label], cwd=tmp_path, capture_output=True, text=True,
            env={**os.environ, **extra}, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        warned = 'numba is not installed: wheelsim runs its kernels as plain Python'
        assert (warned in result.stderr) == (label == 'plain'), result.stderr
        folders[label] = tmp_path / label / 'short'
    compiled, plain = folders['compiled'], folders['plain']
    assert (plain / 'metrics.json').read_bytes() == (compiled / 'metrics.json').read_bytes()
    assert raw_messages(plain / 'bag') == raw_messages(compiled / 'bag')


def test_every_reader_opens_the_bag_with_its_qos_its_static_frames_and_distro(tmp_path):
    """rosbags reads every message (the JointState ends where its data ends); metadata.yaml
    gives each topic its publishers' QoS (``ros2 bag play`` offers the latched ones transient
    local again) and names the run's ROS 2; /tf_static holds the URDF's fixed joints."""
    import os

    import yaml
    from rosbags.highlevel import AnyReader
    from rosbags.typesys import Stores, get_typestore

    text = textwrap.dedent(SHORT_SCENARIO.format(seed=1)).replace(
        'vehicle_sim: {model: differential}',
        'vehicle_sim: {model: differential, footprint_frame: base_footprint, '
        'scan: {x: 0.1, yaw: 0.5}}')
    (tmp_path / 'short.yaml').write_text(text)
    result = wheelsim('run', 'short.yaml', '--quiet', '--no-plots', '--output', 'out',
                      cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    bag = tmp_path / 'out' / 'short' / 'bag'
    counts = {topic: len(messages) for topic, messages in read_bag(bag).items()}
    read: dict[str, list] = {}
    with AnyReader([bag], default_typestore=get_typestore(Stores.ROS2_JAZZY)) as reader:
        for connection, _, data in reader.messages():
            read.setdefault(connection.topic, []).append(
                reader.deserialize(data, connection.msgtype))
    assert {topic: len(messages) for topic, messages in read.items()} == counts
    assert len(read['/joint_states']) == 6 * 50 + 1
    assert all(len(msg.effort) == 0 and len(msg.velocity) == 2 for msg in read['/joint_states'])

    info = yaml.safe_load((bag / 'metadata.yaml').read_text())['rosbag2_bagfile_information']
    assert info['ros_distro'] == (os.environ.get('ROS_DISTRO') or os.environ['WHEELSIM_DISTRO'])
    qos = {entry['topic_metadata']['name']: entry['topic_metadata']['offered_qos_profiles']
           for entry in info['topics_with_message_count']}
    latched = {'/robot_description', '/vehicle_description', '/plan', '/tf_static'}
    for topic, profiles in qos.items():
        # /tf: localization and robot_state_publisher
        assert len(profiles) == (2 if topic == '/tf' else 1), (topic, profiles)
        for profile in profiles:
            # as the ROS graph reports a publisher: no history nor depth (ros2 bag record's too)
            assert (profile['history'], profile['depth'], profile['liveliness']) == (
                'unknown', 0, 'automatic')
            assert profile['durability'] == ('transient_local' if topic in latched
                                             else 'volatile')
            assert profile['reliability'] == ('best_effort' if topic == '/scan' else 'reliable')
    assert latched <= set(qos)

    # robot_state_publisher's moving joints: the wheels from joint_states, at most 20 Hz
    wheels = [msg for msg in read['/tf'] if msg.transforms[0].header.frame_id == 'base_link']
    assert {t.child_frame_id for msg in wheels for t in msg.transforms} == {
        'left_wheel', 'right_wheel'}
    stamps = np.array([msg.transforms[0].header.stamp.sec * 10**9
                       + msg.transforms[0].header.stamp.nanosec for msg in wheels])
    assert np.diff(stamps).min() >= 50_000_000
    assert len(wheels) >= 6 * 16

    (static,) = read['/tf_static']
    frames = {t.child_frame_id: t for t in static.transforms}
    assert set(frames) == {'base_scan', 'base_footprint'}  # the URDF's fixed joints
    assert frames['base_footprint'].transform.rotation.w == 1.0
    laser = frames['base_scan']
    assert laser.header.frame_id == 'base_link' and laser.header.stamp.sec == 1
    translation, rotation = laser.transform.translation, laser.transform.rotation
    assert (translation.x, translation.y) == (0.1, 0.0)
    assert (rotation.z, rotation.w) == pytest.approx((math.sin(0.25), math.cos(0.25)))


def test_a_failed_criterion_gives_exit_1_and_metrics_json_records_each_with_its_value(tmp_path):
    scenario = write_scenario(tmp_path, 1)
    scenario.write_text(scenario.read_text() + 'pass_criteria: {cross_track_rms_m: 0.0, '
                        'goal_position_error_m: 1.0}\n')
    result = wheelsim('run', scenario.name, '--seed', '4', '--quiet', '--no-plots', '--output',
                      'o', cwd=tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert 'FAIL' in result.stdout
    metrics = json.loads((tmp_path / 'o' / 'short' / 'metrics.json').read_text())
    # the file as given on the command line (relative: no absolute temporary path), the seed
    # the run used (--seed replaces the scenario's)
    assert metrics['scenario'] == {'name': 'short', 'file': 'scenario.yaml'}
    assert metrics['seed'] == 4
    assert metrics['pass_criteria'] == {
        'cross_track_rms_m': {'bound': 0.0, 'value': metrics['cross_track_rms_m'],
                              'passed': False},
        'goal_position_error_m': {'bound': 1.0, 'value': metrics['goal_position_error_m'],
                                  'passed': True}}
    assert metrics['cross_track_rms_m'] > 0.0 and metrics['passed'] is False


def test_stanley_at_its_defaults_follows_the_default_figure_eight(tmp_path):
    """Found in review: on the default differential robot, Stanley's virtual front axle (2 m
    ahead, then steered at most pi/6: a 3.5 m radius) left the figure-eight by 5 m (cross-track
    RMS 3.2 m). It now steers as far as the controller takes (1.55 rad), the yaw rate limit
    bounding it: RMS 0.020 m, max 0.083 m."""
    result = wheelsim('run', '--param', 'controller.algorithm=stanley', '--quiet', '--no-plots',
                      '--output', 'o', cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr  # the pass criteria hold
    metrics = json.loads((tmp_path / 'o' / 'default' / 'metrics.json').read_text())
    assert metrics['cross_track_max_m'] < 0.15, metrics


def test_a_waypoints_array_given_with_param_is_the_path_driven(tmp_path):
    """``--param planner.waypoints=[...]`` as ROS's ``-p waypoints:=[...]``: the run plans
    through those waypoints (not the scenario's) and the vehicle ends at the last one."""
    scenario = tmp_path / 'scenario.yaml'
    scenario.write_text(textwrap.dedent(SHORT_SCENARIO.format(seed=1))
                        .replace('duration: 6.0', 'duration: 15.0')
                        .replace('mode: noisy', 'mode: perfect'))
    waypoints = [1.5, 0.0, math.nan, 1.5, 1.5, 1.57]
    result = wheelsim('run', scenario.name, '--param',
                      'planner.waypoints=[1.5, 0.0, .nan, 1.5,1.5,1.57]', '--quiet',
                      '--no-plots', '--output', 'o', cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    last = {}
    with next((tmp_path / 'o' / 'short' / 'bag').glob('*.mcap')).open('rb') as handle:
        reader = make_reader(handle, decoder_factories=[DecoderFactory()])
        for _, channel, _, decoded in reader.iter_decoded_messages(
                topics=['/plan', '/ground_truth']):
            last[channel.topic] = decoded
    plan = [(p.pose.position.x, p.pose.position.y) for p in last['/plan'].poses]
    end = last['/plan'].poses[-1].pose
    assert (end.position.x, end.position.y) == pytest.approx((1.5, 1.5), abs=1e-6)
    assert 2 * math.atan2(end.orientation.z, end.orientation.w) == pytest.approx(1.57, abs=1e-3)
    # through the first waypoint, nowhere near the scenario's (2.0, 1.0)
    assert min(math.dist(xy, waypoints[:2]) for xy in plan) < 0.02
    assert min(math.dist(xy, (2.0, 1.0)) for xy in plan) > 0.4
    truth = last['/ground_truth'].pose.pose.position
    assert math.dist((truth.x, truth.y), (1.5, 1.5)) < 0.1


@pytest.mark.parametrize('text, fragment', [
    ('duraton: 5\n', 'duraton: unknown scenario key (did you mean duration?)'),
    ('nodes: {planner: {waypoint: [1.0, 0.0, .nan]}}\n',
     'nodes.planner.waypoint: planner has no such parameter (did you mean waypoints?)'),
    ('nodes: {vehicle_sim: {step_rate: -5.0}}\n', 'nodes.vehicle_sim.step_rate'),
    # Cross-field rules the node applies are checked before anything starts or is written.
    ('nodes: {planner: {waypoints: [.nan, 0.0, .nan]}}\n', 'non-finite position'),
    ('nodes: {planner: {waypoints: [' + ', '.join(['1.0, 1.0, .nan'] * 2000) + ']}}\n',
     'are 0 m apart'),
    ('name: ".."\n', "name: '..' is not a folder name"),
    ('name: "a/b"\n', 'must not contain path separators'),
    ('params_file: broken.yaml\n', 'params_file'),
    # found in review: the planner refused it once it learned the vehicle, planning nothing,
    # and the run passed standing still
    ('nodes: {planner: {holonomic: true, waypoints: [1.0, 1.0, .nan]}}\n',
     "nodes.planner.holonomic: only an omni vehicle moves sideways; the model is 'bicycle' "
     '(vehicle_sim.model)'),
    # found in review: the controller refused every plan and pose, and the run passed
    ('nodes: {planner: {map_frame: world, waypoints: [1.0, 1.0, .nan]}}\n',
     "the map frame (frame_prefix + map_frame) differs between the nodes: localization 'map', "
     "planner 'world', controller 'map'; the controller refuses a pose or plan in another "
     'frame than its own: give each the same'),
    ('nodes: {controller: {frame_prefix: robot1/}, planner: {waypoints: [1.0, 1.0, .nan]}}\n',
     "controller 'robot1/map'"),
    ('name: ' + 'a' * 300 + '\n', 'name: must be at most 200 bytes'),
    ('name: café\n'.encode('latin-1'), 'bad.yaml: not UTF-8 text (byte 0xe9 at position 9)'),
])
def test_bad_scenario_files_name_the_key(tmp_path, text, fragment):
    path = tmp_path / 'bad.yaml'
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    (tmp_path / 'broken.yaml').write_text('vehicle_sim: [unclosed\n')
    result = wheelsim('run', str(path), '--quiet', cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert fragment in result.stderr and 'Traceback' not in result.stderr
    assert len(result.stderr) < 2000, 'one line, not the whole waypoint list'
    assert not (tmp_path / 'results').exists()


@pytest.mark.parametrize('source, fragment', [
    ('def f(:\n', 'SyntaxError in {folder}/broken_policy.py, line 1: invalid syntax'),
    ('raise RuntimeError("import boom")\n', 'RuntimeError: import boom')])
def test_a_policy_that_fails_to_import_is_one_line_and_exit_2(tmp_path, source, fragment):
    (tmp_path / 'broken_policy.py').write_text(source)
    (tmp_path / 'pol.yaml').write_text(
        "nodes: {controller: {algorithm: policy, policy: {callable: 'broken_policy:f'}},\n"
        "        planner: {waypoints: [1.0, 0.0, .nan]}}\n")
    env = {**os.environ, 'PYTHONPATH': f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}'}
    result = subprocess.run([shutil.which('wheelsim'), 'run', 'pol.yaml', '--quiet'],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.count('\n') == 1 and 'Traceback' not in result.stderr, result.stderr
    assert ('nodes.controller.policy.callable: cannot import broken_policy: '
            + fragment.format(folder=tmp_path)) in result.stderr, result.stderr
    assert not (tmp_path / 'results').exists()


def run_policy(tmp_path: Path, body: str, arguments: str = 'observation'
               ) -> tuple[subprocess.CompletedProcess, Path]:
    """``wheelsim run`` of a 5 s scenario whose controller runs the policy ``def
    f(arguments):`` with ``body``; the result and the run's folder."""
    (tmp_path / 'my_policy.py').write_text(f'def f({arguments}):\n    {body}\n')
    (tmp_path / 'pol.yaml').write_text(
        "name: pol\nduration: 5\n"
        "nodes: {controller: {algorithm: policy, policy: {callable: 'my_policy:f'}},\n"
        "        planner: {waypoints: [1.0, 0.0, .nan]}}\n")
    env = {**os.environ, 'PYTHONPATH': f'{tmp_path}:{os.environ.get("PYTHONPATH", "")}'}
    result = subprocess.run([shutil.which('wheelsim'), 'run', 'pol.yaml', '--quiet'],
                            cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    return result, tmp_path / 'results' / 'pol'


def test_a_policy_with_the_rollouts_signature_is_refused_before_the_run(tmp_path):
    """Found in review: ``policy(state, t_s)`` (the Python API's rollout policy) failed mid-run
    with exit 1; it cannot take the observation alone, which is known at start."""
    result, folder = run_policy(tmp_path, 'return 0.0, 0.0', arguments='state, t_s')
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr == (
        'wheelsim run: error: pol.yaml: nodes.controller.policy.callable: f(state, t_s) cannot be '
        "called with the observation alone (missing a required argument: 't_s'): a policy is "
        'policy(observation)\n')
    assert not folder.exists()


@pytest.mark.parametrize('body, error', [
    ("raise ZeroDivisionError('boom')", 'ZeroDivisionError: boom'),
    ("raise ValueError('bad weights')", 'ValueError: bad weights'),
    ("open('/nonexistent/weights.npz')", "FileNotFoundError: [Errno 2] No such file or "
                                         "directory: '/nonexistent/weights.npz'")])
def test_a_policy_that_raises_in_the_run_is_one_line_and_exit_1(tmp_path, body, error):
    """Found in review: a traceback and exit 1, or (an OSError) 'writing the results failed'
    and exit 3, blaming the disk; nothing said where the run stopped."""
    result, folder = run_policy(tmp_path, body)
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f'wheelsim run: error: the run failed: {error} (traceback in {folder / "error.txt"})\n'
            == result.stderr.splitlines(keepends=True)[-1]), result.stderr
    assert 'Traceback' not in result.stderr
    assert 'in f\n' in (folder / 'error.txt').read_text()  # the policy's frame
    assert (folder / 'bag' / 'metadata.yaml').is_file() and not (folder / 'metrics.json').exists()


@pytest.mark.parametrize('action', ['[0.1, 0.2, 0.3, 0.4]', 'None', "[float('nan'), 0.0]"])
def test_a_policy_that_returns_no_action_fails_the_run_naming_it(tmp_path, action):
    """Found in review: the controller stopped the vehicle with an error logged, and the run
    passed its criteria (a figure-eight ends where it starts) with exit 0."""
    result, folder = run_policy(tmp_path, f'return {action}')
    returned = repr(eval(action))  # noqa: S307 - the test's own literal
    assert result.returncode == 1, result.stdout + result.stderr
    assert (f'wheelsim run: error: the run failed: PolicyError: the policy returned {returned}; an '
            'action is 2 finite values (vx_mps, wz_radps) (traceback in '
            f'{folder / "error.txt"})\n' == result.stderr.splitlines(keepends=True)[-1]), (
        result.stderr)
    assert not (folder / 'metrics.json').exists()


def test_help_says_what_the_command_does_in_plain_words(tmp_path):
    result = wheelsim('--help', cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    description = result.stdout.split('\n\n')[1]
    assert '``' not in description and ':func:' not in description, description
    assert description.rstrip().endswith('describes each command.'), description


@pytest.mark.parametrize('command', ['run', 'sweep', 'tune'])
def test_the_param_help_says_a_quoted_text_is_one_value(tmp_path, command):
    """Each command's --param help says a quoted text is one value (docs/wheelsim_run.md)."""
    result = wheelsim(command, '--help', cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "a text in quotes is one value, commas and all: NODE.PARAM='a,b'" in ' '.join(
        result.stdout.split()), result.stdout


def test_no_scenario_name_reaches_outside_its_run_folder(tmp_path):
    """A scenario named '..' or '.' (or a file '..yaml') once emptied the output root's parent
    or every other run; now refused, and nothing outside the output root is touched."""
    (tmp_path / 'code').mkdir()
    (tmp_path / 'code' / 'important.txt').write_text('keep')
    (tmp_path / 'results' / 'other').mkdir(parents=True)
    (tmp_path / 'results' / 'other' / 'metrics.json').write_text('{}')
    for name, text in (('dots.yaml', 'name: ".."\n'), ('dot.yaml', 'name: "."\n'),
                       ('..yaml', '')):
        (tmp_path / name).write_text(text + f'duration: 1.0\n{WAYPOINTS}')
        result = wheelsim('run', name, '--quiet', '--no-plots', cwd=tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert ': name: ' in result.stderr and 'Traceback' not in result.stderr
    assert (tmp_path / 'code' / 'important.txt').read_text() == 'keep'
    assert (tmp_path / 'results' / 'other' / 'metrics.json').read_text() == '{}'


def test_a_second_run_keeps_the_first_and_overwrite_keeps_user_files(tmp_path):
    scenario = write_scenario(tmp_path, 1)
    scenario.write_text(scenario.read_text().replace('duration: 6.0', 'duration: 1.0'))
    first = wheelsim('run', str(scenario), '--quiet', '--no-plots', '--output', 'o', cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    (tmp_path / 'o' / 'short' / 'notes.txt').write_text('mine')
    second = wheelsim('run', str(scenario), '--quiet', '--no-plots', '--output', 'o',
                      cwd=tmp_path)
    assert second.returncode == 0 and 'o/short-2' in second.stdout, second.stdout
    third = wheelsim('run', str(scenario), '--quiet', '--no-plots', '--output', 'o',
                     '--overwrite', cwd=tmp_path)
    assert third.returncode == 0, third.stderr
    assert (tmp_path / 'o' / 'short' / 'notes.txt').read_text() == 'mine'
    assert (tmp_path / 'o' / 'short' / 'metrics.json').is_file()
    assert sorted(p.name for p in (tmp_path / 'o').iterdir()) == ['short', 'short-2']


def test_a_slow_paced_run_reports_its_real_time_factor_not_zero(tmp_path):
    """Found in review: paced at 0.04, timing.json said 0.0 (as if as fast as possible)."""
    (tmp_path / 'tiny.yaml').write_text(f'name: tiny\nduration: 0.1\nrecord: none\n{WAYPOINTS}')
    result = wheelsim('run', 'tiny.yaml', '--real-time-factor', '0.04', '--no-plots',
                      '--output', 'out', cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    timing = json.loads((tmp_path / 'out' / 'tiny' / 'timing.json').read_text())
    factor = timing['simulated_time_s'] / timing['wall_time_s']
    assert timing['real_time_factor'] == pytest.approx(factor, rel=1e-2)
    assert 0.01 < timing['real_time_factor'] <= 0.041, timing  # paced: never faster
    shown = re.search(r'\((\S+)x real time\)', result.stdout)
    assert shown and float(shown[1]) == pytest.approx(factor, rel=0.05), result.stdout


@pytest.mark.parametrize('factor', ['1e-300', '-1', 'nan', '1e9', 'fast'])
def test_an_impossible_real_time_factor_is_refused_by_name(tmp_path, factor):
    result = wheelsim('run', '--real-time-factor', factor, cwd=tmp_path)
    assert result.returncode == 2
    assert '--real-time-factor' in result.stderr and 'Traceback' not in result.stderr
    # with its range (found in review: 'fast' gave "invalid _real_time_factor value")
    assert 'must be 0 (as fast as possible) or in [0.001, 1e+06]' in result.stderr


def test_interrupted_run_keeps_a_valid_bag_and_has_not_passed(tmp_path):
    exe = shutil.which('wheelsim')
    # Paced at 10x real time, so the 90 s default scenario is still running when interrupted.
    # The progress bar (on stderr) says how far it has simulated: interrupted after 45 s, the
    # goal reached at 39 s (every criterion met by the part that ran).
    progress = tmp_path / 'stderr'
    with progress.open('w') as stderr:
        process = subprocess.Popen([exe, 'run', '--no-plots', '--output', 'o',
                                    '--real-time-factor', '10'],
                                   cwd=tmp_path, stdout=subprocess.PIPE, stderr=stderr,
                                   text=True)

    def simulated_s():
        shown = re.findall(r'([0-9.]+)/90\.0 s sim', progress.read_text(errors='replace'))
        return float(shown[-1]) if shown else 0.0

    deadline = time.monotonic() + 120
    while simulated_s() < 45.0 and process.poll() is None:
        assert time.monotonic() < deadline, progress.read_text()
        time.sleep(0.2)
    process.send_signal(signal.SIGINT)
    stdout, _ = process.communicate(timeout=120)
    stderr = progress.read_text()
    assert process.returncode == 130, stdout + stderr
    bag = tmp_path / 'o' / 'default' / 'bag'
    assert 'interrupted' in stdout
    # found in review: nothing was printed while the report was written (seconds, with plots)
    assert '\ninterrupted: writing the metrics of the part simulated\n' in stderr, stderr
    topics = read_bag(bag)
    assert 50 * 45 <= len(topics['/ground_truth']) < 50 * 90  # 50 Hz, interrupted after 45 s
    metrics = json.loads((bag.parent / 'metrics.json').read_text())
    assert metrics['partial'] is True  # computed on the part that ran
    # found in review: "passed": true beside it, the criteria having seen only part of the run
    assert all(c['passed'] for c in metrics['pass_criteria'].values()), metrics
    assert metrics['passed'] is False


@pytest.mark.parametrize(
    'command', [('run',), ('sweep', '--param', 'controller.feedforward.k_x=1')]
)
def test_an_output_that_cannot_be_a_folder_is_named(tmp_path, command):
    (tmp_path / 'taken').write_text('a file')
    for output, fragment in (('taken', '--output taken: is a file, not a folder'),
                             ('taken/results', '--output taken/results: cannot create it'),
                             # found in review: written into the current folder
                             ('', "--output '': give a folder (default: results)")):
        result = wheelsim(*command, '--output', output, cwd=tmp_path)
        assert result.returncode == 2, result.stdout + result.stderr
        assert fragment in result.stderr and 'Traceback' not in result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ['taken']


# found in review: a full disk left report.pdf cut (no end: no PDF) beside complete plots
def test_a_plot_that_cannot_be_written_is_named_and_no_cut_file_stays(tmp_path):
    scenario = write_scenario(tmp_path, 1)
    scenario.write_text(scenario.read_text() + 'record: none\n')  # the plots hit the limit

    def files_of_at_most_40_kb():  # as a full disk refuses a write (EFBIG here, not ENOSPC)
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))

    exe = shutil.which('wheelsim')
    result = subprocess.run([exe, 'run', str(scenario), '--quiet', '--output', 'o'],
                            cwd=tmp_path, capture_output=True, text=True, timeout=600,
                            preexec_fn=files_of_at_most_40_kb)
    assert result.returncode == 3, result.stdout + result.stderr
    plots = tmp_path / 'o' / 'short' / 'plots'
    line = result.stderr.splitlines()[-1]
    assert re.fullmatch(rf'wheelsim run: error: writing the results failed: \[Errno 27\] File too '
                        rf'large: {plots}/\w+\.png not written', line), result.stderr
    assert not Path(line.split(': ')[-1].removesuffix(' not written')).exists()
    assert not (plots / 'report.pdf').exists()
    for png in plots.glob('*.png'):  # those written before: whole
        assert png.read_bytes().endswith(b'IEND\xaeB`\x82'), png
