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
size), not by the jitable helpers it inlines from other files. Editing such a helper, or a
``git pull`` that changes only helpers, would leave the cached machine code of its callers in
use, silently computing with the old helper. So a compiled function's ``__pycache__`` (where
numba keeps its cache) also holds the SHA-256 of every module of ``wheelsim.core`` and
``wheelsim.report`` (:func:`kernel_sources_digest`) it was built with; at decoration, cached
machine code built from other sources is deleted and numba compiles again
(:func:`forget_stale_machine_code`). With ``NUMBA_CACHE_DIR`` set, or a ``__pycache__`` this
process cannot write (where numba keeps its cache elsewhere), the cache is the user's to clear.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import os
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: The packages of wheelsim whose modules hold compiled functions and the helpers they inline.
KERNEL_SOURCE_PACKAGES = ('core', 'report')
PACKAGE_DIR = Path(__file__).resolve().parents[1]
#: The file beside a compiled function's cached machine code naming the sources it was built with.
SOURCES_STAMP = 'wheelsim-kernel-sources.sha256'


@functools.cache
def kernel_sources_digest(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 (hex) of the relative path and bytes of every module of the packages
    :data:`KERNEL_SOURCE_PACKAGES` under ``package_dir``, in path order."""
    digest = hashlib.sha256()
    for package in KERNEL_SOURCE_PACKAGES:
        for path in sorted((package_dir / package).rglob('*.py')):
            digest.update(f'{path.relative_to(package_dir).as_posix()}\0'.encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


_checked_cache_dirs: set[str] = set()


def forget_stale_machine_code(function: Callable[..., Any]) -> None:
    """Delete the machine code numba cached beside ``function``'s module (its ``__pycache__``)
    if it was built from other sources than today's (see the module doc), and note today's
    there. Once per folder and process; nothing when numba caches elsewhere."""
    if os.environ.get('NUMBA_CACHE_DIR'):
        return
    cache_dir = Path(os.path.dirname(inspect.getfile(function))) / '__pycache__'
    if str(cache_dir) in _checked_cache_dirs:
        return
    _checked_cache_dirs.add(str(cache_dir))
    stamp = cache_dir / SOURCES_STAMP
    digest = kernel_sources_digest()
    try:
        if stamp.read_text() == digest:
            return
    except OSError:  # none yet
        pass
    try:
        cache_dir.mkdir(exist_ok=True)
        for cached in cache_dir.glob('*.nb[ic]'):  # numba's index and data files
            cached.unlink(missing_ok=True)
        stamp.write_text(digest)
    except OSError:  # not writable: numba caches in its user-wide folder instead
        pass


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
    def _caching(compile_: Callable[[Callable[..., Any]], Any]) -> Callable[..., Any]:
        """``compile_`` of a function once its stale cached machine code is gone."""

        def decorate(function: Callable[..., Any]) -> Any:
            forget_stale_machine_code(function)
            return compile_(function)

        return decorate

    compiled = _caching(njit(cache=True, error_model='numpy'))
    compiled_parallel = _caching(njit(cache=True, error_model='numpy', parallel=True))
    jitable = register_jitable


def plain_function(function):
    """The plain Python function behind a compiled one (the function itself without numba):
    tests compare the two bit for bit."""
    return getattr(function, 'py_func', function)


__all__ = ['compiled', 'compiled_parallel', 'forget_stale_machine_code', 'jitable',
           'kernel_sources_digest', 'plain_function', 'prange']
