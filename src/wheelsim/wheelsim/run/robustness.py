"""Seed robustness: how a metric spreads over noise seeds, and the seed of the worst run.

For a sweep with ``seed`` among its axes, the runs are grouped by the other parameters; per
group and metric: the number of runs, the 50th, 90th and 95th percentiles (linear
interpolation, numpy's default, to the significant digits of ``metrics.json``), the worst value
(:func:`wheelsim.run.tables.worst_rows`), the seed that produced it and the ``wheelsim run``
command that reproduces that run. ``runs`` and the percentiles count the runs with a value; a
run that did not reach its goal is the worst of ``time_to_goal_s`` (``worst`` null, its seed
and command given), and ``not_reached`` counts such runs.
"""

from __future__ import annotations

import math
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from wheelsim.report.metrics import round_significant
from wheelsim.run.sampling import format_value, value_key
from wheelsim.run.scenario import SEED_KEY
from wheelsim.run.tables import not_reached, worst_rows

PERCENTILES = (50, 90, 95)


def reproduce_command(scenario_path: str | None, overrides: Mapping[str, Any]) -> str:
    """``wheelsim run [SCENARIO] --seed S --param NODE.PARAM=V ...`` for one run."""
    words = ['wheelsim', 'run'] + ([scenario_path] if scenario_path else [])
    for key, value in overrides.items():
        words += (['--seed', str(value)] if key == SEED_KEY
                  else ['--param', f'{key}={format_value(value)}'])
    return shlex.join(words)


def seed_summary(rows: Sequence[Mapping[str, Any]], parameters: Sequence[str],
                 metrics: Sequence[str], scenario_path: str | None) -> list[dict[str, Any]]:
    """One summary row per (other parameters, metric); empty without a seed axis. Points
    that are one run (the same ``run`` folder: random or Latin hypercube samples of an integer
    range that drew the same values) count once."""
    if SEED_KEY not in parameters:
        return []
    others = [p for p in parameters if p != SEED_KEY]
    groups: dict[tuple, list[Mapping[str, Any]]] = {}
    counted: set[str] = set()  # the run folders of the rows grouped so far
    for values in rows:
        if values.get('run'):
            if values['run'] in counted:
                continue
            counted.add(values['run'])
        # keyed by value_key: an array value is a list, which cannot be a key itself
        key = tuple(value_key(values.get(p)) for p in others)
        groups.setdefault(key, []).append(values)
    summary = []
    for group in groups.values():
        for metric in metrics:
            worst = worst_rows(group, metric, count=1)
            if not worst:
                continue
            values = np.array([r[metric] for r in group if isinstance(r.get(metric),
                                                                         (int, float))])
            percentiles = (np.percentile(values, PERCENTILES) if len(values)
                           else [math.nan] * len(PERCENTILES))
            overrides = {p: worst[0][p] for p in parameters}
            summary.append({**{p: group[0].get(p) for p in others}, 'metric': metric,
                            'runs': len(values),
                            **{f'p{q}': round_significant(float(v))
                               for q, v in zip(PERCENTILES, percentiles, strict=True)},
                            'worst': worst[0][metric], 'worst_seed': worst[0][SEED_KEY],
                            'not_reached': sum(not_reached(r, metric) for r in group),
                            'reproduce': reproduce_command(scenario_path, overrides)})
    return summary
