"""The kernel warm-up the Docker image runs: every vehicle model, one vehicle and a parallel
batch, the localization's kernel, the control step's and the world's (that a run finds them all
in the cache afterwards: test/test_wheelsim_run_world.py)."""

import re
import subprocess
import sys


def test_warm_up_loads_every_kernel_and_says_so():
    result = subprocess.run([sys.executable, '-m', 'wheelsim.core.warm_up'],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ('compiled kernels loaded for bicycle, differential, omni, the localization, the '
            'control step and the world' in result.stdout)
    # Each part is announced before it loads, so a first (compiling) set-up is never silent.
    announced = re.findall(r'loading the compiled kernels (\d)/6: (.+)', result.stdout)
    assert [int(index) for index, _ in announced] == list(range(1, 7)), result.stdout
    assert announced[0][1] == 'the bicycle vehicle' and announced[-1][1] == 'the world'

