"""`wheelsim run` in a world: a scenario names a map, vehicle_sim reads it and publishes it on
`map`, the bag records `map`, `scan`, `footprint` and `collision`, and a vehicle driving at a
wall is stopped there and the collision reported (metrics, summary, plots). Through the
installed command."""

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from test_wheelsim_run import wheelsim

from wheelsim.core.params import from_flat
from wheelsim.core.units import NS_PER_S
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.map_file import load_map_file
from wheelsim.core.world.scanner import LaserScanner
from wheelsim.testing.maps import walled_room, write_map

RES = 0.05
WALL_X_M = 4.0
SCENARIO = """
    name: at_the_wall
    duration: 8.0
    seed: 5
    map: maps/wall.yaml
    nodes:
      vehicle_sim:
        model: differential
        footprint: [-0.3, -0.25, 0.35, -0.25, 0.35, 0.25, -0.3, 0.25]
        scan: {x: 0.2, noise_stddev: 0.0}
      localization: {mode: perfect}
      planner:
        limits: {max_speed: 1.0}
        waypoints: [2.0, 0.0, .nan, 7.0, 0.0, .nan]
      controller: {model: differential}
"""


def wall_scenario(tmp_path):
    """A 12 m x 6 m room (x in [-2, 10], y in [-3, 3]) with a wall across it at x = 4 m; the
    plan runs straight through that wall."""
    obstacles = walled_room(12.0, 6.0)
    obstacles[:, round((WALL_X_M + 2.0) / RES)] = True
    write_map(tmp_path / 'maps', obstacles, RES, (-2.0, -3.0, 0.0), name='wall')
    path = tmp_path / 'at_the_wall.yaml'
    path.write_text(textwrap.dedent(SCENARIO))
    return path


def messages(bag_dir, topic):
    """Decoded messages of ``topic`` in the run's bag, with the rosbags type store."""
    from mcap.reader import make_reader
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_KILTED)
    with next(bag_dir.glob('*.mcap')).open('rb') as handle:
        return [store.deserialize_cdr(message.data, schema.name)
                for schema, channel, message in make_reader(handle).iter_messages()
                if channel.topic == topic]


def stamp(msg):
    return msg.header.stamp.sec * NS_PER_S + msg.header.stamp.nanosec


def test_driving_at_a_wall_stops_there_and_is_reported(tmp_path):
    result = wheelsim('run', str(wall_scenario(tmp_path)), '--quiet', '--output', 'out',
                      cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    out = tmp_path / 'out' / 'at_the_wall'
    metrics = json.loads((out / 'metrics.json').read_text())
    assert metrics['collisions'] == 1
    assert 0.0 <= metrics['min_clearance_m'] <= RES / 64
    assert 'collisions, min clearance    1' in result.stdout
    truth = messages(out / 'bag', '/ground_truth')
    fronts = [m.pose.pose.position.x + 0.35 for m in truth]
    assert max(fronts) <= WALL_X_M + 1e-9  # never into the wall
    assert fronts[-1] > WALL_X_M - RES / 64  # stopped at it, pushed on by the controller
    assert truth[-1].twist.twist.linear.x == 0.0
    hits = messages(out / 'bag', '/collision')
    assert len(hits) == 1 and hits[0].point.x == WALL_X_M + RES / 2
    maps = messages(out / 'bag', '/map')  # vehicle_sim's, once, at the run's start (1 s)
    assert [(m.info.width, m.header.frame_id, stamp(m)) for m in maps] == [(240, 'map', NS_PER_S)]
    world = load_map_file(tmp_path / 'maps' / 'wall.yaml').occupancy_map()
    np.testing.assert_array_equal(maps[0].data.reshape(world.values.shape), world.values)
    assert (out / 'plots' / 'clearance.png').is_file()


def test_scans_in_a_lock_step_run_are_stamped_with_the_pose_they_were_cast_from(tmp_path):
    result = wheelsim('run', str(wall_scenario(tmp_path)), '--quiet', '--output', 'out',
                      cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    bag = tmp_path / 'out' / 'at_the_wall' / 'bag'
    scans = messages(bag, '/scan')
    poses = {stamp(m): m.pose.pose for m in messages(bag, '/ground_truth')}
    assert len(scans) == 80  # 10 Hz for 8 s
    assert {stamp(s) for s in scans} <= set(poses)
    world = load_map_file(tmp_path / 'maps' / 'wall.yaml').occupancy_map()
    settings = from_flat(ScanSettings, {'scan.x': 0.2}, 'scan')
    reference = LaserScanner(settings, np.random.default_rng(0))
    for scan in scans:
        pose = poses[stamp(scan)]
        yaw = 2.0 * math.atan2(pose.orientation.z, pose.orientation.w)
        expected = reference.true_ranges(world, (pose.position.x, pose.position.y, yaw))
        finite = np.isfinite(expected)
        np.testing.assert_allclose(np.asarray(scan.ranges)[finite], expected[finite], atol=1e-4)
    assert scans[0].header.frame_id == 'base_scan'


def test_a_bad_map_is_named_before_anything_starts(tmp_path):
    path = wall_scenario(tmp_path)
    (tmp_path / 'maps' / 'wall.pgm').unlink()
    result = wheelsim('run', str(path), '--quiet', '--output', 'out', cwd=tmp_path)
    assert result.returncode == 2
    assert 'map: map image' in result.stderr and 'wall.pgm: no such file' in result.stderr
    assert not (tmp_path / 'out').exists()


@pytest.mark.slow
def test_after_the_image_s_warm_up_a_run_in_a_world_compiles_no_kernel(tmp_path):
    """The Docker image runs ``python -m wheelsim.core.warm_up`` and ``python -m
    wheelsim.report.warm_up`` so that containers start with numba's cache warm: a run that scans
    and collides afterwards must find every kernel its nodes and its report call in the cache."""
    cache = tmp_path / 'numba_cache'
    env = {**os.environ, 'NUMBA_CACHE_DIR': str(cache)}
    for package, says in (('core', 'the control step and the world'), ('report', 'the report')):
        warm = subprocess.run([sys.executable, '-m', f'wheelsim.{package}.warm_up'], env=env,
                              capture_output=True, text=True, timeout=900)
        assert warm.returncode == 0, warm.stderr
        assert says in warm.stdout
    warmed = set(cache.rglob('*.nbc'))  # one file per kernel and argument types
    assert {path.parent.name.split('_')[0] for path in warmed} >= {'vehicle', 'world', 'report'}
    result = subprocess.run(
        [shutil.which('wheelsim'), 'run', str(wall_scenario(tmp_path)), '--quiet', '--no-plots',
         '--output', 'out'], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads((tmp_path / 'out' / 'at_the_wall' / 'metrics.json').read_text())[
        'collisions'] == 1
    compiled_in_run = sorted(str(path.relative_to(cache))
                             for path in set(cache.rglob('*.nbc')) - warmed)
    assert compiled_in_run == []
