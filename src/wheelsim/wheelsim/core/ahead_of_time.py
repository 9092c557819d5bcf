"""Compile kernels ahead of time, as the warm-ups call them (:func:`prepare`).

A process that calls its kernels through numba's JIT pays about 0.8 s of CPU for it before it
computes anything (importing numba, then numba's first load of a cached kernel), which every
node, launch and headless run paid. The warm-ups (:mod:`wheelsim.core.warm_up`,
:mod:`wheelsim.report.warm_up`) call every kernel the nodes and a run's report call, with the
argument types they call them with. :func:`prepare` records those calls and compiles each
kernel once for each set of argument types it was called with (numba's ahead-of-time compiler,
``numba.pycc``, for this machine's CPU as numba's JIT compiles) into an extension module in
the kernel cache folder of the current sources, with a manifest beside it (JSON: the CPU's
instruction set extensions; per exported function, its kernel and argument types; the module's
size in bytes, checked before it is loaded: a truncated module crashes the process mapping it).
:mod:`wheelsim.core.compiled` loads those modules without numba and says how a call finds its
function there; any other call goes to numba's JIT.
"""

from __future__ import annotations

import json
import os
import sys
import sysconfig
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numba
from numba.core.errors import NumbaPendingDeprecationWarning

try:  # pending deprecation since numba 0.57 ("replacement technology is being developed")
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', NumbaPendingDeprecationWarning)
        from numba.pycc import CC
except ImportError:  # a numba without it: everything stays on numba's JIT
    CC = None

from wheelsim.core import compiled
from wheelsim.core.compiled import RecordedCall, recorded_calls

_SUFFIX = sysconfig.get_config_var('EXT_SUFFIX')  # of an extension module's file name


def module_stem(name: str) -> str:
    """The file name of module ``name`` (after :data:`~wheelsim.core.compiled.AHEAD_OF_TIME_MODULE`)
    built by this numba, without its extension suffix; its manifest: this and ``.json``."""
    return compiled.ahead_of_time_stem(f'{compiled.AHEAD_OF_TIME_MODULE}{name}',
                                       numba.__version__)


def exports(calls: list[RecordedCall]) -> tuple[list[RecordedCall], set[str]]:
    """The recorded ``calls`` to build, one per kernel and argument types, in call order; and
    the kernels called with arguments of other types or parallel (left to numba's JIT)."""
    found: dict[tuple[str, tuple[str, ...]], RecordedCall] = {}
    unsupported = set()
    for call in calls:
        if call.kernel.parallel or call.types is None:
            unsupported.add(call.kernel.name)
        else:
            found.setdefault((call.kernel.name, call.types), call)
    return list(found.values()), unsupported


def build_module(folder: Path, name: str, calls: list[RecordedCall]) -> None:
    """Build module ``name`` of the recorded ``calls`` into ``folder`` (made if missing), and
    remove the ones other numba versions built there under that name."""
    stem = module_stem(name)
    entries, _ = exports(calls)
    cc = CC(f'{compiled.AHEAD_OF_TIME_MODULE}{name}')
    # For this CPU, as numba's JIT compiles: for a generic x86-64, some operations on NaN
    # gave a NaN of the other sign than the JIT's.
    cc.target_cpu = 'host'
    exported = []
    for number, call in enumerate(entries):
        types = tuple(numba.typeof(arg) for arg in call.args)
        (signature,) = (s for s in call.kernel.dispatcher.nopython_signatures
                        if s.args == types)
        cc.export(f'k{number}', signature)(call.kernel.py_func)
        exported.append((call.kernel.name, call.types, f'k{number}'))
    folder.mkdir(parents=True, exist_ok=True)
    files = (f'{stem}.json', f'{stem}{_SUFFIX}')  # the manifest first: a module loads with it
    with tempfile.TemporaryDirectory(dir=folder) as scratch:
        cc.output_dir = scratch
        cc.output_file = files[1]
        cc.compile()
        manifest = {'cpu_flags': sorted(compiled.cpu_flags()), 'exports': exported,
                    'module_bytes': (Path(scratch) / files[1]).stat().st_size}
        (Path(scratch) / files[0]).write_text(json.dumps(manifest, indent=1))
        for file in files:
            (Path(scratch) / file).replace(folder / file)
    pattern = compiled.ahead_of_time_stem(f'{compiled.AHEAD_OF_TIME_MODULE}{name}', '*')
    for other in folder.glob(f'{pattern}.*'):
        if other.name not in files:
            other.unlink(missing_ok=True)


def prepare(name: str, workload: Callable[[], None]) -> None:
    """Run ``workload`` (through numba's JIT, which caches what it compiles) and build module
    ``name`` of the kernel calls it made, unless built already for these sources, this numba
    and this numpy, or ``WHEELSIM_AHEAD_OF_TIME=0``; says so when it builds (stdout), and which
    kernels it leaves to numba's JIT (stderr)."""
    with recorded_calls() as calls:
        workload()
    _, unsupported = exports(calls)
    if unsupported:
        print(f'wheelsim: left to numba\'s JIT: {", ".join(sorted(unsupported))}',
              file=sys.stderr)
    folder = compiled.kernel_folder()
    stem = module_stem(name)
    if os.environ.get(compiled.AHEAD_OF_TIME_SWITCH) == '0':  # off: nothing would load them
        return
    if CC is None:
        print(f'wheelsim: numba {numba.__version__} has no ahead-of-time compiler (numba.pycc): '
              'the kernels stay on its JIT', file=sys.stderr)
        return
    if folder is None or ((folder / f'{stem}{_SUFFIX}').exists()
                          and (folder / f'{stem}.json').exists()):
        return
    start_s = time.perf_counter()
    try:
        build_module(folder, name, calls)
    except Exception as error:  # noqa: BLE001 - no C compiler or Python headers, say
        print(f'wheelsim: compiling the kernels of {name} ahead of time failed ({error!r}): '
              'they stay on numba\'s JIT', file=sys.stderr)
        return
    sys.stdout.write(f'wheelsim: compiled the kernels of {name} ahead of time '
                     f'({time.perf_counter() - start_s:.1f} s)\n')
    sys.stdout.flush()
