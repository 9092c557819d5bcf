"""Compiled functions never run stale machine code: numba's on-disk cache is keyed by a function's
own file, and ``wheelsim.core.compiled`` drops it when any module of wheelsim's kernel packages
changed (a jitable helper in another file, say)."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

from wheelsim.core.compiled import PACKAGE_DIR, SOURCES_STAMP, kernel_sources_digest

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
    """Run the kernel in a fresh process with the wheelsim copy in ``folder``: (compiled result,
    plain result)."""
    env = {name: value for name, value in os.environ.items()
           if name not in ('NUMBA_CACHE_DIR', 'NUMBA_DISABLE_JIT')}
    done = subprocess.run([sys.executable, str(folder / 'kernel.py')], cwd=folder, env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    compiled, plain = map(float, done.stdout.split())
    return compiled, plain


def test_editing_a_helper_in_another_file_recompiles_its_callers(tmp_path):
    shutil.copytree(PACKAGE_DIR, tmp_path / 'wheelsim',
                    ignore=shutil.ignore_patterns('__pycache__'))
    (tmp_path / 'kernel.py').write_text(KERNEL)
    assert compiled_and_plain(tmp_path) == (7.0 - 2.0 * 3.141592653589793,) * 2
    assert list((tmp_path / '__pycache__').glob('kernel.wrapped-*.nbi'))  # cached on disk

    angles = tmp_path / 'wheelsim' / 'core' / 'geometry' / 'angles.py'
    assert WRAP in angles.read_text()
    angles.write_text(angles.read_text().replace(WRAP, 'return 100.0 + angle_rad'))
    # numba alone would load the cached machine code: its file did not change. Shown by
    # stamping the cache as if it had been built from the edited sources.
    stamp = tmp_path / '__pycache__' / SOURCES_STAMP
    stamp.write_text(kernel_sources_digest(tmp_path / 'wheelsim'))
    assert compiled_and_plain(tmp_path) == (7.0 - 2.0 * 3.141592653589793, 107.0)
    # With the stamp the cache was really built with, it is dropped and compiled again.
    stamp.write_text('the digest of the sources before the edit')
    assert compiled_and_plain(tmp_path) == (107.0, 107.0)
    assert stamp.read_text() == kernel_sources_digest(tmp_path / 'wheelsim')


def test_the_digest_covers_every_module_of_the_kernel_packages(tmp_path):
    for relative in ('core/a.py', 'core/sub/b.py', 'report/c.py', 'nodes/d.py'):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text('x = 1\n')
    first = kernel_sources_digest(tmp_path)
    (tmp_path / 'nodes' / 'd.py').write_text('x = 2\n')  # not a kernel package
    kernel_sources_digest.cache_clear()
    assert kernel_sources_digest(tmp_path) == first
    for relative in ('core/sub/b.py', 'report/c.py'):
        (tmp_path / relative).write_text('x = 2\n')
        kernel_sources_digest.cache_clear()
        changed = kernel_sources_digest(tmp_path)
        assert changed != first
        first = changed
