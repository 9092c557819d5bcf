"""Parameters of the world part of ``vehicle_sim``: the ``world.*`` and ``scan.*`` groups.

The names are fixed by the public interface (docs/interface.md, docs/parameters.md); the scan's
angle and range parameters are LaserScan's own field names. A scan has
:attr:`ScanSettings.beam_count` beams, beam ``i`` at ``angle_min + i * angle_increment`` (laser
frame) for every ``i`` with that angle at most ``angle_max``: the published ``angle_max`` is the
last beam's angle, as LaserScan requires.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from wheelsim.core.arrays import FloatArray
from wheelsim.core.params import ParameterError, param
from wheelsim.core.units import MIN_RATE_HZ
from wheelsim.core.world.occupancy import DEFAULT_OCCUPIED_THRESHOLD

MAX_BEAMS = 100_000
ANGLE_SLACK = 1e-9  # rounding allowed when angle_max is a whole number of increments away
DEFAULT_INCREMENT_RAD = 2.0 * math.pi / 360.0


@dataclass(frozen=True)
class WorldSettings:
    """The map the vehicle lives in and whether it can drive through its obstacles."""

    map_yaml: str = param(
        '', 'map_server map YAML (image, resolution, origin, negate, occupied_thresh, '
        'free_thresh, mode) read at start-up; empty: take the map topic (transient local, as '
        'Nav2\'s map_server serves it).', read_only=True,
    )
    publish_map: bool = param(
        True, 'Publish the map read from map_yaml on map (nav_msgs/OccupancyGrid, reliable, '
        'transient local, depth 1, as Nav2\'s map_server) in the map frame, once, stamped with '
        'the simulated time the simulation starts at; false when a map server serves it (as '
        'nav2.launch.py and nav2_bringup.launch.py set). Nothing is published without '
        'map_yaml.', read_only=True,
    )
    collisions: bool = param(
        True, 'The footprint stops at obstacle cells (no tunnelling at any speed or step '
        'rate); false: the vehicle drives through them.',
    )
    occupied_threshold: int = param(
        DEFAULT_OCCUPIED_THRESHOLD, 'Map cells whose value (0..100) is at least this are '
        'obstacles for the scan and collisions; unknown (-1) cells are free.',
        min_value=1, max_value=100, read_only=True,
    )


@dataclass(frozen=True)
class ScanSettings:
    """The simulated laser scanner: where it sits on the vehicle and what it measures."""

    enabled: bool = param(
        True, 'Publish scan (sensor_msgs/LaserScan) whenever there is a map.', read_only=True,
    )
    rate: float = param(
        10.0, 'Scans per second of simulated time (<= step_rate); footprint is published at '
        'this rate too, also with the scan off.', unit='Hz',
        min_value=MIN_RATE_HZ, max_value=1000.0,
    )
    frame_id: str = param(
        'base_scan', 'Frame of the laser (a link of the URDF, fixed to the base frame); '
        'frame_prefix is put before it.', read_only=True,
    )
    x: float = param(0.0, 'Laser position x in the base frame.', unit='m', min_value=-100.0,
                     max_value=100.0, read_only=True)
    y: float = param(0.0, 'Laser position y in the base frame.', unit='m', min_value=-100.0,
                     max_value=100.0, read_only=True)
    z: float = param(0.2, 'Laser height above the base frame.', unit='m', min_value=-100.0,
                     max_value=100.0, read_only=True)
    yaw: float = param(0.0, 'Laser heading in the base frame.', unit='rad',
                       min_value=-2 * math.pi, max_value=2 * math.pi, read_only=True)
    angle_min: float = param(
        -math.pi, 'Angle of the first beam (laser frame, counter-clockwise).', unit='rad',
        min_value=-2 * math.pi, max_value=2 * math.pi,
    )
    angle_max: float = param(
        math.pi - DEFAULT_INCREMENT_RAD, 'Largest beam angle (laser frame); the last beam is '
        'the last whole increment at or below it.', unit='rad', min_value=-2 * math.pi,
        max_value=2 * math.pi,
    )
    angle_increment: float = param(
        DEFAULT_INCREMENT_RAD, 'Angle between beams.', unit='rad', min_value=0.0,
        min_exclusive=True, max_value=2 * math.pi,
    )
    range_min: float = param(
        0.05, 'Nearer obstacles read -inf (REP-117: too close).', unit='m', min_value=0.0,
        max_value=1000.0,
    )
    range_max: float = param(
        12.0, 'Farther or no obstacles read +inf (REP-117: no return).', unit='m',
        min_value=0.0, min_exclusive=True, max_value=1000.0,
    )
    noise_stddev: float = param(
        0.01, 'Standard deviation of the Gaussian noise added to every range (seeded by '
        'seed).', unit='m', min_value=0.0, max_value=10.0,
    )

    def __post_init__(self) -> None:
        if self.angle_max < self.angle_min:
            raise ParameterError('angle_max', self.angle_max,
                                 f'must be >= angle_min ({self.angle_min:g} rad)')
        if self.angle_max - self.angle_min > 2 * math.pi + ANGLE_SLACK:
            raise ParameterError('angle_max', self.angle_max,
                                 'must be at most 2 pi beyond angle_min (one turn)')
        if self.beam_count > MAX_BEAMS:
            raise ParameterError('angle_increment', self.angle_increment,
                                 f'gives {self.beam_count} beams, at most {MAX_BEAMS}')
        if self.range_max <= self.range_min:
            raise ParameterError('range_max', self.range_max,
                                 f'must be > range_min ({self.range_min:g} m)')

    @property
    def beam_count(self) -> int:
        """Number of beams (ranges per scan)."""
        span = (self.angle_max - self.angle_min) / self.angle_increment
        return math.floor(span + ANGLE_SLACK * max(1.0, span)) + 1

    @property
    def last_angle(self) -> float:
        """The last beam's angle: LaserScan's ``angle_max``."""
        return self.angle_min + (self.beam_count - 1) * self.angle_increment

    def beam_angles(self) -> FloatArray:
        """Every beam's angle in the laser frame [rad]."""
        return self.angle_min + np.arange(self.beam_count) * self.angle_increment

    @property
    def mount(self) -> tuple[float, float, float]:
        """The laser's planar pose in the base frame (x [m], y [m], yaw [rad])."""
        return self.x, self.y, self.yaw
