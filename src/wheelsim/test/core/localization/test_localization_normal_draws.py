"""NormalDraws: blocks drawn ahead hand out exactly the draws of one numpy call per take, per
stream, from Python (take) and from compiled code (next_normal after reserve)."""

import numpy as np
import pytest

from wheelsim.core.compiled import compiled
from wheelsim.core.localization.normal_draws import NormalDraws, next_normal


@compiled
def _next_normals(values, cursors, stream, count):
    out = np.empty(count)
    for i in range(count):
        out[i] = next_normal(values, cursors, stream)
    return out


@pytest.mark.parametrize('block_draws', [1, 5, 768])
def test_takes_are_the_draws_of_one_call_each(block_draws):
    counts = [3] * 600 + [1, 7, 2000, 3, 4000] + [3] * 300  # across and beyond block ends
    draws = NormalDraws([np.random.default_rng(17)], block_draws)
    reference = np.random.default_rng(17)
    for count in counts:
        assert draws.take(count) == reference.standard_normal(count).tolist()


@pytest.mark.parametrize('block_draws', [3, 7, 768])
def test_streams_are_independent_whoever_takes_them(block_draws):
    """Each stream gives its own generator's draws in order, whether Python takes them or
    compiled code, interleaved with the other streams in any way."""
    draws = NormalDraws([np.random.default_rng(seed) for seed in (1, 2, 3)], block_draws)
    references = [np.random.default_rng(seed) for seed in (1, 2, 3)]
    choices = np.random.default_rng(0)
    for _ in range(2000):
        stream, count = int(choices.integers(3)), int(choices.integers(1, 4))
        expected = references[stream].standard_normal(count).tolist()
        if choices.random() < 0.5:
            assert draws.take(count, stream) == expected
        else:
            draws.reserve(count)
            assert _next_normals(draws.values, draws.cursors, stream, count).tolist() == expected
