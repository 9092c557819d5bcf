"""How the core compiles its numeric functions, defined once for every module.

:func:`compiled` marks a function that runs as machine code: a :class:`Kernel`. :data:`jitable`
marks a plain Python function that compiled functions may call too: Python callers run it as it
is (no dispatch cost), compiled callers inline a compiled copy. :func:`compiled_parallel` is a
compiled function whose ``prange`` loops run on every core.

Where the machine code comes from, at a kernel's call from Python:

- **ahead of time**: set-up's warm-ups (:mod:`wheelsim.core.warm_up`,
  :mod:`wheelsim.report.warm_up`) compile the kernels the nodes and ``wheelsim run`` call, for
  the argument types they call them with, into extension modules
  (:mod:`wheelsim.core.ahead_of_time`), for this machine's CPU. A process loads them without
  numba (importing numba and loading its first cached kernel cost a process about 0.8 s of
  CPU), unless its CPU lacks an instruction set extension of the one they were built on (an
  image built elsewhere). A call uses them when its arguments have exactly the types they were
  built for (:func:`argument_types`); ``WHEELSIM_AHEAD_OF_TIME=0`` turns them off.
- **numba's JIT** for any other call: numba is imported at the first such call (not when a
  module defines its kernels), compiles the kernel at its first call with each set of argument
  types, and keeps the machine code on disk (``cache=True``), so a new process loads instead of
  compiling. Parallel kernels always take this path.

Both compile the same source with numba and give the same results bit for bit (tested), with one
difference: ``error_model='numpy'`` drops Python's division-by-zero checks from the inner loops
(the callers never divide by zero: lengths, radii and the step period are validated > 0), but
numba's ahead-of-time compiler keeps them in the function it exports (a division by zero there
raises ``ZeroDivisionError``; the functions it calls have none).

numba is optional: without it and without the modules built ahead of time (or with
``NUMBA_DISABLE_JIT=1``), the same functions run as plain Python, with the same results and one
warning, about 1.7 times slower on the default scenario and much slower for large vehicle
batches.

Stale machine code: numba's cache keys a compiled function by its own file only (its time and
size), not by what it takes from other files at compile time (the jitable helpers it inlines,
module constants). Editing such a helper, or a ``git pull`` that changes only helpers, would
leave the cached machine code of its callers in use, silently computing with the old helper.
So wheelsim keeps both kinds of machine code in a folder named after a digest of every module
of ``wheelsim.core`` and ``wheelsim.report`` (:func:`kernel_cache_dir`): other sources, another
folder, compiled afresh. The folder is in the package's ``__pycache__`` (the folders of earlier
sources there are deleted when a new one is made, about 4 MB each), or in numba's cache folder
if one is set (``NUMBA_CACHE_DIR``; nothing is deleted there); numba's own choice and no modules
built ahead of time if neither is set and the package cannot be written to. numba is given the
folder as ``numba.config.CACHE_DIR`` when it is imported, so the cache of every numba function
in the process goes there.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.machinery
import importlib.util
import json
import os
import shutil
import sysconfig
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

#: The packages of wheelsim whose modules hold compiled functions and what those take from
#: other modules at compile time.
KERNEL_SOURCE_PACKAGES = ('core', 'report')
PACKAGE_DIR = Path(__file__).resolve().parents[1]
CACHE_FOLDER_PREFIX = 'wheelsim-kernels-'
#: The extension modules built ahead of time: their import names start with this, followed by
#: the name of their group (``wheelsim_kernels_core0``, ...).
AHEAD_OF_TIME_MODULE = 'wheelsim_kernels_'
AHEAD_OF_TIME_SWITCH = 'WHEELSIM_AHEAD_OF_TIME'
_SCALAR_TYPES = {float: 'f8', np.float64: 'f8', int: 'i8', np.int64: 'i8', bool: 'b1',
                 np.bool_: 'b1'}


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
    """The folder for the machine code compiled from the current sources (see the module
    doc): ``<root>/wheelsim-kernels-<16 hex digits of their digest>``, the root being
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


@functools.cache
def kernel_folder() -> Path | None:
    """:func:`kernel_cache_dir` of this package, with numba's cache folder setting."""
    return kernel_cache_dir(PACKAGE_DIR, os.environ.get('NUMBA_CACHE_DIR', ''))


def ahead_of_time_stem(module_name: str, numba_version: str) -> str:
    """The file name, without the extension suffix, of the module ``module_name`` built ahead of
    time by ``numba_version`` for this numpy (whose C interface the module is built against)."""
    return f'{module_name}-numpy{np.__version__}-numba{numba_version}'


def cpu_flags() -> frozenset[str]:
    """The instruction set extensions of this machine's CPU (the ``flags`` of Linux'
    ``/proc/cpuinfo``); empty where unknown."""
    try:
        with open('/proc/cpuinfo') as cpuinfo:
            for line in cpuinfo:
                if line.startswith('flags'):
                    return frozenset(line.partition(':')[2].split())
    except OSError:
        pass
    return frozenset()


def argument_types(args: Sequence[Any]) -> tuple[str, ...] | None:
    """The types of ``args`` as the module built ahead of time tells them apart, one short
    string each (as numba types them: 'f8' for a float, 'i8' for an int, 'b1' for a bool,
    dtype, dimensions, memory layout, writeability and alignment for an array); None if an
    argument is of any other type (that call goes to numba's JIT)."""
    types = []
    for arg in args:
        scalar = _SCALAR_TYPES.get(type(arg))
        if scalar is not None:
            types.append(scalar)
        elif type(arg) is np.ndarray:
            flags = arg.flags
            layout = 'C' if flags.c_contiguous else 'F' if flags.f_contiguous else 'A'
            types.append(f'{arg.dtype.str}{arg.ndim}{layout}{"w" if flags.writeable else "r"}'
                         f'{"a" if flags.aligned else "u"}')
        else:
            return None
    return tuple(types)


@functools.cache
def _ahead_of_time() -> dict[str, dict[tuple[str, ...], Callable]]:
    """The functions of the modules built ahead of time for the current sources, by kernel
    (``module:qualname``) and argument types; empty where they are off, not built, built on a
    CPU with instructions this one lacks, or not loadable (warned)."""
    switch = os.environ.get(AHEAD_OF_TIME_SWITCH, '1')
    if switch not in ('0', '1'):
        warnings.warn(f'{AHEAD_OF_TIME_SWITCH}={switch!r} is neither 1 (use the kernels '
                      'compiled ahead of time where built; the default) nor 0 (numba\'s JIT '
                      'only): taken as 1', stacklevel=4)
    folder = kernel_folder()
    if switch == '0' or folder is None or os.environ.get('NUMBA_DISABLE_JIT') == '1':
        return {}
    suffix = sysconfig.get_config_var('EXT_SUFFIX')
    table: dict[str, dict[tuple[str, ...], Callable]] = {}
    for path in sorted(folder.glob(ahead_of_time_stem(f'{AHEAD_OF_TIME_MODULE}*', '*') + suffix)):
        name = path.name.split('-numpy')[0]
        manifest = path.with_name(path.name[:-len(suffix)] + '.json')
        try:
            built = json.loads(manifest.read_text())
            if not cpu_flags() or not cpu_flags() >= set(built['cpu_flags']):
                return {}  # built for another CPU (an image made elsewhere): numba's JIT
            if path.stat().st_size != built['module_bytes']:  # mapping it could crash (SIGBUS)
                raise ValueError(f'{path.stat().st_size} bytes, set-up wrote '
                                 f'{built["module_bytes"]}')
            loader = importlib.machinery.ExtensionFileLoader(name, str(path))
            spec = importlib.util.spec_from_file_location(name, path, loader=loader)
            module = importlib.util.module_from_spec(spec)
            loader.exec_module(module)
            for kernel, types, export in built['exports']:
                table.setdefault(kernel, {})[tuple(types)] = getattr(module, export)
        except (OSError, ImportError, ValueError, KeyError, AttributeError) as error:
            warnings.warn(f'the kernels compiled ahead of time in {path} cannot be loaded '
                          f'({error}): numba compiles them instead', stacklevel=3)
            return {}
    return table


class _Numba:
    """numba, imported at the first call that needs it (:meth:`load`), and the plain functions
    compiled functions call, registered with it then."""

    def __init__(self) -> None:
        self.module: Any = None
        self.missing = False
        self.jitable: list[Callable] = []

    def load(self) -> Any:
        """numba, set up for wheelsim's kernels; None if not installed (warned once)."""
        if self.module is None and not self.missing:
            try:
                import numba
                from numba.core import types
                from numba.extending import register_jitable, typeof_impl
            except ImportError:
                self.missing = True
                warnings.warn('numba is not installed: wheelsim runs its kernels as plain '
                              'Python (same results, slower); pip install numba for the '
                              'compiled kernels', stacklevel=3)
                return None
            if kernel_folder() is not None:
                numba.config.CACHE_DIR = str(kernel_folder())
            # A compiled function calling a kernel calls its numba dispatcher.
            typeof_impl.register(Kernel)(
                lambda kernel, context: types.Dispatcher(kernel.dispatcher))
            for function in self.jitable:
                register_jitable(function)
            self.module = numba
        return self.module

    def add_jitable(self, function: Callable) -> None:
        self.jitable.append(function)
        if self.module is not None:
            self.module.extending.register_jitable(function)


_NUMBA = _Numba()


class Kernel:
    """A function that runs as machine code, built ahead of time or by numba's JIT (see the
    module doc); called like the function. ``py_func`` is the plain Python function."""

    def __init__(self, function: Callable, parallel: bool) -> None:
        functools.update_wrapper(self, function)
        self.py_func = function
        self.parallel = parallel
        self.name = f'{function.__module__}:{function.__qualname__}'
        self._dispatcher: Any = None
        self._built: dict[tuple[str, ...], Callable] | None = None

    @property
    def dispatcher(self) -> Callable:
        """numba's dispatcher of the function (numba imported now if not yet); the plain
        function without numba."""
        if self._dispatcher is None:
            numba = _NUMBA.load()
            self._dispatcher = self.py_func if numba is None else numba.njit(
                cache=True, error_model='numpy', parallel=self.parallel)(self.py_func)
        return self._dispatcher

    @property
    def signatures(self) -> list:
        """The argument types numba's JIT has compiled or loaded the function for."""
        return list(getattr(self.dispatcher, 'signatures', ()))

    def built_ahead_of_time(self, args: Sequence[Any]) -> Callable | None:
        """The function built ahead of time for the types of ``args``, if there is one."""
        if self._built is None:
            self._built = {} if self.parallel else _ahead_of_time().get(self.name, {})
        if not self._built:
            return None
        return self._built.get(argument_types(args))

    def __call__(self, *args: Any) -> Any:
        if _recorded is not None:
            _recorded.append(RecordedCall.of(self, args))
            return self.dispatcher(*args)
        built = self.built_ahead_of_time(args)
        return (self.dispatcher if built is None else built)(*args)


def compiled(function: Callable) -> Kernel:
    """``function`` as a :class:`Kernel`."""
    return Kernel(function, parallel=False)


def compiled_parallel(function: Callable) -> Kernel:
    """``function`` as a :class:`Kernel` whose ``prange`` loops run on every core (numba's
    JIT only)."""
    return Kernel(function, parallel=True)


def jitable(function: Callable) -> Callable:
    """``function`` itself, which compiled functions may call too (numba's
    ``register_jitable``, applied when numba is imported)."""
    _NUMBA.add_jitable(function)
    return function


def __getattr__(name: str) -> Any:
    """``prange``: numba's parallel range (numba imported now), ``range`` without numba."""
    if name == 'prange':
        numba = _NUMBA.load()
        return range if numba is None else numba.prange
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')


def direct_call(function: Callable, *example_args: Any) -> Callable:
    """The machine code of the compiled ``function`` for the types of ``example_args``, to be
    called without numba's dispatch: built ahead of time for those types, or compiled or
    loaded from numba's cache now.

    A call through numba finds the machine code for its arguments' types at every call: about
    0.6 us for six arguments, more with more, which a node calling a kernel at every sample
    pays each time. The returned callable skips that, and so checks nothing: every call must
    pass arguments of exactly the example's types (ints, floats, bools; arrays of the same
    dtype, dimensions and memory layout, such as the arrays an object owns for its life), or
    the machine code reads them wrongly. A plain Python function (or one without numba):
    the function itself.
    """
    if not isinstance(function, Kernel):
        return function
    if _recorded is not None:
        _recorded.append(RecordedCall.of(function, example_args))
    else:
        built = function.built_ahead_of_time(example_args)
        if built is not None:
            return built
    compile_for = getattr(function.dispatcher, 'compile', None)
    if compile_for is None:  # plain Python: no numba, or NUMBA_DISABLE_JIT
        return function.dispatcher
    return compile_for(tuple(_NUMBA.module.typeof(arg) for arg in example_args))


class RecordedCall(NamedTuple):
    """A call of a kernel from Python (or a :func:`direct_call`) within :func:`recorded_calls`."""

    kernel: Kernel
    args: tuple  # copies of the arguments at the call (arrays: same dtype, layout and flags)
    types: tuple[str, ...] | None  # their argument_types

    @classmethod
    def of(cls, kernel: Kernel, args: tuple) -> RecordedCall:
        """The call of ``kernel`` with ``args``; its types None (not built ahead of time) where
        a copy has other types than an argument (a strided or unaligned array)."""
        copies = tuple(map(_snapshot, args))
        types = argument_types(args)
        return cls(kernel, copies, types if argument_types(copies) == types else None)


def _snapshot(arg: Any) -> Any:
    if type(arg) is not np.ndarray:
        return arg
    copy = arg.copy(order='K')
    copy.flags.writeable = arg.flags.writeable
    return copy


#: While :func:`recorded_calls` runs: the calls it records.
_recorded: list[RecordedCall] | None = None


@contextlib.contextmanager
def recorded_calls() -> Iterator[list[RecordedCall]]:
    """Within: every call of a kernel from Python and every :func:`direct_call` goes to numba's
    JIT and is recorded in the list it gives: what the warm-ups build ahead of time
    (:mod:`wheelsim.core.ahead_of_time`)."""
    global _recorded
    outer, _recorded = _recorded, []
    try:
        yield _recorded
    finally:
        if outer is not None:
            outer.extend(_recorded)
        _recorded = outer


def plain_function(function: Callable) -> Callable:
    """The plain Python function behind a compiled one (the function itself without numba):
    tests compare the two bit for bit."""
    return getattr(function, 'py_func', function)


__all__ = ['AHEAD_OF_TIME_MODULE', 'AHEAD_OF_TIME_SWITCH', 'Kernel', 'RecordedCall',
           'ahead_of_time_stem',
           'argument_types', 'compiled', 'compiled_parallel', 'cpu_flags', 'direct_call', 'jitable',
           'kernel_cache_dir', 'kernel_folder', 'kernel_sources_digest', 'plain_function',
           'recorded_calls']
