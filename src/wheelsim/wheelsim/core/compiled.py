"""How the core compiles its numeric functions (numba), defined once for every module.

``cache=True`` keeps the machine code on disk, so a new process loads instead of compiling;
``error_model='numpy'`` drops Python's division-by-zero checks from the inner loops (the
callers never divide by zero: lengths, radii and the step period are validated > 0).
:data:`jitable` marks a plain Python function that compiled functions may call too: Python
callers run it as it is (no dispatch cost), compiled callers inline a compiled copy.

numba is optional: without it (or with ``NUMBA_DISABLE_JIT=1``) the same functions run as plain
Python, with the same results and one warning, about 1.7 times slower on the default scenario
and much slower for large vehicle batches.

Stale machine code: numba's cache keys a compiled function by its own file only (its time and
size), not by what it takes from other files at compile time (the jitable helpers it inlines,
module constants). Editing such a helper, or a ``git pull`` that changes only helpers, would
leave the cached machine code of its callers in use, silently computing with the old helper.
So numba keeps wheelsim's cache in a folder named after a digest of every module of
``wheelsim.core`` and ``wheelsim.report`` (:func:`kernel_cache_dir`): other sources, another
folder, compiled afresh. The folder is in the package's ``__pycache__`` (the folders of earlier
sources there are deleted when a new one is made, about 3.4 MB each), or in numba's cache
folder if one is set (``NUMBA_CACHE_DIR``; nothing is deleted there); numba's own choice if
neither is set and the package cannot be written to. The folder is given to numba as
``numba.config.CACHE_DIR`` when this module is imported, so the cache of every numba function
in the process goes there.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import warnings
from pathlib import Path

#: The packages of wheelsim whose modules hold compiled functions and what those take from
#: other modules at compile time.
KERNEL_SOURCE_PACKAGES = ('core', 'report')
PACKAGE_DIR = Path(__file__).resolve().parents[1]
CACHE_FOLDER_PREFIX = 'wheelsim-kernels-'


def kernel_sources_digest(package_dir: Path) -> str:
    """SHA-256 (hex) of the relative path and bytes of every module of the packages
    :data:`KERNEL_SOURCE_PACKAGES` under ``package_dir``, in path order."""
    digest = hashlib.sha256()
    for package in KERNEL_SOURCE_PACKAGES:
        for path in sorted((package_dir / package).rglob('*.py')):
            digest.update(f'{path.relative_to(package_dir).as_posix()}\0'.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def kernel_cache_dir(package_dir: Path, numba_cache_dir: str) -> Path | None:
    """The folder for numba's cache of functions compiled from the current sources (see the
    module doc): ``<root>/wheelsim-kernels-<16 hex digits of their digest>``, the root being
    ``numba_cache_dir`` if set, else ``package_dir/__pycache__`` (whose folders of earlier
    sources are deleted when this one is new); None if neither can be used."""
    if numba_cache_dir:
        root = Path(numba_cache_dir)
    elif os.access(package_dir, os.W_OK):
        root = package_dir / '__pycache__'
    else:
        return None
    folder = root / f'{CACHE_FOLDER_PREFIX}{kernel_sources_digest(package_dir)[:16]}'
    if not numba_cache_dir and not folder.exists():
        for earlier in root.glob(f'{CACHE_FOLDER_PREFIX}*'):
            if earlier != folder:  # another process may have made this one meanwhile
                # (a process still running earlier sources makes its folder again if it saves)
                shutil.rmtree(earlier, ignore_errors=True)
    return folder


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
    import numba

    _cache_dir = kernel_cache_dir(PACKAGE_DIR, numba.config.CACHE_DIR)
    if _cache_dir is not None:
        numba.config.CACHE_DIR = str(_cache_dir)
    compiled = njit(cache=True, error_model='numpy')
    compiled_parallel = njit(cache=True, error_model='numpy', parallel=True)
    jitable = register_jitable


def direct_call(function, *example_args):
    """The machine code of the compiled ``function`` for the types of ``example_args``
    (compiled or loaded from the cache now), to be called without numba's dispatch.

    A call through numba finds the machine code for its arguments' types at every call: about
    0.6 us for six arguments, more with more, which a node calling a kernel at every sample
    pays each time. The returned callable skips that, and so checks nothing: every call must
    pass arguments of exactly the example's types (ints, floats, bools; arrays of the same
    dtype, dimensions and memory layout, such as the arrays an object owns for its life), or
    the machine code reads them wrongly. Without numba, ``function`` itself.
    """
    compile_for = getattr(function, 'compile', None)
    if compile_for is None:  # plain Python
        return function
    return compile_for(tuple(numba.typeof(arg) for arg in example_args))


def plain_function(function):
    """The plain Python function behind a compiled one (the function itself without numba):
    tests compare the two bit for bit."""
    return getattr(function, 'py_func', function)


__all__ = ['compiled', 'compiled_parallel', 'direct_call', 'jitable', 'kernel_cache_dir',
           'kernel_sources_digest', 'plain_function', 'prange']
