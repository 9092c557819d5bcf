"""vehicle_sim's random streams: repeatable per seed and use, independent between uses."""

import numpy as np
import pytest

from wheelsim.core.vehicle_sim.randomness import random_stream


def test_same_seed_and_use_give_the_same_numbers():
    np.testing.assert_array_equal(random_stream(3, 'scan_noise').normal(size=50),
                                  random_stream(3, 'scan_noise').normal(size=50))


def test_seeds_and_uses_give_different_streams():
    base = random_stream(3, 'scan_noise').normal(size=50)
    assert not np.allclose(base, random_stream(4, 'scan_noise').normal(size=50))
    assert not np.allclose(base, random_stream(3, 'actuator_noise').normal(size=50))


def test_a_use_does_not_depend_on_what_other_uses_drew():
    first = random_stream(7, 'a')
    other = random_stream(7, 'b')
    other.normal(size=1000)
    np.testing.assert_array_equal(first.normal(size=10), random_stream(7, 'a').normal(size=10))


@pytest.mark.parametrize('seed', [-1, 1.5, True])
def test_bad_seed_is_refused(seed):
    with pytest.raises(ValueError, match='seed'):
        random_stream(seed, 'x')
