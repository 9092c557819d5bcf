"""ROS 2 parameters files (``--params-file``) read as ROS reads them: which node gets what.

rcl_yaml_param_parser (rcl 9.2.0, Jazzy: ``parse.c``, ``namespace.c``) reads a file as
sections: the keys above a ``ros__parameters`` key are the levels of a node name, so
``robot1: {vehicle_sim: {ros__parameters: ...}}`` and ``robot1/vehicle_sim: {ros__parameters:
...}`` are both the section ``robot1/vehicle_sim``. Sections of one name, in one file or in
several files given together, are one entry (in the place of the first one, later values
winning). rclpy (7.1.3, ``_populate_node_parameters_from_rcl_params`` in ``node.cpp``) gives a
node the entries whose name matches its fully qualified name, entry by entry: a leading ``/`` is
optional, ``/*`` stands for one name level and ``/**`` for any number (``/**`` every node,
``/**/vehicle_sim`` every vehicle_sim, ``/robot1/*`` every node in ``/robot1``); nothing else is
a pattern: ``vehicle_sim`` is only ``/vehicle_sim``, not ``/robot1/vehicle_sim``.

:class:`ParamsFileError` names the file and the section for what rcl refuses: a value or list
above ``ros__parameters``, ``ros__parameters`` without a node name or not a mapping, a name that
is not a ROS name (``*`` and ``**`` only as whole levels), an array mixing integers and doubles
(anywhere in the file: rcl refuses the whole file), a YAML alias. Stricter than rcl: keys beside
``ros__parameters`` (rcl takes them after it, and before it fails or not depending on the
release: 9.2.8 and 10.1.4 fail, 10.1.3 does not) and keys that only start with
``ros__parameters`` (rcl's prefix match takes them for it). rclcpp (28.1.0,
``parameter_map.cpp``) matches names as rclpy does; rclpy 9.1.5 (Kilted) matches as 7.1.11
(Jazzy) does.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from wheelsim.core import yaml_numbers
from wheelsim.core.params import ParameterError, flatten

PARAMS_KEY = 'ros__parameters'
_TOKEN = re.compile(r'[A-Za-z_][A-Za-z0-9_]*')
"""One level of a node name or namespace (rmw_validate_node_name, rmw_validate_namespace)."""


class ParamsFileError(ValueError):
    """A params file ROS would refuse. ``detail`` is the message without the file:
    ``section <name>: <problem>`` (or the problem alone for the whole file)."""

    def __init__(self, path: str | Path, section: str | None, problem: str) -> None:
        self.path = str(path)
        self.detail = f'section {section}: {problem}' if section else problem
        super().__init__(f'{path}: {self.detail}')


@dataclass(frozen=True)
class Section:
    """One entry of a params file as rcl builds it: ``name`` as written and joined
    (``robot1/vehicle_sim``, ``/**``), ``parameters`` by dotted name."""

    name: str
    parameters: Mapping[str, Any]

    @property
    def shared(self) -> bool:
        """Whether the last level is ``*`` or ``**``: the section is for any node name."""
        return self.name.rsplit('/', 1)[-1] in ('*', '**')

    def applies_to(self, node_fqn: str) -> bool:
        """Whether ROS gives this section to the node ``node_fqn`` (``/robot1/vehicle_sim``)."""
        name = self.name if self.name.startswith('/') else '/' + self.name
        # rclpy: "/*" -> "(/\w+)", so "/**" -> "(/\w+)*"; names are checked to hold no other
        # regular expression syntax
        return re.fullmatch(name.replace('/*', '(/[A-Za-z0-9_]+)'), node_fqn) is not None


def _join(prefix: str, key: str) -> str:
    """rcl's add_name_to_ns: levels joined by ``/``, none added after a trailing one."""
    if not prefix:
        return key
    return prefix + key if prefix.endswith('/') else f'{prefix}/{key}'


def _name_problem(name: str) -> str | None:
    """Why rcl's _validate_name refuses ``name``, or None."""
    for level in name.removeprefix('/').split('/'):
        if not level:
            return 'an empty level in the node name (one / too many)'
        if level not in ('*', '**') and not _TOKEN.fullmatch(level):
            return (f'{level!r} is not a ROS name (letters, digits and _, not starting with a '
                    'digit; or * or **)')
    return None


def _sections(tree: Mapping[Any, Any], prefix: str, path: str | Path
              ) -> Iterator[tuple[str, Mapping[Any, Any]]]:
    """``(name, ros__parameters)`` of each section of ``tree``, in file order."""
    for key, body in tree.items():
        if key == PARAMS_KEY:
            if not prefix:
                raise ParamsFileError(path, None, f'{PARAMS_KEY} without a node name above it')
            if len(tree) > 1:
                others = ', '.join(str(k) for k in tree if k != PARAMS_KEY)
                raise ParamsFileError(path, prefix, f'{others} beside {PARAMS_KEY}: give each '
                                      'node a section of its own')
            if not isinstance(body, Mapping):
                raise ParamsFileError(path, prefix, f'{PARAMS_KEY} must map parameter names to '
                                      'values')
            yield prefix, body
            continue
        name = _join(prefix, str(key))
        if not isinstance(body, Mapping):
            raise ParamsFileError(path, name, f'a value before {PARAMS_KEY} (a node\'s '
                                  f'parameters go under its {PARAMS_KEY})')
        yield from _sections(body, name, path)


def mixed_array(value: Any) -> str:
    """Why ROS refuses or misreads the array ``value`` (a list, as a params file or ``--param``
    text gives it), or '' if it does not: rcl_yaml_param_parser types an array by its first item
    and refuses one with an item of another type ("Sequence should be of same type"), so ``[2, 0,
    .nan]`` (integers, then a double) or ``[1, 'a']`` starts no node; ``[2, 0, 1]`` is an integer
    array, which a double array parameter accepts. An array of arrays or mappings ROS reads
    flattened (``[[1, 2]]`` as ``[1, 2]``, ``[a: 1]`` as a parameter ``.a``)."""
    if not isinstance(value, list):
        return ''
    shown = yaml_numbers.shown(value)
    if any(isinstance(item, (list, dict)) for item in value):
        return (f'the array {shown} holds arrays or mappings, which ROS does not read as its '
                'items (it reads [[1, 2]] as [1, 2]): give one value per item')
    kinds = list(dict.fromkeys(_KIND_NAMES.get(type(item), 'other values') for item in value))
    if len(kinds) < 2:
        return ''
    if set(kinds) == {'integers', 'doubles'}:
        integer = next(item for item in value if type(item) is int)
        return (f'the array {shown} mixes integers and doubles, which ROS refuses (an array '
                f'has one type): write {integer} as {integer}.0')
    return (f'the array {shown} mixes {" and ".join(kinds)}, which ROS refuses (an array has '
            'one type)')


_KIND_NAMES = {bool: 'booleans', int: 'integers', float: 'doubles', str: 'texts',
               type(None): 'nulls'}


def _aliased_or_merged(events: Iterable[yaml.Event]) -> bool:
    """Whether a YAML document's events hold an alias or a merge key (a plain ``<<`` key)."""
    is_key: list[bool] = []  # per open collection: whether its next node is a mapping key
    for event in events:
        if isinstance(event, yaml.AliasEvent):
            return True
        if isinstance(event, yaml.NodeEvent) and is_key and is_key[-1] is not None:
            if (isinstance(event, yaml.ScalarEvent) and is_key[-1] and event.value == '<<'
                    and event.style is None and event.tag is None):
                return True
            is_key[-1] = not is_key[-1]
        if isinstance(event, yaml.MappingStartEvent):
            is_key.append(True)
        elif isinstance(event, yaml.SequenceStartEvent):
            is_key.append(None)  # items, no keys
        elif isinstance(event, yaml.CollectionEndEvent):
            is_key.pop()
    return False


def _load(path: str | Path) -> Any:
    try:
        text = Path(path).read_text(encoding='utf-8')
        if _aliased_or_merged(yaml.parse(text)):
            raise ParamsFileError(path, None, 'YAML aliases (*name) are refused by ROS 2, and '
                                  'it reads a merge key << as a name: write the values out')
        return yaml_numbers.load(text)
    except OSError as err:
        raise ParamsFileError(path, None, f'not a readable YAML file: {err.strerror}') from None
    except UnicodeDecodeError as err:
        raise ParamsFileError(path, None, yaml_numbers.not_utf8(err)) from None
    except yaml.YAMLError as err:
        raise ParamsFileError(path, None, 'not a readable YAML file: '
                              f'{yaml_numbers.one_line(err)}') from None


def read_sections(paths: Sequence[str | Path],
                  last: Mapping[str, Mapping[str, Any]] | None = None) -> list[Section]:
    """The entries ``paths`` (given together, as several ``--params-file``), then ``last``
    (section name -> parameters: what launch_ros writes to a file of its own for a node's
    parameter dict, named by the node's full name), make, in rcl's order: each name where it
    first appears, its parameters from all its sections, later ones winning. Raises
    :class:`ParamsFileError`."""
    entries: dict[str, dict[str, Any]] = {}
    trees = [(path, _load(path)) for path in paths]
    if last:
        trees.append(('the launch\'s parameters',
                      {name: {PARAMS_KEY: dict(values)} for name, values in last.items()}))
    for path, tree in trees:
        if tree is None:
            continue
        if not isinstance(tree, Mapping):
            raise ParamsFileError(path, None, 'must map node names to sections')
        for name, parameters in _sections(tree, '', path):
            problem = _name_problem(name)
            if problem:
                raise ParamsFileError(path, name, problem)
            try:
                values = flatten(parameters)
            except ParameterError as err:
                raise ParamsFileError(path, name, f'{err.name}: {err.allowed}') from None
            for key, value in values.items():
                if problem := mixed_array(value):
                    raise ParamsFileError(path, name, f'{key}: {problem}')
            entries.setdefault(name, {}).update(values)
    return [Section(name, values) for name, values in entries.items()]


def section_parameters(sections: Sequence[Section], node_fqn: str,
                       declared: Collection[str] | None = None) -> dict[str, Any]:
    """The parameters (dotted names) ``sections`` give the node ``node_fqn``
    (``/robot1/vehicle_sim``), later sections winning. With ``declared`` (the names the node
    declares), a section for any node name (:attr:`Section.shared`: ``/**``, ``/*``) gives only
    those, as ROS applies it (the node takes what it declares; the rest is for other nodes),
    while a section naming the node is taken whole, for its caller to check."""
    values: dict[str, Any] = {}
    for section in sections:
        if section.applies_to(node_fqn):
            values.update({name: value for name, value in section.parameters.items()
                           if declared is None or not section.shared or name in declared})
    return values


def none_applies(sections: Sequence[Section], node_fqns: Sequence[str]) -> str | None:
    """Why a file of ``sections`` gives nothing to any of the nodes ``node_fqns``
    (``/robot1/vehicle_sim``): it has sections but ROS gives none of them to any of those nodes
    (a section name mistyped, or written for other nodes or another namespace: each node would
    silently take every default), as ``no section is for <the nodes> (sections: <names>)``;
    None if one applies or there is none."""
    if not sections or any(section.applies_to(node) for section in sections
                           for node in node_fqns):
        return None
    names = ', '.join(section.name for section in sections)
    return f'no section is for {", ".join(node_fqns)} (sections: {names})'


def node_parameters(paths: Sequence[str | Path], node_fqn: str,
                    declared: Collection[str] | None = None) -> dict[str, Any]:
    """The parameters (dotted names) ``paths`` give the node ``node_fqn``
    (``/robot1/vehicle_sim``), as ROS gives them (``declared``: see
    :func:`section_parameters`). Raises :class:`ParamsFileError`."""
    return section_parameters(read_sections(paths), node_fqn, declared)


def preset_names_in(folder: Path) -> tuple[str, ...]:
    """The vehicle presets in ``folder`` (wheelsim's ``params``), sorted: the names of its
    ``*.yaml`` files with a section that ROS gives the node ``/vehicle_sim`` by name
    (``vehicle_sim``, ``/**/vehicle_sim``; not ``/**`` or ``/*``, which any params file may
    have, nor ``robot1/vehicle_sim``), the files a launch can start a vehicle from (not those of
    its sub-folders: Nav2's are in ``nav2``). Any file that cannot be read as ROS reads params
    files is listed too: starting from it fails naming its problem, and it keeps no other preset
    from being listed."""
    def is_preset(path: Path) -> bool:
        try:
            sections = read_sections([path])
        except ParamsFileError:
            return True
        return any(not section.shared and section.applies_to('/vehicle_sim')
                   for section in sections)

    return tuple(sorted(path.stem for path in folder.glob('*.yaml') if is_preset(path)))
