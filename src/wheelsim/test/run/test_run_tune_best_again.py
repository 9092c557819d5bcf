"""``wheelsim tune``'s last step: the best trial run again with its bag, in its folder's place."""

from __future__ import annotations

import dataclasses
import json

import pytest

from wheelsim.cli import _load
from wheelsim.run.tune import run_again_with_bag


@pytest.mark.parametrize('there', [True, False])
def test_the_best_trial_runs_again_in_its_folder_s_place_there_or_not(tmp_path, there):
    """Found in review: a best trial whose folder was not in this command's output (run by
    another command sharing the study, or removed) ended the command with exit 3 after its
    whole run, and left the run in ``.again``."""
    scenario = dataclasses.replace(_load(None)[0], name='short', duration_s=2.0)
    run_dir = tmp_path / 'runs' / 'key' / 'short'
    if there:
        run_dir.mkdir(parents=True)
        (run_dir / 'metrics.json').write_text('{}')  # the trial's, without its bag
    assert not run_again_with_bag(scenario, run_dir, make_plots=False)
    assert 'cross_track_rms_m' in json.loads((run_dir / 'metrics.json').read_text())
    assert list((run_dir / 'bag').glob('*.mcap'))
    assert [path.name for path in run_dir.parent.iterdir()] == ['short']
