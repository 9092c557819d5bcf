"""The world in a run's report: map, footprint and collisions read from the bag, the collision
count and the minimum clearance against analytic answers, the plots over the map."""

import math

import numpy as np
import pytest
from geometry_msgs.msg import PointStamped
from matplotlib.image import imread
from mcap.reader import make_reader
from test_report_bag_data import odometry, set_stamp, straight_run, write_bag

from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.report.bag_data import load_run
from wheelsim.report.metrics import clearance_series, compute_metrics
from wheelsim.report.plots import write_plots
from wheelsim.report.summary import format_summary
from wheelsim.ros.map_messages import footprint_polygon, occupancy_grid, point_stamped
from wheelsim.run.recording import BagRecorder

BOX = Footprint.from_flat([-0.3, -0.2, 0.3, -0.2, 0.3, 0.2, -0.3, 0.2])


def wall_map(yaw=0.0):
    """A 20 m x 4 m map with a wall one cell thick at grid x in [12.0, 12.05] m, placed with
    its origin at (-1, -2) and turned by ``yaw``."""
    values = np.zeros((80, 400), np.int8)
    values[:, 240] = 100
    values[0, 0] = -1
    return OccupancyMap.from_values(values, 400, 80, 0.05, (-1.0, -2.0, yaw))


def world_run(world=None):
    """straight_run (along +x, 10 m at 1 m/s), with a map, the footprint and one collision."""
    world = world or wall_map()
    records = straight_run(offset_m=0.0)
    records += [('/map', occupancy_grid(world, 'map', 0), 0.0),
                ('/footprint', footprint_polygon(BOX, 'base_link', 0), 0.0),
                ('/collision', point_stamped(11.025, 0.0, 'map', 11_000_000_000), 11.0)]
    return records


def test_map_footprint_and_collisions_come_back_from_the_bag(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', world_run()))
    assert run.world.values.shape == (80, 400) and run.world.obstacles[:, 240].all()
    assert run.world.values[0, 0] == -1 and run.world.origin == (-1.0, -2.0, 0.0)
    np.testing.assert_allclose(run.footprint.corners, BOX.corners)
    np.testing.assert_allclose([run.collisions.t_s, run.collisions.x_m], [[11.0], [11.025]])


def test_minimum_clearance_and_collisions_metrics(tmp_path):
    """The box's front reaches x = 10.3 at the end; the wall's face is at x = 11.0."""
    m = compute_metrics(load_run(write_bag(tmp_path / 'bag', world_run())))
    assert m['collisions'] == 1
    assert m['min_clearance_m'] == pytest.approx(0.7)
    t_s, clearance_m = clearance_series(load_run(write_bag(tmp_path / 'bag2', world_run())))
    # OccupancyGrid carries the resolution as float32: 240 cells of 0.05 m are 1.7e-7 m off
    np.testing.assert_allclose(clearance_m[t_s <= 10.0], 11.0 - 0.3 - t_s[t_s <= 10.0],
                               atol=1e-6)


def test_a_bag_without_the_collision_topic_has_no_collision_count(tmp_path):
    """Found in review: re-reported from a bag that did not record ``collision``, a run that
    had one collision had collisions 0. A bag has the topic when it records it, messages or
    not (as ``ros2 bag record`` records a topic it discovered)."""
    silent = [record for record in world_run() if record[0] != '/collision']
    m = compute_metrics(load_run(write_bag(tmp_path / 'none', silent)))
    assert m['collisions'] is None and m['min_clearance_m'] == pytest.approx(0.7)
    with BagRecorder(tmp_path / 'silent', topic_types={'/collision': PointStamped}) as recorder:
        for topic, msg, t_s in sorted(silent, key=lambda r: r[2]):
            recorder.record(topic, msg, round(t_s * 1e9))
    with (tmp_path / 'silent' / 'silent.mcap').open('rb') as stream:
        summary = make_reader(stream).get_summary()
    assert '/collision' in {channel.topic for channel in summary.channels.values()}
    assert compute_metrics(load_run(tmp_path / 'silent'))['collisions'] == 0


def test_without_collisions_reported_their_count_is_null(tmp_path):
    """Found in review: with world.collisions false a vehicle driving through a wall had
    collisions 0 (and passed collisions: 0) beside a clearance of 0."""
    run = load_run(write_bag(tmp_path / 'bag', world_run()))
    m = compute_metrics(run, collisions_reported=False)
    assert m['collisions'] is None and m['min_clearance_m'] == pytest.approx(0.7)


def test_rotated_map(tmp_path):
    """The same map turned by 90 degrees: grid point (gx, gy) is at (-1 - gy, -2 + gx) in the
    map, so the wall is the segment y = 10, x in [-5, -1]. Nearest at the start: from the box's
    corner (-0.3, 0.2) to the wall's end (-1, 10)."""
    world = wall_map(yaw=math.pi / 2)
    run = load_run(write_bag(tmp_path / 'bag', world_run(world)))
    assert compute_metrics(run)['min_clearance_m'] == pytest.approx(math.hypot(0.7, 9.8),
                                                                    rel=1e-5)


def test_without_a_map_the_world_metrics_are_null(tmp_path):
    m = compute_metrics(load_run(write_bag(tmp_path / 'bag', straight_run())))
    assert m['collisions'] is None and m['min_clearance_m'] is None


def test_summary_and_plots_show_the_world(tmp_path):
    run = load_run(write_bag(tmp_path / 'bag', world_run()))
    text = format_summary(compute_metrics(run))
    assert 'world' in text and 'collisions, min clearance    1, 0.7 m' in text
    paths = write_plots(run, tmp_path / 'plots', title='wall')
    clearance_png = next(p for p in paths if p.name == 'clearance.png')
    xy_png = next(p for p in paths if p.name == 'xy_paths.png')
    assert imread(clearance_png)[..., :3].std() > 0.01
    # the dark wall is drawn: many near-black pixels in the paths figure
    xy = imread(xy_png)[..., :3]
    assert (xy.max(axis=2) < 0.35).sum() > 200


def test_a_collision_stamp_is_read_from_its_header(tmp_path):
    msg = point_stamped(1.0, 2.0, 'map', 0)
    set_stamp(msg.header, 3.5)
    records = [('/ground_truth', odometry(0.0, 0.0, 0.0, 0.0), 0.0), ('/collision', msg, 4.0)]
    run = load_run(write_bag(tmp_path / 'bag', records))
    assert run.collisions.t_s.tolist() == [3.5]
