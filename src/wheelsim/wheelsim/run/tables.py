"""Results people can open: the table of a sweep or tune as CSV and Parquet, a plot of each
metric against each parameter with the worst runs marked, and the worst runs linked.

Rows are flat dicts (``point``, the parameters, the metrics, ``passed``, ``error``, ``run``: the
run folder relative to the table). "Worst" is the largest value of a metric, or the smallest
for the metrics in :data:`wheelsim.report.metrics.LARGER_IS_BETTER`; a finished run without a
value of a metric in :data:`NOT_REACHED` (it did not reach its goal) is worse than any value.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from wheelsim.report.metrics import LARGER_IS_BETTER, MAIN_METRICS, METRIC_NAMES
from wheelsim.run.sampling import format_value

WORST_SHOWN = 3
NOT_REACHED = ('time_to_goal_s',)
"""The metrics a finished run has no value of when it did not achieve what they measure."""
#: The columns a table's rows end with, in this order (what became of the run).
RUN_COLUMNS = ('passed', 'error', 'run')


def metric_columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The numeric metrics present in the rows, in :data:`METRIC_NAMES` order (one of
    :data:`NOT_REACHED` also when a run did not reach what it measures)."""
    present = {k for r in rows for k, v in r.items()
               if isinstance(v, (int, float)) and not isinstance(v, bool)}
    return [m for m in METRIC_NAMES
            if m in present or any(not_reached(r, m) for r in rows)]


def main_metrics(metrics: Sequence[str]) -> list[str]:
    """Those of ``metrics`` that are main ones (:data:`MAIN_METRICS`), in their order."""
    return [m for m in metrics if m in MAIN_METRICS]


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """Every key of the rows: the others as first seen (the point, its parameters, a trial's
    value and state), then the metrics in :data:`METRIC_NAMES` order, then
    :data:`RUN_COLUMNS`, whatever the first row holds (a point that failed has no metrics)."""
    seen = dict.fromkeys(key for values in rows for key in values)
    metrics = [name for name in METRIC_NAMES if name in seen]
    last = [name for name in RUN_COLUMNS if name in seen]
    return [key for key in seen if key not in metrics and key not in last] + metrics + last


def _cell(value: Any) -> Any:
    """A CSV cell: an array as ``--param`` writes it (``[2.0,0.0,.nan]``), the rest as is."""
    return format_value(value) if isinstance(value, list) else value


def write_tables(rows: Sequence[Mapping[str, Any]], stem: Path) -> tuple[Path, Path]:
    """``stem.csv`` and ``stem.parquet`` (missing cells empty / null; an array value is a list
    in Parquet, ``--param`` text in CSV); returns both paths."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    columns = _columns(rows)
    csv_path, parquet_path = stem.with_suffix('.csv'), stem.with_suffix('.parquet')
    with csv_path.open('w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=columns)
        writer.writeheader()
        writer.writerows({c: _cell(v) for c, v in r.items()} for r in rows)
    table = pa.Table.from_pylist([{c: r.get(c) for c in columns} for r in rows])
    pq.write_table(table, parquet_path)
    return csv_path, parquet_path


def remove_tables(stem: Path) -> None:
    """Remove ``stem.csv`` and ``stem.parquet`` (:func:`write_tables`) if they exist: what an
    earlier command wrote that this one does not write again."""
    for suffix in ('.csv', '.parquet'):
        stem.with_suffix(suffix).unlink(missing_ok=True)


def not_reached(row: Mapping[str, Any], metric: str) -> bool:
    """Whether ``row`` is a finished run that did not achieve what ``metric`` measures (one of
    :data:`NOT_REACHED`, null in its metrics)."""
    return (metric in NOT_REACHED and metric in row and row[metric] is None
            and not row.get('error'))


def worst_rows(rows: Sequence[Mapping[str, Any]], metric: str,
               count: int = WORST_SHOWN) -> list[Mapping[str, Any]]:
    """The ``count`` rows with the worst values of ``metric``: the runs that did not reach what
    it measures first (:func:`not_reached`), then the worst values; other rows without a value
    left out."""
    valued = [r for r in rows if isinstance(r.get(metric), (int, float))]
    ranked = sorted(valued, key=lambda r: r[metric], reverse=metric not in LARGER_IS_BETTER)
    return [*(r for r in rows if not_reached(r, metric)), *ranked][:count]


def worst_text(value: float | int | None) -> str:
    """A worst run's value as the reports show it: ``not reached`` for none."""
    return 'not reached' if value is None else f'{value:.4g}'


def write_worst_runs(rows: Sequence[Mapping[str, Any]], parameters: Sequence[str],
                     metrics: Sequence[str], path: Path) -> None:
    """A Markdown list of the worst runs per metric, linked to their run folders."""
    lines = ['# Worst runs per metric', '']
    for metric in metrics:
        lines.append(f'## {metric}')
        for r in worst_rows(rows, metric):
            where = ', '.join(f'{p}={_cell(r[p])}' for p in parameters)
            lines.append(f'- {worst_text(r[metric])} at point {r["point"]} ({where}): '
                         f'[{r["run"]}]({r["run"]})')
        lines.append('')
    path.write_text('\n'.join(lines))


LABEL_CHARACTERS = 40  # a panel's width of axis label at matplotlib's default font size


def _wrapped(name: str) -> str:
    """``name`` broken after dots into lines of at most :data:`LABEL_CHARACTERS` (a longer
    part stays whole): a parameter's full name fits under its panel."""
    lines = ['']
    for part in name.split('.'):
        if lines[-1] and len(lines[-1]) + 1 + len(part) > LABEL_CHARACTERS:
            lines[-1] += '.'
            lines.append(part)
        else:
            lines[-1] += ('.' if lines[-1] else '') + part
    return '\n'.join(lines)


def remove_plots(folder: Path) -> None:
    """Remove an earlier sweep's plots from ``folder`` (``<metric>.png`` of any metric in
    :data:`METRIC_NAMES`; anything else stays), and the folder too if that leaves it empty
    (a link to a folder stays: the plots are written through it)."""
    if folder.is_dir():
        for metric in METRIC_NAMES:
            (folder / f'{metric}.png').unlink(missing_ok=True)
        if not folder.is_symlink() and not any(folder.iterdir()):
            folder.rmdir()


def plot_metrics(rows: Sequence[Mapping[str, Any]], parameters: Sequence[str],
                 metrics: Sequence[str], folder: Path) -> list[Path]:
    """``folder/<metric>.png`` for each metric: one panel per parameter (numeric ones), every
    run a dot, the worst runs circled in red and labelled with their point number. Returns the
    files written; ``folder`` is created only when a file is written (none without a numeric
    parameter or without a metric that has a value). An earlier sweep's plots in ``folder`` are
    removed first (:func:`remove_plots`): what is there is this sweep's.

    One figure serves every metric (its data, labels and layout renewed for each): building
    the panels and their ticks anew for each of up to 29 metrics took most of a sweep's
    report.
    """
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    remove_plots(folder)
    numeric = [p for p in parameters
               if all(isinstance(r.get(p), (int, float)) for r in rows if p in r)]
    if not numeric:
        return []
    fig = Figure(figsize=(4.2 * len(numeric), 3.4))
    axes = fig.subplots(1, len(numeric), squeeze=False)[0]
    for ax, parameter in zip(axes, numeric, strict=True):
        ax.set_xlabel(_wrapped(parameter))
        ax.grid(True)
        if all(isinstance(r.get(parameter), int) for r in rows if parameter in r):
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # a seed: no tick at 1.5
    title = fig.suptitle('', fontsize=9)
    start = {k: getattr(fig.subplotpars, k) for k in ('left', 'right', 'bottom', 'top', 'wspace')}
    written = []
    for metric in metrics:
        valued = [r for r in rows if isinstance(r.get(metric), (int, float))]
        if not valued:
            continue
        worst = worst_rows(valued, metric)
        for ax, parameter in zip(axes, numeric, strict=True):
            for artist in [*ax.lines, *ax.texts]:  # the previous metric's
                artist.remove()
            ax.plot([r[parameter] for r in valued], [r[metric] for r in valued], 'o',
                    color='tab:blue', alpha=0.6, markersize=4)
            for r in worst:
                ax.plot(r[parameter], r[metric], 'o', markersize=9, markerfacecolor='none',
                        markeredgecolor='tab:red')
                ax.annotate(str(r['point']), (r[parameter], r[metric]), fontsize=7,
                            color='tab:red', xytext=(4, 2), textcoords='offset points')
            ax.relim()
            ax.autoscale_view()
            ax.set_ylabel(metric)
        # two short lines: the whole title fits above a single panel
        title.set_text(f'{metric}\nworst runs in red: point numbers (worst_runs.md)')
        fig.subplots_adjust(**start)  # the layout found from the same start for each metric
        fig.tight_layout()
        path = folder / f'{metric}.png'
        if not written:
            folder.mkdir(parents=True, exist_ok=True)
        fig.savefig(path, dpi=100)
        written.append(path)
    return written


def plots_summary(written: Sequence[Path], metrics: Sequence[str], folder: Path) -> str:
    """What a summary says of the plots :func:`plot_metrics` wrote: their ``folder``, or why
    there are none (``metrics``: the numeric metrics of the rows, none when no run finished)."""
    if written:
        return str(folder)
    return 'none (no finished run)' if not metrics else 'none (no numeric parameter)'
