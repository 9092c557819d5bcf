"""The simulated laser scanner: ranges cast on the map from the laser's pose, with noise.

Each scan casts every beam from the laser's pose (the base pose composed with the mount pose
of :class:`~wheelsim.core.world.config.ScanSettings`) with
:func:`wheelsim.core.world.raycast.cast_rays`, then adds independent Gaussian noise of
``noise_stddev`` to each range (one draw per beam and scan, also for beams without a return,
so the random stream does not depend on the map). Special values follow REP-117: a range below
``range_min`` is ``-inf`` (too close), beyond ``range_max`` or without a return ``+inf``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from wheelsim.core.geometry.se2 import compose_floats
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.core.world.raycast import cast_rays


class LaserScanner:
    """Scans of one laser; ``rng`` (a numpy Generator) draws the range noise."""

    def __init__(self, settings: ScanSettings, rng: np.random.Generator) -> None:
        self.settings = settings
        self._rng = rng
        self._angles = settings.beam_angles()
        self._true = np.empty(len(self._angles))

    def update(self, settings: ScanSettings) -> None:
        """New angles, ranges or noise (a live parameter change); the random stream goes on."""
        self.settings = settings
        self._angles = settings.beam_angles()
        self._true = np.empty(len(self._angles))

    def laser_pose(self, base_pose: tuple[float, float, float]) -> tuple[float, float, float]:
        """The laser's planar pose in the map frame for a base pose in the map frame."""
        return compose_floats(base_pose, self.settings.mount)

    def true_ranges(self, world: OccupancyMap, base_pose: tuple[float, float, float]
                    ) -> NDArray[np.float64]:
        """Noise-free ranges [m] (inf without a return within range_max); a view, valid until
        the next scan."""
        x, y, yaw = self.laser_pose(base_pose)
        return cast_rays(world, x, y, yaw + self._angles, self.settings.range_max, self._true)

    def scan(self, world: OccupancyMap, base_pose: tuple[float, float, float]
             ) -> NDArray[np.float32]:
        """One scan's ranges [m] as LaserScan carries them (float32, REP-117 special values)."""
        settings = self.settings
        ranges = self.true_ranges(world, base_pose)
        ranges += self._rng.normal(0.0, settings.noise_stddev, len(ranges)) \
            if settings.noise_stddev > 0.0 else 0.0
        ranges[ranges < settings.range_min] = -np.inf
        ranges[ranges > settings.range_max] = np.inf
        return ranges.astype(np.float32)
