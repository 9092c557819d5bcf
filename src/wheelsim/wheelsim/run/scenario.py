"""Scenario files for ``wheelsim run``: what to simulate, for how long, what to record and check.

A scenario is YAML::

    name: figure_eight            # names the output folder results/<name>/
    duration: 60.0                # simulated seconds
    seed: 1                       # seed of localization and vehicle_sim (repeatable runs)
    params_file: ../params/indoor_differential.yaml   # optional ROS params file, relative to
                                  # this file; its sections for the four nodes are the base
    map: room                     # optional map_server YAML (relative to this file), or the
                                  # name of a shipped map (share/wheelsim/params/maps/<name>.yaml)
    record: all                   # 'all', 'none' (no bag) or a list of topics
    pass_criteria:                # optional bounds on metrics.json entries (upper; lower
                                  # for the larger-is-better ones, e.g. min_clearance_m)
      cross_track_rms_m: 0.10
    nodes:                        # per-node parameters, applied over params_file
      vehicle_sim: {model: differential}
      localization: {mode: noisy}
      planner: {waypoints: [...]}
      controller: {algorithm: ...}

Every key is checked: unknown scenario keys, unknown node names and parameters a node does not
declare are errors naming the key (with the closest valid name), as are values out of range, and
a node parameter that the run sets itself (:data:`RUN_SET_PARAMETERS`: ``seed`` comes from the
scenario's ``seed``) when ``nodes:`` or a sweep sets it too: the error names both settings.
(A ``params_file`` is the base layer, which ``nodes:`` and the scenario's keys replace; the
parameters a run sets itself or does not use are taken out of it and listed in
:attr:`Scenario.params_file_replaced`, which the CLI prints.)
No ROS imports (but the package index, to find a shipped map): the CLI validates a scenario,
its map included, before starting anything.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParameterError, ParamSpec, flatten, named_by, unknown_keys
from wheelsim.core.params_file import (
    ParamsFileError,
    mixed_array,
    none_applies,
    read_sections,
    section_parameters,
)
from wheelsim.core.vehicle_sim.config import REFERENCE_CLOCK_PARAMETERS
from wheelsim.core.world.map_file import load_map_file, map_image_path
from wheelsim.core.world.occupancy import MapError
from wheelsim.run.output import OutputError, check_run_name
from wheelsim.shipped import shipped_map, shipped_map_names

NODE_NAMES = ('vehicle_sim', 'localization', 'planner', 'controller')
RECORDABLE_TOPICS = ('/cmd_vel', '/collision', '/footprint', '/ground_truth', '/joint_states',
                     '/map', '/odom', '/plan', '/pose', '/robot_description', '/scan', '/tf',
                     '/tf_static', '/tracking_error', '/twist_actual', '/vehicle_description')
"""What the nodes of a run publish (docs/interface.md), which ``record`` may name: not
``/diagnostics``, which wall-clock timers publish, and those do not run in lock-step."""
MIN_DURATION_S = 0.001  # one step of vehicle_sim at its default rate: a shorter run runs nothing
SCENARIO_KEYS = ('name', 'duration', 'seed', 'params_file', 'map', 'record', 'pass_criteria',
                 'nodes')
DEFAULT_SCENARIO = Path(__file__).parent / 'scenarios' / 'default.yaml'
SEED_KEY = 'seed'
"""The override key of the scenario's seed (``--param seed=1,2,3``)."""
SEED_BITS = 63
"""A scenario's seed is an integer in [0, 2**63-1], the range of the nodes' ``seed``
parameters (vehicle_sim, localization)."""
#: Node parameters every run sets itself (wheelsim.run.runner), with the setting that does it.
RUN_SET_PARAMETERS = {
    **{(node, 'use_sim_time'): 'wheelsim run (lock-step simulated time)' for node in NODE_NAMES},
    ('vehicle_sim', 'seed'): "the scenario's seed (sweep it with --param seed=...)",
    ('localization', 'seed'): "the scenario's seed (sweep it with --param seed=...)",
    ('vehicle_sim', 'be_reference_clock'): 'wheelsim run (the lock-step executor is the clock)',
    ('vehicle_sim', 'cmd_vel_type'): 'wheelsim run (from controller.enable_stamped_cmd_vel)',
}
#: Node parameters a params file may hold for live launches that no run uses, with why (given in
#: ``nodes:`` or ``--param`` they are refused: vehicle_sim refuses them when not the clock).
RUN_UNUSED_PARAMETERS = {
    ('vehicle_sim', name): 'a run is its own clock (--real-time-factor paces it)'
    for name in REFERENCE_CLOCK_PARAMETERS
}


class ScenarioError(ValueError):
    """An invalid scenario file; the message names the file and the key."""


@dataclass(frozen=True)
class Scenario:
    """A validated scenario. ``node_parameters[node]`` maps dotted names to values."""

    name: str
    duration_s: float
    seed: int
    record_topics: tuple[str, ...] | None  # None: every topic; (): none, no bag
    pass_criteria: Mapping[str, float]
    node_parameters: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    source: Path | None = None
    map_yaml: Path | None = None
    """The map vehicle_sim reads (the runner gives it as ``world.map_yaml``) and publishes
    on ``map`` (as Nav2's map_server would), if any."""
    params_file: Path | None = None
    """The scenario's ``params_file``, resolved, if any."""
    params_file_replaced: Mapping[str, str] = field(default_factory=dict)
    """``{'node.param': why the file's value is not used}``: parameters the ``params_file`` sets
    that every run sets itself (:data:`RUN_SET_PARAMETERS`) or that no run uses
    (:data:`RUN_UNUSED_PARAMETERS`); the CLI says so."""
    nodes_given: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """``{node: names}``: the parameters the scenario's ``nodes:`` gives (not its params file),
    which its runs must use (:func:`check_used`)."""
    overridden: tuple[str, ...] = ()
    """The ``node.param`` names ``--param`` gave (:func:`with_overrides`): an error about
    their values names the option, not the scenario file."""


def check_seed(what: str, value: Any, bits: int = SEED_BITS) -> None:
    """ScenarioError ``<what>: <value> must be an integer in [0, 2**<bits>-1]`` (the value as
    YAML writes it) unless ``value`` is such an integer (a bool is not). An integer beyond 64
    bits, which YAML read as ROS reads it (a float), is shown as the integer it holds."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 2**bits:
        shown = int(value) if isinstance(value, float) and value.is_integer() \
            and abs(value) >= 2**63 else value
        raise ScenarioError(f'{what}: {yaml_numbers.shown(shown)} must be an integer in '
                            f'[0, 2**{bits}-1]')


def _is_finite_number(value: Any) -> bool:
    return (not isinstance(value, bool) and isinstance(value, (int, float))
            and math.isfinite(value))


def _fail(source: Path | str | None, key: str, problem: str) -> ScenarioError:
    where = f'{source}: ' if source else ''
    return ScenarioError(f'{where}{key}: {problem}')


def _mapping_or_none(tree: Mapping[str, Any], key: str) -> Any:
    """``tree[key]``, ``{}`` when missing or left empty (null); anything else as it is (for
    the caller to refuse what is no mapping: ``0``, ``[]`` and ``''`` are not none)."""
    value = tree.get(key)
    return {} if value is None else value


def _closest(key: str, known: tuple[str, ...] | list[str]) -> str:
    suggestion = unknown_keys(known, [key])[0][1]
    return f' (did you mean {suggestion}?)' if suggestion else f' (known: {", ".join(known)})'


def params_file_sections(path: Path, node_specs: Mapping[str, list[ParamSpec]], source: str
                         ) -> dict[str, dict[str, Any]]:
    """Flat parameters per node from a ROS params file, for the nodes of a headless run
    (``/vehicle_sim``, ...: :meth:`Lockstep.add <wheelsim.run.lockstep.Lockstep.add>` puts
    them in the root namespace), the sections matched as ROS matches them
    (:mod:`wheelsim.core.params_file`).

    A section naming the node (``vehicle_sim``, ``/**/vehicle_sim``) is taken whole (and
    checked like ``nodes:``); a section for any node name (``/**``, ``/*``) gives a node only
    the parameters it declares, as ROS applies it. Raises :class:`ScenarioError` starting with
    ``source`` (how the user gave the file, e.g. ``params_file PATH``) when ROS would refuse
    the file, or when it has sections but none for the run's nodes (a robot's file for
    namespaced nodes: the run would silently take every default).
    """
    try:
        sections = read_sections([path])
    except ParamsFileError as err:
        raise ScenarioError(f'{source}: {err.detail}') from None
    values = {node: section_parameters(sections, f'/{node}',
                                       {spec.name for spec in node_specs[node]})
              for node in NODE_NAMES}
    problem = none_applies(sections, [f'/{node}' for node in NODE_NAMES])
    if problem:
        raise ScenarioError(f'{source}: {problem}: the run\'s nodes, in no namespace')
    return values


def _map_path(source: Path, value: Any, vehicle_sim: Mapping[str, Any]) -> Path:
    """The scenario's ``map``: a shipped map's name or a YAML path relative to the scenario."""
    if not isinstance(value, str) or not value:
        raise _fail(source, 'map', f'{yaml_numbers.shown(value)} must name a map_server YAML '
                    'file or a shipped map')
    if vehicle_sim.get('world.map_yaml'):
        raise _fail(source, 'map', 'nodes.vehicle_sim.world.map_yaml names a map too: give one '
                    '(the runner gives map to vehicle_sim as world.map_yaml)')
    if '/' not in value and not value.endswith(('.yaml', '.yml')):
        names = shipped_map_names()
        if value not in names:
            suggestion = unknown_keys(names, [value])[0][1]
            hint = f'did you mean {suggestion}? ' if suggestion else ''
            raise _fail(source, 'map', f'{value!r} is no shipped map ({hint}one of '
                        f'{", ".join(names)}) and no file path (a path has a / or ends in '
                        '.yaml)')
        path = shipped_map(value)
    else:
        path = (source.parent / value).resolve()
    try:
        load_map_file(path)
    except MapError as err:
        raise _fail(source, 'map', str(err)) from None
    return path


def load_scenario(
    path: Path | None,
    node_specs: Mapping[str, list[ParamSpec]],
    metric_names: tuple[str, ...],
    node_checks: Mapping[str, Callable[[Mapping[str, Any]], None]] | None = None,
) -> Scenario:
    """Read and validate a scenario file (``None``: the built-in default).

    ``node_specs`` are the parameter specs each node declares; ``metric_names`` the keys that
    ``pass_criteria`` may bound; ``node_checks`` each node's rules across its parameters. Raises
    :class:`ScenarioError` naming the key on any problem.
    """
    source = Path(path) if path is not None else DEFAULT_SCENARIO
    try:
        tree = yaml_numbers.load(source.read_text(encoding='utf-8'))
    except OSError as err:
        raise ScenarioError(f'cannot read scenario {source}: {err.strerror}') from None
    except UnicodeDecodeError as err:
        raise ScenarioError(f'{source}: {yaml_numbers.not_utf8(err)}') from None
    except yaml.YAMLError as err:
        raise ScenarioError(f'{source}: not valid YAML: {yaml_numbers.one_line(err)}') from None
    if not isinstance(tree, dict):
        keys = ', '.join(SCENARIO_KEYS)
        raise ScenarioError(f'{source}: a scenario is a mapping of keys ({keys})')
    for key in tree:
        if key not in SCENARIO_KEYS:
            hint = _closest(str(key), SCENARIO_KEYS)
            raise _fail(source, str(key), 'unknown scenario key' + hint)

    name = tree.get('name', source.stem)
    try:
        check_run_name(name)
    except OutputError as err:
        raise _fail(source, 'name', str(err)) from None
    duration = tree.get('duration', 60.0)
    if not _is_finite_number(duration) or not MIN_DURATION_S <= duration <= 86400:
        raise _fail(source, 'duration', f'{yaml_numbers.shown(duration)} must be a number of '
                    f'seconds in [{MIN_DURATION_S:g}, 86400]')
    seed = tree.get('seed', 1)
    check_seed(f'{source}: seed', seed)

    record = tree.get('record', 'all')
    if record == 'all':
        record_topics = None
    elif record == 'none':
        record_topics = ()
    elif isinstance(record, list) and record and all(isinstance(t, str) for t in record):
        record_topics = tuple(t if t.startswith('/') else '/' + t for t in record)
        for index, topic in enumerate(record_topics):
            if topic not in RECORDABLE_TOPICS:
                raise _fail(source, f'record: {topic}', 'no node of a run publishes it'
                            + _closest(topic, RECORDABLE_TOPICS))
            if topic in record_topics[:index]:
                raise _fail(source, f'record: {topic}', 'given twice: give it once')
    else:
        raise _fail(source, 'record', f'{yaml_numbers.shown(record)} must be "all", "none" or a '
                    'list of topic names')

    criteria = _mapping_or_none(tree, 'pass_criteria')
    if not isinstance(criteria, dict):
        raise _fail(source, 'pass_criteria', f'{yaml_numbers.shown(criteria)} must map metric '
                    'names to bounds (or be left empty: none)')
    for key, bound in criteria.items():
        if key not in metric_names:
            hint = _closest(str(key), metric_names)
            raise _fail(source, f'pass_criteria.{key}', 'unknown metric' + hint)
        if not _is_finite_number(bound) or bound < 0:
            raise _fail(source, f'pass_criteria.{key}', f'{yaml_numbers.shown(bound)} must be a '
                        'finite number >= 0 (no metric is negative)')

    parameters = {node: {} for node in NODE_NAMES}
    replaced: dict[str, str] = {}
    if 'params_file' in tree:
        given = tree['params_file']
        if not isinstance(given, str) or not given:  # null was the path 'None'
            raise _fail(source, 'params_file', f'{yaml_numbers.shown(given)} must be the path '
                        'of a ROS params file (relative to the scenario)')
        params_path = (source.parent / given).resolve()
        if params_path.is_dir():
            raise _fail(source, 'params_file', f'{params_path} is a folder, not a file')
        if not params_path.exists():
            raise _fail(source, 'params_file', f'{params_path} does not exist')
        if not params_path.is_file():
            raise _fail(source, 'params_file', f'{params_path} is not a regular file')
        parameters = params_file_sections(params_path, node_specs, f'params_file {params_path}')
        for node, values in parameters.items():
            for parameter in list(values):
                if (node, parameter) in RUN_SET_PARAMETERS:
                    replaced[f'{node}.{parameter}'] = \
                        f'which every run sets itself: {RUN_SET_PARAMETERS[node, parameter]}'
                elif (node, parameter) in RUN_UNUSED_PARAMETERS:
                    replaced[f'{node}.{parameter}'] = \
                        f'which no run uses: {RUN_UNUSED_PARAMETERS[node, parameter]}'
                else:
                    continue
                del values[parameter]
        # the scenario's map replaces the file's, which is not read (another machine's path)
        if 'map' in tree and parameters['vehicle_sim'].pop('world.map_yaml', ''):
            replaced['vehicle_sim.world.map_yaml'] = "which the scenario's map replaces"
        file_parameters = {node: dict(values) for node, values in parameters.items()}
    nodes = _mapping_or_none(tree, 'nodes')
    given: dict[str, tuple[str, ...]] = {}  # the parameter names nodes: gives, by node
    if not isinstance(nodes, dict):
        raise _fail(source, 'nodes', f'{yaml_numbers.shown(nodes)} must map node names '
                    f'({", ".join(NODE_NAMES)}) to parameters (or be left empty: none)')
    for node, values in nodes.items():
        if node not in NODE_NAMES:
            raise _fail(source, f'nodes.{node}', 'unknown node' + _closest(str(node), NODE_NAMES))
        values = {} if values is None else values  # left empty: none
        if not isinstance(values, dict):
            raise _fail(source, f'nodes.{node}', f'{yaml_numbers.shown(values)} must map parameter '
                        'names to values (or be left empty: none)')
        try:
            flat = flatten(values)
        except ParameterError as err:
            raise _fail(source, f'nodes.{node}.{err.name}', err.allowed) from None
        for parameter in flat:
            if (node, parameter) in RUN_SET_PARAMETERS:
                raise _fail(source, f'nodes.{node}.{parameter}', 'overridden in every run by '
                            f'{RUN_SET_PARAMETERS[node, parameter]}: remove it')
        parameters[node].update(flat)
        given[node] = tuple(flat)
    file_source = f'params_file {params_path}' if 'params_file' in tree else None
    for node, values in parameters.items():  # the file's and nodes:, together
        if file_source is not None:  # what the file gives alone is named in the file
            check_node_parameters(file_source, f'{node}.', node, file_parameters[node],
                                  node_specs[node], None)
        check_node_parameters(source, f'nodes.{node}.', node, values, node_specs[node], None)
        node_check = node_checks[node] if node_checks is not None else None
        if node_check is not None:
            try:
                node_check(values)
            except ParameterError as err:  # named where the parameter it names is given
                if err.name in given.get(node, ()):
                    raise _fail(source, f'nodes.{node}.{err.name}', err.allowed) from None
                if file_source is not None and err.name in file_parameters[node]:
                    raise _fail(file_source, f'{node}.{err.name}', err.allowed) from None
                raise _fail(source, f'nodes.{node}.{err.name} (its default, '
                            f'{yaml_numbers.shown(err.value)})', err.allowed) from None

    map_yaml = _map_path(source, tree['map'], parameters['vehicle_sim']) if 'map' in tree else None
    return Scenario(name=name, duration_s=float(duration), seed=seed, record_topics=record_topics,
                    pass_criteria={k: float(v) for k, v in criteria.items()},
                    node_parameters=parameters, source=source, map_yaml=map_yaml,
                    params_file=params_path if 'params_file' in tree else None,
                    params_file_replaced=replaced, nodes_given=given)


def input_files(scenario: Scenario) -> list[Path]:
    """The files a run of ``scenario`` reads: the scenario file, its ``params_file`` and the
    map's YAML and image (its ``map``, or vehicle_sim's ``world.map_yaml``, relative to the
    current folder as the node takes it)."""
    files = [path for path in (scenario.source, scenario.params_file) if path is not None]
    map_yaml = scenario.map_yaml or scenario.node_parameters.get('vehicle_sim', {}).get(
        'world.map_yaml')
    if map_yaml:
        files.append(Path(map_yaml))
        with contextlib.suppress(MapError):  # an unreadable map is the run's error to name
            files.append(map_image_path(map_yaml))
    return files


def check_node_parameters(source: Path | str, prefix: str, node: str, values: Mapping[str, Any],
                          node_specs: list[ParamSpec],
                          node_check: Callable[[Mapping[str, Any]], None] | None,
                          values_in_source: bool = False) -> None:
    """Raise :class:`ScenarioError` ``<source>: <prefix><key>: <value> <what is allowed>``
    unless every key of ``values`` (``node``'s parameters, dotted names) is one the node
    declares (``node_specs``; ``use_sim_time`` aside), each value is in its range (an array of
    one type: ROS refuses ``[2, 0, .nan]``), and together they pass ``node_check`` (the node's
    ``check_parameters``: its rules across parameters; None: not checked). The value out of
    range is left out if ``values_in_source`` (``source`` shows the values given)."""
    by_name = {spec.name: spec for spec in node_specs}
    for key, suggestion in unknown_keys(by_name, [k for k in values if k != 'use_sim_time']):
        hint = f' (did you mean {suggestion}?)' if suggestion else ''
        raise _fail(source, prefix + key, f'{node} has no such parameter{hint}')
    for key, value in values.items():
        if key in by_name:
            try:
                by_name[key].check(value)
            except ParameterError as err:
                listed = isinstance(value, (list, tuple))
                given = ('' if listed == (by_name[key].kind is tuple)
                         else ', not an array' if listed else ', not one value')
                value_text = '' if values_in_source else yaml_numbers.shown(value) + ' '
                raise _fail(source, prefix + key, value_text + err.allowed + given) from None
            mixed = mixed_array(value)
            if mixed:
                raise _fail(source, prefix + key, mixed)
    if node_check is not None:
        try:
            node_check(values)
        except ParameterError as err:
            raise _fail(source, prefix + err.name, err.allowed) from None


UnusedParameters = Callable[[str, Mapping[str, Mapping[str, Any]]], Mapping[str, str]]
"""``unused(node, parameters)``: {parameter name, or ``group.`` for each of a group's: why} of
the node's parameters a run does not use with ``parameters`` (``{node: its parameters}``)
(:func:`wheelsim.run.runner.unused_in_a_run`)."""


def check_used(scenario: Scenario, runs: Sequence[Scenario], params: Iterable[str],
               unused: UnusedParameters, what: str) -> None:
    """Raise :class:`ScenarioError` for a node parameter given and used nowhere (``unused``):
    a ``--param`` (``params``: the names given, ``seed`` aside) that no run of ``runs`` (the
    command's scenarios, overrides applied) uses, ``--param <node>.<name>: has no effect in
    <what>: <why>; remove it``; or a value of ``scenario``'s ``nodes:``
    (:attr:`Scenario.nodes_given`) that neither the scenario as written nor any run uses,
    ``<scenario>: nodes.<node>.<name>: ...`` (a ``--param`` that switches the model or mode may
    leave the scenario's own values unused: they stay the scenario's). A value that changes
    nothing would make a sweep over it give the same run at every point; one that some run uses
    (another axis switching the mode or the model) is taken. ``<why>`` lists each run's reason
    once."""
    def reason(run: Scenario, node: str, name: str) -> str | None:
        return next((why for key, why in unused(node, run.node_parameters).items()
                     if named_by(key, name)), None)

    where = scenario.source or 'the default scenario'
    given = [(f'--param {param}', False, *param.split('.', 1))
             for param in params if '.' in param]
    given += [(f'{where}: nodes.{node}.{name}', True, node, name)
              for node, names in scenario.nodes_given.items() for name in names]
    for label, scenario_s, node, name in given:
        reasons = []
        for run in runs:
            why = reason(run, node, name)
            if why is None:
                break  # this run uses it
            reasons.append(why)
        else:
            if reasons and not (scenario_s and reason(scenario, node, name) is None):
                why = '; '.join(dict.fromkeys(reasons))  # each once, in run order
                raise ScenarioError(f'{label}: has no effect in {what}: {why}; remove it')


OverrideCheck = Callable[[str, Mapping[str, Any], Mapping[str, Any]], None]
"""``check(node, parameters, given)`` of :func:`with_overrides`."""


def with_overrides(scenario: Scenario, overrides: Mapping[str, Any],
                   check: OverrideCheck) -> Scenario:
    """A copy of ``scenario`` with ``{'node.param': value}`` overrides and, under
    :data:`SEED_KEY`, its seed (used by ``--param`` of run, sweep and tune).

    ``check(node, parameters, given)`` validates the whole parameter set of each node an
    override changed, overrides applied (the names, the ranges and the node's rules across
    parameters; ``given``: that node's overrides), and raises ScenarioError; an override of a
    parameter the run sets itself (:data:`RUN_SET_PARAMETERS`) is an error naming both, as is
    ``vehicle_sim.world.map_yaml`` in a scenario with a ``map``.
    """
    parameters = {node: dict(values) for node, values in scenario.node_parameters.items()}
    seed = scenario.seed
    for key, value in overrides.items():
        if key == SEED_KEY:
            check_seed('--param seed', value)
            seed = value
            continue
        node, _, name = key.partition('.')
        if node not in NODE_NAMES or not name:
            suggestion = unknown_keys(NODE_NAMES, [node])[0][1] if name else None
            hint = f' (did you mean {suggestion}.{name}?)' if suggestion else ''
            raise ScenarioError(f'--param {key}: expected seed or <node>.<parameter> with node '
                                f'one of {", ".join(NODE_NAMES)}{hint}')
        if (node, name) in RUN_SET_PARAMETERS:
            raise ScenarioError(f'--param {key}: overridden in every run by '
                                f'{RUN_SET_PARAMETERS[node, name]}')
        if (node, name) == ('vehicle_sim', 'world.map_yaml') and value and scenario.map_yaml:
            raise ScenarioError(f'--param {key}: the scenario\'s map ({scenario.map_yaml}) is '
                                'vehicle_sim\'s world.map_yaml already: give one')
        parameters[node][name] = value
    by_node: dict[str, dict[str, Any]] = {}
    for key, value in overrides.items():
        if key != SEED_KEY:
            node, _, name = key.partition('.')
            by_node.setdefault(node, {})[name] = value
    for node, given in by_node.items():
        check(node, parameters[node], given)
    overridden = tuple(dict.fromkeys([*scenario.overridden, *(
        key for key in overrides if key != SEED_KEY)]))
    return dataclasses.replace(scenario, node_parameters=parameters, seed=seed,
                               overridden=overridden)
