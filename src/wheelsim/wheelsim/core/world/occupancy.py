"""The occupancy map of the world, as Nav2's map_server publishes it, and where its obstacles are.

A map is a grid of square cells of side ``resolution_m``. As in ``nav_msgs/OccupancyGrid``, cell
``(row, col)`` (row-major data, row 0 first) is the square whose lower-left corner is at
``(col * resolution, row * resolution)`` in the grid frame, and the grid frame is placed in the
map frame by ``origin = (x [m], y [m], yaw [rad])``. Values: -1 unknown, 0 free ... 100 occupied.

A cell is an **obstacle** when its value is at least ``occupied_threshold`` (default 100: exactly
the cells map_server marks occupied, which is also what Nav2's static layer takes as lethal with
its default ``lethal_cost_threshold`` of 100). Unknown cells and everything outside the grid are
free: a laser sees through them and the vehicle drives through them.

The grid frame in cell units (:meth:`OccupancyMap.to_grid`) is where the compiled ray casting
and collision code works: there every cell is the unit square ``[col, col+1] x [row, row+1]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.arrays import FloatArray
from wheelsim.core.geometry.se2 import MAX_COORDINATE_M

UNKNOWN = -1
FREE = 0
OCCUPIED = 100
DEFAULT_OCCUPIED_THRESHOLD = OCCUPIED
MAX_CELLS = 100_000_000  # 10 000 x 10 000 cells: beyond this the map is refused
#: The finest map [m/cell]: finer cells make the clearance metrics overflow (1e-300 m did).
MIN_RESOLUTION_M = 1e-6


class MapError(ValueError):
    """A map that cannot be used; the message names the field and what is allowed."""


def check_grid(width: int, height: int, resolution_m: float,
               origin: tuple[float, float, float]) -> None:
    """Raise :class:`MapError`, naming the field, unless the grid's size (integers > 0, at most
    :data:`MAX_CELLS` cells), resolution (finite, at least :data:`MIN_RESOLUTION_M`) and origin
    (finite) are usable and the whole grid lies within
    +-:data:`~wheelsim.core.geometry.se2.MAX_COORDINATE_M` of the map frame."""
    if not (isinstance(width, int) and isinstance(height, int) and width > 0 and height > 0):
        raise MapError(f'map size {width} x {height} cells: both must be integers > 0')
    if width * height > MAX_CELLS:
        raise MapError(f'map size {width} x {height} cells: at most {MAX_CELLS} cells')
    if not (math.isfinite(resolution_m) and resolution_m >= MIN_RESOLUTION_M):
        raise MapError(f'map resolution {resolution_m!r} m: must be a finite number >= '
                       f'{MIN_RESOLUTION_M:g}')
    if len(origin) != 3 or not all(math.isfinite(v) for v in origin):
        raise MapError(f'map origin {tuple(origin)!r}: must be three finite numbers x, y, yaw')
    cos, sin = math.cos(origin[2]), math.sin(origin[2])
    corners = [(origin[0] + cos * gx - sin * gy, origin[1] + sin * gx + cos * gy)
               for gx in (0.0, width * resolution_m) for gy in (0.0, height * resolution_m)]
    if not all(abs(x) <= MAX_COORDINATE_M and abs(y) <= MAX_COORDINATE_M for x, y in corners):
        raise MapError(f'map origin {tuple(origin)!r} with {width} x {height} cells of '
                       f'{resolution_m:g} m: the grid must lie within +-{MAX_COORDINATE_M:g} m '
                       'of the map frame in x and y')


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (arrays inside)
class OccupancyMap:
    """An occupancy grid and its obstacles. Build it with :meth:`from_values`.

    ``values`` (rows, cols) int8 in ``nav_msgs/OccupancyGrid`` order (row 0 at the origin);
    ``obstacles`` (rows, cols) bool; ``origin`` the grid's lower-left corner in the map frame.
    """

    values: NDArray[np.int8]
    resolution_m: float
    origin: tuple[float, float, float]
    occupied_threshold: int = DEFAULT_OCCUPIED_THRESHOLD
    obstacles: NDArray[np.bool_] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, 'obstacles', self.values >= self.occupied_threshold)
        self.values.flags.writeable = False
        self.obstacles.flags.writeable = False

    @classmethod
    def from_values(
        cls,
        values: ArrayLike,
        width: int,
        height: int,
        resolution_m: float,
        origin: tuple[float, float, float] = (0.0, 0.0, 0.0),
        occupied_threshold: int = DEFAULT_OCCUPIED_THRESHOLD,
    ) -> OccupancyMap:
        """A map from row-major cell values (``OccupancyGrid.data``); raises :class:`MapError`
        naming the field (:func:`check_grid`, the threshold, the number of values)."""
        check_grid(width, height, resolution_m, origin)
        if not 1 <= occupied_threshold <= OCCUPIED:
            raise MapError(f'occupied threshold {occupied_threshold!r}: must be in [1, 100]')
        cells = np.asarray(values, dtype=np.int8).reshape(-1)
        if cells.size != width * height:
            raise MapError(f'map data has {cells.size} cells, width x height is '
                           f'{width} x {height} = {width * height}')
        grid = cells.reshape(height, width).copy()
        return cls(grid, float(resolution_m), tuple(float(v) for v in origin),
                   int(occupied_threshold))

    @property
    def height(self) -> int:
        """Number of rows (cells along the grid's y axis)."""
        return self.values.shape[0]

    @property
    def width(self) -> int:
        """Number of columns (cells along the grid's x axis)."""
        return self.values.shape[1]

    @cached_property
    def _origin_rotation(self) -> tuple[float, float]:
        return math.cos(self.origin[2]), math.sin(self.origin[2])

    def to_grid(self, x_m: ArrayLike, y_m: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Map-frame points in the grid frame, in cells: ``(col, row)`` as floats."""
        cos, sin = self._origin_rotation
        dx = np.asarray(x_m, dtype=float) - self.origin[0]
        dy = np.asarray(y_m, dtype=float) - self.origin[1]
        return ((cos * dx + sin * dy) / self.resolution_m,
                (-sin * dx + cos * dy) / self.resolution_m)

    def to_map(self, col: ArrayLike, row: ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Grid-frame points in cells (``col``, ``row`` as floats) in the map frame [m]."""
        cos, sin = self._origin_rotation
        gx = np.asarray(col, dtype=float) * self.resolution_m
        gy = np.asarray(row, dtype=float) * self.resolution_m
        return self.origin[0] + cos * gx - sin * gy, self.origin[1] + sin * gx + cos * gy

    def cell_center(self, row: int, col: int) -> tuple[float, float]:
        """Map-frame position [m] of the centre of cell ``(row, col)``."""
        x, y = self.to_map(col + 0.5, row + 0.5)
        return float(x), float(y)

    def is_obstacle(self, x_m: float, y_m: float) -> bool:
        """Whether the map-frame point lies in an obstacle cell (outside the grid: no)."""
        col, row = self.to_grid(x_m, y_m)
        c, r = math.floor(col), math.floor(row)
        return 0 <= r < self.height and 0 <= c < self.width and bool(self.obstacles[r, c])

    @cached_property
    def has_obstacles(self) -> bool:
        return bool(self.obstacles.any())

    @cached_property
    def obstacle_distance_m(self) -> NDArray[np.float32]:
        """Per cell, the distance [m] from its centre to the nearest obstacle cell's centre
        (0 on obstacles; inf without obstacles). Computed once, on first use."""
        if not self.has_obstacles:
            return np.full(self.values.shape, np.inf, dtype=np.float32)
        from scipy import ndimage  # on first use: docs/architecture.md

        distance = ndimage.distance_transform_edt(~self.obstacles) * self.resolution_m
        return distance.astype(np.float32)

    def clearance_lower_bound(self, x_m: float, y_m: float) -> float:
        """A lower bound [m] on the distance from a map-frame point to the nearest obstacle.

        The nearest obstacle cell's centre is :attr:`obstacle_distance_m` from the centre of
        the point's cell; the point and the obstacle's edge are each at most half a cell
        diagonal from those centres. Outside the grid the bound is also at least the distance
        to the grid. Plain floats: called for every batch of steps.
        """
        if not self.has_obstacles:
            return math.inf
        cos, sin = self._origin_rotation
        dx, dy = x_m - self.origin[0], y_m - self.origin[1]
        col = (cos * dx + sin * dy) / self.resolution_m
        row = (-sin * dx + cos * dy) / self.resolution_m
        inside_col = min(max(col, 0.0), self.width - 1e-9)
        inside_row = min(max(row, 0.0), self.height - 1e-9)
        outside_m = math.hypot(col - inside_col, row - inside_row) * self.resolution_m
        center_m = float(self.obstacle_distance_m[int(inside_row), int(inside_col)])
        return max(outside_m, center_m - math.sqrt(2.0) * self.resolution_m - outside_m)

    @property
    def grid_transform(self) -> tuple[float, float, float, float, float]:
        """``(origin x, origin y, cos yaw, sin yaw, resolution)`` for compiled code."""
        cos, sin = self._origin_rotation
        return self.origin[0], self.origin[1], cos, sin, self.resolution_m
