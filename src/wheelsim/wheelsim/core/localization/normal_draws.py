"""Standard normal draws handed out a few at a time from blocks drawn by one numpy call each.

numpy's ``Generator.standard_normal`` fills an array draw after draw from its bit generator, so
``n`` numbers drawn in one call are the same numbers, in the same order, as ``n`` drawn in any
split of calls (``standard_normal(3)`` repeatedly, say); only the generator's state runs ahead
by the unused rest of the block. The localization takes three numbers per noise stream per
ground-truth sample, where a numpy call for each three would cost more than the arithmetic on
them.

:class:`NormalDraws` keeps the drawn-ahead block of each of its generators (one per noise
stream) as a row of one array, with the index of each stream's next draw: Python takes draws
with :meth:`NormalDraws.take`, compiled code with :func:`next_normal` on the two arrays once
:meth:`NormalDraws.reserve` has drawn enough.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from wheelsim.core.arrays import FloatArray, IntArray
from wheelsim.core.compiled import jitable

#: Draws per numpy call (at least; a larger reservation is drawn whole).
BLOCK_DRAWS = 768


class NormalDraws:
    """The standard normal draws of each generator of ``rngs`` (stream ``i`` draws from
    ``rngs[i]``), in order.

    ``values[i, cursors[i]:]`` are the next draws of stream ``i``. The draws of a stream are
    those of ``rng.standard_normal(count)`` called for every take, provided nothing else draws
    from its generator.
    """

    def __init__(self, rngs: Sequence[np.random.Generator], block_draws: int = BLOCK_DRAWS):
        self.rngs = tuple(rngs)
        self.values: FloatArray = np.empty((len(self.rngs), block_draws))
        self.cursors: IntArray = np.full(len(self.rngs), block_draws, dtype=np.int64)  # none yet

    def reserve(self, count: int, stream: int | None = None) -> None:
        """Make at least ``count`` draws of ``stream`` (default: of every stream) ready; the
        arrays may be new ones afterwards (a block longer than the last)."""
        capacity = self.values.shape[1]
        if count > capacity:
            grown = np.empty((len(self.rngs), count))
            grown[:, count - capacity:] = self.values  # what is left stays at each row's end
            self.values, self.cursors = grown, self.cursors + (count - capacity)
            capacity = count
        for index in range(len(self.rngs)) if stream is None else (stream,):
            start = int(self.cursors[index])
            if capacity - start < count:
                row = self.values[index]
                left = capacity - start
                row[:left] = row[start:]  # numpy copies overlapping ranges correctly
                self.rngs[index].standard_normal(out=row[left:])
                self.cursors[index] = 0

    def take(self, count: int, stream: int = 0) -> list[float]:
        """The next ``count`` draws of ``stream``."""
        self.reserve(count, stream)
        start = int(self.cursors[stream])
        self.cursors[stream] = start + count
        return self.values[stream, start:start + count].tolist()


@jitable
def next_normal(values: FloatArray, cursors: IntArray, stream: int) -> float:
    """The next draw of ``stream`` from the arrays of a :class:`NormalDraws` (reserved)."""
    index = cursors[stream]
    cursors[stream] = index + 1
    return values[stream, index]
