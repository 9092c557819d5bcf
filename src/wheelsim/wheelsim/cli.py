"""The ``wheelsim`` command: ``wheelsim run [SCENARIO]``, ``wheelsim sweep SCENARIO --param``
and ``wheelsim calibrate BAG``.

Exit codes: 0 success (and every pass criterion met), 1 a pass criterion failed, 2 bad input
(scenario file, arguments, a bag that cannot be calibrated), 130 interrupted (the bag written so
far stays valid).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from wheelsim.run.output import OutputError
from wheelsim.run.scenario import ScenarioError, load_scenario, with_overrides

EXIT_BAD_INPUT = 2
EXIT_WRITE_FAILED = 3
EXIT_INTERRUPTED = 130


def _load(path: str | None):
    from wheelsim.report.metrics import METRIC_NAMES
    from wheelsim.run.runner import node_parameter_checks, node_parameter_specs

    specs = node_parameter_specs()
    scenario = load_scenario(Path(path) if path else None, specs, METRIC_NAMES,
                             node_parameter_checks())
    return scenario, specs


def _output_root(text: str) -> Path:
    """The ``--output`` folder, created if needed; ScenarioError if that is impossible."""
    root = Path(text)
    if root.exists() and not root.is_dir():
        raise ScenarioError(f'--output {text}: is a file, not a folder')
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ScenarioError(f'--output {text}: cannot create it ({err.strerror})') from None
    return root


MIN_REAL_TIME_FACTOR, MAX_REAL_TIME_FACTOR = 1e-3, 1e6


def _real_time_factor(text: str) -> float:
    value = float(text)
    if not (value == 0 or MIN_REAL_TIME_FACTOR <= value <= MAX_REAL_TIME_FACTOR):
        raise argparse.ArgumentTypeError(
            f'{text} must be 0 (as fast as possible) or in [{MIN_REAL_TIME_FACTOR:g}, '
            f'{MAX_REAL_TIME_FACTOR:g}]')
    return value


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='wheelsim', description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
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
    sweep = sub.add_parser('sweep', help='run a scenario over a grid of parameters in parallel')
    sweep.add_argument('scenario', nargs='?', help='scenario YAML (default: built-in)')
    sweep.add_argument('--param', action='append', default=[], metavar='NODE.PARAM=V1,V2,...',
                       help='a swept parameter, e.g. controller.k_x=1,2,4 (repeat for a grid)')
    sweep.add_argument('--workers', type=int, default=2, help='parallel processes (default 2)')
    sweep.add_argument('--output', default='results', help='output root (default: results)')
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
                           '(geometry, ...) held fixed, e.g. a preset')
    calibrate.add_argument('--cmd-topic', help='command topic (default: the one named cmd_vel)')
    calibrate.add_argument('--measured-topic', help='measured motion (default: twist_actual, '
                           'else odom)')
    calibrate.add_argument('--joint-states-topic', help='joint states (default: joint_states)')
    calibrate.add_argument('--step-rate', type=float, default=1000.0,
                           help='simulation step rate [Hz]; dead times are whole steps '
                           '(default 1000, as vehicle_sim)')
    return parser


def _run(args: argparse.Namespace) -> int:
    from wheelsim.report.summary import format_summary
    from wheelsim.run.runner import run_scenario

    scenario, _ = _load(args.scenario)
    outcome = run_scenario(scenario, _output_root(args.output), args.real_time_factor,
                           show_progress=not args.quiet, make_plots=not args.no_plots,
                           overwrite=args.overwrite)
    print(format_summary(outcome.metrics, outcome.timing, scenario.pass_criteria,
                         outcome.output_dir))
    if outcome.interrupted:
        print('interrupted: the bag and results so far are in', outcome.output_dir)
    return outcome.exit_code


def _sweep(args: argparse.Namespace) -> int:
    from wheelsim.run import sweep

    scenario, specs = _load(args.scenario)
    if args.workers < 1:
        raise ScenarioError(f'--workers {args.workers}: must be at least 1')
    grid = sweep.parse_grid(args.param)

    def check(node: str, name: str, value) -> None:
        by_name = {s.name: s for s in specs[node]}
        if name not in by_name:
            raise ScenarioError(f'--param {node}.{name}: {node} has no such parameter')
        try:
            by_name[name].check(value)
        except ValueError as err:
            raise ScenarioError(f'--param {node}.{name}: {err}') from None

    points = sweep.grid_points(grid)
    runs = [(p, with_overrides(scenario, p.overrides, check)) for p in points]
    root = _output_root(args.output) / scenario.name / 'sweep'
    print(f'sweep of {len(runs)} runs of {scenario.name} on {args.workers} workers -> {root}')
    rows = sweep.run_sweep(runs, root, args.workers)
    metric_columns = [k for k in rows[0] if k not in grid and k not in ('point', 'passed')]
    numeric = [k for k in metric_columns if isinstance(rows[0][k], (int, float))]
    sweep.write_table(rows, root / 'sweep.csv')
    shown = ['point', *grid, *numeric[:6], 'passed']
    print(sweep.format_table(rows, shown))
    sweep.plot_sweep(rows, list(grid), numeric[:6], root / 'sweep.png')
    print(f'table: {root / "sweep.csv"}  plot: {root / "sweep.png"}')
    return 0 if all(r['passed'] for r in rows) else 1


def _calibrate(args: argparse.Namespace) -> int:
    from wheelsim.core.calibration.recording import CalibrationError
    from wheelsim.run import calibration

    try:
        outputs = calibration.calibrate_bag(
            Path(args.bag), Path(args.output), model=args.model,
            params_file=Path(args.params) if args.params else None, cmd_topic=args.cmd_topic,
            measured_topic=args.measured_topic, joint_states_topic=args.joint_states_topic,
            step_rate_hz=args.step_rate)
    except CalibrationError as err:
        print(f'wheelsim calibrate: cannot calibrate: {err}', file=sys.stderr)
        return EXIT_BAD_INPUT
    print(outputs.report, end='')
    print(f'params: {outputs.params}  report: {outputs.report_path}  plot: {outputs.plot}')
    return 0


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    from wheelsim.run.recording import RecordingError  # imports rclpy: not for --help

    # Ctrl-C and SIGTERM (a CI time-out) stop a run between two events with a valid bag, even
    # when the shell started this process with SIGINT ignored (a background job).
    signal.signal(signal.SIGINT, _interrupt)
    signal.signal(signal.SIGTERM, _interrupt)
    try:
        if args.command == 'calibrate':
            return _calibrate(args)
        return _run(args) if args.command == 'run' else _sweep(args)
    except (ScenarioError, OutputError) as err:
        print(f'wheelsim: error: {err}', file=sys.stderr)
        return EXIT_BAD_INPUT
    except (RecordingError, OSError) as err:  # a full disk, a folder that vanished
        print(f'wheelsim: error: writing the results failed: {err}', file=sys.stderr)
        return EXIT_WRITE_FAILED
    except KeyboardInterrupt:
        print('wheelsim: interrupted', file=sys.stderr)
        return EXIT_INTERRUPTED


if __name__ == '__main__':
    sys.exit(main())
