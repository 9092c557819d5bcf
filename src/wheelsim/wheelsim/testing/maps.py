"""Small map_server maps (YAML + PGM) for tests and benchmarks, from a boolean obstacle array."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import yaml
from numpy.typing import ArrayLike
from PIL import Image


def write_map(folder: Path, obstacles: ArrayLike, resolution_m: float,
              origin: tuple[float, float, float], name: str = 'map') -> Path:
    """Write ``<name>.yaml`` and ``<name>.pgm`` into ``folder``; return the YAML's path.

    ``obstacles`` (rows, cols) is True for occupied cells, row 0 at the origin (the grid's
    order, not the image's): the image is written flipped, black occupied and white free,
    with map_server's usual thresholds (occupied 0.65, free 0.25, trinary).
    """
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    pixels = np.where(np.flipud(np.asarray(obstacles, dtype=bool)), 0, 254).astype(np.uint8)
    Image.fromarray(pixels, mode='L').save(folder / f'{name}.pgm')
    path = folder / f'{name}.yaml'
    path.write_text(yaml.safe_dump({
        'image': f'{name}.pgm', 'resolution': float(resolution_m),
        'origin': [float(v) for v in origin], 'negate': 0, 'occupied_thresh': 0.65,
        'free_thresh': 0.25, 'mode': 'trinary'}, sort_keys=False))
    return path


def walled_room(width_m: float, height_m: float, resolution_m: float = 0.05,
                wall_cells: int = 1) -> np.ndarray:
    """Obstacles of a rectangular room ``width_m x height_m`` with walls on its border."""
    rows, cols = round(height_m / resolution_m), round(width_m / resolution_m)
    obstacles = np.zeros((rows, cols), dtype=bool)
    obstacles[:wall_cells, :] = obstacles[-wall_cells:, :] = True
    obstacles[:, :wall_cells] = obstacles[:, -wall_cells:] = True
    return obstacles
