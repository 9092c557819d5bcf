"""Every node runs as ``python -m wheelsim.nodes.NAME``, as its executable and
``python -m wheelsim.nodes NAME`` run it."""

import subprocess
import sys

import pytest

from wheelsim.nodes import NAMES

BAD_VALUE = {  # per node, a start-up value it refuses, and the start of its refusal
    'vehicle_sim': ('pub_rate:=-1.0', 'parameter pub_rate = -1.0 is invalid'),
    'localization': ('mode:=foo', "parameter mode = 'foo' is invalid"),
    'planner': ('limits.max_speed:=-2.0', 'parameter limits.max_speed = -2.0 is invalid'),
    'controller': ('algorithm:=foo', "parameter algorithm = 'foo' is invalid"),
    'wheel_teleop': ('mapping:=foo', "parameter mapping = 'foo' is invalid"),
}


def test_every_node_has_a_bad_value_here():
    assert sorted(BAD_VALUE) == sorted(NAMES)


@pytest.mark.parametrize('name', sorted(BAD_VALUE))
def test_a_node_module_run_as_a_program_is_the_node(name, ros_domain_id):
    """Found in review: ``python -m wheelsim.nodes.localization`` imported the module and
    exited 0 without starting the node (docs/benchmarks_components.md named such a command)."""
    value, refusal = BAD_VALUE[name]
    done = subprocess.run([sys.executable, '-m', f'wheelsim.nodes.{name}', '--ros-args', '-p',
                           value], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert f'{name}: error: {refusal}' in done.stderr
