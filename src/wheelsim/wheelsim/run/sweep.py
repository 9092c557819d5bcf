"""``wheelsim sweep``: one scenario over a grid of parameters, in parallel worker processes.

Each grid point is a full lock-step run (own process, own rclpy context, own ROS domain) written
to ``<output>/<scenario>/sweep/<index>/``. The table of metrics per point is printed, saved as
``sweep.csv``, and plotted (``sweep.png``: each metric against the first swept parameter, one
line per value of the others).
"""

from __future__ import annotations

import concurrent.futures
import csv
import itertools
import multiprocessing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wheelsim.run.scenario import Scenario, ScenarioError


@dataclass(frozen=True)
class SweepPoint:
    index: int
    overrides: Mapping[str, Any]


def parse_grid(assignments: Sequence[str]) -> dict[str, list[Any]]:
    """``['controller.k_x=1,2', ...]`` -> ``{'controller.k_x': [1, 2]}`` (values parsed as YAML)."""
    grid: dict[str, list[Any]] = {}
    for text in assignments:
        key, sep, values = text.partition('=')
        if not sep or not key or not values:
            raise ScenarioError(f'--param {text!r}: expected <node>.<parameter>=<v1>,<v2>,...')
        try:
            grid[key.strip()] = [yaml.safe_load(v) for v in values.split(',')]
        except yaml.YAMLError as err:
            raise ScenarioError(f'--param {text!r}: cannot parse a value: {err}') from None
    if not grid:
        raise ScenarioError('a sweep needs at least one --param <node>.<parameter>=<values>')
    return grid


def grid_points(grid: Mapping[str, list[Any]]) -> list[SweepPoint]:
    """Every combination of the grid values, in a fixed order."""
    keys = list(grid)
    return [SweepPoint(i, dict(zip(keys, combo, strict=True)))
            for i, combo in enumerate(itertools.product(*(grid[k] for k in keys)))]


def _run_point(scenario: Scenario, point: SweepPoint, root: Path) -> dict[str, Any]:
    from wheelsim.run.runner import run_scenario

    outcome = run_scenario(scenario, root / f'{point.index:03d}', show_progress=False,
                           make_plots=False)
    return {'metrics': outcome.metrics, 'failed': list(outcome.failed_criteria)}


def run_sweep(scenarios: Sequence[tuple[SweepPoint, Scenario]], output_dir: Path,
              workers: int) -> list[dict[str, Any]]:
    """Run every point (``workers`` processes); return one row per point, in point order."""
    output_dir.mkdir(parents=True, exist_ok=True)
    context = multiprocessing.get_context('spawn')
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = [pool.submit(_run_point, scenario, point, output_dir)
                   for point, scenario in scenarios]
        results = [future.result() for future in futures]
    rows = []
    for (point, _), result in zip(scenarios, results, strict=True):
        rows.append({'point': point.index, **point.overrides, **result['metrics'],
                     'passed': not result['failed']})
    return rows


def write_table(rows: list[dict[str, Any]], path: Path) -> None:
    """Write the rows as CSV (columns from the first row)."""
    with path.open('w', newline='') as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def format_table(rows: list[dict[str, Any]], columns: Sequence[str]) -> str:
    """A fixed-width text table of ``columns``."""
    cells = [[str(c) for c in columns]]
    for row in rows:
        cells.append([f'{row[c]:.4g}' if isinstance(row[c], float) else str(row[c])
                      for c in columns])
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    return '\n'.join('  '.join(cell.rjust(w) for cell, w in zip(line, widths, strict=True))
                     for line in cells)


def plot_sweep(rows: list[dict[str, Any]], swept: Sequence[str], metrics: Sequence[str],
               path: Path) -> None:
    """Each metric against the first swept parameter; one line per combination of the others."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(metrics), 1, figsize=(7, 2.6 * len(metrics)), squeeze=False)
    first, others = swept[0], list(swept[1:])
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(tuple(row[k] for k in others), []).append(row)
    for ax, metric in zip(axes[:, 0], metrics, strict=True):
        for key, group_rows in groups.items():
            label = ', '.join(f'{k}={v}' for k, v in zip(others, key, strict=True)) or None
            ax.plot([r[first] for r in group_rows], [r[metric] for r in group_rows], 'o-',
                    label=label)
        ax.set_xlabel(first)
        ax.set_ylabel(metric)
        ax.grid(True)
        if others:
            ax.legend(fontsize='small')
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
