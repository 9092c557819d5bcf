"""How the core compiles its numeric functions (numba), defined once for every module.

``cache=True`` keeps the machine code on disk, so a new process loads instead of compiling;
``error_model='numpy'`` drops Python's division-by-zero checks from the inner loops (the
callers never divide by zero: lengths, radii and the step period are validated > 0).
:data:`jitable` marks a plain Python function that compiled functions may call too: Python
callers run it as it is (no dispatch cost), compiled callers inline a compiled copy.

numba is optional: without it (or with ``NUMBA_DISABLE_JIT=1``) the same functions run as plain
Python, with the same results and one warning, about 1.7 times slower on the default scenario
and much slower for large vehicle batches.
"""

from __future__ import annotations

import warnings

try:
    from numba import njit, prange
    from numba.extending import register_jitable
except ImportError:  # the kernels run as plain Python
    warnings.warn('numba is not installed: wheelsim runs its kernels as plain Python (same '
                  'results, slower); pip install numba for the compiled kernels',
                  stacklevel=2)

    def _plain(function):
        return function

    compiled = compiled_parallel = jitable = _plain
    prange = range
else:
    compiled = njit(cache=True, error_model='numpy')
    compiled_parallel = njit(cache=True, error_model='numpy', parallel=True)
    jitable = register_jitable


def plain_function(function):
    """The plain Python function behind a compiled one (the function itself without numba):
    tests compare the two bit for bit."""
    return getattr(function, 'py_func', function)


__all__ = ['compiled', 'compiled_parallel', 'jitable', 'plain_function', 'prange']
