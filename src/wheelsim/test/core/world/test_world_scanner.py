"""The laser scanner: mount pose, REP-117 special values, seeded Gaussian range noise."""

import math

import numpy as np
import pytest

from wheelsim.core.params import ParameterError, from_flat
from wheelsim.core.world.config import ScanSettings
from wheelsim.core.world.occupancy import OccupancyMap
from wheelsim.core.world.scanner import LaserScanner

RES = 0.05


def box_room():
    """A 10 m x 10 m room (grid x, y in [-5, 5)) with walls one cell thick on every side."""
    values = np.zeros((200, 200), np.int8)
    values[[0, -1], :] = 100
    values[:, [0, -1]] = 100
    return OccupancyMap.from_values(values, 200, 200, RES, (-5.0, -5.0, 0.0))


def settings(**values):
    return from_flat(ScanSettings, values)


def test_default_scan_has_360_beams_of_one_degree():
    default = ScanSettings()
    assert default.beam_count == 360
    assert default.last_angle == pytest.approx(math.pi - math.radians(1.0))
    np.testing.assert_allclose(np.diff(default.beam_angles()), math.radians(1.0))


def test_ranges_come_from_the_mounted_laser_pose():
    """Laser 0.3 m ahead of base_link and turned 90 degrees left; base at (1, 0) facing +y.
    The laser is at (1, 0.3) facing -x: its beam 0 sees the west wall's face at x = -4.95."""
    scanner = LaserScanner(settings(x=0.3, yaw=math.pi / 2, angle_min=0.0, angle_max=math.pi,
                                    angle_increment=math.pi / 2, noise_stddev=0.0,
                                    range_max=20.0), np.random.default_rng(0))
    ranges = scanner.scan(box_room(), (1.0, 0.0, math.pi / 2))
    # beam 0: -x (west, face 5.95 m away), beam 1: -y (south, 5.25 m), beam 2: +x (east, 3.95 m)
    np.testing.assert_allclose(ranges, [5.95, 5.25, 3.95], atol=1e-5)
    assert ranges.dtype == np.float32


def test_rep117_special_values():
    scanner = LaserScanner(settings(angle_min=0.0, angle_max=math.pi, angle_increment=math.pi,
                                    range_min=1.0, range_max=4.5, noise_stddev=0.0),
                           np.random.default_rng(0))
    # From (4.2, 0): east wall face at 4.95 is 0.75 m away (too close), west 9.15 m (none).
    assert scanner.scan(box_room(), (4.2, 0.0, 0.0)).tolist() == [-math.inf, math.inf]


def test_noise_is_gaussian_with_the_configured_deviation_and_follows_the_seed():
    config = settings(noise_stddev=0.02, range_max=20.0)
    world = box_room()
    pose = (0.3, -0.2, 0.4)
    truth = LaserScanner(config, np.random.default_rng(0)).true_ranges(world, pose).copy()
    scanner = LaserScanner(config, np.random.default_rng(7))
    errors = np.concatenate([scanner.scan(world, pose) - truth for _ in range(100)])
    assert len(errors) == 36_000
    # mean 0 (5 sigma of the mean: 0.02 / sqrt(36000) * 5 = 0.00053), deviation within 2 %
    assert abs(errors.mean()) < 0.00053
    assert errors.std() == pytest.approx(0.02, rel=0.02)
    # Gaussian: 68.3 % within one sigma, 95.4 % within two
    assert np.mean(np.abs(errors) < 0.02) == pytest.approx(0.683, abs=0.01)
    assert np.mean(np.abs(errors) < 0.04) == pytest.approx(0.954, abs=0.005)
    # Independent between beams and scans: neighbouring errors uncorrelated
    assert abs(np.corrcoef(errors[:-1], errors[1:])[0, 1]) < 0.02

    def first_scan(seed):
        return LaserScanner(config, np.random.default_rng(seed)).scan(world, pose)

    np.testing.assert_array_equal(first_scan(7), first_scan(7))
    assert not np.array_equal(first_scan(7), first_scan(8))


@pytest.mark.parametrize('values, message', [
    ({'angle_min': 1.0, 'angle_max': 0.5}, 'scan.angle_max = 0.5 is invalid: must be >= '
                                           'angle_min'),
    ({'angle_min': -4.0, 'angle_max': 4.0}, 'at most 2 pi beyond angle_min'),
    ({'angle_increment': 1e-6}, 'beams, at most 100000'),
    ({'range_min': 5.0, 'range_max': 4.0}, 'scan.range_max = 4.0 is invalid: must be > range_min'),
    ({'rate': 0.0}, r'scan.rate = 0.0 is invalid: must be a finite number in \[0.001, 1000\]'),
])
def test_bad_scan_parameters_are_named(values, message):
    with pytest.raises(ParameterError, match=message):
        from_flat(ScanSettings, {f'scan.{k}': v for k, v in values.items()}, 'scan')
