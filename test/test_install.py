"""A plain ``colcon build`` (no ``--symlink-install``: the README's ROS-install route and the
Docker image) installs every node, and its executables run.

Until 2026-11-28 ``wheelsim/nodes`` had no ``__init__.py``: ``find_packages`` left it out, so
such an install had no node module and every node executable failed at import.
"""

import importlib.util
import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest
from bringup_support import REPO, WHEELSIM_NODES

import wheelsim
from wheelsim.testing.processes import refused_cleanly

#: One refused start-up parameter per node: the executable ran as far as the node's own checks.
REFUSED = {
    'vehicle_sim': ('pub_rate:=-1.0', 'parameter pub_rate = -1.0 is invalid'),
    'localization': ('mode:=foo', 'parameter mode = \'foo\' is invalid'),
    'planner': ('limits.max_speed:=-2.0', 'parameter limits.max_speed = -2.0 is invalid'),
    'controller': ('algorithm:=mpc', 'parameter algorithm = \'mpc\' is invalid'),
    'wheel_teleop': ('mapping:=skid', 'parameter mapping = \'skid\' is invalid'),
}


@pytest.mark.early
def test_a_plain_colcon_build_installs_every_node_and_its_executables_run(tmp_path,
                                                                          ros_domain_id):
    build = subprocess.run(
        ['colcon', '--log-base', str(tmp_path / 'log'), 'build', '--base-paths', 'src',
         '--build-base', str(tmp_path / 'build'), '--install-base', str(tmp_path / 'install')],
        cwd=REPO, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    site = next((tmp_path / 'install' / 'wheelsim' / 'lib').glob('python3*/site-packages'))
    for name in WHEELSIM_NODES:
        assert (site / 'wheelsim' / 'nodes' / f'{name}.py').is_file(), name
        parameter, message = REFUSED[name]
        executable = tmp_path / 'install' / 'wheelsim' / 'lib' / 'wheelsim' / name
        python_path = os.pathsep.join(filter(None, [str(site), os.environ.get('PYTHONPATH')]))
        done = subprocess.run([str(executable), '--ros-args', '-p', parameter],
                              capture_output=True, text=True, timeout=120,
                              env={**os.environ, 'PYTHONPATH': python_path})
        assert refused_cleanly(name, done.returncode, done.stderr), (name, done)
        assert message in done.stderr, (name, done)


def test_a_symlink_build_in_a_user_s_workspace_writes_only_into_build_and_install(tmp_path):
    """Found in review: cloned into a workspace's src/, ``colcon build --symlink-install`` linked
    the data files (named ``../../launch/...``) into the workspace's own folder, replacing a
    user's ``launch/sim.launch.py``, and built ``tools/tf2_msgs``, which would shadow a ROS
    install's."""
    workspace = tmp_path / 'ws'
    shutil.copytree(REPO, workspace / 'src' / 'wheelsim', symlinks=True,
                    ignore=shutil.ignore_patterns('.git', '.venv', '.deps', 'build', 'install',
                                                  'log', 'results', '__pycache__'))
    (workspace / 'launch').mkdir()
    (workspace / 'launch' / 'sim.launch.py').write_text('mine')
    listed = subprocess.run(['colcon', 'list', '--names-only'], cwd=workspace,
                            capture_output=True, text=True, timeout=120)
    assert listed.stdout.split() == ['wheelsim'], listed.stdout + listed.stderr
    build = subprocess.run(['colcon', 'build', '--symlink-install'], cwd=workspace,
                           capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stdout + build.stderr
    assert sorted(path.name for path in workspace.iterdir()) == [
        'build', 'install', 'launch', 'log', 'src']
    assert (workspace / 'launch' / 'sim.launch.py').read_text() == 'mine'
    share = workspace / 'install' / 'wheelsim' / 'share' / 'wheelsim'
    source = workspace / 'src' / 'wheelsim'
    for installed in ('launch/sim.launch.py', 'params/maps/room.yaml', 'fastdds_localhost.xml'):
        assert (share / installed).resolve() == (source / installed.replace(
            'fastdds', 'tools/fastdds')).resolve(), installed


def test_set_up_leaves_the_package_compiled_for_every_process():
    """Where PYTHONDONTWRITEBYTECODE is set (as on the CI machine), no process writes wheelsim's
    bytecode: before set-up compiled it, every ``wheelsim run``, node and test process compiled
    every module it imported again (0.3 s of CPU a run). Each module's cached bytecode is there
    and records the source's time and size, so Python uses it."""
    stale = []
    for source in sorted(Path(wheelsim.__file__).parent.rglob('*.py')):
        cached = Path(importlib.util.cache_from_source(str(source)))
        stat = source.stat()
        recorded = struct.pack('<II', int(stat.st_mtime) & 0xFFFFFFFF, stat.st_size & 0xFFFFFFFF)
        header = cached.read_bytes()[4:16] if cached.is_file() else b''
        if header != b'\0\0\0\0' + recorded:  # flags 0: checked by time and size
            stale.append(str(source))
    assert len(stale) == 0, f'not compiled since their last change (run make setup): {stale}'

