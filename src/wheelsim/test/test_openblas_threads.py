"""wheelsim's processes (each node's, the ``wheelsim`` command's) run OpenBLAS on one thread
unless ``OPENBLAS_NUM_THREADS`` says otherwise."""

import os
import subprocess
import sys

import pytest

PROBE = """
import os
{imports}
print(os.environ.get('OPENBLAS_NUM_THREADS'), len(os.listdir('/proc/self/task')))
"""
IMPORTS = {
    'node': "import wheelsim.nodes; wheelsim.nodes.node_module('controller')",
    'command': 'import wheelsim.cli',
}


#: What OpenBLAS reads for its number of threads, in this order.
THREAD_SETTINGS = ('OPENBLAS_NUM_THREADS', 'GOTO_NUM_THREADS', 'OMP_NUM_THREADS')


def probe(imports: str, **env: str) -> tuple[str, int]:
    """OPENBLAS_NUM_THREADS and the number of threads of a process after ``imports``, started
    with none of :data:`THREAD_SETTINGS` but ``env``."""
    environment = {k: v for k, v in os.environ.items() if k not in THREAD_SETTINGS} | env
    value, threads = subprocess.run(
        [sys.executable, '-c', PROBE.format(imports=imports)], env=environment,
        capture_output=True, text=True, check=True, timeout=120).stdout.split()
    return value, int(threads)


@pytest.mark.parametrize('imports', IMPORTS.values(), ids=IMPORTS)
def test_openblas_runs_on_one_thread_unless_the_environment_says_otherwise(imports):
    value, threads = probe(imports)
    assert value == '1'
    user_value, user_threads = probe(imports, OPENBLAS_NUM_THREADS='2')
    assert user_value == '2'
    # OpenBLAS starts a thread for each further one it may use, at most one per further CPU
    extra = min(2, len(os.sched_getaffinity(0))) - 1
    assert user_threads == threads + extra
