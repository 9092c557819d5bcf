"""The kernel warm-up the Docker image runs: every vehicle model, one vehicle and a parallel
batch, the localization's kernel, the control step's and the world's (that a run finds them all
in the cache afterwards: test/test_wheelsim_run_world.py)."""

import re
import subprocess
import sys

import pytest


def test_warm_up_loads_every_kernel_and_says_so():
    result = subprocess.run([sys.executable, '-m', 'wheelsim.core.warm_up'],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert ('compiled kernels loaded for bicycle, differential, omni, the localization, the '
            'control step and the world' in result.stdout)
    # Each part is announced before it loads, so a first (compiling) set-up is never silent;
    # the two groups load in two processes, their lines interleaved.
    announced = dict(re.findall(r'loading the compiled kernels (\d)/6: (.+)', result.stdout))
    assert announced == {'1': 'the bicycle vehicle', '2': 'the differential vehicle',
                         '3': 'the omni vehicle', '4': 'the world', '5': 'the localization',
                         '6': 'the control step'}, result.stdout


def test_a_failing_part_in_the_second_process_fails_the_warm_up(monkeypatch):
    from wheelsim.core import warm_up

    def broken() -> None:
        raise ValueError('broken part')

    monkeypatch.setattr(warm_up, 'GROUPS', (warm_up.GROUPS[0][:1], (('a broken part', broken),)))
    with pytest.raises(RuntimeError, match='loading a broken part failed'):
        warm_up.warm_up(parallel=True)

