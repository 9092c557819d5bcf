"""How the core compiles its numeric functions (numba), defined once for every module.

``cache=True`` keeps the machine code on disk, so a new process loads instead of compiling;
``error_model='numpy'`` drops Python's division-by-zero checks from the inner loops (the
callers never divide by zero: lengths, radii and the step period are validated > 0).
:data:`jitable` marks a plain Python function that compiled functions may call too: Python
callers run it as it is (no dispatch cost), compiled callers inline a compiled copy.
"""

from numba import njit
from numba.extending import register_jitable

compiled = njit(cache=True, error_model='numpy')
compiled_parallel = njit(cache=True, error_model='numpy', parallel=True)
jitable = register_jitable
