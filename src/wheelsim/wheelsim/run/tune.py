"""``wheelsim tune``: an Optuna search for the node parameters that give the best value of one
metric, with parallel trials on Ray.

- The study lives in SQLite storage (``<tune>/study.db`` unless ``storage`` names another
  database URL, e.g. on a shared disk or a server), so a rerun resumes it: ``trials`` is the
  number of finished trials wanted in total. The driver alone talks to the storage
  (ask-and-tell); workers only run scenarios. A study remembers its objective, its parameters
  and what of the scenario makes a trial's metrics (:func:`scenario_key`); resuming it with
  others is an error naming what differs.
- Samplers: ``tpe`` (default, Optuna's TPESampler with the constant liar for parallel trials),
  ``random``, ``qmc`` (Sobol). Each takes ``sampler_seed``; a resumed study's TPE or random
  sampler takes ``sampler_seed`` plus its trials so far (the same seed again would propose its
  first trials again; QMC goes on along its sequence). A study remembers its sampler and seed:
  resumed without them it goes on with them, with others it is refused.
- The scenario's ``pass_criteria`` are constraints (``criterion_excess <= 0``): TPE samples toward
  feasible points, and the best trial is the best feasible one (the best of all only when none
  is feasible, said so in the report).
- Each trial is a run in ``<tune>/runs/<key>/`` recorded as a sweep's points are
  (:mod:`wheelsim.run.sweep`), so a trial whose parameters ran before is not run again.

Report in ``<tune>/``: ``best_params.yaml`` (a ROS params file of the best parameters, and the
seed when tuned), ``trials.csv`` / ``trials.parquet``, ``history.png`` (optimisation history),
``importance.png`` (parameter importances), ``plots/`` (each metric against each parameter),
and the best run's bag with its plots (``<best run>/plots/report.pdf``).
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import shutil
import warnings
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParamSpec
from wheelsim.report.metrics import LARGER_IS_BETTER
from wheelsim.report.summary import criterion_excess
from wheelsim.run import tables
from wheelsim.run.execution import Job, RayRunner, job_key
from wheelsim.run.held_signals import HeldSignals
from wheelsim.run.sampling import Axis, as_parameter_types, overrides_text
from wheelsim.run.scenario import (
    SEED_KEY,
    OverrideCheck,
    Scenario,
    ScenarioError,
    with_overrides,
)
from wheelsim.run.sweep import load_record, write_record

SAMPLERS = ('tpe', 'random', 'qmc')
INFEASIBLE = 1e9
"""Constraint value of a pass criterion whose metric is missing (always violated)."""


@dataclass
class TuneOutcome:
    """The study's trials as table rows, its best row (None without a finished trial)."""

    rows: list[dict[str, Any]]
    best: dict[str, Any] | None
    best_feasible: bool
    interrupted: bool = False
    ran: int = 0


def _feasible(trial) -> bool:
    """Whether a finished trial met every pass criterion: its Optuna constraints (which TPE
    reads too), or in a study made before they were used, the ``constraints`` user attribute
    every trial of those had (Optuna held a copy only for TPE)."""
    values = trial.constraints.values() or trial.user_attrs.get('constraints', ())
    return all(value <= 0 for value in values)


def _sampler(name: str, seed: int):
    import optuna

    if name == 'tpe':
        return optuna.samplers.TPESampler(seed=seed, constant_liar=True)
    if name == 'random':
        return optuna.samplers.RandomSampler(seed=seed)
    if name == 'qmc':
        # scrambled: Optuna uses the seed only then (unscrambled, every seed gives one sequence);
        # its notice that the class is experimental is for Optuna's users, not wheelsim's
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', optuna.exceptions.ExperimentalWarning)
            return optuna.samplers.QMCSampler(seed=seed, scramble=True,
                                              warn_independent_sampling=False)
    raise ScenarioError(f'--sampler {name!r}: must be one of {", ".join(SAMPLERS)}')


def _suggest(trial, axes: Sequence[Axis]) -> dict[str, Any]:
    def value(a: Axis) -> Any:
        if a.values is not None:
            return trial.suggest_categorical(a.name, list(a.values))
        if isinstance(a.low, int):  # an integer parameter's range (as_parameter_types)
            return trial.suggest_int(a.name, a.low, a.high, log=a.log)
        return trial.suggest_float(a.name, a.low, a.high, log=a.log)
    return {a.name: value(a) for a in axes}


def choice_runs(scenario: Scenario, axes: Sequence[Axis], check: OverrideCheck,
                deciding: Collection[str]) -> list[Scenario]:
    """``scenario`` at each combination of the values of the axes that are lists of values of
    the ``deciding`` parameters (those that decide which others a run uses: its model, its
    modes), those that break a rule across parameters left out (``scenario`` alone if all do):
    what a parameter's use can depend on over the trials."""
    choices = [a for a in axes if a.values is not None and a.name in deciding]
    runs = []
    for combination in itertools.product(*(a.values for a in choices)):
        try:
            runs.append(with_overrides(scenario, dict(zip([a.name for a in choices],
                                                          combination, strict=True)), check))
        except ScenarioError:
            continue  # a trial there fails; the study goes on
    return runs or [scenario]


def check_axes(axes: Sequence[Axis], specs: Mapping[str, Sequence[ParamSpec]]) -> list[Axis]:
    """``axes`` as :func:`wheelsim.run.sampling.as_parameter_types` gives them (its
    ScenarioError for a range of an integer parameter whose bounds are no integers, for a value
    list repeating a value and for a parameter its node does not declare);
    ScenarioError naming the ``--param`` of an array value: an Optuna choice is a single value
    (None, bool, int, float or str), so a study cannot search arrays."""
    for axis in axes:
        if any(isinstance(value, list) for value in axis.values or ()):
            raise ScenarioError(f'--param {axis.text}: tune cannot search an array (an Optuna '
                                'choice is a single value): set the array in the scenario\'s '
                                'nodes:, or compare arrays with wheelsim sweep')
    return as_parameter_types(axes, specs)


def check_not_one_run(axes: Sequence[Axis]) -> None:
    """ScenarioError naming the ``--param`` values when each is one value: every trial would
    be the same run (checked after the values themselves, so that a value its parameter
    refuses is named for that)."""
    if axes and all(axis.values is not None and len(axis.values) == 1 for axis in axes):
        given = ' '.join(f'--param {axis.text}' for axis in axes)
        raise ScenarioError(f'{given}: one value each, so every trial would be the same run: '
                            'give a range LOW:HIGH or two values or more (wheelsim run runs one)')


def check_storage(url: str) -> None:
    """ScenarioError naming ``--storage`` unless ``url`` is a database URL that SQLAlchemy
    (Optuna's storage) can use here, its driver installed; nothing is created or connected to."""
    import sqlalchemy

    try:
        sqlalchemy.create_engine(url).dispose()
    except (sqlalchemy.exc.SQLAlchemyError, ImportError, ValueError, TypeError) as err:
        raise ScenarioError(f'--storage {url!r}: not a database URL with its driver installed '
                            f'(e.g. sqlite:///study.db, postgresql://USER@HOST/DB): '
                            f'{err}') from None


MAP_PARAMETER = 'world.map_yaml'
"""vehicle_sim's map file parameter, which a scenario's ``nodes:`` may set instead of ``map``."""


def check_objective(scenario: Scenario, axes: Sequence[Axis], objective: str) -> None:
    """ScenarioError for an objective or a pass criterion no trial computes: a metric of the
    world (:data:`~wheelsim.report.metrics.WORLD_METRICS`) where no map is given (``map``,
    vehicle_sim's ``world.map_yaml`` or an axis setting it)."""
    from wheelsim.report.metrics import WORLD_METRICS
    from wheelsim.run.runner import has_map

    if has_map(scenario) or any(a.name == f'vehicle_sim.{MAP_PARAMETER}' for a in axes):
        return
    unmeasured = [f'--objective {objective}'] * (objective in WORLD_METRICS) + [
        f'pass_criteria.{key}' for key in scenario.pass_criteria if key in WORLD_METRICS]
    if unmeasured:
        raise ScenarioError(f'{unmeasured[0]}: computed only with a map, which '
                            f'{scenario.source or "the scenario"} does not give (map, or '
                            f'vehicle_sim\'s {MAP_PARAMETER})')


def scenario_key(scenario: Scenario, axes: Sequence[Axis]) -> str:
    """A short hash of what of ``scenario`` makes a trial's metrics and their feasibility: its
    duration, seed, pass criteria, node parameters and map's content (``map``, which a run
    takes over vehicle_sim's ``world.map_yaml``, or that parameter), without what the ``axes``
    set in every trial (the seed or a parameter tuned), its name, file or recorded topics."""
    tuned = {a.name for a in axes}
    kept = replace(scenario, name='', source=None, record_topics=None, map_yaml=None,
                   seed=0 if SEED_KEY in tuned else scenario.seed,
                   node_parameters=_untuned_parameters(scenario, tuned))
    digest = hashlib.sha256(job_key(kept).encode())
    digest.update(_maps_content(scenario, tuned))
    return digest.hexdigest()[:12]


def scenario_fields(scenario: Scenario, axes: Sequence[Axis]) -> dict[str, str]:
    """What :func:`scenario_key` hashes, field by field as text (``duration``, ``seed``,
    ``pass_criteria.<metric>``, ``nodes.<node>.<parameter>``, ``map``: a hash of its
    content), so that a study resumed with another scenario can say which fields differ."""
    tuned = {a.name for a in axes}
    fields = {'duration': repr(scenario.duration_s)}
    if SEED_KEY not in tuned:
        fields['seed'] = repr(scenario.seed)
    fields.update({f'pass_criteria.{name}': repr(bound)
                   for name, bound in scenario.pass_criteria.items()})
    fields.update({f'nodes.{node}.{name}': repr(value)
                   for node, values in _untuned_parameters(scenario, tuned).items()
                   for name, value in values.items()})
    content = _maps_content(scenario, tuned)
    if content:
        fields['map'] = hashlib.sha256(content).hexdigest()[:12]
    return fields


def _untuned_parameters(scenario: Scenario, tuned: Collection[str]
                        ) -> dict[str, dict[str, Any]]:
    """The scenario's node parameters but those tuned and vehicle_sim's map (a run takes the
    scenario's ``map`` over it; its content counts instead: :func:`_maps_content`)."""
    return {node: {k: v for k, v in values.items() if f'{node}.{k}' not in tuned
                   and (node, k) != ('vehicle_sim', MAP_PARAMETER)}
            for node, values in scenario.node_parameters.items()}


def _maps_content(scenario: Scenario, tuned: Collection[str]) -> bytes:
    """The content of the scenario's maps (``map``, and vehicle_sim's ``world.map_yaml`` unless
    tuned: every trial sets its own), by content: the same map elsewhere (another checkout)
    gives the same bytes."""
    maps = [scenario.map_yaml]  # a run takes it over any world.map_yaml
    if f'vehicle_sim.{MAP_PARAMETER}' not in tuned:
        maps.append(scenario.node_parameters.get('vehicle_sim', {}).get(MAP_PARAMETER))
    return b''.join(_map_digest(path) for path in maps if path)


#: The differing scenario fields a refused study names.
DIFFERENCES_SHOWN = 3


def _differences(known: Mapping[str, str], now: Mapping[str, str]) -> str:
    """``field known, now value`` for each field that differs (``absent`` where one has none),
    at most :data:`DIFFERENCES_SHOWN` of them."""
    names = sorted(name for name in {*known, *now} if known.get(name) != now.get(name))
    shown = [f'{name} {known.get(name, "absent")}, now {now.get(name, "absent")}'
             for name in names[:DIFFERENCES_SHOWN]]
    more = len(names) - len(shown)
    return '; '.join(shown) + (f'; and {more} more' if more else '')


def _map_digest(path: Path | str) -> bytes:
    """The content of a map file (its grid and meta-data), or its path if it cannot be read."""
    from wheelsim.core.world.map_file import load_map_file
    from wheelsim.core.world.occupancy import MapError

    try:
        world = load_map_file(path)
    except (MapError, OSError):  # the run says why
        return str(path).encode()
    meta = (world.resolution_m, world.origin, world.negate, world.occupied_thresh,
            world.free_thresh, world.mode, world.values.shape)
    return repr(meta).encode() + world.values.tobytes()


#: Tables every database Optuna's RDB storage made has (``optuna/storages/_rdb/models.py``).
OPTUNA_TABLES = frozenset({'studies', 'version_info'})


def _check_optuna_database(url: str) -> None:
    """ScenarioError naming ``--storage`` if the database at ``url`` holds tables and is no
    Optuna storage (:data:`OPTUNA_TABLES` missing): another program's database, which Optuna
    would add its tables to. Raises SQLAlchemy's error if it cannot be read."""
    import sqlalchemy

    engine = sqlalchemy.create_engine(url)
    try:
        tables = sorted(sqlalchemy.inspect(engine).get_table_names())
    finally:
        engine.dispose()
    if tables and not OPTUNA_TABLES.issubset(tables):
        shown = ', '.join(tables[:5]) + (', ...' if len(tables) > 5 else '')
        raise ScenarioError(f'--storage {url!r}: holds tables of another program ({shown}), '
                            'not an Optuna storage: not adding the study to it; give a new '
                            'database or one Optuna made')


#: The sampler and seed of a study given neither (``--sampler``, ``--sampler-seed``).
DEFAULT_SAMPLER, DEFAULT_SAMPLER_SEED = 'tpe', 0


def open_study(folder: Path, storage: str | None, name: str, objective: str,
               axes: Sequence[Axis], sampler: str | None, sampler_seed: int | None,
               scenario: Scenario):
    """Create or load the study, then ``folder`` if needed (before, only for the default
    storage in it: storage that cannot be opened leaves no folder behind); ScenarioError if the
    storage cannot be opened or holds another program's tables (:func:`_check_optuna_database`),
    or the study was made for another search: another objective, other parameters (in any
    order; named as given, :attr:`Axis.text`), another ``scenario`` (:func:`scenario_key`; a
    study made before it was remembered takes this one's) or another ``sampler`` or
    ``sampler_seed`` (None: the study's, :data:`DEFAULT_SAMPLER` and
    :data:`DEFAULT_SAMPLER_SEED` for a new one or one made before they were remembered)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if storage is None:
        folder.mkdir(parents=True, exist_ok=True)
    url = storage or f'sqlite:///{(folder / "study.db").resolve()}'
    direction = 'maximize' if objective in LARGER_IS_BETTER else 'minimize'
    import sqlalchemy

    try:
        if storage is not None:
            _check_optuna_database(url)
        study = optuna.create_study(storage=url, study_name=name, direction=direction,
                                    load_if_exists=True,  # its sampler: set below
                                    sampler=optuna.samplers.RandomSampler())
    except sqlalchemy.exc.SQLAlchemyError as err:  # a server down, a folder missing
        raise ScenarioError(f'--storage {url!r}: cannot open the study there: '
                            f'{str(err).splitlines()[0]}') from None
    folder.mkdir(parents=True, exist_ok=True)
    texts = ' '.join(a.text for a in axes)
    fields = scenario_fields(scenario, axes)
    search = {'objective': objective, 'parameters': [repr(a) for a in axes],
              'scenario': scenario_key(scenario, axes)}
    for key, value in search.items():
        known = study.user_attrs.get(key)
        if known is None:
            study.set_user_attr(key, value)
        elif key == 'parameters' and sorted(known) == sorted(value):
            continue  # the same search, its --params in another order (trials know them by name)
        elif known != value:
            if key == 'scenario':
                known_fields = study.user_attrs.get('scenario_fields')
                differ = (_differences(known_fields, fields) if known_fields else
                          'its duration, seed, pass criteria, node parameters or map differ: '
                          f'key {known}, now {value}')  # a study made before the fields
                raise ScenarioError(f'study {name} in {url}: made with another scenario '
                                    f'({differ}): give another --study name or --output')
            if key == 'parameters':  # as given (a study made before parameter_texts: reprs),
                known_texts = study.user_attrs.get('parameter_texts', known)
                if known_texts != texts:  # the same text, another search (a real range of
                    known, value = known_texts, texts  # an integer): the axes in full
                else:
                    known, value = ' '.join(known), ' '.join(value)
            raise ScenarioError(f'study {name} in {url}: made with {key} {known}, not {value}: '
                                'give another --study name or --output')
    study.set_user_attr('parameter_texts', texts)
    study.set_user_attr('scenario_fields', fields)
    sampler = _remembered(study, url, 'sampler', sampler, DEFAULT_SAMPLER)
    sampler_seed = _remembered(study, url, 'sampler_seed', sampler_seed, DEFAULT_SAMPLER_SEED)
    made = len(study.trials)
    if made and sampler != 'qmc':  # seeded as at the start, it would draw its first trials again
        sampler_seed = (sampler_seed + made) % 2**32
    study.sampler = _sampler(sampler, sampler_seed)
    return study


def _remembered(study, url: str, key: str, given: Any, default: Any) -> Any:
    """The study's ``key`` (``sampler``, ``sampler_seed``): ``given``, else the one it
    remembers, else ``default``; remembered from now on. ScenarioError naming the option if
    ``given`` is not the one it remembers."""
    known = study.user_attrs.get(key)
    if given is not None and known is not None and given != known:
        option = '--' + key.replace('_', '-')
        raise ScenarioError(f'study {study.study_name} in {url}: made with {option} {known}, not '
                            f'{given}: leave {option} out to resume it, or give another --study '
                            'name or --output')
    value = next(v for v in (given, known, default) if v is not None)
    study.set_user_attr(key, value)
    return value


def finished_trials(study) -> int:
    """How many of the study's trials finished (Optuna's ``COMPLETE``; a resumed study's)."""
    from optuna.trial import TrialState

    return len(study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)))


def tune(scenario: Scenario, axes: Sequence[Axis], objective: str, trials: int, study,
         root: Path, runner: RayRunner, check: OverrideCheck,
         show_progress: bool = True, record_bags: bool = False,
         held: HeldSignals | None = None) -> TuneOutcome:
    """Run trials until the study has ``trials`` finished ones (see the module doc); each
    trial's run records its bag if ``record_bags``. ``held``: the caller's hold, released while
    the trials run, so that signals are held from their end."""
    import optuna
    from optuna.trial import TrialState
    from tqdm import tqdm

    criteria = dict(scenario.pass_criteria)
    finished = [t for t in study.trials if t.state == TrialState.COMPLETE]
    failed: list[int] = []  # this session's failed trials: as many as trials wanted stop it
    asked: list[Any] = []  # this session's trials
    outcome = TuneOutcome([], None, False)
    in_flight: dict[str, list[Any]] = {}
    bar = tqdm(total=trials, initial=min(len(finished), trials), unit='trial',
               disable=not show_progress, dynamic_ncols=True)

    def tell(trial, overrides: Mapping[str, Any], record: Mapping[str, Any] | None,
             error: str = '') -> None:
        """Tell the study the trial's value (finished), or that it failed: no run record,
        or a run whose metrics lack the objective."""
        metrics = record['metrics'] if record else {}
        value = metrics.get(objective)
        if record is None or value is None:
            trial.set_user_attr('error', error or f'{objective} not computed for this run')
            study.tell(trial, state=TrialState.FAIL)
            failed.append(trial.number)
            tqdm.write(f'trial {trial.number} ({overrides_text(overrides)}) failed: '
                       f'{trial.user_attrs["error"]}')
            return
        for name, bound in criteria.items():  # feasible: every value <= 0
            trial.set_constraint(name, INFEASIBLE if metrics.get(name) is None
                                 else criterion_excess(name, metrics[name], bound))
        trial.set_user_attr('metrics', metrics)
        trial.set_user_attr('run', record['run_dir'])
        study.tell(trial, value)
        finished.append(trial)
        bar.update(1)

    def jobs() -> Iterator[Job | None]:
        """New trials' jobs until the finished ones and those in flight make ``trials``;
        None (:meth:`RayRunner.run`: wait for a result) while only trials in flight are left,
        since each that fails asks for another."""
        while len(failed) < trials:
            if len(finished) + sum(map(len, in_flight.values())) >= trials:
                if not in_flight:
                    return
                yield None
                continue
            # Ctrl-C after the study's writes, never inside one (twice: at once)
            with HeldSignals(second_at_once=True):
                job = next_job()
            if job is not None:
                yield job

    def next_job() -> Job | None:
        """A new trial's job, or None when it needs no run (refused, or run before) or shares
        the run of a trial in flight."""
        trial = study.ask()
        asked.append(trial)
        overrides = _suggest(trial, axes)
        try:  # a point inside the ranges can break a rule across parameters
            swept = with_overrides(scenario, overrides, check)
        except ScenarioError as err:
            tell(trial, overrides, None, str(err))
            return None
        key = job_key(swept)
        trial.set_user_attr('key', key)
        job = Job(key, swept, record_bags)
        record = load_record(root, job)
        if record is not None:  # these parameters ran before (a resumed study)
            tell(trial, overrides, record)
            return None
        in_flight.setdefault(key, []).append((trial, overrides))
        return job if len(in_flight[key]) == 1 else None

    try:
        with held.released() if held else contextlib.nullcontext():
            for job, result in runner.run(jobs(), root / 'runs'):
                # a finished run's record and its trials told, or neither
                with HeldSignals(second_at_once=True):
                    outcome.ran += 1
                    for trial, overrides in in_flight.pop(job.key):
                        if 'error' in result or result['interrupted']:
                            tell(trial, overrides, None, result.get('error', 'interrupted'))
                        else:
                            tell(trial, overrides, write_record(root, job.key, overrides,
                                                                result))
    except KeyboardInterrupt:
        outcome.interrupted = True
        with HeldSignals(second_at_once=True):
            running = {t.number for t in study.get_trials(deepcopy=False,
                                                           states=(TrialState.RUNNING,))}
            for trial in asked:  # asked, not told: none is left running in the study
                if trial.number in running:
                    trial.set_user_attr('error', 'interrupted')
                    study.tell(trial, state=TrialState.FAIL)
    finally:
        bar.close()
    completed = [t for t in study.trials if t.state == TrialState.COMPLETE]
    outcome.rows = [_row(t, objective) for t in study.trials]
    if completed:
        feasible = [t for t in completed if _feasible(t)]
        pool = feasible or completed
        sign = -1 if study.direction == optuna.study.StudyDirection.MAXIMIZE else 1
        best = min(pool, key=lambda t: sign * t.value)
        outcome.best = _row(best, objective)
        outcome.best_feasible = bool(feasible)
    return outcome


def _row(trial, objective: str) -> dict[str, Any]:
    return {'point': trial.number, **trial.params, 'objective': objective, 'value': trial.value,
            'state': trial.state.name,
            'feasible': _feasible(trial) if trial.state.name == 'COMPLETE' else None,
            **trial.user_attrs.get('metrics', {}), 'error': trial.user_attrs.get('error', ''),
            'run': trial.user_attrs.get('run', '')}


def params_file(best: Mapping[str, Any], parameters: Sequence[str]) -> str:
    """The best parameters as a ROS params file (one section per node); the seed as a comment."""
    sections: dict[str, dict[str, Any]] = {}
    for name in parameters:
        if name == SEED_KEY:
            continue
        node, _, parameter = name.partition('.')
        sections.setdefault(node, {'ros__parameters': {}})['ros__parameters'][parameter] = \
            best[name]
    header = f'# wheelsim tune: best {best["objective"]} = {best["value"]:.6g} (trial ' \
             f'{best["point"]})' + (f', scenario seed {best[SEED_KEY]}' if SEED_KEY in best
                                    else '') + '\n'
    return header + yaml_numbers.dump(sections, sort_keys=True)


def run_again_with_bag(scenario: Scenario, run_dir: Path, make_plots: bool) -> bool:
    """Run the best trial's ``scenario`` again, with its bag (and plots), into a folder beside
    its ``run_dir`` (``.again``), then put that run in ``run_dir``'s place (made if it is not
    there: a trial of another command sharing the study, or a folder removed). Returns whether
    the run was interrupted (Ctrl-C, SIGTERM; also while its report was written): ``run_dir``
    is then left as it was, and so it is when the run raises (the error raised as it is, the
    ``.again`` folder kept for the files it names; the next call removes it)."""
    from wheelsim.run.runner import ReportInterrupted, run_scenario

    staging, replaced = run_dir.parent / '.again', run_dir.parent / '.replaced'
    for left in (staging, replaced):  # what an earlier command left
        shutil.rmtree(left, ignore_errors=True)
    try:
        outcome = run_scenario(scenario, staging, show_progress=False, make_plots=make_plots)
    except ReportInterrupted:
        outcome = None
    if outcome is not None and not outcome.interrupted:
        with HeldSignals():  # the swap is not cut in the middle
            if run_dir.exists():
                run_dir.rename(replaced)
            outcome.output_dir.rename(run_dir)
            shutil.rmtree(replaced, ignore_errors=True)
    shutil.rmtree(staging, ignore_errors=True)
    return outcome is None or outcome.interrupted


#: The study's plots :func:`write_study_plots` writes into the tune's folder.
STUDY_PLOTS = ('history', 'importance')


def remove_study_plots(folder: Path) -> None:
    """Remove an earlier command's study plots (:data:`STUDY_PLOTS`) and metric plots
    (``plots/``, :func:`~wheelsim.run.tables.remove_plots`) from the tune's ``folder``: an
    interrupted command leaves its plots to the resumed one, which draws every trial."""
    for name in STUDY_PLOTS:
        (folder / f'{name}.png').unlink(missing_ok=True)
    tables.remove_plots(folder / 'plots')


def write_study_plots(study, folder: Path, objective: str) -> list[Path]:
    """``history.png`` and ``importance.png`` (Optuna's matplotlib plots), the values named
    by the ``objective`` metric."""
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    from optuna.visualization import matplotlib as optuna_plots

    written = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # "experimental" notices of the plot functions
        for name, plot in zip(STUDY_PLOTS, (optuna_plots.plot_optimization_history,
                                            optuna_plots.plot_param_importances), strict=True):
            try:
                axes = plot(study, target_name=objective)
            except (ValueError, RuntimeError):  # importances need two finished trials
                continue
            figure = axes.figure
            figure.set_size_inches(7, 4.5)
            figure.tight_layout()
            figure.savefig(folder / f'{name}.png', dpi=100)
            plt.close(figure)
            written.append(folder / f'{name}.png')
    return written
