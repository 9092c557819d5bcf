"""The footprint polygon: validation, orientation, the default around the wheels."""

import math

import numpy as np
import pytest

from wheelsim.core.params import ParameterError
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.world.footprint import Footprint, footprint_of


def test_clockwise_corners_are_turned_counter_clockwise():
    footprint = Footprint.from_flat([-0.3, 0.2, 0.3, 0.2, 0.3, -0.2, -0.3, -0.2])
    np.testing.assert_allclose(footprint.corners[0], [-0.3, -0.2])
    assert footprint.radius_m == pytest.approx(math.hypot(0.3, 0.2))


def test_placed_in_the_map():
    footprint = Footprint.from_flat([0.0, 0.0, 1.0, 0.0, 0.0, 0.5])
    np.testing.assert_allclose(footprint.in_map(2.0, 1.0, math.pi / 2),
                               [[2.0, 1.0], [2.0, 2.0], [1.5, 1.0]], atol=1e-12)


@pytest.mark.parametrize('values, message', [
    ([0.0, 0.0, 1.0, 0.0], 'x, y pairs of 3 to 1000 corners'),
    ([0.0, 0.0, 1.0, 0.0, 1.0], 'x, y pairs'),
    ([0.0, 0.0, 1.0, 0.0, 2.0, 0.0], 'no area'),
    ([0.0, 0.0, 3.0, 0.0, 3.0, 2.0, 1.0, -1.0], 'edges 0 and 2 cross'),
    ([0.0, 0.0, 1.0, float('nan'), 0.0, 1.0], 'finite'),
])
def test_bad_footprints_are_named(values, message):
    with pytest.raises(ParameterError, match='footprint'):
        Footprint.from_flat(values)
    with pytest.raises(ParameterError, match=message):
        Footprint.from_flat(values)


def test_default_covers_every_wheel():
    config = vehicle_config_from_params({'model': 'differential',
                                         'model_params.differential.track': 0.5,
                                         'model_params.differential.vis_tire_diameter': 0.2})
    footprint = footprint_of((), config)
    xs, ys = footprint.corners[:, 0], footprint.corners[:, 1]
    # two wheels at y = +-0.25, radius 0.1: x in [-0.1, 0.1], y in [-0.275, 0.275]
    np.testing.assert_allclose([xs.min(), xs.max(), ys.min(), ys.max()],
                               [-0.1, 0.1, -0.275, 0.275])
    given = footprint_of((0.0, 0.0, 1.0, 0.0, 0.0, 1.0), config)
    assert len(given.corners) == 3
