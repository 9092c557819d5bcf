"""``wheelsim sweep``: one scenario at many points (a grid or samples), run on Ray.

Each point is a full lock-step run written to ``<sweep>/runs/<key>/<scenario>/`` (bag and
metrics), where ``key`` is a hash of the run (scenario, overrides, seed:
:func:`wheelsim.run.execution.job_key`). When a run finishes, its record
``runs/<key>/point.json`` (overrides, metrics, failed criteria) is written at once, so an
interrupted sweep keeps every finished point and a rerun into the same output skips the points
that have a record. A point whose run raised is reported with its error (traceback in
``error.txt`` under ``runs/<key>/``), has no record (a rerun tries it again) and the others go on.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from wheelsim.report.metrics import METRIC_NAMES
from wheelsim.run.execution import Job, RayRunner, job_key
from wheelsim.run.held_signals import HeldSignals
from wheelsim.run.output import counted, json_text
from wheelsim.run.sampling import format_value, overrides_text
from wheelsim.run.scenario import OverrideCheck, Scenario, with_overrides

RECORD = 'point.json'


@dataclass(frozen=True)
class SweepPoint:
    """Point ``index`` of a sweep: its overrides and the scenario they make."""

    index: int
    overrides: Mapping[str, Any]
    job: Job


@dataclass
class SweepOutcome:
    """One row per point in point order (finished, failed or not run), and what happened."""

    rows: list[dict[str, Any]]
    skipped: int = 0
    """Points already done in the output (resumed)."""
    errors: dict[int, str] = field(default_factory=dict)
    error_folders: dict[int, str] = field(default_factory=dict)
    """The folder of a failed point's ``error.txt``, relative to the sweep's folder."""
    interrupted: bool = False


def plan_sweep(scenario: Scenario, points: Sequence[Mapping[str, Any]],
               check: OverrideCheck,
               record_bags: bool = False) -> list[SweepPoint]:
    """The scenario at each point (overrides checked, see :func:`with_overrides`); each run
    records its bag if ``record_bags``."""
    planned = []
    for index, overrides in enumerate(points):
        swept = with_overrides(scenario, overrides, check)
        planned.append(SweepPoint(index, dict(overrides),
                                  Job(job_key(swept), swept, record_bags)))
    return planned


def load_record(root: Path, job: Job) -> dict[str, Any] | None:
    """The record of the finished run of ``job`` in ``root``, or None (also when the job writes
    a bag and that run's folder has none: a run done before without ``--bags``). Its nulls are
    None: a metric the run did not compute, or a non-finite number :func:`write_record` wrote
    as null (only among the overrides, which no reader takes from the record: a point's come
    from its plan)."""
    path = root / 'runs' / job.key / RECORD
    try:
        record = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError):  # none, or damaged: the run is made again
        return None
    if not _whole(record) or (job.writes_bag
                              and not (root / record['run_dir'] / 'bag').is_dir()):
        return None
    return record


def _whole(record: Any) -> bool:
    """Whether ``record`` has what :func:`write_record` writes (another program may have
    damaged the file): the overrides, metrics as numbers or null, the failed criteria, the run
    folder, its wall time and worker."""
    def number(value: Any) -> bool:
        return isinstance(value, (int, float)) and not isinstance(value, bool)

    return (isinstance(record, dict) and isinstance(record.get('overrides'), dict)
            and isinstance(record.get('metrics'), dict)
            and all(value is None or number(value) for value in record['metrics'].values())
            and isinstance(record.get('failed'), list)
            and all(isinstance(name, str) for name in record['failed'])
            and isinstance(record.get('run_dir'), str) and number(record.get('wall_s'))
            and isinstance(record.get('worker'), str))


def write_record(root: Path, key: str, overrides: Mapping[str, Any],
                 result: Mapping[str, Any]) -> dict[str, Any]:
    """Record the finished run ``key`` (a :func:`wheelsim.run.execution.run_job` result) in
    strict JSON (:func:`wheelsim.run.output.json_text`: a non-finite number is null); return
    the record, its numbers as given."""
    record = {'overrides': dict(overrides), 'metrics': result['metrics'],
              'failed': result['failed'], 'run_dir': f'runs/{result["run_dir"]}',
              'wall_s': round(result['wall_s'], 3), 'worker': result['worker']}
    path = root / 'runs' / key / RECORD
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix('.part')
    partial.write_text(json_text(record))
    os.replace(partial, path)  # a record is whole or absent
    return record


ERROR_COLUMN = 'error'
"""The column of a row's error message (:func:`row`; empty: none), shown as it is."""


def row(point: SweepPoint, record: Mapping[str, Any] | None, error: str = '',
        error_folder: str = '') -> dict[str, Any]:
    """The table row of a point: index, overrides, metrics, passed, error, run folder (of a
    failed point: ``error_folder``, where its ``error.txt`` is)."""
    if record is None:
        return {'point': point.index, **point.overrides, 'passed': False,
                ERROR_COLUMN: error or 'not run', 'run': error_folder}
    metrics = record['metrics']
    ordered = sorted(metrics, key=lambda m: METRIC_NAMES.index(m) if m in METRIC_NAMES
                     else len(METRIC_NAMES))
    return {'point': point.index, **point.overrides, **{m: metrics[m] for m in ordered},
            'passed': not record['failed'], ERROR_COLUMN: '', 'run': record['run_dir']}


def points_and_runs(points: Sequence[SweepPoint]) -> str:
    """``3 points``, or ``5 points (3 runs: equal points share one)`` where points are the same
    run (equal keys: samples that round to the same values)."""
    runs = len({point.job.key for point in points})
    shared = f' ({counted(runs, "run")}: equal points share one)' if runs < len(points) else ''
    return counted(len(points), 'point') + shared


def run_sweep(points: Sequence[SweepPoint], root: Path, runner: RayRunner,
              show_progress: bool = True, held: HeldSignals | None = None) -> SweepOutcome:
    """Run the points without a record in ``root`` on ``runner``, streaming a progress bar
    (points done, failures, ETA); return every point's row. Points that are the same run (equal
    keys: samples that round to the same values) share one run and its outcome. Ctrl-C stops
    the sweep and keeps the finished points (``interrupted``). ``held``: the caller's hold,
    released while the runs go on, so that signals are held from their end."""
    from tqdm import tqdm

    root.mkdir(parents=True, exist_ok=True)
    records = {p.index: load_record(root, p.job) for p in points}
    todo = [p for p in points if records[p.index] is None]
    outcome = SweepOutcome([], skipped=len(points) - len(todo))
    by_key: dict[str, list[SweepPoint]] = {}
    for point in todo:
        by_key.setdefault(point.job.key, []).append(point)
    bar = tqdm(total=len(points), initial=outcome.skipped, unit='point',
               disable=not show_progress, dynamic_ncols=True)
    jobs = [same[0].job for same in by_key.values()]
    try:
        with held.released() if held else contextlib.nullcontext():
            for job, result in runner.run(jobs, root / 'runs'):
                for point in by_key[job.key]:
                    if 'error' in result:
                        outcome.errors[point.index] = result['error']
                        where = ''
                        if 'error_file' in result:
                            error_file = PurePosixPath('runs', result['error_file'])
                            outcome.error_folders[point.index] = str(error_file.parent)
                            where = f' ({root / error_file})'
                        tqdm.write(f'point {point.index} ({overrides_text(point.overrides)}) '
                                   f'failed: {result["error"]}{where}')
                    elif result['interrupted']:
                        outcome.errors[point.index] = 'interrupted'
                    else:
                        records[point.index] = write_record(root, job.key, point.overrides,
                                                            result)
                    bar.update(1)
                bar.set_postfix_str(f'{len(outcome.errors)} failed', refresh=False)
    except KeyboardInterrupt:
        outcome.interrupted = True
    finally:
        bar.close()
    outcome.rows = [row(p, records[p.index], outcome.errors.get(p.index, ''),
                        outcome.error_folders.get(p.index, '')) for p in points]
    return outcome


def _cell(value: Any, column: str, measured: bool) -> str:
    if measured and value is None:
        return '-'
    if column == ERROR_COLUMN:
        return str(value)
    return f'{value:.4g}' if isinstance(value, float) else format_value(value)


def format_table(rows: list[dict[str, Any]], columns: Sequence[str],
                 measures: Collection[str] = ()) -> str:
    """A fixed-width text table of ``columns`` (missing cells blank): a float to 4 significant
    digits, a None of a column in ``measures`` (a metric the run did not measure) as ``-`` as
    the run's summary shows it, the error message (:data:`ERROR_COLUMN`) as it is, any other
    value as ``--param`` writes it (:func:`format_value`)."""
    cells = [[str(c) for c in columns]]
    for values in rows:
        cells.append([_cell(values[c], c, c in measures) if c in values else ''
                      for c in columns])
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return '\n'.join('  '.join(cell.rjust(w) for cell, w in zip(line, widths, strict=True))
                     for line in cells)
