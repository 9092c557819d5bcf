"""Footprint against obstacle cells: contact and clearance against analytic answers and a
brute-force reference."""

import math

import numpy as np
import pytest

from wheelsim.core.world.collision import clearances, contact
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap

RES = 0.05
BOX = Footprint.from_flat([-0.3, -0.2, 0.3, -0.2, 0.3, 0.2, -0.3, 0.2])


def world_with(cells, size=200, origin=(-5.0, -5.0, 0.0)):
    values = np.zeros((size, size), np.int8)
    for row, col in cells:
        values[row, col] = 100
    return OccupancyMap.from_values(values, size, size, RES, origin)


def wall_east():
    """Obstacle column col = 140: x in [2.0, 2.05] m."""
    return world_with([(row, 140) for row in range(200)])


@pytest.mark.parametrize('x, touching', [(1.6, False), (1.69, False), (1.7, True), (1.75, True),
                                         (2.2, True), (2.71, False)])
def test_contact_of_a_box_with_a_wall(x, touching):
    """The box spans x - 0.3 .. x + 0.3, the wall x in [2.0, 2.05]: touching for x in [1.7,
    2.35]."""
    assert (contact(wall_east(), BOX, (x, 0.0, 0.0)) is not None) is touching


def test_contact_names_the_cell_and_where_it_is():
    hit = contact(wall_east(), BOX, (1.72, 0.0, 0.0))
    assert hit.col == 140 and 95 <= hit.row <= 104  # y in [-0.2, 0.2], edges included
    assert hit.x_m == pytest.approx(2.025)
    assert abs(hit.y_m) <= 0.2 + RES


def test_clearance_of_a_rotated_box_is_its_corner_to_the_wall():
    yaw = 0.4
    corner_x = max(x * math.cos(yaw) - y * math.sin(yaw) for x, y in BOX.corners)
    clear = clearances(wall_east(), BOX, [(1.0, 0.3, yaw), (1.5, -1.0, -yaw)])
    np.testing.assert_allclose(clear, [2.0 - 1.0 - corner_x, 2.0 - 1.5 - corner_x], atol=1e-12)


def test_clearance_to_one_cell_across_a_corner():
    world = world_with([(120, 120)])  # x, y in [1.0, 1.05]
    clear = clearances(world, BOX, [(0.0, 0.0, 0.0)])[0]
    assert clear == pytest.approx(math.hypot(1.0 - 0.3, 1.0 - 0.2))


def test_a_notch_of_a_non_convex_footprint_can_hold_an_obstacle():
    # A U shape open to +x: the notch x in [0, 0.4], y in [-0.1, 0.1].
    u_shape = Footprint.from_flat([-0.2, -0.3, 0.4, -0.3, 0.4, -0.1, 0.0, -0.1, 0.0, 0.1, 0.4, 0.1,
                                   0.4, 0.3, -0.2, 0.3])
    world = world_with([(100, 104)])  # x in [0.2, 0.25], y in [0, 0.05]: inside the notch
    assert contact(world, u_shape, (0.0, 0.0, 0.0)) is None
    assert clearances(world, u_shape, [(0.0, 0.0, 0.0)])[0] == pytest.approx(0.05)
    assert contact(world, u_shape, (0.0, -0.06, 0.0)) is not None  # the upper arm reaches it


def test_a_cell_entirely_inside_the_footprint_is_a_contact():
    world = world_with([(100, 100)])
    assert contact(world, BOX, (0.0, 0.0, 0.3)) is not None
    thick = world_with([(row, col) for row in range(80, 120) for col in range(80, 120)])
    assert clearances(thick, BOX, [(0.0, 0.0, 0.0)])[0] == 0.0  # deep inside a thick wall


def test_rotated_map_origin():
    # The same wall in a map rotated by 90 degrees: grid x is the map's y.
    values = np.zeros((200, 200), np.int8)
    values[:, 140] = 100
    world = OccupancyMap.from_values(values, 200, 200, RES, (5.0, -5.0, math.pi / 2))
    # grid col 140 is map y in [2.0, 2.05]; a box facing +y has its front at y + 0.3
    assert contact(world, BOX, (0.0, 1.69, math.pi / 2)) is None
    assert contact(world, BOX, (0.0, 1.71, math.pi / 2)) is not None
    assert clearances(world, BOX, [(0.0, 1.5, math.pi / 2)])[0] == pytest.approx(0.2)


def brute_force_clearance(world, footprint, pose):
    """Distance between densely sampled polygon and obstacle cell boundaries (1 mm)."""
    corners = footprint.in_map(*pose)
    edges = np.concatenate([np.linspace(a, b, 400) for a, b in
                            zip(corners, np.roll(corners, -1, axis=0), strict=True)])
    rows, cols = np.nonzero(world.obstacles)
    best = math.inf
    for row, col in zip(rows, cols, strict=True):
        x0, y0 = world.to_map(col, row)
        square = np.array([[x0, y0], [x0 + RES, y0], [x0 + RES, y0 + RES], [x0, y0 + RES]])
        samples = np.concatenate([np.linspace(a, b, 50) for a, b in
                                  zip(square, np.roll(square, -1, axis=0), strict=True)])
        gaps = np.hypot(*(edges[:, None, :] - samples[None, :, :]).transpose(2, 0, 1))
        best = min(best, gaps.min())
    return best


def test_clearance_agrees_with_brute_force_at_random_poses():
    rng = np.random.default_rng(3)
    cells = [(int(r), int(c)) for r, c in rng.integers(85, 115, size=(12, 2))]
    world = world_with(cells)
    triangle = Footprint.from_flat([-0.2, -0.15, 0.35, 0.0, -0.2, 0.15])
    poses = np.column_stack([rng.uniform(-0.8, 0.8, 20), rng.uniform(-0.8, 0.8, 20),
                             rng.uniform(-math.pi, math.pi, 20)])
    fast = clearances(world, triangle, poses)
    for pose, value in zip(poses, fast, strict=True):
        reference = brute_force_clearance(world, triangle, pose)
        touching = contact(world, triangle, tuple(pose)) is not None
        assert bool(value == 0.0) == touching
        if not touching:
            assert value == pytest.approx(reference, abs=2e-3), pose


def test_no_obstacles():
    empty = world_with([])
    assert contact(empty, BOX, (0.0, 0.0, 0.0)) is None
    assert clearances(empty, BOX, [(0.0, 0.0, 0.0)])[0] == math.inf
