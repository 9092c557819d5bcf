"""The ``wheelsim`` command: ``wheelsim run [SCENARIO]``, ``wheelsim sweep SCENARIO --param``,
``wheelsim tune SCENARIO --param --objective`` and ``wheelsim calibrate BAG``.

Exit codes: 0 success (and every pass criterion met), 1 a pass criterion failed (or a sweep
point failed), 2 bad input (scenario file, arguments, a bag that cannot be calibrated), 130
interrupted (the bag written so far stays valid; a sweep keeps its finished points).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import itertools
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

# Before numpy loads OpenBLAS (the imports below): one thread unless the environment says
# otherwise, here and in the Ray workers started from here (a run's arrays are too small for
# more; idle, OpenBLAS's extra threads spin, about 0.1 s of CPU a command).
os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

from wheelsim.core.units import MIN_RATE_HZ  # noqa: E402
from wheelsim.run.held_signals import EXIT_INTERRUPTED  # noqa: E402
from wheelsim.run.output import (  # noqa: E402
    OutputError,
    check_command_folder,
    command_folder,
    counted,
)
from wheelsim.run.scenario import (  # noqa: E402
    SEED_KEY,
    ScenarioError,
    check_node_parameters,
    check_seed,
    check_used,
    load_scenario,
    with_overrides,
)

EXIT_BAD_INPUT = 2
EXIT_WRITE_FAILED = 3


def _load(path: str | None):
    from wheelsim.report.metrics import METRIC_NAMES
    from wheelsim.run.runner import node_parameter_checks, node_parameter_specs

    specs = node_parameter_specs()
    scenario = load_scenario(Path(path) if path else None, specs, METRIC_NAMES,
                             node_parameter_checks())
    for name, why in scenario.params_file_replaced.items():
        print(f'note: {scenario.source}: the params_file sets {name}, {why}', file=sys.stderr)
    return scenario, specs


def _override_check(specs):
    """``check(node, parameters, given)`` for :func:`with_overrides`: the node declares every
    parameter, each value is in its range and together they keep the node's rules across
    parameters (what the node checks at start-up); ScenarioError naming the ``--param`` values
    given and the parameter at fault otherwise. A node's parameter set is checked once."""
    from wheelsim.core.yaml_numbers import cut
    from wheelsim.run.runner import node_parameter_checks
    from wheelsim.run.sampling import format_value

    checks = node_parameter_checks()
    passed: set[str] = set()  # the sets checked already (a sweep repeats them point by point)

    def check(node: str, parameters, given) -> None:
        key = repr((node, sorted(parameters.items())))
        if key in passed:
            return
        source = '--param ' + ' '.join(f'{node}.{name}={cut(format_value(value))}'  # as read
                                       for name, value in given.items())
        check_node_parameters(source, f'{node}.', node, parameters, specs[node], checks[node],
                              values_in_source=True)
        passed.add(key)
    return check


#: The most combinations of the other axes' ends :func:`_check_axis_ends` tries with a value.
MAX_END_COMBINATIONS = 256


def _check_axis_ends(scenario, axes, check) -> None:
    """Each value of a list and both ends of a range, with the other nodes' parameters too
    (:func:`~wheelsim.run.runner.check_across_nodes`): ScenarioError naming the ``--param``
    values given, before any point runs, for a value that breaks a rule with every combination
    of the other axes' values and ends (the first :data:`MAX_END_COMBINATIONS`; every point sets
    every axis): a rule across two axes (``pub_rate <= step_rate``) may hold at some points of
    their ranges only, which a sweep checks at each point before any runs (a tune: at each
    trial)."""
    from wheelsim.run.runner import check_across_nodes

    def ends(axis) -> tuple:
        return axis.values if axis.values is not None else (axis.low, axis.high)

    for axis in axes:
        others = [a for a in axes if a is not axis]
        for value in ends(axis):
            first_error = None
            for combination in itertools.islice(itertools.product(*map(ends, others)),
                                                MAX_END_COMBINATIONS):
                overrides = dict(zip([a.name for a in others], combination, strict=True))
                try:
                    check_across_nodes(with_overrides(scenario, {**overrides, axis.name: value},
                                                      check))
                    break
                except ScenarioError as err:
                    first_error = first_error or err
            else:
                raise first_error


def _single_values(texts: Sequence[str]) -> dict:
    """``wheelsim run``'s ``--param NAME=VALUE`` (one value each)."""
    from wheelsim.run.sampling import parse_axes

    values = {}
    for axis in parse_axes(texts) if texts else []:
        if axis.values is None or len(axis.values) != 1:
            raise ScenarioError(f'--param {axis.name}: wheelsim run takes one value (sweep '
                                'several with wheelsim sweep)')
        values[axis.name] = axis.values[0]
    return values


#: The ``--output`` folders this command created, each with the first of its parents it created.
_CREATED_ROOTS: list[tuple[Path, Path]] = []


def _output_root(text: str) -> Path:
    """The ``--output`` folder, created if needed (and removed again by
    :func:`_remove_empty_roots` if the command ends leaving it empty); ScenarioError if that is
    impossible."""
    if not text.strip():  # Path('') is the current folder
        raise ScenarioError(f'--output {text!r}: give a folder (default: results)')
    root = Path(text)
    if root.exists() and not root.is_dir():
        raise ScenarioError(f'--output {text}: is a file, not a folder')
    first_made = next((folder for folder in reversed((root, *root.parents))
                       if not folder.exists()), None)
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ScenarioError(f'--output {text}: cannot create it ({err.strerror})') from None
    if first_made is not None:
        _CREATED_ROOTS.append((root, first_made))
    return root


def _remove_empty_roots() -> None:
    """Remove the ``--output`` folders this command created that it left empty (refused input
    found after them, a Ctrl-C while Ray started), up to the first parent it created."""
    while _CREATED_ROOTS:
        root, first_made = _CREATED_ROOTS.pop()
        for folder in (root, *root.parents):
            try:
                folder.rmdir()  # only an empty one
            except OSError:
                break
            if folder == first_made:
                break


MAX_REAL_TIME_FACTOR = 1e6


def _real_time_factor(text: str) -> float:
    value = _number(text, float)
    if value is None or not (value == 0 or MIN_RATE_HZ <= value <= MAX_REAL_TIME_FACTOR):
        raise argparse.ArgumentTypeError(
            f'{text!r} must be 0 (as fast as possible) or in [{MIN_RATE_HZ:g}, '
            f'{MAX_REAL_TIME_FACTOR:g}]')
    return value


def _number(text: str, kind: type) -> int | float | None:
    """``text`` as a ``kind`` (int or float) read as ``--param`` reads numbers (as ROS does:
    ``0x10`` is 16; ``5_0`` and digits other than ASCII are no number, as Python's ``int``
    would take them); None if it is none."""
    from wheelsim.core.yaml_numbers import ros_value

    value = ros_value(text)
    if isinstance(value, bool) or not isinstance(value, int if kind is int else (int, float)):
        return None
    return kind(value)


def _number_type(kind: type, allowed: str):
    """An argparse ``type`` reading ``kind`` (int or float, :func:`_number`) whose error on a
    text that is not one names what is allowed (argparse's own says only ``invalid int
    value``); the range itself is checked where the value is used."""
    noun = 'an integer' if kind is int else 'a number'

    def parse(text: str):
        value = _number(text, kind)
        if value is None:
            raise argparse.ArgumentTypeError(f'{text!r} must be {noun} {allowed}')
        return value
    return parse


def _add_ray_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--workers', type=_number_type(int, '>= 1'),
                        help='runs at once (default: every core of this machine, or of the '
                        'cluster with --address)')
    parser.add_argument('--address', help='an existing Ray cluster: auto, ray://HOST:10001 or '
                        'HOST:6379 (default: a local Ray instance on this machine)')
    parser.add_argument('--output', default='results', help='output root (default: results); '
                        'a rerun into the same output skips the runs already done')
    parser.add_argument('--quiet', action='store_true', help='no progress bar')
    parser.add_argument('--bags', action='store_true', help="keep each run's bag (default: "
                        'none; the metrics are read in memory)')
    parser.add_argument('--no-plots', action='store_true', help="skip the plots (an earlier "
                        "command's in the folder are removed)")


class _StoreOnce(argparse.Action):
    """An option that takes one value (``--seed``, ``--output``, ...): given a second time it
    is an error naming it and both values, not the later one silently winning."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = namespace.__dict__.setdefault('_given_once', {})
        if self.dest in given and option_string is not None:
            raise argparse.ArgumentError(
                self, f'given twice ({given[self.dest]} and {values}): give it once')
        given[self.dest] = values
        setattr(namespace, self.dest, values)


class _FlagOnce(argparse.Action):
    """A flag (``--quiet``, ``--overwrite``, ...): given a second time it is an error naming it,
    as :class:`_StoreOnce` is for an option with a value."""

    def __init__(self, option_strings, dest, default=False, required=False, help=None) -> None:
        super().__init__(option_strings, dest, nargs=0, const=True, default=default,
                         required=required, help=help)

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = namespace.__dict__.setdefault('_given_once', {})
        if self.dest in given:
            raise argparse.ArgumentError(self, 'given twice: give it once')
        given[self.dest] = True
        setattr(namespace, self.dest, True)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose single-value options and flags refuse being given twice,
    whose options are taken only as spelled (``--no-plot`` is no ``--no-plots``), which
    refuses an argument it does not know itself (the command's parser names the command:
    argparse's top parser would name ``wheelsim``), and whose errors are one line (argparse's
    own start with the usage, several lines), exit code 2."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, allow_abbrev=False, **kwargs)
        self.register('action', None, _StoreOnce)
        self.register('action', 'store', _StoreOnce)
        self.register('action', 'store_true', _FlagOnce)

    def parse_known_args(self, args=None, namespace=None):
        namespace, unknown = super().parse_known_args(args, namespace)
        if unknown:
            self.error(f'unrecognized arguments: {" ".join(unknown)}')
        return namespace, unknown

    def error(self, message: str):
        self.exit(EXIT_BAD_INPUT, f'{self.prog}: error: {message} (see {self.prog} -h)\n')


class _Version(argparse.Action):
    """``--version``: ``wheelsim <version>`` (the installed package's, as package.xml gives
    it), exit 0. Looked up only when asked: reading the installed metadata takes milliseconds
    every command would pay."""

    def __init__(self, option_strings, dest, **kwargs) -> None:
        super().__init__(option_strings, dest, nargs=0, help='print the version and exit')

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        from importlib.metadata import version

        print(f'wheelsim {version("wheelsim")}')
        parser.exit()


#: What every --param help says of quotes (docs/wheelsim_run.md: a quoted text is one value).
_QUOTED_TEXT = "a text in quotes is one value, commas and all: NODE.PARAM='a,b'"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog='wheelsim', description='Simulate wheeled vehicles headless with the wheelsim nodes: '
        'run a scenario, sweep or tune its parameters, calibrate a vehicle from a bag. '
        "'wheelsim COMMAND -h' describes each command.")
    parser.add_argument('--version', action=_Version)
    sub = parser.add_subparsers(dest='command', required=True, parser_class=_Parser)
    run = sub.add_parser('run', help='run one scenario headless, faster than real time')
    run.add_argument('scenario', nargs='?', help='scenario YAML (default: the built-in '
                     'figure-eight with a differential robot and noisy localization)')
    run.add_argument('--real-time-factor', type=_real_time_factor, default=0.0,
                     help='pace the run: 1 real time, 10 ten times faster; 0 (default) as fast '
                     'as possible')
    run.add_argument('--output', default='results', help='output root (default: results)')
    run.add_argument('--no-plots', action='store_true', help='skip the PNG/PDF plots')
    run.add_argument('--overwrite', action='store_true',
                     help='reuse OUTPUT/<name>/ of an earlier run, removing only the files a run '
                     'writes (default: keep it and write to OUTPUT/<name>-2/, -3, ...)')
    run.add_argument('--quiet', action='store_true', help='no progress bar')
    run.add_argument('--seed', type=_number_type(int, 'in [0, 2**63-1]'),
                     help="the scenario's seed for this run (e.g. the worst seed of a sweep)")
    run.add_argument('--param', action='append', default=[], metavar='NAME=VALUE',
                     help='set a node parameter (NAME is NODE.PARAM) or the seed for this run '
                     '(repeatable); an array as '
                     'ROS takes it: planner.waypoints=[2.0,0.0,.nan,2.0,2.0,1.57]; '
                     f'{_QUOTED_TEXT}')
    sweep = sub.add_parser('sweep', help='run a scenario at many points (a grid or samples) '
                           'on Ray, locally or on a cluster')
    sweep.add_argument('scenario', nargs='?', help='scenario YAML (default: built-in)')
    sweep.add_argument('--param', action='append', default=[],
                       metavar='NAME=V1,V2,...|FIRST..LAST|LOW:HIGH[:log]',
                       help='an axis: values (controller.feedforward.k_x=1,2,4), integers '
                       '(seed=1..200) or a range to sample (controller.lead_time=0:0.5); NAME '
                       'is seed or NODE.PARAM; a value may be an array (planner.waypoints='
                       f'[2.0,0.0,.nan],[3.0,0.0,.nan]); {_QUOTED_TEXT}; repeat for more axes')
    sweep.add_argument('--sample', choices=('grid', 'random', 'lhs'), default='grid',
                       help='grid (default): every combination of the value lists; random or '
                       'lhs (Latin hypercube): --samples points over the ranges, each with every '
                       'combination of the value lists')
    sweep.add_argument('--samples', type=_number_type(int, '>= 1'),
                       help='number of random or lhs samples')
    sweep.add_argument('--sample-seed', type=_number_type(int, 'in [0, 2**32-1]'),
                       help='seed of the random or lhs samples (default 0)')
    _add_ray_arguments(sweep)
    tune = sub.add_parser('tune', help='search node parameters for the best value of a metric '
                          '(Optuna, trials on Ray)')
    tune.add_argument('scenario', nargs='?', help='scenario YAML (default: built-in); its '
                      'pass_criteria are constraints')
    tune.add_argument('--param', action='append', default=[],
                      metavar='NAME=LOW:HIGH[:log]|V1,V2,...|FIRST..LAST',
                      help='a parameter to tune: a range (log: on a log scale), a list of '
                      'choices or integers from FIRST to LAST (no arrays; '
                      f'{_QUOTED_TEXT}); NAME is seed or NODE.PARAM (repeatable)')
    tune.add_argument('--objective', required=True, metavar='METRIC',
                      help='the metric to optimise (minimised; maximised for '
                      'distance_travelled_m, plans_received, min_clearance_m)')
    tune.add_argument('--trials', type=_number_type(int, 'in [1, 100000]'), default=50,
                      help='finished trials wanted in the study (default 50; a resumed study '
                      'counts the ones it has)')
    tune.add_argument('--sampler', choices=('tpe', 'random', 'qmc'),
                      help='Optuna sampler (default tpe; a resumed study: its own)')
    tune.add_argument('--sampler-seed', type=_number_type(int, 'in [0, 2**32-1]'),
                      help='sampler seed (default 0; a resumed study: its own)')
    tune.add_argument('--study', default='tune', help='study name (default tune): the folder '
                      'OUTPUT/<scenario>/<study>/ and the name in the storage')
    tune.add_argument('--storage', help='Optuna storage URL (default: sqlite:///'
                      'OUTPUT/<scenario>/<study>/study.db); a shared database lets several '
                      'machines work on one study')
    _add_ray_arguments(tune)
    calibrate = sub.add_parser(
        'calibrate', help='fit the actuators (and geometry) to a bag recorded on a robot')
    calibrate.add_argument('bag', help='rosbag2 folder (MCAP or sqlite3) or bag file with '
                           'cmd_vel and odom or twist_actual (joint_states optional)')
    calibrate.add_argument('-o', '--output', default='calibration/params.yaml',
                           help='params file to write (default: calibration/params.yaml); the '
                           'report (_report.txt) and plot (_response.png) go beside it')
    calibrate.add_argument('--model', choices=('differential', 'bicycle', 'omni'),
                           help='vehicle model (default: from the joint names, else the '
                           '--params file\'s model, else differential)')
    calibrate.add_argument('--params', help='vehicle_sim params file with the other parameters '
                           'held fixed, e.g. a preset; needed for the geometry (track, '
                           'wheel_base) when the bag has no joint_states to fit it')
    calibrate.add_argument('--cmd-topic', help='command topic (default: the one named cmd_vel)')
    calibrate.add_argument('--measured-topic', help='measured motion (default: twist_actual, '
                           'else odom)')
    calibrate.add_argument('--joint-states-topic', help='joint states (default: joint_states)')
    calibrate.add_argument('--step-rate', type=_number_type(float, 'in [1, 100000] Hz'),
                           help='simulation step rate [Hz] (default: the --params file\'s '
                           'step_rate, else 1000, as vehicle_sim, which rounds a dead time to '
                           'its step)')
    calibrate.add_argument('--overwrite', action='store_true',
                           help='replace the params file, report and plot of an earlier '
                           'calibration (default: refuse)')
    return parser


def _run(args: argparse.Namespace) -> int:
    from wheelsim.report.summary import format_summary
    from wheelsim.run.runner import check_across_nodes, run_scenario, unused_in_a_run

    scenario, specs = _load(args.scenario)
    overrides = _single_values(args.param)
    if args.seed is not None:
        if SEED_KEY in overrides:
            raise ScenarioError('--seed and --param seed=... both set the seed: give one')
        check_seed('--seed', args.seed)
        overrides[SEED_KEY] = args.seed
    run = with_overrides(scenario, overrides, _override_check(specs))
    check_used(scenario, [run], overrides, unused_in_a_run, 'the run')
    scenario = run
    check_across_nodes(scenario)  # before the output root is made
    outcome = run_scenario(scenario, _output_root(args.output), args.real_time_factor,
                           show_progress=not args.quiet, make_plots=not args.no_plots,
                           overwrite=args.overwrite)
    print(format_summary(outcome.metrics, outcome.timing, scenario.pass_criteria,
                         outcome.output_dir))
    if outcome.interrupted:
        print('interrupted: the bag and results so far are in', outcome.output_dir)
    return outcome.exit_code


@contextlib.contextmanager
def _plots_cut_by_ctrl_c(remove: Callable[[], None], outcome: Any) -> Iterator[None]:
    """Draw a sweep's or tune's plots in the block; a Ctrl-C (or SIGTERM) there removes the
    plots drawn so far (``remove()``: left to the resumed command, as after interrupted runs,
    a second signal held meanwhile) and sets ``outcome.interrupted``: the command goes on to
    print its tables and exit 130."""
    from wheelsim.run.held_signals import HeldSignals

    try:
        yield
    except KeyboardInterrupt:
        with HeldSignals():
            remove()
        outcome.interrupted = True


def _ray_runner(args: argparse.Namespace):
    from wheelsim.run.execution import RayRunner

    return RayRunner(args.workers, args.address)


MAX_ROWS_SHOWN = 30


def _sweep(args: argparse.Namespace) -> int:
    from wheelsim.run import robustness, sampling, sweep, tables
    from wheelsim.run.held_signals import HeldSignals
    from wheelsim.run.runner import check_across_nodes, unused_in_a_run

    scenario, specs = _load(args.scenario)
    runner = _ray_runner(args)  # checks --workers before anything is written
    axes = sampling.as_parameter_types(sampling.parse_axes(args.param), specs)
    check = _override_check(specs)
    points = sampling.plan_points(axes, args.sample, args.samples, args.sample_seed)
    # each axis's values and ends first (the user's values, which no drawn point may reach);
    # then every point
    _check_axis_ends(scenario, axes, check)
    planned = sweep.plan_sweep(scenario, points, check, args.bags)
    for point in planned:  # combinations of values
        check_across_nodes(point.job.scenario)
    check_used(scenario, [p.job.scenario for p in planned], [a.name for a in axes],
               unused_in_a_run, 'any run of the sweep')
    root = _output_root(args.output) / scenario.name / 'sweep'
    check_command_folder(root, 'sweep')
    with contextlib.ExitStack() as after_runs:  # ends after Ray's shutdown and the tables
        with runner:
            command_folder(root, 'sweep')  # once Ray runs: a bad --address leaves no folder
            print(f'sweep of {sweep.points_and_runs(planned)} of {scenario.name} on '
                  f'{counted(runner.workers, "Ray worker")} -> {root}')
            held = after_runs.enter_context(HeldSignals(second_at_once=True))
            outcome = sweep.run_sweep(planned, root, runner, show_progress=not args.quiet,
                                      held=held)  # released while the runs go on
        parameters = [a.name for a in axes]
        rows = outcome.rows
        metrics = tables.metric_columns(rows)
        summary = robustness.seed_summary(rows, parameters, tables.main_metrics(metrics),
                                          args.scenario)
        csv_path, parquet_path = tables.write_tables(rows, root / 'sweep')
        tables.write_worst_runs(rows, parameters, metrics, root / 'worst_runs.md')
        if not summary:  # an earlier sweep's, with a seed axis: not of this sweep
            tables.remove_tables(root / 'robustness')
        else:
            tables.write_tables(summary, root / 'robustness')
        outcome.interrupted = held.take() or outcome.interrupted  # (a second: out at once)
        if outcome.interrupted or args.no_plots:  # (the resumed command draws its plots)
            tables.remove_plots(root / 'plots')  # an earlier sweep's: not of these rows
    plotted = []
    if not outcome.interrupted and not args.no_plots:
        with _plots_cut_by_ctrl_c(lambda: tables.remove_plots(root / 'plots'), outcome):
            plotted = tables.plot_metrics(rows, parameters, metrics, root / 'plots')
    shown = ['point', *parameters, *metrics[:4], 'passed']
    if any(r['error'] for r in rows[:MAX_ROWS_SHOWN]):  # failed or not run: say which
        shown.append('error')
    print(sweep.format_table(rows[:MAX_ROWS_SHOWN], shown, metrics))
    if len(rows) > MAX_ROWS_SHOWN:
        print(f'... {counted(len(rows) - MAX_ROWS_SHOWN, "more row")} in {csv_path}')
    if metrics:
        print(f'worst {metrics[0]}: ' + ', '.join(
            f'{tables.worst_text(r[metrics[0]])} (point {r["point"]}, {root / r["run"]})'
            for r in tables.worst_rows(rows, metrics[0])))
    if summary:
        print('over the seeds (percentiles, worst and its seed; the command reruns it):')
        measures = ['p50', 'p90', 'p95', 'worst', 'worst_seed',
                    *(['not_reached'] if any(s['not_reached'] for s in summary) else [])]
        print(sweep.format_table(summary, [*[p for p in parameters if p != SEED_KEY], 'metric',
                                           'runs', *measures], measures))
        for line in summary:
            if line['metric'] == metrics[0]:
                print(f'  worst {line["metric"]}: {line["reproduce"]}')
    plots = ('not drawn (interrupted)' if outcome.interrupted else
             'not drawn (--no-plots)' if args.no_plots else
             tables.plots_summary(plotted, metrics, root / 'plots'))
    print(f'tables: {csv_path}, {parquet_path}  plots: {plots}  worst runs: '
          f'{root / "worst_runs.md"}' + (f'  ({counted(outcome.skipped, "point")} already done, '
                                         'skipped)'
                                         if outcome.skipped else ''))
    if outcome.errors:
        print(f'{len(outcome.errors)} of {len(rows)} points failed: ' + ', '.join(
            f'{i}: {e}' for i, e in sorted(outcome.errors.items())[:5]))
    if outcome.interrupted:
        finished = counted(sum(1 for r in rows if r['run']), 'finished point')
        print(f'interrupted: {finished} kept in {root}; the same command resumes')
        return EXIT_INTERRUPTED
    return 0 if all(r['passed'] for r in rows) else 1


def _tune(args: argparse.Namespace) -> int:
    from optuna.exceptions import StorageInternalError

    from wheelsim.core.params import unknown_keys
    from wheelsim.report.metrics import METRIC_NAMES
    from wheelsim.run import sampling, tables, tune
    from wheelsim.run.held_signals import HeldSignals
    from wheelsim.run.output import check_run_name
    from wheelsim.run.runner import USE_DECIDING, unused_in_a_run

    scenario, specs = _load(args.scenario)
    runner = _ray_runner(args)  # checks --workers before the study is created
    if args.objective not in METRIC_NAMES:
        suggestion = unknown_keys(METRIC_NAMES, [args.objective])[0][1]
        hint = f'did you mean {suggestion}? ' if suggestion else ''
        raise ScenarioError(f'--objective {args.objective}: not a metric ({hint}one of '
                            f'{", ".join(METRIC_NAMES)})')
    if not 1 <= args.trials <= sampling.MAX_POINTS:
        raise ScenarioError(f'--trials {args.trials}: must be in [1, {sampling.MAX_POINTS}] (the '
                            'most runs one command starts, as for the points of a sweep)')
    try:
        check_run_name(args.study)
    except OutputError as err:
        raise ScenarioError(f'--study {err}') from None
    if args.sampler_seed is not None:
        check_seed('--sampler-seed', args.sampler_seed, sampling.SAMPLE_SEED_BITS)
    if args.storage is not None:
        tune.check_storage(args.storage)
    axes = tune.check_axes(sampling.parse_axes(args.param), specs)
    tune.check_objective(scenario, axes, args.objective)
    check = _override_check(specs)
    _check_axis_ends(scenario, axes, check)
    tune.check_not_one_run(axes)
    check_used(scenario, tune.choice_runs(scenario, axes, check, USE_DECIDING),
               [a.name for a in axes], unused_in_a_run, 'any trial')
    root = _output_root(args.output) / scenario.name / args.study
    check_command_folder(root, 'tune')
    with contextlib.ExitStack() as after_runs:  # ends after Ray's shutdown and the tables
        try:
            with runner:  # then the folder and the study: a bad --address leaves no folder
                if args.storage is None:
                    command_folder(root, 'tune')  # the study's database goes into it
                study = tune.open_study(root, args.storage, args.study, args.objective, axes,
                                        args.sampler, args.sampler_seed, scenario)
                command_folder(root, 'tune')  # (made with a --storage study, which may fail)
                finished = tune.finished_trials(study)
                print(f'tuning {", ".join(a.name for a in axes)} of {scenario.name} for '
                      f'{args.objective} ({study.direction.name.lower()}), '
                      f'{counted(args.trials, "trial")}'
                      f'{f" ({finished} finished already)" if finished else ""} on '
                      f'{counted(runner.workers, "Ray worker")} -> {root}')
                held = after_runs.enter_context(HeldSignals(second_at_once=True))
                outcome = tune.tune(scenario, axes, args.objective, args.trials, study, root,
                                    runner, check, show_progress=not args.quiet,
                                    record_bags=args.bags, held=held)  # released while they run
        except StorageInternalError as err:  # the study's database: locked by another program
            raise OSError(f'the study {args.study} ({args.storage or root / "study.db"}): '
                          f'{" ".join(str(err).split())}') from None
        parameters = [a.name for a in axes]
        metrics = tables.metric_columns(outcome.rows)
        csv_path, _ = tables.write_tables(outcome.rows, root / 'trials')
        tables.write_worst_runs(outcome.rows, parameters, metrics, root / 'worst_runs.md')
        if outcome.best is not None:
            (root / 'best_params.yaml').write_text(tune.params_file(outcome.best, parameters))
        outcome.interrupted = held.take() or outcome.interrupted  # (a second: out at once)
        drawn = not (outcome.interrupted or args.no_plots or outcome.best is None)
        if not drawn:  # (the resumed command draws its plots; no finished trial: nothing to)
            tune.remove_study_plots(root)  # an earlier command's: not of these trials
    if drawn:
        with _plots_cut_by_ctrl_c(lambda: tune.remove_study_plots(root), outcome):
            tables.plot_metrics(outcome.rows, parameters, metrics, root / 'plots')
            tune.write_study_plots(study, root, args.objective)
    if outcome.best is None:
        print(f'no finished trial; trials: {csv_path}')
        return EXIT_INTERRUPTED if outcome.interrupted else 1
    best = outcome.best
    best_run = root / best['run']
    print(f'best {args.objective} = {best["value"]:.6g} at trial {best["point"]}: ' + ', '.join(
        f'{p}={best[p]}' for p in parameters) + ('' if outcome.best_feasible else
                                                 '  (no trial meets the pass criteria)'))
    if outcome.interrupted:
        print(f'params: {root / "best_params.yaml"}  trials: {csv_path}\n'
              f'interrupted: the study in {root} keeps its finished trials; the same command '
              'resumes it')
        return EXIT_INTERRUPTED
    # The same scenario, overrides and seed: the same run, now with its bag (and plots).
    best_scenario = with_overrides(scenario, {p: best[p] for p in parameters}, check)
    # (its nodes log on standard error, as wheelsim run's do: say whose lines those are)
    print(f'trial {best["point"]} again, with its bag'
          f'{"" if args.no_plots else " and plots"} (its nodes\' log):', flush=True)
    if tune.run_again_with_bag(best_scenario, best_run, make_plots=not args.no_plots):
        print(f'interrupted while the best trial ran again with its bag: {best_run} is as it '
              'was; the same command runs it again')
        return EXIT_INTERRUPTED
    study_plots = ('plots: not drawn (--no-plots)' if args.no_plots else
                   f'history: {root / "history.png"}  importance: {root / "importance.png"}')
    print(f'params: {root / "best_params.yaml"}  best run (bag'
          f'{"" if args.no_plots else ", plots"}): {best_run}\n'
          f'trials: {csv_path}  {study_plots}  ({counted(outcome.ran, "run")} this time)')
    return 0 if outcome.best_feasible else 1


def _calibrate(args: argparse.Namespace) -> int:
    from wheelsim.core.calibration.recording import CalibrationError
    from wheelsim.run import calibration

    try:
        outputs = calibration.calibrate_bag(
            args.bag, args.output, model=args.model,
            params_file=Path(args.params) if args.params else None, cmd_topic=args.cmd_topic,
            measured_topic=args.measured_topic, joint_states_topic=args.joint_states_topic,
            step_rate_hz=args.step_rate, overwrite=args.overwrite)
    except CalibrationError as err:
        print(f'wheelsim calibrate: error: cannot calibrate: {err}', file=sys.stderr)
        return EXIT_BAD_INPUT
    print(outputs.report, end='')
    print(f'params: {outputs.params}  report: {outputs.report_path}  plot: {outputs.plot}')
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """The command's entry; returns the exit code (:data:`EXIT_INTERRUPTED` also for a Ctrl-C
    while it loads, before a command handles it). Meant to end the process: on return, every
    object is left out of the garbage collector for good (``gc.freeze``), because the
    interpreter's exit scans all of them in several full collections (about 160 000 with numba
    loaded: 0.7 s of CPU after a ``wheelsim run``) to free nothing the command still needs."""
    try:
        return _command(argv)
    except KeyboardInterrupt:  # in the arguments' parsing or the imports before a command
        print('wheelsim: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        gc.freeze()


def _command(argv: Sequence[str] | None) -> int:
    args = _parser().parse_args(argv)
    # A path given in bytes that are not UTF-8 (a surrogate in Python) is printed as given, as
    # a C locale's standard output does, not ended with a traceback once the work is done.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors='surrogateescape')
    from wheelsim.run.recording import RecordingError  # imports rclpy: not for --help
    from wheelsim.run.runner import EXIT_CRITERIA_FAILED, ReportInterrupted, RunError

    # Ctrl-C and SIGTERM (a CI time-out) stop a run between two events with a valid bag, even
    # when the shell started this process with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    prog = f'wheelsim {args.command}'  # as argparse names the command in its errors
    ray_start_failed: tuple[type[Exception], ...] = ()  # (nothing of Ray's for run, calibrate)
    if args.command in ('sweep', 'tune'):
        from wheelsim.run.execution import RayStartError
        ray_start_failed = (RayStartError,)
    try:
        try:
            if args.command == 'calibrate':
                return _calibrate(args)
            return {'run': _run, 'sweep': _sweep, 'tune': _tune}[args.command](args)
        finally:
            _remove_empty_roots()
    except (ScenarioError, OutputError) as err:
        print(f'{prog}: error: {err}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except ray_start_failed as err:  # no run ran: as a sweep where points failed
        print(f'{prog}: error: {err}', file=sys.stderr)
        return EXIT_CRITERIA_FAILED
    except RunError as err:  # a node raised: a policy's error, say
        print(f'{prog}: error: the run failed: {err} (traceback in {err.traceback_path})',
              file=sys.stderr)
        return EXIT_CRITERIA_FAILED
    except (RecordingError, OSError) as err:  # a full disk, a folder that vanished
        print(f'{prog}: error: writing the results failed: {err}', file=sys.stderr)
        return EXIT_WRITE_FAILED
    except ReportInterrupted as err:
        print(f'{prog}: interrupted while writing the report: {err}', file=sys.stderr)
        return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        print(f'{prog}: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == '__main__':
    sys.exit(main())
