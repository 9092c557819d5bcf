"""vehicle_sim's random numbers: one independent stream per use, all from the ``seed`` parameter.

Each use (``'scan_noise'``, ...) gets its own ``numpy.random.Generator`` from
``SeedSequence(seed, spawn_key=(crc32(use),))``: the stream depends only on the seed and the
name of the use, so adding a new use, or drawing more numbers in one, never changes the numbers
another use gets.
"""

from __future__ import annotations

import zlib

import numpy as np


def random_stream(seed: int, use: str) -> np.random.Generator:
    """The generator of ``use`` for ``seed`` (an integer >= 0)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f'seed = {seed!r} must be an integer >= 0')
    if not use:
        raise ValueError('a random stream needs the name of its use')
    key = zlib.crc32(use.encode())
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(key,)))
