"""Declare :mod:`wheelsim.core.params` specs as ROS parameters and keep a validated config.

Usage in a node (every wheelsim node does this)::

    self.params = NodeParameters(seam)
    self.settings = self.params.declare_config(MySettings, on_change=self._on_settings)
    self.params.report_unknown()        # after the last declare(): warn about typos
    ...
    self.settings.config                # the current frozen dataclass

What :class:`NodeParameters` does, so that no node repeats it:

- Start-up: the values given to the node (``--params-file``, ``-p name:=value``, launch) are
  read, converted (an integer is accepted for a double parameter, ``[]`` for a double array),
  and the whole config is built and validated *before* anything is declared. An invalid value
  raises :class:`wheelsim.core.params.ParameterError` naming the parameter, the value and the
  allowed range; :func:`wheelsim.ros.node_main.run_node` turns that into one line and exit code 2.
- Every spec is declared with a ``ParameterDescriptor``: description with the unit, explicit
  type (also for empty double arrays), ``FloatingPointRange`` / ``IntegerRange`` from the spec
  bounds, the choices in ``additional_constraints`` and ``read_only``.
- Live changes (``ros2 param set``, ``ros2 param load``, the SetParameters services): integers
  given for double parameters are converted first; the candidate config is then rebuilt and
  validated (ranges, choices and cross-field rules) and refused with the error as the reason;
  once the change is accepted, the new frozen config is stored and ``on_change(new, old)`` runs.
- :meth:`NodeParameters.report_unknown` warns about every given name that the node does not
  declare, with the closest declared name (``wheel_bse`` -> ``did you mean wheel_base?``).

rclpy calls every registered pre-set callback with the original list and concatenates their
results, so a node must have only one: create exactly one :class:`NodeParameters` per node and
declare all its groups through it.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial
from typing import Any, Generic, TypeVar

from rcl_interfaces.msg import (
    FloatingPointRange,
    IntegerRange,
    ParameterDescriptor,
    SetParametersResult,
)
from rclpy.parameter import Parameter

from wheelsim.core.params import (
    ParameterError,
    ParamSpec,
    ParamValue,
    from_flat,
    short_repr,
    specs,
    unknown_keys,
)
from wheelsim.ros.seam import NodeSeam

ConfigT = TypeVar('ConfigT')

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1
_ROS_TYPE = {
    bool: Parameter.Type.BOOL,
    int: Parameter.Type.INTEGER,
    float: Parameter.Type.DOUBLE,
    str: Parameter.Type.STRING,
    tuple: Parameter.Type.DOUBLE_ARRAY,
}
_ARRAY_TYPES = (
    Parameter.Type.BYTE_ARRAY,
    Parameter.Type.BOOL_ARRAY,
    Parameter.Type.INTEGER_ARRAY,
    Parameter.Type.DOUBLE_ARRAY,
    Parameter.Type.STRING_ARRAY,
)


def descriptor(spec: ParamSpec) -> ParameterDescriptor:
    """The ``ParameterDescriptor`` of ``spec``: description with unit, type, range, read_only."""
    text = spec.description + (f' [{spec.unit}]' if spec.unit else '')
    result = ParameterDescriptor(
        name=spec.name,
        type=_ROS_TYPE[spec.kind].value,  # rclpy 7 (Jazzy): a plain Enum, not an IntEnum
        description=text,
        read_only=spec.read_only,
    )
    constraints = []
    if spec.choices is not None or spec.special is not None:
        constraints.append(spec.allowed())
    elif spec.min_exclusive:
        constraints.append(f'must be > {spec.min_value:g}')
    result.additional_constraints = '; '.join(constraints)
    if spec.min_value is None and spec.max_value is None:
        return result
    if spec.kind is float:
        low = -math.inf if spec.min_value is None else float(spec.min_value)
        high = math.inf if spec.max_value is None else float(spec.max_value)
        if spec.special is not None:  # ROS' range holds it: the constraints say the rest
            low, high = min(low, spec.special[0]), max(high, spec.special[0])
        result.floating_point_range = [FloatingPointRange(from_value=low, to_value=high)]
    elif spec.kind is int:
        low = _INT64_MIN if spec.min_value is None else math.ceil(spec.min_value)
        high = _INT64_MAX if spec.max_value is None else math.floor(spec.max_value)
        if spec.special is not None:
            low, high = min(low, int(spec.special[0])), max(high, int(spec.special[0]))
        result.integer_range = [IntegerRange(from_value=low, to_value=high, step=1)]
    return result


def _given_value(spec: ParamSpec, value: Any) -> Any:
    """A value as given to ROS, made acceptable for ``spec`` where the intent is unambiguous."""
    if spec.kind is tuple and (value is None or (isinstance(value, Sequence) and not value)):
        return ()
    return value


def _ros_parameter(spec: ParamSpec, value: ParamValue) -> Parameter:
    if spec.kind is tuple:
        return Parameter(spec.name, Parameter.Type.DOUBLE_ARRAY, [float(v) for v in value])
    return Parameter(spec.name, _ROS_TYPE[spec.kind], value)


class ParameterGroup(Generic[ConfigT]):
    """A frozen config built from a set of declared parameters; ``config`` is always valid."""

    def __init__(
        self,
        specs: Iterable[ParamSpec],
        build: Callable[[Mapping[str, Any]], ConfigT],
        values: dict[str, ParamValue],
        on_change: Callable[[ConfigT, ConfigT], None] | None,
    ) -> None:
        self.specs = {spec.name: spec for spec in specs}
        self._build = build
        self._on_change = on_change
        self.values = values
        self.config = build(values)

    def candidate(self, changes: Mapping[str, Any]) -> tuple[dict[str, ParamValue], ConfigT]:
        """Values and config after ``changes``; raises :class:`ParameterError` if invalid."""
        values = dict(self.values)
        for name, value in changes.items():
            values[name] = self.specs[name].check(_given_value(self.specs[name], value))
        return values, self._build(values)

    def apply(self, changes: Mapping[str, Any]) -> None:
        """Store the (already validated) ``changes`` and call ``on_change(new, old)``."""
        old = self.config
        self.values, self.config = self.candidate(changes)
        if self._on_change is not None:
            self._on_change(self.config, old)


class NodeParameters:
    """Declares config groups on one node and validates / applies their live changes.

    On a lock-step seam (a headless run) the groups are built and checked from the start-up
    values alike, but nothing is declared to ROS and no live change can come."""

    def __init__(self, seam: NodeSeam) -> None:
        self._seam = seam
        self._groups: list[ParameterGroup[Any]] = []
        self._frozen: dict[str, str] = {}
        self._overrides = seam.parameter_overrides()
        self._declared: list[str] = []
        if seam.live:
            node = seam.rclpy_node
            node.add_pre_set_parameters_callback(self._coerce)
            node.add_on_set_parameters_callback(self._validate)
            node.add_post_set_parameters_callback(self._apply)

    def declare(
        self,
        specs: Iterable[ParamSpec],
        build: Callable[[Mapping[str, Any]], ConfigT],
        on_change: Callable[[ConfigT, ConfigT], None] | None = None,
    ) -> ParameterGroup[ConfigT]:
        """Validate the given values of ``specs``, declare them all, return the live group.

        ``build`` turns ``{dotted_name: value}`` (every spec present) into the frozen config
        and raises :class:`ParameterError` if it is invalid; it is called again for every live
        change. Raises :class:`ParameterError` on an invalid start-up value (nothing declared).
        """
        spec_list = list(specs)
        values: dict[str, ParamValue] = {}
        for spec in spec_list:
            if spec.name in self._overrides:
                values[spec.name] = spec.check(_given_value(spec, self._overrides[spec.name]))
            else:
                values[spec.name] = spec.default
        group = ParameterGroup(spec_list, build, values, on_change)
        if self._seam.live:
            for spec in spec_list:
                self._declare(spec, values[spec.name])
        self._declared.extend(spec.name for spec in spec_list)
        self._groups.append(group)
        return group

    def declare_config(
        self,
        config_class: type[ConfigT],
        on_change: Callable[[ConfigT, ConfigT], None] | None = None,
    ) -> ParameterGroup[ConfigT]:
        """:meth:`declare` every parameter of a :mod:`wheelsim.core.params` configuration class."""
        return self.declare(specs(config_class), partial(from_flat, config_class), on_change)

    def given(self, name: str) -> bool:
        """Whether ``name`` was given a value at start-up (``-p``, a params file)."""
        return name in self._overrides

    def freeze(self, name: str, reason: str) -> None:
        """Refuse live changes of a parameter declared elsewhere (e.g. ``use_sim_time``)."""
        self._frozen[name] = reason

    def freeze_unused(self, key: str, reason: str) -> dict[str, Any]:
        """Refuse live changes of a parameter the node does not use in the mode it started in
        (a change would have no effect): ``key`` is its name, or ``group.`` for each of a
        group's; ``reason`` says which read-only setting leaves it unused. Returns those among
        them given a value at start-up (:meth:`given`), name -> the value as given."""
        given = {}
        for name in self._declared:
            if name == key or (key.endswith('.') and name.startswith(key)):
                self._frozen[name] = reason
                if self.given(name):
                    given[name] = self._overrides[name]
        return given

    def _declare(self, spec: ParamSpec, value: ParamValue) -> None:
        desc = descriptor(spec)
        node = self._seam.rclpy_node
        if spec.kind is tuple and not value:
            # rclpy infers BYTE_ARRAY from an empty list: declare the type, set the value, then
            # (a read-only one) make it read-only, which a value cannot be set after.
            writable = copy.copy(desc)
            writable.read_only = False
            node.declare_parameter(
                spec.name, Parameter.Type.DOUBLE_ARRAY, writable, ignore_override=True
            )
            node.set_parameters([_ros_parameter(spec, value)])
            if spec.read_only:
                node.set_descriptor(spec.name, desc)
            return
        node.declare_parameter(
            spec.name, _ros_parameter(spec, value).value, desc, ignore_override=True
        )

    def report_unknown(self) -> list[str]:
        """Warn about given parameter names the node does not declare; return the warnings."""
        if self._seam.live:  # rclpy's own (use_sim_time, qos overrides, ...) included
            declared = self._seam.rclpy_node.list_parameters([], 0).names
        else:
            declared = [*self._declared, 'use_sim_time']
        warnings = []
        for name, match in unknown_keys(declared, self._overrides):
            hint = f"; did you mean '{match}'?" if match else ''
            text = (
                f"unknown parameter '{name}' = {self._overrides[name]!r} ignored: "
                f"{self._seam.name} has no such parameter (a typo?){hint}"
            )
            self._seam.logger.warning(text)
            warnings.append(text)
        return warnings

    def _changes(self, params: Sequence[Parameter]) -> list[tuple[ParameterGroup[Any], dict]]:
        out = []
        for group in self._groups:
            changes = {p.name: p.value for p in params if p.name in group.specs}
            if changes:
                out.append((group, changes))
        return out

    def _coerce(self, params: list[Parameter]) -> list[Parameter]:
        """Pre-set: an integer for a double, integers or ``[]`` for a double array.

        A bool is no number here, as at start-up: ``[true, false]`` for a double array keeps
        its type, which rclpy then refuses, rather than becoming ``[1.0, 0.0]``."""
        specs = {name: spec for group in self._groups for name, spec in group.specs.items()}
        out = []
        for param in params:
            spec = specs.get(param.name)
            if spec is not None and spec.kind is float and param.type_ == Parameter.Type.INTEGER:
                param = Parameter(param.name, Parameter.Type.DOUBLE, float(param.value))
            elif spec is not None and spec.kind is tuple and param.type_ in _ARRAY_TYPES:
                if all(isinstance(v, (int, float)) and not isinstance(v, bool)
                       for v in param.value):
                    values = [float(v) for v in param.value]
                    param = Parameter(param.name, Parameter.Type.DOUBLE_ARRAY, values)
            out.append(param)
        return out

    def _validate(self, params: list[Parameter]) -> SetParametersResult:
        for param in params:
            if param.name in self._frozen:
                why = self._frozen[param.name]
                reason = f'{param.name} cannot change while the node runs: {why}'
                return SetParametersResult(successful=False, reason=reason)
        for group, changes in self._changes(params):
            try:
                group.candidate(changes)
            except ParameterError as err:
                reason = str(err)
                if err.name not in {param.name for param in params}:  # a rule across two
                    reason += ' (this change sets ' + ', '.join(
                        f'{param.name} = {short_repr(param.value)}' for param in params) + ')'
                return SetParametersResult(successful=False, reason=reason)
        return SetParametersResult(successful=True)

    def _apply(self, params: list[Parameter]) -> None:
        for group, changes in self._changes(params):
            try:
                group.apply(changes)
            except Exception as err:  # noqa: BLE001 - a failing apply must not kill the node
                self._seam.logger.error(f'applying {sorted(changes)} failed: {err}')
