"""One run as a Ray worker runs it (in this process, real nodes): written into a visible output
folder, or returned as files when the output is on another machine; the run keys; and a local
Ray instance kept on loopback."""

import dataclasses
import json
import os
from pathlib import Path

import pytest

from wheelsim.cli import _load
from wheelsim.run.execution import (
    AUTH_MODE,
    TOKEN_FILE,
    WORKER_NICENESS,
    Job,
    RayRunner,
    _on_loopback,
    _write_files,
    job_key,
    run_job,
)
from wheelsim.run.output import MARKER
from wheelsim.run.scenario import ScenarioError
from wheelsim.testing.sockets import bound_sockets, descendants, is_loopback


def _short_scenario():
    scenario, _ = _load(None)
    return dataclasses.replace(scenario, name='short', duration_s=3.0)


def test_cluster_addresses_on_this_machines_loopback():
    assert _on_loopback('127.0.0.1:6379') and _on_loopback('ray://localhost:10001')
    assert _on_loopback('[::1]:6379')
    assert not _on_loopback('10.1.2.3:6379') and not _on_loopback('ray://head:10001')
    assert not _on_loopback('auto') and not _on_loopback('127.0.0.10:6379')


@pytest.mark.parametrize('address', ['bogus:::', 'head', 'head:0', 'head:65536', 'head:x',
                                     ':6379', '::1:6379', 'http://head:6379', 'local', ''])
def test_a_bad_cluster_address_is_refused_before_ray_starts(address):
    with pytest.raises(ScenarioError, match=rf"^--address '{address}': expected auto, "
                                            r'ray://HOST:PORT or HOST:PORT \(PORT in'):
        RayRunner(address=address)


def test_cluster_addresses_in_every_documented_form_are_accepted():
    for address in ('auto', 'head:6379', 'ray://10.1.2.3:10001', '[::1]:6379', 'h-1.lan:65535'):
        assert RayRunner(address=address).workers == 0  # nothing started


def test_keys_follow_everything_that_makes_the_run():
    scenario = _short_scenario()
    assert job_key(scenario) == job_key(dataclasses.replace(scenario))
    assert job_key(scenario) != job_key(dataclasses.replace(scenario, seed=scenario.seed + 1))
    assert job_key(scenario) != job_key(dataclasses.replace(scenario, duration_s=3.5))


def test_a_scenario_file_s_key_does_not_depend_on_how_its_path_is_written(tmp_path,
                                                                          monkeypatch):
    """Found in review: the same sweep resumed with the scenario's absolute path (or from
    another folder) ran every point again."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / 'sub').mkdir()
    (tmp_path / 's.yaml').write_text('duration: 3.0\nnodes: {planner: {waypoints: [1.0, 0.0, '
                                     '0.0]}}\n')
    spellings = ['s.yaml', str(tmp_path / 's.yaml'), 'sub/../s.yaml']
    assert len({job_key(_load(path)[0]) for path in spellings}) == 1


def test_a_worker_without_the_output_folder_returns_the_files(tmp_path, ros_domain_id):
    scenario = _short_scenario()
    job = Job(job_key(scenario), scenario)
    shared, remote = tmp_path / 'shared', tmp_path / 'driver'
    shared.mkdir()
    (shared / TOKEN_FILE).write_text('abc')
    # found in review: a retried point kept an earlier attempt's error.txt beside its metrics
    for folder in (shared, remote):
        (folder / job.key / 'short').mkdir(parents=True)
        (folder / job.key / 'short' / MARKER).write_text('')
        (folder / job.key / 'error.txt').write_text('an earlier attempt')
        (folder / job.key / 'short' / 'error.txt').write_text('an earlier attempt')
    here = run_job(job, str(shared), 'abc')  # sees the token: writes in place
    assert 'files' not in here and here['run_dir'] == f'{job.key}/short'
    assert not (shared / here['run_dir'] / 'bag').exists()  # a sweep's default: metrics only
    # No token there: runs aside, returns files; with its bag, and the same metrics.
    elsewhere = run_job(Job(job.key, scenario, record_bag=True), str(remote), 'abc')
    assert sorted(path.name for path in remote.rglob('*') if path.is_file()) == [
        MARKER, 'error.txt', 'error.txt']  # the driver's, left as they were
    assert {'short/metrics.json', 'short/bag/metadata.yaml'} <= {
        name.split('/', 1)[1] for name in elsewhere['files']}
    _write_files(remote, job.key, elsewhere.pop('files'))
    assert not [*shared.rglob('error.txt')] and not [*remote.rglob('error.txt')]
    written = remote / elsewhere['run_dir'] / 'metrics.json'
    assert written.read_bytes() == (shared / here['run_dir'] / 'metrics.json').read_bytes()
    record = json.loads(written.read_text())
    assert {name: record[name] for name in here['metrics']} == here['metrics']
    assert here['metrics'] == elsewhere['metrics']


def test_a_run_that_raises_gives_its_error_and_traceback(tmp_path, ros_domain_id):
    scenario = _short_scenario()
    broken = dataclasses.replace(scenario, node_parameters={
        **scenario.node_parameters,
        'vehicle_sim': {**scenario.node_parameters['vehicle_sim'],
                        'world.map_yaml': str(tmp_path / 'missing.yaml')}})
    (tmp_path / TOKEN_FILE).write_text('t')
    result = run_job(Job('k', broken), str(tmp_path), 't')
    assert result['error'].startswith('ParameterError: parameter world.map_yaml')
    assert result['error_file'] == f'k/{scenario.name}/error.txt'  # beside the bag so far
    assert 'Traceback' in (tmp_path / result['error_file']).read_text()
    assert [p.name for p in tmp_path.rglob('error.txt')] == ['error.txt']  # written once


def test_a_local_ray_instance_listens_on_loopback_only_and_runs_at_our_niceness(tmp_path,
                                                                               monkeypatch):
    monkeypatch.delenv(WORKER_NICENESS, raising=False)
    monkeypatch.delenv(AUTH_MODE, raising=False)
    scenario = _short_scenario()
    jobs = [Job(job_key(s), s) for s in (scenario, dataclasses.replace(scenario, seed=2))]
    with RayRunner(workers=2) as runner:
        for _ in runner.run(jobs, tmp_path):  # sockets looked at with a run in flight, then idle
            sockets = bound_sockets(descendants(os.getpid()))
            processes = _niceness_of_ray_processes(descendants(os.getpid()))
            auth_modes = {_name(pid): _environment(pid).get(AUTH_MODE)
                          for pid in descendants(os.getpid())
                          if _name(pid) in ('gcs_server', 'raylet')}
        sockets += bound_sockets(descendants(os.getpid()))
    names = {name for name, _ in sockets}
    assert {'gcs_server', 'raylet'} <= names, sockets
    assert any(name.startswith('ray::') for name in names), sockets  # the workers, the agents
    assert all(is_loopback(address) for _, address in sockets), sockets
    # Ray's own default adds 15 to the workers' niceness, which starves them on a busy machine
    assert processes and set(processes.values()) == {os.nice(0)}, processes
    # Ray's token authentication on (test_wheelsim_sweep.py: without Ray's notice on stderr);
    # the ray:: processes rename themselves over their environment block, so it is read from
    # Ray's two services, which the driver starts
    assert auth_modes == {'gcs_server': 'token', 'raylet': 'token'}, auth_modes


def test_a_worker_niceness_that_is_no_number_is_refused_before_ray_starts(monkeypatch):
    monkeypatch.setenv(WORKER_NICENESS, 'low')  # Ray itself ends in a segmentation fault
    with pytest.raises(ScenarioError, match="RAY_worker_niceness='low': must be a whole number"):
        RayRunner(workers=1).__enter__()


def _name(pid: int) -> str:
    """The name of process ``pid`` (empty if it ended meanwhile)."""
    try:
        return Path(f'/proc/{pid}/comm').read_text().strip()
    except OSError:
        return ''


def _environment(pid: int) -> dict[str, str]:
    """The environment process ``pid`` started with (empty if it ended meanwhile)."""
    try:
        raw = Path(f'/proc/{pid}/environ').read_bytes()
    except OSError:
        return {}
    return dict(item.decode().partition('=')[::2] for item in raw.split(b'\0') if item)


def _niceness_of_ray_processes(pids: set[int]) -> dict[int, int]:
    """pid -> niceness of each process of ``pids`` named ``ray::...`` (the workers, the
    agents)."""
    found = {}
    for pid in pids:
        try:
            name = Path(f'/proc/{pid}/comm').read_text()
            stat = Path(f'/proc/{pid}/stat').read_text()
        except OSError:  # ended meanwhile
            continue
        if name.startswith('ray::'):
            found[pid] = int(stat.rsplit(')', 1)[1].split()[16])  # field 19 of proc(5)
    return found

