"""docs/ray_cluster.md's local example, run as written: a Ray head started with `ray start`,
a sweep sent to it with --address, the head stopped by its process id."""

import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from wheelsim.testing.sockets import bound_sockets, descendants, is_loopback

DOC = Path(__file__).resolve().parents[1] / 'docs' / 'ray_cluster.md'
CURRENT_CLUSTER = Path('/tmp/ray/ray_current_cluster')  # `ray start` names its head here


def _commands() -> tuple[dict[str, str], str, str]:
    """The variables exported, the `ray start` line and the `wheelsim sweep` line of the
    tested example."""
    text = DOC.read_text().split('<!-- tested example')[1]
    blocks = re.findall(r'```bash\n(.*?)```', text, re.S)
    export = next(line for line in blocks[0].splitlines() if line.startswith('export '))
    start = next(line for line in blocks[0].splitlines() if line.startswith('ray start'))
    sweep = next(line for line in blocks[1].splitlines() if line.startswith('wheelsim sweep'))
    variables = dict(item.split('=', 1) for item in shlex.split(export)[1:])
    return variables, start, sweep


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(('127.0.0.1', 0))
        return probe.getsockname()[1]


@pytest.mark.cluster
def test_the_documented_cluster_example_runs(tmp_path):
    variables, start, sweep = _commands()
    assert variables == {'RAY_AUTH_MODE': 'token', 'RAY_USAGE_STATS_ENABLED': '0',
                         'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER': '0'}
    port = str(_free_port())
    env = {**os.environ, **variables}
    head = subprocess.Popen(shlex.split(start.replace('6379', port)), cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(('127.0.0.1', int(port))) == 0:
                    break
            assert head.poll() is None, head.communicate()[0]
            time.sleep(0.5)
        args = shlex.split(sweep.replace('6379', port))
        result = subprocess.run([shutil.which(args[0]), *args[1:]], cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, result.stdout + result.stderr
        assert 'on 2 Ray workers' in result.stdout
        root = tmp_path / 'cluster_demo' / 'default' / 'sweep'
        assert len((root / 'sweep.csv').read_text().strip().splitlines()) == 1 + 4
        assert len(list((root / 'runs').glob('*/point.json'))) == 4
        # `--address auto` (ray.init fails when it finds no cluster): the one started here;
        # and 127.0.0.1 without the loopback switch in the driver's shell (wheelsim sets it)
        env.pop('RAY_ADDRESS', None)
        without_switch = {k: v for k, v in env.items() if k != 'RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'}
        for address, driver_env in (('auto', env), (f'127.0.0.1:{port}', without_switch)):
            other = subprocess.run(
                [shutil.which('wheelsim'), 'sweep', '--param', 'seed=5', '--address', address,
                 '--output', address.replace(':', '_'), '--quiet'],
                cwd=tmp_path, env=driver_env, capture_output=True, text=True, timeout=120)
            assert other.returncode == 0, other.stdout + other.stderr
            assert 'on 2 Ray workers' in other.stdout
        # the head's services and its idle workers, all on loopback
        sockets = bound_sockets(descendants(head.pid))
        assert {'gcs_server', 'raylet'} <= {name for name, _ in sockets}, sockets
        assert all(is_loopback(address) for _, address in sockets), sockets
    finally:
        os.killpg(head.pid, signal.SIGINT)  # Ctrl-C in the head's shell
        try:
            head.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
            head.wait()
        if CURRENT_CLUSTER.is_file() and CURRENT_CLUSTER.read_text().endswith(f':{port}'):
            CURRENT_CLUSTER.unlink()  # ours, stopped: a later ray.init() must not look for it
