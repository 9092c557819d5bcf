"""Standard normal draws handed out a few at a time from blocks drawn by one numpy call each.

numpy's ``Generator.standard_normal`` fills an array draw after draw from its bit generator, so
``n`` numbers drawn in one call are the same numbers, in the same order, as ``n`` drawn in any
split of calls (``standard_normal(3)`` repeatedly, say); only the generator's state runs ahead
by the unused rest of the block. The localization takes three numbers per noise stream per
ground-truth sample, where a numpy call for each three would cost more than the arithmetic on
them.
"""

from __future__ import annotations

import numpy as np

#: Draws per numpy call (at least; a larger request is drawn whole).
BLOCK_DRAWS = 768


class NormalDraws:
    """The standard normal draws of ``rng``, in order, :meth:`take` ``count`` at a time.

    The draws are those of ``rng.standard_normal(count)`` called for every take, provided
    nothing else draws from ``rng`` (each noise stream has its own generator).
    """

    def __init__(self, rng: np.random.Generator, block_draws: int = BLOCK_DRAWS) -> None:
        self.rng = rng
        self._block_draws = block_draws
        self._draws: list[float] = []
        self._next = 0  # index in _draws of the next draw to hand out

    def take(self, count: int) -> list[float]:
        """The next ``count`` draws."""
        end = self._next + count
        if end > len(self._draws):
            rest = self._draws[self._next:]
            fresh = self.rng.standard_normal(max(self._block_draws, count - len(rest)))
            self._draws = rest + fresh.tolist()
            self._next, end = 0, count
        taken = self._draws[self._next:end]
        self._next = end
        return taken
