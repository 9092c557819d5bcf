"""`wheelsim tune`'s search without ROS: pass criteria as constraints and the best feasible trial.

The runs are replaced by a function of the trial's parameters (a runner that computes metrics
instead of simulating), so the best trial is known exactly. The whole command, with real runs on
Ray, is tested in test/test_wheelsim_tune.py.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Collection, Iterable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from wheelsim.core.params import ParamSpec
from wheelsim.run.execution import Job
from wheelsim.run.sampling import Axis, parse_axis
from wheelsim.run.scenario import Scenario, ScenarioError
from wheelsim.run.tune import (
    _sampler,
    check_axes,
    check_objective,
    check_storage,
    choice_runs,
    open_study,
    tune,
)

GAIN = 'controller.k'
REAL_K = (Axis(GAIN, low=0.0, high=2.0),)
#: The controller's ``k`` as an integer parameter, and its node check (as the node's own).
INTEGER_K = {'controller': [ParamSpec('k', 1, 'an integer gain', min_value=0, max_value=10)]}
SCENARIO = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None, pass_criteria={},
                    node_parameters={'controller': {}})


def integer_check(node: str, parameters, given) -> None:
    INTEGER_K[node][0].check(parameters['k'])  # ParameterError for 1.5: must be an integer


class MetricsRunner:
    """Takes jobs as RayRunner.run does (one only when one of ``workers`` is free; None: none
    until the next result) and gives the oldest one's result: cross-track error (k - 1)^2
    (missing from the results counted in ``without_objective``, from 0), goal error 1.5 - k,
    clearance k - 0.5."""

    def __init__(self, workers: int = 1, without_objective: Collection[int] = ()) -> None:
        self.workers = workers
        self.without_objective = without_objective

    def run(self, jobs: Iterable[Job | None], root: Path
            ) -> Iterator[tuple[Job, dict[str, Any]]]:
        waiting, in_flight, results = iter(jobs), [], itertools.count()
        while True:
            while len(in_flight) < self.workers:
                job = next(waiting, None)
                if job is None:
                    break
                in_flight.append(job)
            if not in_flight:
                return
            job = in_flight.pop(0)
            k = job.scenario.node_parameters['controller']['k']
            metrics = {'goal_position_error_m': 1.5 - k, 'min_clearance_m': k - 0.5}
            if next(results) not in self.without_objective:
                metrics['cross_track_rms_m'] = (k - 1.0) ** 2
            yield job, {'metrics': metrics, 'failed': [], 'interrupted': False,
                        'run_dir': f'{job.key}/t', 'wall_s': 0.0, 'worker': 'here:1'}


def search(tmp_path: Path, goal_error_bound_m: float | None, trials: int = 30,
           check=lambda node, parameters, given: None, axes=REAL_K,
           runner: MetricsRunner | None = None, **criteria: float):
    if goal_error_bound_m is not None:
        criteria['goal_position_error_m'] = goal_error_bound_m
    scenario = Scenario(name='t', duration_s=1.0, seed=1, record_topics=None,
                        pass_criteria=criteria,
                        node_parameters={'controller': {}})
    study = open_study(tmp_path, None, 'test', 'cross_track_rms_m', axes, 'tpe', 0, scenario)
    return tune(scenario, axes, 'cross_track_rms_m', trials, study, tmp_path,
                runner or MetricsRunner(), check=check, show_progress=False)


@pytest.mark.parametrize('sampler', ['tpe', 'random'])
def test_a_resumed_study_proposes_new_trials_not_its_first_again(tmp_path, sampler):
    """Found in review: resumed, TPE and random proposed their first trials again (their seed
    as at the start); a study run in one go with the same seed still repeats exactly."""
    def first_ks(folder: Path, trials: int) -> list[float]:
        study = open_study(folder, None, 'test', 'cross_track_rms_m', REAL_K, sampler, 7,
                           SCENARIO)
        proposed = []
        for _ in range(trials):
            trial = study.ask()
            proposed.append(trial.suggest_float(GAIN, 0.0, 2.0))
            study.tell(trial, (proposed[-1] - 1.0) ** 2)
        return proposed

    first = first_ks(tmp_path / 'a', 3)
    resumed = first_ks(tmp_path / 'a', 3)
    assert not set(resumed) & set(first), (first, resumed)
    assert first_ks(tmp_path / 'b', 3) == first  # reproducible from the seed


def test_a_resumed_study_goes_on_with_its_sampler_and_refuses_another(tmp_path):
    """Found in review: a study made with ``--sampler qmc`` and resumed without ``--sampler``
    went on with TPE (the option's default), and one resumed with another sampler or seed took
    it without a word."""
    def resumed(sampler: str | None, seed: int | None):
        study = open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, sampler, seed,
                           SCENARIO)
        trial = study.ask()
        study.tell(trial, (trial.suggest_float(GAIN, 0.0, 2.0) - 1.0) ** 2)
        return study

    assert type(resumed('qmc', 5).sampler).__name__ == 'QMCSampler'
    again = resumed(None, None)  # the same command without the options: the study's
    assert type(again.sampler).__name__ == 'QMCSampler'
    assert (again.user_attrs['sampler'], again.user_attrs['sampler_seed']) == ('qmc', 5)
    assert type(resumed('qmc', 5).sampler).__name__ == 'QMCSampler'  # given as made: resumed
    with pytest.raises(ScenarioError, match=r'made with --sampler qmc, not tpe: leave '
                                            r'--sampler out to resume it, or give another'):
        resumed('tpe', None)
    with pytest.raises(ScenarioError, match='made with --sampler-seed 5, not 0: leave '
                                            '--sampler-seed out'):
        resumed(None, 0)
    new = open_study(tmp_path, None, 'other', 'cross_track_rms_m', REAL_K, None, None, SCENARIO)
    assert type(new.sampler).__name__ == 'TPESampler'  # the defaults, remembered
    assert (new.user_attrs['sampler'], new.user_attrs['sampler_seed']) == ('tpe', 0)


def test_a_trial_the_nodes_would_refuse_fails_and_the_study_goes_on(tmp_path, capsys):
    """Found in review: a point inside the ranges that breaks a rule across parameters (here
    k above 1.6) raised out of the study after trials had run; it is a failed trial, printed
    with its values as --param writes them (found in review: a Python dict)."""
    def check(node: str, parameters, given) -> None:
        if parameters['k'] > 1.6:
            raise ScenarioError(f'--param {node}.k: must be at most 1.6')

    outcome = search(tmp_path, goal_error_bound_m=1.5, trials=20, check=check)
    refused = [r for r in outcome.rows if r['error'].endswith('must be at most 1.6')]
    assert refused and all(r[GAIN] > 1.6 and r['value'] is None for r in refused)
    first = min(r['point'] for r in refused)  # the study went on after it
    assert any(r['point'] > first and r['value'] is not None for r in outcome.rows)
    assert outcome.best[GAIN] <= 1.6
    printed = capsys.readouterr().out
    assert re.search(rf'^trial {first} \({re.escape(GAIN)}=1\.[6-9]\d*\) failed: --param '
                     r'controller\.k: must be at most 1\.6$', printed, re.MULTILINE), printed


@pytest.mark.parametrize('workers', [1, 2])
def test_trials_whose_run_lacks_the_objective_fail_and_others_make_up_the_count(tmp_path,
                                                                                 workers):
    """Found in review: a trial whose run did not compute the objective (time_to_goal_s of a
    run that never reached its goal) failed but was counted as finished too; and with more
    than one worker, a trial that failed while the last ones ran was not replaced. The
    command ended with fewer finished trials than --trials, saying nothing."""
    runner = MetricsRunner(workers, without_objective={3})  # with 2: one of the last two
    outcome = search(tmp_path, goal_error_bound_m=None, trials=4, runner=runner)
    assert [r['state'] for r in outcome.rows] == ['COMPLETE', 'COMPLETE', 'COMPLETE', 'FAIL',
                                                  'COMPLETE'], outcome.rows
    assert {r['error'] for r in outcome.rows if r['state'] == 'FAIL'} == {
        'cross_track_rms_m not computed for this run'}


def test_the_best_trial_is_the_best_one_that_meets_the_pass_criteria(tmp_path):
    outcome = search(tmp_path, goal_error_bound_m=0.1)  # feasible: k >= 1.4
    assert outcome.best_feasible and outcome.best['feasible']
    assert 1.4 <= outcome.best[GAIN] < 1.6  # the unconstrained best, k = 1, is infeasible
    feasible = [r for r in outcome.rows if r['feasible']]
    assert outcome.best['value'] == min(r['value'] for r in feasible)
    assert min(r['value'] for r in outcome.rows) < outcome.best['value']


def test_a_larger_is_better_metric_s_criterion_is_a_lower_bound(tmp_path):
    """Found in review: min_clearance_m's bound was taken as an upper one (k <= 1.2 here)."""
    outcome = search(tmp_path, None, min_clearance_m=0.7)  # feasible: k >= 1.2
    assert outcome.best_feasible and 1.2 <= outcome.best[GAIN] < 1.4


def test_with_no_feasible_trial_the_best_of_all_is_given_and_flagged(tmp_path):
    outcome = search(tmp_path, goal_error_bound_m=-1.0)  # no k in [0, 2] meets it
    assert not outcome.best_feasible and not outcome.best['feasible']
    assert outcome.best['value'] == min(r['value'] for r in outcome.rows)


@pytest.mark.parametrize('attributes', [
    {'system_attrs': {'constraints': [0.4]}},  # TPESampler(constraints_func=...) kept these
    {'user_attrs': {'constraints': [0.4]}},  # what the random and qmc samplers' trials kept
])
def test_a_study_made_before_trial_constraints_resumes_with_its_constraints(tmp_path, attributes):
    import optuna

    old = optuna.create_study(storage=f'sqlite:///{tmp_path / "study.db"}', study_name='test')
    old.set_user_attr('objective', 'cross_track_rms_m')
    old.set_user_attr('parameters', [repr(Axis(GAIN, low=0.0, high=2.0))])
    old.add_trial(optuna.trial.create_trial(
        params={GAIN: 1.0}, distributions={GAIN: optuna.distributions.FloatDistribution(0, 2)},
        value=0.0, **attributes))  # the best value, but infeasible
    outcome = search(tmp_path, goal_error_bound_m=0.1, trials=20)
    assert outcome.rows[0][GAIN] == 1.0 and outcome.rows[0]['feasible'] is False
    assert outcome.best_feasible and outcome.best[GAIN] >= 1.4


def test_a_study_resumed_with_other_parameters_names_both_as_given(tmp_path):
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', [parse_axis(f'{GAIN}=0:2')], 'tpe', 0,
               SCENARIO)
    other = [parse_axis(f'{GAIN}=0.5:2:log'), parse_axis('seed=1..3')]
    with pytest.raises(ScenarioError, match=rf'made with parameters {GAIN}=0:2, not '
                                            rf'{GAIN}=0.5:2:log seed=1..3: give another'):
        open_study(tmp_path, None, 'test', 'cross_track_rms_m', other, 'tpe', 0, SCENARIO)
    # the same parameters, written otherwise, are the same search
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', [parse_axis(f'{GAIN}=0.0:2.0')],
               'tpe', 0, SCENARIO)


ROOM = Path(__file__).resolve().parents[4] / 'params' / 'maps' / 'room.yaml'


def _map_copy(folder: Path, changed: bool = False) -> Path:
    """The room's map YAML and image copied into ``folder`` (``changed``: a wall cell made free
    or a free cell a wall: another map)."""
    folder.mkdir()
    image = bytearray((ROOM.parent / 'room.pgm').read_bytes())
    if changed:  # a pixel of the last row: the PGM's header is at the start
        image[-1] = 0 if image[-1] else 254
    (folder / 'room.pgm').write_bytes(bytes(image))
    (folder / 'room.yaml').write_text(ROOM.read_text())
    return folder / 'room.yaml'


@pytest.mark.parametrize('changed, differ', [
    ({'duration_s': 2.0}, r'duration 1\.0, now 2\.0'),
    ({'seed': 2}, 'seed 1, now 2'),
    ({'pass_criteria': {'cross_track_rms_m': 0.1}},
     r'pass_criteria\.cross_track_rms_m absent, now 0\.1'),
    ({'node_parameters': {'controller': {'lead_time': 0.2}}},
     r'nodes\.controller\.lead_time absent, now 0\.2'),
    ({'map_yaml': 'other map'}, 'map [0-9a-f]{12}, now [0-9a-f]{12}')])
def test_a_study_resumed_with_another_scenario_is_refused(tmp_path, changed, differ):
    """Found in review: a study resumed after the scenario changed reported as best the
    parameters and metrics of trials run on the old scenario. The error names the fields that
    differ (found in review: it gave two hashes)."""
    base = replace(SCENARIO, map_yaml=_map_copy(tmp_path / 'map'))
    if 'map_yaml' in changed:
        changed = {'map_yaml': _map_copy(tmp_path / 'other', changed=True)}
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0, base)
    with pytest.raises(ScenarioError, match=r'^study test in sqlite:///\S+: made with another '
                                            rf'scenario \({differ}\): give another --study name '
                                            'or --output$'):
        open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0,
                   replace(base, **changed))
    # what does not change a trial's metrics: its name, file, recorded topics, where its map is
    # (found in review: a checkout moved elsewhere was refused), and what the trials set
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0,
               replace(base, name='other', source=Path('other.yaml'), record_topics=(),
                       map_yaml=_map_copy(tmp_path / 'moved'),
                       node_parameters={'controller': {'k': 1.5}}))
    seeded = [*REAL_K, parse_axis('seed=1..3')]
    open_study(tmp_path, None, 'seeded', 'cross_track_rms_m', seeded, 'tpe', 0, base)
    open_study(tmp_path, None, 'seeded', 'cross_track_rms_m', seeded, 'tpe', 0,
               replace(base, seed=7))


@pytest.mark.parametrize('text', [f'{GAIN}=0:6', f'{GAIN}=1:6:log'])
def test_a_range_of_an_integer_parameter_is_searched_as_integers(tmp_path, text):
    """Found in review: such a range was sampled as real numbers, which the node refuses
    (must be an integer), so every trial failed and a tune ended with no finished trial."""
    axes = check_axes([parse_axis(text)], INTEGER_K)
    assert axes[0].low in (0, 1) and isinstance(axes[0].low, int) and axes[0].high == 6
    outcome = search(tmp_path, None, trials=12, check=integer_check, axes=axes)
    assert not any(r['error'] for r in outcome.rows), [r['error'] for r in outcome.rows]
    assert all(type(r[GAIN]) is int and 0 <= r[GAIN] <= 6 for r in outcome.rows)
    assert outcome.best[GAIN] == 1  # (k - 1)^2
    # the same command resumes the study
    more = search(tmp_path, None, trials=15, check=integer_check,
                  axes=check_axes([parse_axis(text)], INTEGER_K))
    assert len(more.rows) == 15 and not any(r['error'] for r in more.rows)


def test_a_study_that_sampled_an_integer_parameter_as_real_numbers_is_not_resumed(tmp_path):
    """A study made before integer ranges (its trials' k real numbers) cannot take integer
    trials (Optuna refuses another distribution for k): named, not a traceback."""
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', [parse_axis(f'{GAIN}=0:6')], 'tpe', 0,
               SCENARIO)
    with pytest.raises(ScenarioError, match=re.escape(
            f"made with parameters Axis(name='{GAIN}', values=None, low=0.0, high=6.0, "
            f"log=False), not Axis(name='{GAIN}', values=None, low=0, high=6, log=False): "
            'give another --study name or --output')):
        open_study(tmp_path, None, 'test', 'cross_track_rms_m',
                   check_axes([parse_axis(f'{GAIN}=0:6')], INTEGER_K), 'tpe', 0, SCENARIO)


@pytest.mark.parametrize('url', ['notaurl', 'bogus://x', 'sqlite:/x.db?bogus=1',
                                 'sqlite:///x.db?timeout=abc'])
def test_a_storage_that_is_no_database_url_is_refused_naming_the_option(tmp_path, url):
    with pytest.raises(ScenarioError, match=f"^--storage '{re.escape(url)}': not a database URL"):
        check_storage(url)
    check_storage(f'sqlite:///{tmp_path / "study.db"}')
    assert not list(tmp_path.iterdir())  # checked, nothing created


def test_a_storage_that_cannot_be_opened_is_refused_naming_the_option(tmp_path):
    """A well-formed URL whose database cannot be opened (here: a missing folder) gave
    SQLAlchemy's OperationalError and a traceback, and left the study's output folder behind."""
    url = f'sqlite:///{tmp_path / "missing" / "study.db"}'
    with pytest.raises(ScenarioError, match=f"^--storage '{re.escape(url)}': cannot open the "
                                            'study there: '):
        open_study(tmp_path / 'out' / 'tune', url, 'test', 'cross_track_rms_m',
                   [Axis(GAIN, low=0.0, high=2.0)], 'tpe', 0, SCENARIO)
    assert not (tmp_path / 'out').exists()


def test_the_study_plots_name_the_objective_metric(tmp_path, monkeypatch):
    """Found in review: both plots said Optuna's "Objective Value"."""
    import matplotlib.figure

    from wheelsim.run.tune import write_study_plots

    labels = []
    save = matplotlib.figure.Figure.savefig

    def saving(figure, *args, **kwargs):
        labels.extend(text for axes in figure.axes for text in (axes.get_xlabel(),
                                                                axes.get_ylabel(),
                                                                axes.get_title()))
        return save(figure, *args, **kwargs)

    monkeypatch.setattr(matplotlib.figure.Figure, 'savefig', saving)
    outcome = search(tmp_path, goal_error_bound_m=None, trials=6)
    assert outcome.best is not None
    study = open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0, SCENARIO)
    written = write_study_plots(study, tmp_path, 'cross_track_rms_m')
    assert [p.name for p in written] == ['history.png', 'importance.png']
    assert 'cross_track_rms_m' in labels, labels  # the history's value axis
    assert not any('Objective Value' in text for text in labels), labels


def test_choice_runs_are_the_scenario_at_each_combination_of_choices(tmp_path):
    """What check_used looks at in a tune: a parameter some combination of choices uses (an ekf
    rate with mode=noisy,ekf) is taken. Only the axes of the deciding parameters (found in
    review: the seed and numbers, which switch no mode, made the combinations too many to
    check, and the ranges' low ends broke a rule together); a combination that breaks a rule
    is left out, the scenario alone if all do."""
    def refuse_k_3(node, parameters, given):
        if parameters.get('k') == 3:
            raise ScenarioError('k 3 is refused')

    deciding = (GAIN, 'controller.mode')
    axes = [Axis(GAIN, values=[1, 3]), Axis('controller.mode', values=['a', 'b']),
            Axis('seed', values=[1, 2]), Axis('controller.lead_time', low=0.1, high=0.5),
            *(Axis(f'controller.p{i}', values=list(range(11))) for i in range(3))]
    runs = choice_runs(SCENARIO, axes, refuse_k_3, deciding)
    assert [r.node_parameters['controller'] for r in runs] == [{'k': 1, 'mode': 'a'},
                                                              {'k': 1, 'mode': 'b'}]
    assert all(r.seed == SCENARIO.seed for r in runs)
    assert choice_runs(SCENARIO, [Axis(GAIN, values=[3])], refuse_k_3, deciding) == [SCENARIO]


def with_map(path: Path) -> Scenario:
    """SCENARIO with ``path`` as vehicle_sim's world.map_yaml (a map given in nodes:)."""
    return replace(SCENARIO, node_parameters={'controller': {}, 'vehicle_sim': {
        'world.map_yaml': str(path)}})


def test_a_map_given_as_vehicle_sim_s_parameter_counts_by_content(tmp_path):
    """Found in review: a map given in nodes: as vehicle_sim.world.map_yaml was keyed by its
    path: a moved checkout refused, an edited map taken."""
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0,
               with_map(_map_copy(tmp_path / 'map')))
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0,
               with_map(_map_copy(tmp_path / 'moved')))
    with pytest.raises(ScenarioError, match='made with another scenario'):
        open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0,
                   with_map(_map_copy(tmp_path / 'other', changed=True)))


def test_a_tuned_map_parameter_leaves_its_base_value_out_of_the_key(tmp_path):
    """Found in review: with vehicle_sim.world.map_yaml tuned, its base value (which no trial
    uses) still made the key; the scenario's map, which a run takes over that parameter
    (found in the next review), stays in it."""
    axes = [*REAL_K, Axis('vehicle_sim.world.map_yaml', values=['a.yaml', 'b.yaml'])]

    open_study(tmp_path, None, 'test', 'cross_track_rms_m', axes, 'tpe', 0,
               with_map(_map_copy(tmp_path / 'map')))
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', axes, 'tpe', 0,
               with_map(_map_copy(tmp_path / 'other', changed=True)))
    base = replace(SCENARIO, map_yaml=_map_copy(tmp_path / 'map2'))
    open_study(tmp_path, None, 'mapped', 'cross_track_rms_m', axes, 'tpe', 0, base)
    with pytest.raises(ScenarioError, match='made with another scenario'):
        open_study(tmp_path, None, 'mapped', 'cross_track_rms_m', axes, 'tpe', 0,
                   replace(base, map_yaml=_map_copy(tmp_path / 'other2', changed=True)))


def test_a_refused_study_names_three_fields_and_a_study_without_them_its_keys(tmp_path):
    open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0, SCENARIO)
    changed = replace(SCENARIO, duration_s=2.5, node_parameters={'controller': {
        'k': 0.5, 'lead_time': 0.2, 'mode': 'b', 'rate': 20}})  # k is tuned: not compared
    with pytest.raises(ScenarioError, match=r'made with another scenario \(duration 1\.0, now '
                                            r'2\.5; nodes\.controller\.lead_time absent, now '
                                            r"0\.2; nodes\.controller\.mode absent, now 'b'; and "
                                            r'1 more\): give another'):
        open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0, changed)
    # a study made before its scenario's fields were kept: the keys (hashes) only
    made = open_study(tmp_path, None, 'old', 'cross_track_rms_m', REAL_K, 'tpe', 0, SCENARIO)
    made.set_user_attr('scenario_fields', None)
    with pytest.raises(ScenarioError, match=r'made with another scenario \(its duration, seed, '
                                            r'pass criteria, node parameters or map differ: key '
                                            r'[0-9a-f]{12}, now [0-9a-f]{12}\): give another'):
        open_study(tmp_path, None, 'old', 'cross_track_rms_m', REAL_K, 'tpe', 0, changed)


def test_a_world_objective_needs_a_map_from_the_scenario_its_nodes_or_an_axis():
    with pytest.raises(ScenarioError, match='--objective min_clearance_m: computed only with a '
                                            'map'):
        check_objective(SCENARIO, REAL_K, 'min_clearance_m')
    check_objective(SCENARIO, REAL_K, 'cross_track_rms_m')
    check_objective(replace(SCENARIO, map_yaml=Path('room.yaml')), REAL_K, 'collisions')
    check_objective(replace(SCENARIO, node_parameters={'vehicle_sim': {
        'world.map_yaml': 'room.yaml'}}), REAL_K, 'collisions')
    check_objective(SCENARIO, (*REAL_K, parse_axis('vehicle_sim.world.map_yaml=a.yaml,b.yaml')),
                    'collisions')


# found in review: a Ctrl-C inside the study's ask left its trial RUNNING for good, or (inside
# its SQL) ended the command with a traceback; one after a run's record was written failed the
# trial whose result the record holds
@pytest.mark.parametrize('where', ['ask', 'record'])
def test_ctrl_c_lands_between_the_study_s_writes(tmp_path, monkeypatch, request, where):
    import os
    import signal

    from optuna.study import Study
    from optuna.trial import TrialState

    from wheelsim.run import tune as tune_module

    def ctrl_c() -> None:
        os.kill(os.getpid(), signal.SIGINT)  # Python's handler runs before the next line

    # as the command has it, whatever the suite inherited (a background job: SIGINT ignored)
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    request.addfinalizer(lambda: signal.signal(signal.SIGINT, previous))

    if where == 'ask':
        asked = Study.ask

        def ask(study, *args, **kwargs):
            trial = asked(study, *args, **kwargs)
            if trial.number == 2:
                ctrl_c()
            return trial
        monkeypatch.setattr(Study, 'ask', ask)
    else:
        written = tune_module.write_record

        def write_record(*args, **kwargs):
            record = written(*args, **kwargs)
            ctrl_c()
            return record
        monkeypatch.setattr(tune_module, 'write_record', write_record)
    outcome = search(tmp_path, None, trials=6)
    assert outcome.interrupted
    study = open_study(tmp_path, None, 'test', 'cross_track_rms_m', REAL_K, 'tpe', 0, SCENARIO)
    states = [t.state for t in study.trials]
    assert TrialState.RUNNING not in states, states
    records = list(tmp_path.glob('runs/*/point.json'))
    assert states.count(TrialState.COMPLETE) == len(records) >= 1, states


@pytest.mark.parametrize('name', ['tpe', 'random', 'qmc'])
def test_a_sampler_is_made_without_a_warning(name):
    """Found in review: ``--sampler qmc`` printed Optuna's ExperimentalWarning."""
    import warnings

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        _sampler(name, 1)
    assert [str(w.message) for w in caught] == []


@pytest.mark.parametrize('name', ['tpe', 'random', 'qmc'])
def test_each_sampler_s_proposals_depend_on_its_seed(name):
    """Found in review: the qmc sampler was unscrambled, so every --sampler-seed gave the same
    Sobol points after the first trial (0.0, then 0.4 of 0:0.8)."""
    import optuna

    def proposals(seed: int) -> list[float]:
        study = optuna.create_study(sampler=_sampler(name, seed))
        study.optimize(lambda trial: trial.suggest_float('x', 0.0, 0.8) ** 2, n_trials=4)
        return [trial.params['x'] for trial in study.trials]

    first = proposals(0)
    assert first == proposals(0)
    assert all(a != b for a, b in zip(first[1:], proposals(7)[1:], strict=True)), first
