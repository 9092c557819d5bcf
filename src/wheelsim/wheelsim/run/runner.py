"""``wheelsim run``: one scenario, headless, in lock-step simulated time, with bag, plots, metrics.

The four node classes are built in this process on lock-step seams and driven by
:class:`wheelsim.run.lockstep.Lockstep` in simulated time, so a scenario and seed give the same
messages on any machine; no DDS participant and no socket is opened. Output folder
``<output>/<scenario name>/``:

- ``bag/``: rosbag2 folder with one MCAP file of every recorded topic;
- ``plots/*.png`` and ``plots/report.pdf``;
- ``metrics.json``: the metrics, and what they came from and were held to (:func:`run_record`;
  deterministic: byte-identical for the same scenario file, command and seed);
- ``timing.json`` (wall time and achieved real-time factor, to
  :data:`REAL_TIME_FACTOR_DIGITS` significant digits, which depend on the machine and so are
  kept out of metrics.json).
"""

from __future__ import annotations

import contextlib
import functools
import gc
import importlib
import math
import sys
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wheelsim.core.params import ParameterError, ParamSpec
from wheelsim.core.planning.config import AUTO
from wheelsim.core.planning.waypoints import MIN_WAYPOINT_SPACING_M
from wheelsim.report.summary import passes
from wheelsim.run.held_signals import EXIT_INTERRUPTED
from wheelsim.run.output import ERROR_FILE, discard_unwritten, json_text, run_folder
from wheelsim.run.scenario import (
    DEFAULT_SCENARIO,
    NODE_NAMES,
    Scenario,
    ScenarioError,
    input_files,
)

if TYPE_CHECKING:  # the lock-step runner imports rclpy: not for --help
    from wheelsim.run.lockstep import Recorder

# Node name -> (module, class). The runner builds exactly these, in this order (the order in
# which callbacks at equal times run).
NODE_CLASSES = {
    'vehicle_sim': ('wheelsim.nodes.vehicle_sim', 'VehicleSim'),
    'localization': ('wheelsim.nodes.localization', 'Localization'),
    'planner': ('wheelsim.nodes.planner', 'Planner'),
    'controller': ('wheelsim.nodes.controller', 'Controller'),
}
START_TIME_NS = 1_000_000_000  # ROS time 0 means "no clock yet": runs start at 1 s
PROGRESS_STEP_S = 0.5  # simulated time between two updates of the progress bar
PROGRESS_STEP_NS = round(PROGRESS_STEP_S * 1e9)
REAL_TIME_FACTOR_DIGITS = 3  # significant digits of timing.json's achieved real-time factor
EXIT_CRITERIA_FAILED = 1


class ReportInterrupted(KeyboardInterrupt):
    """Ctrl-C or SIGTERM after the simulation, while the report was written: the message says
    what the output folder holds (the bag, metrics.json and timing.json are always whole: a
    signal during their writing acts once they are written)."""


class RunError(RuntimeError):
    """The run raised (a node's code: a policy's error, a bug): the message is the exception's
    type and first line, ``traceback_path`` the file with the whole traceback."""

    def __init__(self, message: str, traceback_path: Path) -> None:
        super().__init__(message)
        self.traceback_path = traceback_path


@dataclass
class Phases:
    """Where a run's time went: per named phase, ``(cpu_s, wall_s)`` [s], the CPU time of the
    thread running it (the simulation is single-threaded; DDS threads are not counted)."""

    seconds: dict[str, tuple[float, float]] = field(default_factory=dict)
    _started: dict[str, tuple[float, float]] = field(default_factory=dict)

    def start(self, name: str) -> None:
        self._started[name] = (time.thread_time(), time.perf_counter())

    def stop(self, name: str) -> None:
        """End phase ``name`` if it was started."""
        if name in self._started:
            cpu_s, wall_s = self._started.pop(name)
            self.seconds[name] = (time.thread_time() - cpu_s, time.perf_counter() - wall_s)

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        """Time the ``with`` block as phase ``name``."""
        self.start(name)
        try:
            yield
        finally:
            self.stop(name)


@dataclass(frozen=True)
class RunOutcome:
    """What one run produced; ``passed`` is None without pass criteria."""

    output_dir: Path
    metrics: dict[str, Any]
    timing: dict[str, float]
    failed_criteria: tuple[str, ...]
    interrupted: bool
    phases: Phases

    @property
    def exit_code(self) -> int:
        if self.interrupted:
            return EXIT_INTERRUPTED
        return EXIT_CRITERIA_FAILED if self.failed_criteria else 0


def node_parameter_specs() -> dict[str, list[ParamSpec]]:
    """The parameter specs each node declares, by node name."""
    return {name: importlib.import_module(module).parameter_specs()
            for name, (module, _) in NODE_CLASSES.items()}


@functools.cache
def node_defaults() -> dict[str, dict[str, Any]]:
    """Each node's parameter defaults, by node name and parameter name."""
    return {node: {spec.name: spec.default for spec in specs}
            for node, specs in node_parameter_specs().items()}


#: The parameters whose values decide which others a run uses (:func:`unused_in_a_run`).
USE_DECIDING = ('vehicle_sim.model', 'localization.mode', 'localization.odometry_source',
                'controller.algorithm', 'controller.model')


def unused_in_a_run(node: str, parameters: Mapping[str, Mapping[str, Any]]) -> dict[str, str]:
    """{parameter name, or ``group.`` for each of a group's: why} of ``node``'s parameters that a
    headless run does not use with ``parameters`` (``{node: its parameters}``; the defaults for
    the rest): those the node refuses to change live, vehicle_sim following the run's clock, and
    the other tracking laws' gains (nothing switches the controller's algorithm in a run) but
    those its law uses on the vehicle. They depend on :data:`USE_DECIDING` alone."""
    from wheelsim.core.localization.config import unused_parameters as localization_unused
    from wheelsim.core.tracking.config import unused_parameters as controller_unused
    from wheelsim.core.vehicle_sim.config import unused_parameters as vehicle_sim_unused

    def settings_of(name: str) -> dict[str, Any]:
        return {**node_defaults()[name], **parameters.get(name, {})}

    settings = settings_of(node)
    if node == 'vehicle_sim':
        return vehicle_sim_unused(settings['model'], 'run')
    if node == 'localization':
        return localization_unused(settings['mode'], settings['odometry_source'])
    if node == 'controller':
        model = settings['model']  # the controller's own, or (auto) the simulated vehicle's
        return controller_unused(settings['algorithm'],
                                 settings_of('vehicle_sim')['model'] if model == 'auto' else model)
    return {}


def node_parameter_checks() -> dict[str, Callable[[Mapping[str, Any]], None]]:
    """Each node's check of a whole parameter set in a run (its configuration's cross-field
    rules); the planner's also requires ``waypoints``: nothing publishes ``goal_pose`` in a
    run, so without them the vehicle would stand still while the run passes."""
    checks = {name: importlib.import_module(module).check_parameters
              for name, (module, _) in NODE_CLASSES.items()}
    planner_check = checks['planner']

    def planner_in_a_run(values: Mapping[str, Any]) -> None:
        planner_check(values)
        if not values.get('waypoints'):
            raise ParameterError('waypoints', values.get('waypoints', []), NO_WAYPOINTS)
    checks['planner'] = planner_in_a_run
    return checks


NO_WAYPOINTS = ('none given: nothing publishes goal_pose in a run, so the vehicle would stand '
                'still; give x, y, theta triples (theta .nan where free)')


def vehicle_model(scenario: Scenario) -> str:
    """The model vehicle_sim simulates in ``scenario`` (its parameter, or its default)."""
    return scenario.node_parameters.get('vehicle_sim', {}).get(
        'model', node_defaults()['vehicle_sim']['model'])


#: The nodes whose map frames (``frame_prefix`` + ``map_frame``) must be one: localization's
#: poses and the planner's plans are in its own, and the controller refuses a pose or plan in
#: another than its own.
MAP_FRAME_NODES = ('localization', 'planner', 'controller')


def check_across_nodes(scenario: Scenario) -> None:
    """ScenarioError for parameters of two nodes that cannot run together, so a run would
    stand still while it passes: map frames that differ (:data:`MAP_FRAME_NODES`); a route of
    one waypoint at vehicle_sim's ``initial_pose`` (planned from the current pose); the planner's
    parameters with its model taken from the vehicle, as the planner completes them once it
    learns the vehicle (its own check: ``holonomic`` for a vehicle that is not omni), which it
    would refuse then, planning nothing; a recorded world topic no node of the scenario
    publishes (:func:`_check_recorded_topics`), which would leave the bag without it; a pass
    criterion no run computes (:func:`_check_world_criteria`); a holonomic plan for the
    stanley law, which drives it off the path (docs/planning_control.md: "no")."""
    where = 'the default scenario' if scenario.source in (None, DEFAULT_SCENARIO) \
        else scenario.source
    frames = {}
    for node in MAP_FRAME_NODES:
        values = {**node_defaults()[node], **scenario.node_parameters.get(node, {})}
        frames[node] = f'{values["frame_prefix"]}{values["map_frame"]}'
    if len(set(frames.values())) > 1:
        given = ', '.join(f'{node} {frame!r}' for node, frame in frames.items())
        options = [key for key in scenario.overridden if key in {
            f'{node}.{name}' for node in MAP_FRAME_NODES for name in ('frame_prefix', 'map_frame')}]
        if options:
            where = f'{where} with --param {", ".join(options)}'
        raise ScenarioError(f'{where}: the map frame (frame_prefix + map_frame) differs between '
                            f'the nodes: {given}; the controller refuses a pose or plan in '
                            'another frame than its own: give each the same')
    planner = {**node_defaults()['planner'], **scenario.node_parameters.get('planner', {})}
    waypoints = planner['waypoints']
    if len(waypoints) == 3 and planner['start_at_current_pose']:
        vehicle = {**node_defaults()['vehicle_sim'], **scenario.node_parameters['vehicle_sim']}
        x_m, y_m = vehicle['initial_pose.x'], vehicle['initial_pose.y']
        if math.hypot(waypoints[0] - x_m, waypoints[1] - y_m) < MIN_WAYPOINT_SPACING_M:
            waypoints_key = _named(scenario, where, 'planner.waypoints')
            raise ScenarioError(f'{waypoints_key}: the only waypoint, '
                                f'({waypoints[0]:g}, {waypoints[1]:g}), is vehicle_sim\'s '
                                'initial_pose: the vehicle is there already and would stand '
                                'still; give the waypoints to drive through')
    _check_recorded_topics(scenario, where)
    _check_world_criteria(scenario, where)
    controller = {**node_defaults()['controller'], **scenario.node_parameters.get('controller', {})}
    if planner['holonomic'] and controller['algorithm'] == 'stanley':
        raise ScenarioError(f'{_named(scenario, where, "controller.algorithm")}: stanley does not '
                            'follow a holonomic plan (planner.holonomic true: the base slides '
                            'sideways, which a steered front axle cannot): choose feedforward or '
                            'pure_pursuit, or set planner.holonomic false')
    planner = scenario.node_parameters.get('planner', {})
    if planner.get('model', AUTO) != AUTO:
        return  # checked as given, with the rest
    model = vehicle_model(scenario)
    try:
        importlib.import_module(NODE_CLASSES['planner'][0]).check_parameters(
            {**planner, 'model': model})
    except ParameterError as err:
        raise ScenarioError(f'{_named(scenario, where, f"planner.{err.name}")}: {err.allowed} '
                            '(vehicle_sim.model)') from None


#: The topics vehicle_sim publishes only with a map, and the parameter each also needs on.
MAP_TOPICS = {'/scan': 'scan.enabled', '/map': 'world.publish_map',
              '/collision': 'world.collisions'}


def has_map(scenario: Scenario) -> bool:
    """Whether a run of ``scenario`` has a map: its ``map`` or vehicle_sim's
    ``world.map_yaml``."""
    return scenario.map_yaml is not None or bool(
        scenario.node_parameters.get('vehicle_sim', {}).get('world.map_yaml'))


def _check_world_criteria(scenario: Scenario, where: str) -> None:
    """ScenarioError for a pass criterion on a metric of the world (:data:`WORLD_METRICS`)
    without a map, or on ``collisions`` with vehicle_sim's ``world.collisions`` false: no run
    computes it, so every run would fail it."""
    from wheelsim.report.metrics import WORLD_METRICS

    unmeasured = [key for key in scenario.pass_criteria if key in WORLD_METRICS]
    if unmeasured and not has_map(scenario):
        raise ScenarioError(f'{where}: pass_criteria.{unmeasured[0]}: computed only with a map '
                            "(map, or vehicle_sim's world.map_yaml), which the scenario does "
                            'not give')
    if 'collisions' in scenario.pass_criteria and not _vehicle_sim_value(scenario,
                                                                         'world.collisions'):
        raise ScenarioError(f'{where}: pass_criteria.collisions: counts the contacts vehicle_sim '
                            "reports, which its world.collisions: false turns off (the vehicle "
                            'drives through walls): bound min_clearance_m instead, or turn '
                            'collisions on')


def _check_recorded_topics(scenario: Scenario, where: str) -> None:
    """ScenarioError for a topic ``record`` names that no node of this scenario publishes:
    the world's topics (:data:`MAP_TOPICS`) without a map (:func:`has_map`), or with the
    parameter that turns one on set false."""
    vehicle = {**node_defaults()['vehicle_sim'], **scenario.node_parameters.get('vehicle_sim', {})}
    for topic in scenario.record_topics or ():
        if topic not in MAP_TOPICS:
            continue
        if not has_map(scenario):
            raise ScenarioError(f"{where}: record: {topic}: published only with a map (map, or "
                                "vehicle_sim's world.map_yaml), which the scenario does not give")
        if not vehicle[MAP_TOPICS[topic]]:
            key = f'vehicle_sim.{MAP_TOPICS[topic]}'
            given = f'--param {key}' if key in scenario.overridden else f'nodes.{key}'
            raise ScenarioError(f'{where}: record: {topic}: not published with {given} false')


def _named(scenario: Scenario, where: str, key: str) -> str:
    """``key`` (``node.param``) as the user gave it, for an error: ``--param <key>``, or
    ``<where>: nodes.<key>`` (``where``: the scenario file)."""
    return f'--param {key}' if key in scenario.overridden else f'{where}: nodes.{key}'


def _goal_tolerance_m(scenario: Scenario) -> float:
    """The controller's goal tolerance for this scenario (its parameter or its default)."""
    key = 'goal.xy_tolerance'
    controller = scenario.node_parameters['controller']
    return float(controller.get(key, node_defaults()['controller'][key]))


def _vehicle_sim_value(scenario: Scenario, name: str) -> Any:
    """vehicle_sim's parameter ``name`` in this scenario (its value or its default)."""
    return scenario.node_parameters.get('vehicle_sim', {}).get(
        name, node_defaults()['vehicle_sim'][name])


def _parameters(scenario: Scenario, node: str) -> dict[str, Any]:
    """The node's scenario parameters plus what a lock-step run needs.

    vehicle_sim takes the cmd_vel type the controller publishes (``auto`` follows the live ROS
    graph, which a headless run has not) and the scenario's map as ``world.map_yaml``: it
    reads the file and publishes the map on ``map`` at the start, as map_server would, so the
    bag records it (unless the scenario sets ``world.publish_map`` false). The controller takes
    the vehicle's model unless the scenario sets it. Tuples become lists, as ROS gives arrays.
    """
    values = dict(scenario.node_parameters.get(node, {}))
    values['use_sim_time'] = True
    controller = scenario.node_parameters.get('controller', {})
    if node in ('localization', 'vehicle_sim'):
        values['seed'] = scenario.seed
    if node == 'vehicle_sim':
        values['be_reference_clock'] = False
        stamped = controller.get('enable_stamped_cmd_vel', True)
        values['cmd_vel_type'] = 'twist_stamped' if stamped else 'twist'
        if scenario.map_yaml is not None:
            values['world.map_yaml'] = str(scenario.map_yaml)
    if node == 'controller' and 'model' not in values:
        values['model'] = vehicle_model(scenario)
    return {name: list(v) if isinstance(v, tuple) else v for name, v in sorted(values.items())}


class _Progress:
    """Progress bar (simulated time, achieved real-time factor) and optional pacing.

    Called after every event: without pacing, an event less than :data:`PROGRESS_STEP_NS`
    after the last update costs one comparison."""

    def __init__(self, duration_s: float, real_time_factor: float, show: bool) -> None:
        from tqdm import tqdm

        self._rtf = real_time_factor
        self._start = time.perf_counter()
        self._bar = tqdm(total=round(duration_s, 3), unit='sim s', disable=not show,
                         bar_format='{l_bar}{bar}| {n:.1f}/{total:.1f} s sim [{elapsed}{postfix}]')
        self._shown_s = 0.0
        # Without pacing, no update is due before this time [ns]; with pacing, every event is.
        self._quiet_until_ns = START_TIME_NS + PROGRESS_STEP_NS if real_time_factor <= 0 else 0

    def __call__(self, now_ns: int) -> None:
        if now_ns < self._quiet_until_ns:
            return  # nothing to pace nor to show
        sim_s = (now_ns - START_TIME_NS) / 1e9
        if self._rtf <= 0 and sim_s - self._shown_s < PROGRESS_STEP_S:
            return
        wall_s = time.perf_counter() - self._start
        if self._rtf > 0 and sim_s / self._rtf > wall_s:
            time.sleep(sim_s / self._rtf - wall_s)
        if sim_s - self._shown_s >= PROGRESS_STEP_S:
            self._bar.update(round(sim_s - self._shown_s, 3))
            self._shown_s = sim_s
            if self._rtf <= 0:
                self._quiet_until_ns = now_ns + PROGRESS_STEP_NS
            self._bar.set_postfix_str(f'{sim_s / max(wall_s, 1e-9):.0f}x real time',
                                      refresh=False)

    def close(self) -> float:
        """Close the bar; return wall time [s]."""
        self._bar.close()
        return time.perf_counter() - self._start


@contextlib.contextmanager
def _existing_objects_frozen() -> Iterator[None]:
    """Keep the objects that exist now (modules, nodes, type stores: hundreds of thousands) out
    of the garbage collector's full collections until the block ends (``gc.freeze``): a full
    collection scans every tracked object, about 45 ms each in a fresh ``wheelsim run``, two of
    them during its loop. They go back to the collector afterwards (``gc.unfreeze``), so what a
    run leaves behind is still freed in a process running many (a sweep worker). A process
    that froze objects itself (before forking, say) is left as it is: unfreezing would release
    its objects too."""
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _fan_out(sinks: list[Recorder]) -> Recorder | None:
    """One recorder calling each of ``sinks`` in turn (None for none)."""
    if len(sinks) < 2:
        return sinks[0] if sinks else None

    def each(topic: str, msg: Any, time_ns: int) -> None:
        for sink in sinks:
            sink(topic, msg, time_ns)
    return each


def simulate(scenario: Scenario, bag_dir: Path | None, real_time_factor: float = 0.0,
             show_progress: bool = True, phases: Phases | None = None,
             reader: Recorder | None = None) -> tuple[float, bool]:
    """Run the nodes in lock-step for the scenario's duration, recording the scenario's topics
    into ``bag_dir`` (None: no bag) and giving every message published to ``reader`` (as
    ``reader(topic, message, time_ns)``) if given.

    Returns (wall time [s], interrupted). Ctrl-C and SIGTERM stop the run between two events
    (:mod:`wheelsim.run.held_signals`); the bag is finished either way.
    ``phases`` gets the times of ``nodes`` (construction), ``loop`` and ``close``.
    """
    from wheelsim.run.held_signals import HeldSignals
    from wheelsim.run.lockstep import Lockstep
    from wheelsim.run.recording import BagRecorder
    from wheelsim.run.robot_state import MOVING_JOINTS_PARAMETER, RobotState

    phases = Phases() if phases is None else phases
    progress = _Progress(scenario.duration_s, real_time_factor, show_progress)
    interrupted = False
    nodes = []
    offered_qos: dict[str, list[Any]] = {}  # the publishers' QoS profiles, for the bag
    topic_types: dict[str, type] = {}  # the topics published on, for the bag
    recorder = contextlib.nullcontext() if bag_dir is None or scenario.record_topics == () \
        else BagRecorder(bag_dir, set(scenario.record_topics or ()) or None, offered_qos,
                         topic_types)
    sinks = [sink for sink in (reader, getattr(recorder, 'record', None)) if sink is not None]
    held = HeldSignals()  # Ctrl-C and SIGTERM act between two events, never inside a write
    lockstep = Lockstep(_fan_out(sinks), START_TIME_NS, offered_qos, topic_types)

    def between(now_ns: int) -> None:
        held.deliver()
        progress(now_ns)

    try:
        with held, recorder:
            with phases('nodes'):
                for name in NODE_NAMES:
                    module, cls = NODE_CLASSES[name]
                    node_class = getattr(importlib.import_module(module), cls)
                    nodes.append(lockstep.add(node_class, _parameters(scenario, name)))
                # robot_state_publisher's; its /tf is for the bag only (no node reads it)
                moving = isinstance(recorder, BagRecorder) and recorder.records('/tf')
                nodes.append(lockstep.add(RobotState, {MOVING_JOINTS_PARAMETER: moving}))
            with phases('loop'), _existing_objects_frozen():
                lockstep.run_until(START_TIME_NS + round(scenario.duration_s * 1e9),
                                   between=between)
            phases.start('close')  # writing the bag's end
    except KeyboardInterrupt:  # raised between two events or after the bag was finished
        interrupted = True
    finally:
        wall_s = progress.close()
        for node in nodes:
            close = getattr(node, 'close', None)
            if close is not None:
                close()
            node.seam.destroy()
        phases.stop('close')
    return wall_s, interrupted


def criteria_outcomes(pass_criteria: Mapping[str, float], metrics: Mapping[str, Any]
                      ) -> dict[str, dict[str, Any]]:
    """Per pass criterion: ``bound`` (the bound the scenario gives: an upper bound, a lower one
    for the metrics whose larger values are better), ``value`` (the measured metric; None where
    the run lacks the data) and ``passed`` (:func:`wheelsim.report.summary.passes`)."""
    return {key: {'bound': bound, 'value': metrics.get(key),
                  'passed': passes(key, metrics.get(key), bound)}
            for key, bound in pass_criteria.items()}


def run_record(scenario: Scenario, metrics: Mapping[str, Any],
               criteria: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """What ``metrics.json`` holds: every metric under its own name (and ``partial`` if given),
    plus ``scenario`` (``name``, and ``file``: the scenario file as given on the command line,
    None for the built-in default; never made absolute, so two runs of the same command give the
    same bytes wherever they write), ``seed`` (of localization and vehicle_sim), ``pass_criteria``
    (:func:`criteria_outcomes`) and ``passed`` (every criterion passed, true without any; false
    for a ``partial`` run, whose criteria saw only the part that was simulated)."""
    source = scenario.source
    return {**metrics,
            'scenario': {'name': scenario.name,
                         'file': None if source in (None, DEFAULT_SCENARIO) else source.as_posix()},
            'seed': scenario.seed, 'pass_criteria': dict(criteria),
            'passed': not metrics.get('partial') and all(c['passed'] for c in criteria.values())}


def run_scenario(scenario: Scenario, output_root: Path, real_time_factor: float = 0.0,
                 show_progress: bool = True, make_plots: bool = True,
                 overwrite: bool = False, record: bool = True) -> RunOutcome:
    """Simulate, then write metrics, timing and plots into ``output_root/<scenario name>``
    (a numbered sibling if that exists; see :func:`wheelsim.run.output.run_folder`).
    ``record`` false: no bag, whatever the scenario's ``record`` says (the metrics and plots
    read the run in memory either way). Raises ScenarioError before anything is written for
    parameters of two nodes that cannot run together (:func:`check_across_nodes`), and
    :class:`RunError` (the traceback in :data:`ERROR_FILE` of the output folder, beside the bag
    so far) when a node raised, :class:`ReportInterrupted` for a Ctrl-C or SIGTERM after the
    simulation (once the metrics and timing are written)."""
    from wheelsim.report import metrics, plots
    from wheelsim.report.bag_data import RunReader
    from wheelsim.run.held_signals import HeldSignals
    from wheelsim.run.recording import RecordingError

    phases = Phases()
    check_across_nodes(scenario)
    records = record and scenario.record_topics != ()
    out = run_folder(output_root, scenario.name, overwrite,
                     writes=('bag',) * records + ('plots',) * make_plots,
                     inputs=input_files(scenario) if overwrite else ())
    try:
        # the report's data, read from each message as it is published
        reader = RunReader(plots=make_plots)
        wall_s, interrupted = simulate(scenario, out / 'bag' if record else None,
                                       real_time_factor, show_progress, phases, reader.take)
    except KeyboardInterrupt:  # before the simulation began: nothing written
        discard_unwritten(out)
        raise
    except RecordingError:
        raise
    except Exception as err:  # noqa: BLE001 - whatever a node raised: reported, not a crash
        path = out / ERROR_FILE
        path.write_text(traceback.format_exc())
        raise RunError(f'{type(err).__name__}: {err}'.splitlines()[0], path) from err
    if interrupted and show_progress:  # found in review: seconds of silence, plots drawn
        print('interrupted: writing the metrics' + (' and plots' if make_plots else '')
              + ' of the part simulated' + (' (Ctrl-C again stops the plots)' if make_plots
                                            else ''), file=sys.stderr, flush=True)
    try:
        with HeldSignals():  # a Ctrl-C acts once the metrics are written
            with phases('report_data'):
                run = reader.run()
            with phases('metrics'):
                values = metrics.compute_metrics(
                    run, goal_tolerance_m=_goal_tolerance_m(scenario),
                    collisions_reported=_vehicle_sim_value(scenario, 'world.collisions'))
            if interrupted:
                values['partial'] = True  # computed on the part of the run that was simulated
            criteria = criteria_outcomes(scenario.pass_criteria, values)
            (out / 'metrics.json').write_text(json_text(run_record(scenario, values, criteria)))
            simulated_s = round(run.end_time_s - START_TIME_NS / 1e9, 3) \
                if run.end_time_s > 0 else 0.0
            timing = {'wall_time_s': round(wall_s, 3), 'simulated_time_s': simulated_s,
                      'real_time_factor': (metrics.round_significant(
                          simulated_s / wall_s, REAL_TIME_FACTOR_DIGITS) if wall_s > 0 else 0.0)}
            (out / 'timing.json').write_text(json_text(timing))
        if make_plots:
            with phases('plots'):
                plots.write_plots(run, out / 'plots', title=scenario.name)
    except KeyboardInterrupt:
        bag = 'the bag, ' if records and (out / 'bag').is_dir() else ''
        plotted = ', the plots incomplete' if 'plots' in phases.seconds else ''
        raise ReportInterrupted(f'{bag}metrics.json and timing.json are in {out}{plotted}') \
            from None
    failed = tuple(sorted(key for key, outcome in criteria.items() if not outcome['passed']))
    return RunOutcome(out, values, timing, failed, interrupted, phases)
