"""Laser ray casting on an occupancy map: the exact distance to the first obstacle cell.

Each ray walks the grid cell by cell (Amanatides and Woo's traversal), in the grid frame in cell
units (:meth:`wheelsim.core.world.occupancy.OccupancyMap.to_grid`), and stops at the first
obstacle cell: its range is the distance from the sensor to the point where the ray enters that
cell, exact up to rounding. A ray that meets no obstacle within ``range_max`` returns ``inf``;
a sensor inside an obstacle cell sees 0 on every ray. Outside the grid there is nothing: a
sensor outside still sees the grid's obstacles when a ray enters it. Compiled (numba), one call
per scan.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from wheelsim.core.arrays import FloatArray
from wheelsim.core.compiled import compiled
from wheelsim.core.world.occupancy import OccupancyMap


@compiled
def _enter_grid(px, py, dx, dy, width, height):
    """Ray parameter t >= 0 at which ``p + t d`` enters the box [0, width] x [0, height]
    (0 if inside), or -1 if it never does."""
    t_low, t_high = 0.0, math.inf
    for p, d, size in ((px, dx, width), (py, dy, height)):
        if d == 0.0:
            if p < 0.0 or p > size:
                return -1.0
        else:
            t1, t2 = (0.0 - p) / d, (size - p) / d
            if t1 > t2:
                t1, t2 = t2, t1
            t_low, t_high = max(t_low, t1), min(t_high, t2)
    return t_low if t_low <= t_high else -1.0


@compiled
def _next_crossing(t, position, cell, direction):
    """Ray parameter at which the ray, at ``position`` (in ``cell``) at ``t``, crosses the
    next cell boundary along one axis."""
    if direction > 0.0:
        return t + (cell + 1 - position) / direction
    if direction < 0.0:
        return t + (cell - position) / direction
    return math.inf


@compiled
def _cast(obstacles, px, py, dx, dy, max_t):
    """Distance (in cells, along the unit direction d) from p to the first obstacle cell, or
    inf if none within ``max_t``."""
    height, width = obstacles.shape
    t = _enter_grid(px, py, dx, dy, float(width), float(height))
    if t < 0.0 or t > max_t:
        return math.inf
    x, y = px + t * dx, py + t * dy
    col = min(max(int(math.floor(x)), 0), width - 1)
    row = min(max(int(math.floor(y)), 0), height - 1)
    step_col = 1 if dx > 0.0 else -1
    step_row = 1 if dy > 0.0 else -1
    delta_col = abs(1.0 / dx) if dx != 0.0 else math.inf
    delta_row = abs(1.0 / dy) if dy != 0.0 else math.inf
    next_col = _next_crossing(t, x, col, dx)
    next_row = _next_crossing(t, y, row, dy)
    while t <= max_t:
        if obstacles[row, col]:
            return t
        if next_col < next_row:
            t = next_col
            next_col += delta_col
            col += step_col
            if col < 0 or col >= width:
                return math.inf
        else:
            t = next_row
            next_row += delta_row
            row += step_row
            if row < 0 or row >= height:
                return math.inf
    return math.inf


@compiled
def _cast_all(obstacles, px, py, angles_grid, max_t, out):
    for i in range(angles_grid.shape[0]):
        out[i] = _cast(obstacles, px, py, math.cos(angles_grid[i]), math.sin(angles_grid[i]),
                       max_t)


def cast_rays(world: OccupancyMap, x_m: float, y_m: float, angles_rad: ArrayLike,
              range_max_m: float, out: FloatArray | None = None) -> FloatArray:
    """Ranges [m] from the map-frame point ``(x_m, y_m)`` along the map-frame directions
    ``angles_rad`` to the first obstacle; ``inf`` beyond ``range_max_m`` or with none."""
    angles = np.asarray(angles_rad, dtype=np.float64)
    ranges = np.empty(angles.shape[0]) if out is None else out
    col, row = world.to_grid(x_m, y_m)
    max_t = range_max_m / world.resolution_m
    _cast_all(world.obstacles, float(col), float(row), angles - world.origin[2], max_t,
              ranges)
    ranges *= world.resolution_m
    return ranges
