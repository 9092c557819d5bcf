"""NormalDraws: blocks drawn ahead hand out exactly the draws of one numpy call per take."""

import numpy as np
import pytest

from wheelsim.core.localization.normal_draws import NormalDraws


@pytest.mark.parametrize('block_draws', [1, 5, 768])
def test_takes_are_the_draws_of_one_call_each(block_draws):
    counts = [3] * 600 + [1, 7, 2000, 3, 4000] + [3] * 300  # across and beyond block ends
    draws = NormalDraws(np.random.default_rng(17), block_draws)
    reference = np.random.default_rng(17)
    for count in counts:
        assert draws.take(count) == reference.standard_normal(count).tolist()
