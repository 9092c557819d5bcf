"""Footprint against obstacle cells: overlap (contact) and clearance (distance).

Obstacles are the closed squares of the obstacle cells; the footprint is a closed simple
polygon. They are in **contact** when they share a point, and the **clearance** is the smallest
distance between them (0 in contact). Both are computed in the grid frame in cell units, where
each cell is a unit square, by compiled loops over the obstacle cells within the footprint's
reach; :func:`clearances` finds those cells for many poses at once with a k-d tree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled
from wheelsim.core.world.footprint import Footprint
from wheelsim.core.world.occupancy import OccupancyMap

if TYPE_CHECKING:
    from scipy.spatial import cKDTree


@compiled
def _segment_meets_square(ax, ay, bx, by, col, row):
    """Whether segment a-b meets the closed square [col, col+1] x [row, row+1] (clipping)."""
    t0, t1 = 0.0, 1.0
    dx, dy = bx - ax, by - ay
    for p, q in ((-dx, ax - col), (dx, col + 1.0 - ax), (-dy, ay - row), (dy, row + 1.0 - ay)):
        if p == 0.0:
            if q < 0.0:
                return False
        else:
            r = q / p
            if p < 0.0:
                if r > t1:
                    return False
                t0 = max(t0, r)
            else:
                if r < t0:
                    return False
                t1 = min(t1, r)
    return True


@compiled
def _inside_polygon(px, py, poly):
    """Point in polygon (even-odd rule) for a point not on the boundary."""
    inside = False
    k = poly.shape[0]
    j = k - 1
    for i in range(k):
        xi, yi, xj, yj = poly[i, 0], poly[i, 1], poly[j, 0], poly[j, 1]
        if (yi > py) != (yj > py) and px < (xj - xi) * (py - yi) / (yj - yi) + xi:
            inside = not inside
        j = i
    return inside


@compiled
def _polygon_meets_square(poly, col, row):
    k = poly.shape[0]
    for i in range(k):
        j = (i + 1) % k
        if _segment_meets_square(poly[i, 0], poly[i, 1], poly[j, 0], poly[j, 1], col, row):
            return True
    # No edge meets the square: either the square is inside the polygon or they are apart.
    return _inside_polygon(col + 0.5, row + 0.5, poly)


@compiled
def _placed_in_grid(corners, x, y, yaw, ox, oy, ocos, osin, resolution):
    """Footprint corners (base frame) at the map-frame pose (x, y, yaw), in grid cells."""
    cos, sin = math.cos(yaw), math.sin(yaw)
    poly = np.empty_like(corners)
    for i in range(corners.shape[0]):
        mx = x + cos * corners[i, 0] - sin * corners[i, 1] - ox
        my = y + sin * corners[i, 0] + cos * corners[i, 1] - oy
        poly[i, 0] = (ocos * mx + osin * my) / resolution
        poly[i, 1] = (-osin * mx + ocos * my) / resolution
    return poly


@compiled
def _footprint_contact(obstacles, corners, x, y, yaw, ox, oy, ocos, osin, resolution):
    """:func:`_first_contact` of the footprint placed at a map-frame pose."""
    return _first_contact(
        obstacles, _placed_in_grid(corners, x, y, yaw, ox, oy, ocos, osin, resolution))


@compiled
def _first_contact(obstacles, poly):
    """Index ``row * width + col`` of the first obstacle cell the polygon (grid units) meets,
    or -1."""
    height, width = obstacles.shape
    col_low = max(int(math.floor(poly[:, 0].min())), 0)
    col_high = min(int(math.floor(poly[:, 0].max())), width - 1)
    row_low = max(int(math.floor(poly[:, 1].min())), 0)
    row_high = min(int(math.floor(poly[:, 1].max())), height - 1)
    for row in range(row_low, row_high + 1):
        for col in range(col_low, col_high + 1):
            if obstacles[row, col] and _polygon_meets_square(poly, col, row):
                return row * width + col
    return -1


@compiled
def _point_segment_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    length2 = dx * dx + dy * dy
    t = 0.0 if length2 == 0.0 else min(max(((px - ax) * dx + (py - ay) * dy) / length2, 0.0), 1.0)
    return math.hypot(px - ax - t * dx, py - ay - t * dy)


@compiled
def _polygon_square_distance(poly, col, row):
    """Distance between the polygon and the unit square at (col, row), 0 when they meet."""
    if _polygon_meets_square(poly, col, row):
        return 0.0
    best = math.inf
    k = poly.shape[0]
    corners = ((col, row), (col + 1.0, row), (col + 1.0, row + 1.0), (col, row + 1.0))
    for i in range(k):
        j = (i + 1) % k
        ax, ay, bx, by = poly[i, 0], poly[i, 1], poly[j, 0], poly[j, 1]
        for cx, cy in corners:
            best = min(best, _point_segment_distance(cx, cy, ax, ay, bx, by))
        # the polygon's corner against the square's edges
        qx = min(max(ax, col), col + 1.0)
        qy = min(max(ay, row), row + 1.0)
        best = min(best, math.hypot(ax - qx, ay - qy))
    return best


@compiled
def _min_distance(poly, cells):
    best = math.inf
    for i in range(cells.shape[0]):
        best = min(best, _polygon_square_distance(poly, cells[i, 0], cells[i, 1]))
        if best == 0.0:
            break
    return best


@dataclass(frozen=True)
class Contact:
    """The obstacle cell a footprint touches: its centre ``(x_m, y_m)`` in the map frame."""

    row: int
    col: int
    x_m: float
    y_m: float


def contact(world: OccupancyMap, footprint: Footprint, pose: tuple[float, float, float]
            ) -> Contact | None:
    """The first obstacle cell the footprint at the map-frame ``pose`` touches, or None."""
    if not world.has_obstacles:
        return None
    index = _footprint_contact(world.obstacles, footprint.corners, *pose, *world.grid_transform)
    if index < 0:
        return None
    row, col = divmod(int(index), world.width)
    return Contact(row, col, *world.cell_center(row, col))


@lru_cache(maxsize=4)
def _edge_cells(world: OccupancyMap) -> tuple[NDArray[np.float64], cKDTree]:
    """The obstacle cells with a free 4-neighbour (the nearest obstacle is always one of them)
    as ``(col, row)`` rows, and a k-d tree of their centres."""
    from scipy import ndimage  # on first use: docs/architecture.md
    from scipy.spatial import cKDTree  # on first use: docs/architecture.md

    inner = ndimage.binary_erosion(world.obstacles, border_value=0)
    rows, cols = np.nonzero(world.obstacles & ~inner)
    cells = np.column_stack((cols, rows)).astype(float)
    return cells, cKDTree(cells + 0.5)


def clearances(world: OccupancyMap, footprint: Footprint, poses: FloatArray) -> FloatArray:
    """Clearance [m] of the footprint at each map-frame pose ``(N, 3)``: the distance to the
    nearest obstacle cell, 0 in contact, inf without obstacles."""
    poses = np.asarray(poses, dtype=float).reshape(-1, 3)
    out = np.full(len(poses), np.inf)
    if not world.has_obstacles or not len(poses):
        return out
    cells, tree = _edge_cells(world)
    col, row = world.to_grid(poses[:, 0], poses[:, 1])
    centers = np.column_stack((col, row))
    radius = footprint.radius_m / world.resolution_m
    nearest, _ = tree.query(centers)
    # Any cell nearer to the polygon than the nearest centre is to the base origin has its
    # centre within nearest + radius + half a diagonal (+ the origin's distance to the polygon,
    # which the radius covers) of the origin.
    reach = nearest + 2.0 * radius + math.sqrt(0.5)
    transform = world.grid_transform
    for i, candidates in enumerate(tree.query_ball_point(centers, reach)):
        poly = _placed_in_grid(footprint.corners, *poses[i], *transform)
        if _first_contact(world.obstacles, poly) >= 0:  # also deep inside a thick wall
            out[i] = 0.0
        else:
            out[i] = _min_distance(poly, cells[np.asarray(candidates, dtype=np.int64)])
    return out * world.resolution_m
