"""`wheelsim sweep`'s bookkeeping without ROS: the runs are replaced by a runner that returns
metrics at once (the whole command, with real runs on Ray, is tested in
test/test_wheelsim_sweep.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from wheelsim.run.execution import Job
from wheelsim.run.sampling import parse_axis, plan_points
from wheelsim.run.scenario import Scenario
from wheelsim.run.sweep import plan_sweep, run_sweep


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


def test_samples_that_round_to_the_same_point_share_one_run(tmp_path):
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                        node_parameters={'controller': {}})
    # a range narrower than the 6 significant digits samples keep: every sample is 0.1
    points = plan_points([parse_axis('controller.k=0.1:0.1000000001')], 'random', 3)
    assert points == [{'controller.k': 0.1}] * 3
    runner = CountingRunner()
    outcome = run_sweep(plan_sweep(scenario, points, lambda *a: None), tmp_path, runner,
                        show_progress=False)
    assert len(runner.keys) == 1  # one run, not three racing into one folder
    assert [(r['point'], r['passed'], r['error'], r['cross_track_rms_m']) for r in outcome.rows] \
        == [(0, True, '', 0.1), (1, True, '', 0.1), (2, True, '', 0.1)]
