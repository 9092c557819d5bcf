"""Compiled functions never load machine code built from other sources: numba's on-disk cache is
keyed by a function's own file only, and ``wheelsim.core.compiled`` keeps it in a folder named
after every module of wheelsim's kernel packages (a jitable helper edited in another file, say).
A direct call (without numba's dispatch) runs the same machine code. The kernels compiled ahead
of time compute what numba's JIT computes, bit for bit, and take only the argument types they
were built for."""

import math
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numba  # the subject: installed by every set-up (tools/bootstrap.sh, Docker)
import numpy as np
import pytest

from wheelsim.core import warm_up as core_warm_up
from wheelsim.core.ahead_of_time import exports, module_stem, prepare
from wheelsim.core.compiled import (
    AHEAD_OF_TIME_SWITCH,
    CACHE_FOLDER_PREFIX,
    PACKAGE_DIR,
    RecordedCall,
    argument_types,
    compiled,
    direct_call,
    kernel_cache_dir,
    kernel_folder,
    kernel_sources_digest,
    plain_function,
    recorded_calls,
)
from wheelsim.core.geometry.se2 import integrate_twist
from wheelsim.report import warm_up as report_warm_up

# A compiled function in its own file, inlining a jitable helper of wheelsim.core.
KERNEL = """
from wheelsim.core.compiled import compiled
from wheelsim.core.geometry.angles import wrap_angle

@compiled
def wrapped(angle_rad):
    return wrap_angle(angle_rad)

print(wrapped(7.0), wrap_angle(7.0))
"""
WRAP = 'return math.pi - (math.pi - angle_rad) % (2.0 * math.pi)'


def compiled_and_plain(folder: Path) -> tuple[float, float]:
    """Run the kernel in a fresh process with the wheelsim copy in ``folder`` (numba's cache
    where wheelsim puts it by default): (compiled result, plain result)."""
    env = {name: value for name, value in os.environ.items()
           if name not in ('NUMBA_CACHE_DIR', 'NUMBA_DISABLE_JIT')}
    # The copy first on the path, also where PYTHONSAFEPATH keeps the script's folder off it
    # (make test's colcon test).
    env['PYTHONPATH'] = os.pathsep.join([str(folder), env.get('PYTHONPATH', '')])
    done = subprocess.run([sys.executable, str(folder / 'kernel.py')], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    compiled, plain = map(float, done.stdout.split())
    return compiled, plain


def cached_kernels(package: Path) -> list[Path]:
    return sorted(package.glob(f'__pycache__/{CACHE_FOLDER_PREFIX}*/*/kernel.wrapped-*.nbi'))


def test_editing_a_helper_in_another_file_recompiles_its_callers(tmp_path):
    package = tmp_path / 'wheelsim'
    shutil.copytree(PACKAGE_DIR, package, ignore=shutil.ignore_patterns('__pycache__'))
    (tmp_path / 'kernel.py').write_text(KERNEL)
    wrapped = 7.0 - 2.0 * math.pi
    assert compiled_and_plain(tmp_path) == (wrapped, wrapped)
    (first,) = cached_kernels(package)  # cached on disk, where this says
    assert first.parent.parent == kernel_cache_dir(package, '')
    assert compiled_and_plain(tmp_path) == (wrapped, wrapped)  # loaded from there
    assert cached_kernels(package) == [first]

    angles = package / 'core' / 'geometry' / 'angles.py'
    assert WRAP in angles.read_text()
    angles.write_text(angles.read_text().replace(WRAP, 'return 100.0 + angle_rad'))
    # numba alone would load the machine code cached above: the kernel's file did not change.
    assert compiled_and_plain(tmp_path) == (107.0, 107.0)
    (second,) = cached_kernels(package)  # the folder of the earlier sources is gone
    assert second.parent.parent == kernel_cache_dir(package, '') != first.parent.parent


def test_the_cache_folder_follows_every_module_of_the_kernel_packages(tmp_path):
    package = tmp_path / 'wheelsim'
    for relative in ('core/a.py', 'core/sub/b.py', 'report/c.py', 'nodes/d.py'):
        (package / relative).parent.mkdir(parents=True, exist_ok=True)
        (package / relative).write_text('x = 1\n')
    first = kernel_sources_digest(package)
    (package / 'nodes' / 'd.py').write_text('x = 2\n')  # not a kernel package
    assert kernel_sources_digest(package) == first
    for relative in ('core/sub/b.py', 'report/c.py'):
        (package / relative).write_text('x = 2\n')
        assert kernel_sources_digest(package) != first
        first = kernel_sources_digest(package)
    own = tmp_path / 'numba_cache'  # numba's cache folder set by the user: wheelsim's inside
    assert kernel_cache_dir(package, str(own)) == own / f'{CACHE_FOLDER_PREFIX}{first[:16]}'


@compiled
def _scaled_sum(count: int, scale: float, flag: bool, values: np.ndarray, out: np.ndarray) -> int:
    for i in range(count):
        out[i] = scale * values[i] + (1.0 if flag else 0.0)
    return count


def test_a_direct_call_runs_the_machine_code_for_the_example_types_without_dispatch():
    values, out = np.arange(4.0), np.zeros(4)
    call = direct_call(_scaled_sum, 3, 2.0, True, values, out)
    assert not isinstance(call, numba.core.dispatcher.Dispatcher)  # numba's compiled entry
    assert call(3, 0.5, False, values, out) == 3
    np.testing.assert_array_equal(out, [0.0, 0.5, 1.0, 0.0])
    expected = np.zeros(4)
    plain_function(_scaled_sum)(4, 2.0, True, values, expected)
    call(4, 2.0, True, values, out)
    np.testing.assert_array_equal(out, expected)


def test_a_direct_call_of_a_plain_function_is_the_function():
    def plain(x):
        return x

    assert direct_call(plain, 1.0) is plain


# Arguments of every type a kernel takes, and a few it does not (None: numba's JIT).
SAMPLES = [
    0.5, np.float64(0.5), 3, np.int64(3), True, np.bool_(False), np.float32(0.5), 'text', (1.0,),
    np.zeros(3), np.zeros(3, np.int64), np.zeros(3, np.float32), np.zeros((2, 3)),
    np.zeros((2, 3), order='F'), np.zeros((3, 4))[:, ::2], np.zeros(3, bool), np.zeros((1, 1)),
    np.zeros((2, 2, 2)),
]


def test_argument_types_tell_apart_exactly_what_numba_types_apart():
    readonly = np.zeros(3)
    readonly.flags.writeable = False
    samples = [*SAMPLES, readonly]
    for a in samples:
        for b in samples:
            ours = argument_types((a,)), argument_types((b,))
            if None in ours:
                continue
            assert (ours[0] == ours[1]) == (numba.typeof(a) == numba.typeof(b)), (a, b)
    assert argument_types(('text',)) is None and argument_types((np.float32(0.5),)) is None
    assert argument_types((0.5, 3, True)) == ('f8', 'i8', 'b1')


def bits(value):
    """``value`` (a kernel's result or argument) as exactly comparable data."""
    if isinstance(value, np.ndarray):
        return value.dtype.str, value.shape, value.tobytes()
    if isinstance(value, tuple):
        return tuple(map(bits, value))
    if isinstance(value, float):
        return struct.pack('<d', value)
    return value


def copies(call: RecordedCall) -> tuple:
    """Fresh copies of the recorded arguments (arrays of the same types)."""
    return RecordedCall.of(call.kernel, call.args).args


def test_every_kernel_compiled_ahead_of_time_computes_what_numba_s_jit_computes(
        ahead_of_time_kernels):
    """Every kernel call of the warm-ups (what the nodes and a run's report call), replayed on
    the recorded arguments through the module set-up compiled ahead of time and through
    numba's JIT: the same results and the same arrays written, bit for bit."""
    with recorded_calls() as calls:
        for _, load in core_warm_up.PARTS:
            load()
        report_warm_up.warm_up()
    built, left = exports(calls)
    assert left == {'wheelsim.core.vehicle.parallel_stepping:step_parallel'}
    assert {call.kernel.name.split(':')[1] for call in built} >= {
        'step_serial', 'replay_serial', 'localization_step', '_cast_all', '_footprint_contact',
        'nearest_around', 'point_at', '_limited', '_match_points'}
    for call in built:
        ahead = call.kernel.built_ahead_of_time(call.args)
        assert ahead is not None, f'{call.kernel.name} {call.types}: not built (make setup)'
        args_ahead, args_jit = copies(call), copies(call)
        result_ahead = ahead(*args_ahead)
        result_jit = call.kernel.dispatcher(*args_jit)
        assert bits(result_ahead) == bits(result_jit), call.kernel.name
        assert bits(args_ahead) == bits(args_jit), call.kernel.name


def test_a_call_with_other_argument_types_goes_to_numba_s_jit(ahead_of_time_kernels):
    floats = (0.0, 0.0, 0.3, 1.0, 0.5, 0.2, 0.1)
    assert integrate_twist.built_ahead_of_time(floats) is not None
    ints = (0, 0, 0, 1, 0, 0, 1)  # typed int64 by numba: compiled for them
    assert integrate_twist.built_ahead_of_time(ints) is None
    assert bits(integrate_twist(*ints)) == bits(integrate_twist.dispatcher(*ints))
    assert bits(integrate_twist(*ints)) == bits(integrate_twist(*map(float, ints)))


def test_an_unknown_switch_value_is_named_and_taken_as_on():
    code = ('import warnings, sys\nwarnings.simplefilter("error")\n'
            'from wheelsim.core.geometry.se2 import integrate_twist\n'
            'integrate_twist(0.0, 0.0, 0.3, 1.0, 0.5, 0.2, 0.1)')
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                            env={**os.environ, AHEAD_OF_TIME_SWITCH: 'yes'}, timeout=300)
    assert result.returncode != 0
    assert "WHEELSIM_AHEAD_OF_TIME='yes' is neither 1" in result.stderr


def test_with_the_switch_off_nothing_is_built_ahead_of_time(monkeypatch):
    monkeypatch.setenv(AHEAD_OF_TIME_SWITCH, '0')
    calls = []
    prepare('test_switch_off', lambda: calls.append(integrate_twist(0.0, 0.0, 0.3, 1.0, 0.5,
                                                                    0.2, 0.1)))
    assert len(calls) == 1  # the workload ran
    assert not list(kernel_folder().glob(f'{module_stem("test_switch_off")}*'))


# A process that calls a kernel with warnings shown and says whether it imported numba.
CALL_SAYING_NUMBA = ('import sys, warnings\nwarnings.simplefilter("always")\n'
                     'from wheelsim.core.geometry.se2 import integrate_twist\n'
                     'print(repr(integrate_twist(0.0, 0.0, 0.3, 1.0, 0.5, 0.2, 0.1)))\n'
                     'print("numba" in sys.modules)')


@pytest.mark.parametrize('damage', ['manifest', 'module', 'truncated'])
def test_modules_that_cannot_be_loaded_are_named_and_left_to_numba_s_jit(tmp_path, damage,
                                                                         ahead_of_time_kernels):
    """A copy of set-up's modules in another cache folder, one manifest or module damaged: the
    process warns naming it and computes the same through numba's JIT. A truncated module (a
    full disk, say) would crash the process that maps it (SIGBUS): its size is checked first."""
    copy = tmp_path / kernel_folder().name
    copy.mkdir()
    for built in kernel_folder().glob(module_stem('*') + '*'):
        shutil.copy(built, copy)
    (manifest,) = copy.glob(module_stem('core0') + '.json')
    if damage == 'manifest':
        manifest.write_text('{"exports": [')
    else:
        module = manifest.with_suffix('')  # the stem ends in the numba version: strip .json
        (module,) = copy.glob(module.name + '.*so')
        if damage == 'module':
            module.write_text('not a shared object')  # built for another machine, say
        else:
            module.write_bytes(module.read_bytes()[:module.stat().st_size // 5])
    runs = {}
    for cache in (copy.parent, None):  # damaged; set-up's own, as a check of the copy
        env = os.environ if cache is None else {**os.environ, 'NUMBA_CACHE_DIR': str(cache)}
        result = subprocess.run([sys.executable, '-c', CALL_SAYING_NUMBA], capture_output=True,
                                text=True, timeout=300, env=env)
        assert result.returncode == 0, result.stderr
        runs[cache] = result.stdout.splitlines(), result.stderr
    (value, numba_loaded), stderr = runs[copy.parent]
    assert numba_loaded == 'True'
    assert f'{copy}/{module_stem("core0")}' in stderr and 'numba compiles them instead' in stderr
    assert runs[None][0] == [value, 'False'] and 'cannot be loaded' not in runs[None][1]


def test_a_recording_keeps_nested_ones_and_builds_no_argument_whose_copy_differs():
    with recorded_calls() as outer:
        integrate_twist(0.0, 0.0, 0.3, 1.0, 0.5, 0.2, 0.1)
        with recorded_calls() as inner:
            integrate_twist(0.0, 0.0, 0.3, 1.0, 0.5, 0.2, 0.2)
    assert len(inner) == 1 and len(outer) == 2
    strided = np.zeros((3, 4))[:, ::2]  # its copy is contiguous: another type
    assert RecordedCall.of(outer[0].kernel, (strided,)).types is None
    assert RecordedCall.of(outer[0].kernel, (np.zeros(3),)).types == ('<f81Cwa',)
