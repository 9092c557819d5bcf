"""`wheelsim sweep`'s bookkeeping without ROS: the runs are replaced by a runner that returns
metrics at once (the whole command, with real runs on Ray, is tested in
test/test_wheelsim_sweep.py)."""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq

from wheelsim.run.execution import Job
from wheelsim.run.robustness import seed_summary
from wheelsim.run.sampling import parse_axis, plan_points
from wheelsim.run.scenario import Scenario
from wheelsim.run.sweep import format_table, plan_sweep, points_and_runs, run_sweep
from wheelsim.run.tables import write_tables


def refuse_constant(name: str) -> None:
    """``parse_constant`` of a strict JSON reader: NaN, Infinity and -Infinity are no JSON."""
    raise ValueError(f'{name} is not JSON')


class CountingRunner:
    """Yields each job's result at once (cross-track error = the gain) and counts the runs."""

    workers = 2

    def __init__(self) -> None:
        self.keys: list[str] = []

    def run(self, jobs: Iterable[Job], root: Path) -> Iterator[tuple[Job, dict[str, Any]]]:
        for job in jobs:
            self.keys.append(job.key)
            metrics = {'cross_track_rms_m': job.scenario.node_parameters['controller']['k']}
            yield job, {'metrics': metrics, 'failed': [], 'interrupted': False,
                        'run_dir': f'{job.key}/t', 'wall_s': 0.0, 'worker': 'here:1'}


def test_equal_points_share_one_run(tmp_path):
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    points = [{'controller.k': 0.1}] * 3  # as samples of an integer range can be
    runner = CountingRunner()
    outcome = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, runner,
                        show_progress=False)
    assert len(runner.keys) == 1  # one run, not three racing into one folder
    # found in review: the command said "sweep of 3 runs" for the one it ran
    assert points_and_runs(plan_sweep(scenario, points, lambda *a: None)) \
        == '3 points (1 run: equal points share one)'
    assert points_and_runs(plan_sweep(scenario, points[:1], lambda *a: None)) == '1 point'
    assert [(r['point'], r['passed'], r['error'], r['cross_track_rms_m']) for r in outcome.rows] \
        == [(0, True, '', 0.1), (1, True, '', 0.1), (2, True, '', 0.1)]


def test_a_sweep_over_arrays_tables_them_and_a_rerun_skips_them(tmp_path):
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {'k': 0.2}, 'planner': {}})
    # lists: unhashable, compared, grouped, tabled, written and read back as JSON
    points = plan_points([parse_axis('planner.waypoints=[1.0,0.0,.nan],[2.0,0.0,.nan]'),
                          parse_axis('seed=1..2')])
    planned = plan_sweep(scenario, points, lambda *a: None)
    runner = CountingRunner()
    outcome = run_sweep(planned, tmp_path, runner, show_progress=False)
    assert len(runner.keys) == 4 and not outcome.errors
    assert [r['planner.waypoints'][0] for r in outcome.rows] == [1.0, 1.0, 2.0, 2.0]
    # point.json is strict JSON (jq and JavaScript's JSON.parse refuse NaN): a non-finite
    # number, such as the .nan of the waypoints, is written null.
    records = [json.loads(path.read_text(), parse_constant=refuse_constant)
               for path in sorted(tmp_path.glob('runs/*/point.json'))]
    assert len(records) == 4
    assert all(r['overrides']['planner.waypoints'][1:] == [0.0, None] for r in records)
    write_tables(outcome.rows, tmp_path / 'sweep')
    with (tmp_path / 'sweep.csv').open() as handle:
        assert [r['planner.waypoints'] for r in csv.DictReader(handle)][::2] == [
            '[1.0,0.0,.nan]', '[2.0,0.0,.nan]']  # as --param writes it
    arrays = pq.read_table(tmp_path / 'sweep.parquet').column('planner.waypoints').to_pylist()
    assert arrays[3][:2] == [2.0, 0.0] and math.isnan(arrays[3][2])
    assert '[2.0,0.0,.nan]' in format_table(outcome.rows, ['point', 'planner.waypoints'])
    summary = seed_summary(outcome.rows, ['planner.waypoints', 'seed'], ['cross_track_rms_m'],
                           's.yaml')
    assert [s['reproduce'] for s in summary] == [
        f"wheelsim run s.yaml --param 'planner.waypoints=[{x},0.0,.nan]' --seed 1"
        for x in (1.0, 2.0)]
    again = CountingRunner()  # the records are found again: nothing to run
    rerun = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, again,
                      show_progress=False)
    assert again.keys == [] and rerun.skipped == 4
    assert [r['run'] for r in rerun.rows] == [r['run'] for r in outcome.rows]


def test_a_table_leaves_a_missing_cell_blank_and_writes_a_value_as_param_does():
    """A parameter as ``--param`` reads it back; a metric not measured as the run's summary
    shows it (``-``; it was ``null``)."""
    rows = [{'point': 1, 'c.x': 'a: b', 'passed': False},  # a failed point: no metrics
            {'point': 2, 'c.x': None, 'rmse': 0.12345, 'clearance': None, 'passed': True}]
    assert format_table(rows, ['point', 'c.x', 'rmse', 'clearance', 'passed'],
                        ['rmse', 'clearance']).splitlines() == [
        'point     c.x    rmse  clearance  passed',
        "    1  'a: b'                      false",
        '    2    null  0.1235          -    true']
    # found in review: the error message was quoted as a --param value ('RuntimeError: boom')
    failed = [{'point': 0, 'passed': False, 'error': 'RuntimeError: boom'},
              {'point': 1, 'passed': True, 'error': ''}]
    assert format_table(failed, ['point', 'passed', 'error']).splitlines() == [
        'point  passed               error',
        '    0   false  RuntimeError: boom',
        '    1    true                    ']


class DyingRunner(CountingRunner):
    """Each job's worker died: ``error`` alone, as RayRunner gives it (no traceback file)."""

    def run(self, jobs: Iterable[Job], root: Path) -> Iterator[tuple[Job, dict[str, Any]]]:
        for job in jobs:
            yield job, {'error': 'WorkerCrashedError: the worker died', 'wall_s': 0.0,
                        'worker': 'here:1'}


def test_a_point_whose_worker_died_is_reported_without_a_traceback_file(tmp_path, capsys):
    """Found in review: the report named the traceback file a dead worker never wrote (a
    KeyError ended the sweep)."""
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    points = plan_points([parse_axis('controller.k=1,2')])
    outcome = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, DyingRunner(),
                        show_progress=False)
    assert outcome.errors == {0: 'WorkerCrashedError: the worker died',
                              1: 'WorkerCrashedError: the worker died'}
    printed = capsys.readouterr().out
    assert printed.count('failed: WorkerCrashedError: the worker died\n') == 2, printed


class RaisingRunner(CountingRunner):
    """Each job's run raised: ``error`` and its ``error_file``, as ``run_job`` gives them."""

    def run(self, jobs: Iterable[Job], root: Path) -> Iterator[tuple[Job, dict[str, Any]]]:
        for job in jobs:
            yield job, {'error': 'RuntimeError: boom', 'error_file': f'{job.key}/t/error.txt',
                        'wall_s': 0.0, 'worker': 'here:1'}


def test_a_failed_point_s_row_names_the_folder_of_its_traceback(tmp_path, capsys):
    """Found in review: the ``run`` cell of a failed point was empty; only the console named
    its ``error.txt``."""
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    planned = plan_sweep(scenario, plan_points([parse_axis('controller.k=1,2')]),
                         lambda *a: None)
    outcome = run_sweep(planned, tmp_path, RaisingRunner(), show_progress=False)
    assert [(r['error'], r['run']) for r in outcome.rows] == [
        ('RuntimeError: boom', f'runs/{point.job.key}/t') for point in planned]
    printed = capsys.readouterr().out
    assert f'failed: RuntimeError: boom ({tmp_path}/runs/{planned[0].job.key}/t/error.txt)' \
        in printed, printed


class BagRunner(CountingRunner):
    """A CountingRunner whose runs write a bag folder when their job writes one."""

    def run(self, jobs: Iterable[Job], root: Path) -> Iterator[tuple[Job, dict[str, Any]]]:
        for job, result in super().run(jobs, root):
            if job.writes_bag:
                (root / result['run_dir'] / 'bag').mkdir(parents=True)
            yield job, result


def test_a_rerun_with_bags_runs_again_the_points_done_without_one(tmp_path):
    """Found in review: the same sweep again with --bags skipped every point done before, so
    it ended with no bag, exit 0."""
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    points = plan_points([parse_axis('controller.k=1,2')])
    first = BagRunner()
    run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, first,
              show_progress=False)
    with_bags = BagRunner()
    outcome = run_sweep(plan_sweep(scenario, points, lambda *a: None, record_bags=True),
                        tmp_path, with_bags, show_progress=False)
    assert with_bags.keys == first.keys and outcome.skipped == 0
    assert len(list(tmp_path.glob('runs/*/t/bag'))) == 2
    for record_bags in (True, False):  # done with their bags: skipped either way
        again = BagRunner()
        rerun = run_sweep(plan_sweep(scenario, points, lambda *a: None, record_bags),
                          tmp_path, again, show_progress=False)
        assert again.keys == [] and rerun.skipped == 2
    # a scenario that records nothing has no bag to wait for
    silent = Scenario(name='t', duration_s=1.0, seed=1, record_topics=(), pass_criteria={},
                      node_parameters={'controller': {}})
    run_sweep(plan_sweep(silent, points, lambda *a: None), tmp_path / 'silent', BagRunner(),
              show_progress=False)
    again = BagRunner()
    rerun = run_sweep(plan_sweep(silent, points, lambda *a: None, record_bags=True),
                      tmp_path / 'silent', again, show_progress=False)
    assert again.keys == [] and rerun.skipped == 2


# found in review: a point.json another program emptied, truncated or changed gave a traceback on
# the rerun (JSONDecodeError, TypeError, pyarrow's error)
def test_a_damaged_record_is_made_again_on_the_rerun(tmp_path):
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    points = plan_points([parse_axis('controller.k=1,2,3,4,5,6')])
    outcome = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path,
                        CountingRunner(), show_progress=False)
    records = sorted(tmp_path.glob('runs/*/point.json'))
    whole = json.loads(records[0].read_text())
    damages = ['', '[]', records[0].read_text()[:40], '\udcff',
               json.dumps({**whole, 'metrics': {'cross_track_rms_m': 'abc'}}),
               json.dumps({k: v for k, v in whole.items() if k != 'worker'})]
    for path, damage in zip(records, damages, strict=True):
        path.write_bytes(damage.encode('utf-8', 'surrogateescape'))
    again = CountingRunner()
    rerun = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, again,
                      show_progress=False)
    assert len(again.keys) == 6 and rerun.skipped == 0
    assert [r['cross_track_rms_m'] for r in rerun.rows] == [
        r['cross_track_rms_m'] for r in outcome.rows]
    assert json.loads(records[0].read_text()) == whole
