"""Parameter trees as frozen dataclasses: one declaration gives defaults, ranges and docs.

A configuration class is a frozen dataclass whose fields are either leaves declared with
:func:`param` or sub-groups declared with :func:`group`.  The dotted path of a leaf
(``model_params.bicycle.drive_actuator.dead_time``) is its ROS parameter name.  From that one
declaration this module derives:

- :func:`specs`: the flat list of :class:`ParamSpec` (the ROS glue declares these with
  descriptors; the README parameter reference is generated from them);
- :func:`from_flat`: a validated configuration from a ``{dotted_name: value}`` mapping, raising
  :class:`ParameterError` naming the full path, the value and the allowed range;
- :func:`unknown_keys`: keys that name no parameter, with the closest known name (typos).

Cross-field rules live in a class's ``__post_init__`` and raise :class:`ParameterError` with the
field name; :func:`from_flat` prefixes the path of the group.

No ROS imports here: this is used by the core, the nodes, the CLI and the tests alike.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

ParamValue = bool | int | float | str | tuple[float, ...]
ConfigT = TypeVar('ConfigT')


class ParameterError(ValueError):
    """An invalid parameter value; the message names the full parameter path."""

    def __init__(self, name: str, value: Any, allowed: str) -> None:
        self.name = name
        self.value = value
        self.allowed = allowed
        super().__init__(f'parameter {name} = {short_repr(value)} is invalid: {allowed}')

    def with_prefix(self, prefix: str) -> ParameterError:
        """Return the same error with ``prefix.`` prepended to the parameter path."""
        return ParameterError(_join(prefix, self.name), self.value, self.allowed)


def _value_text(value: Any) -> str:
    """``value`` in an error: ``repr``, but a bool as ROS writes it (``true``, ``false``), also
    inside an array."""
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, (list, tuple)) and any(isinstance(item, bool) for item in value):
        return '[' + ', '.join(_value_text(item) for item in value) + ']'
    return repr(value)


def short_repr(value: Any, limit: int = 120) -> str:
    """:func:`_value_text` of ``value``, cut to about ``limit`` characters (a 60 000-number list
    stays readable)."""
    text = _value_text(value)
    if len(text) <= limit:
        return text
    count = f', {len(value)} values' if isinstance(value, (list, tuple)) else ''
    return f'{text[:limit]}... ({len(text)} characters{count})'


@dataclass(frozen=True)
class ParamSpec:
    """One leaf parameter: its dotted name, default, documentation and allowed values.

    ``min_value``/``max_value`` are inclusive bounds (``None``: unbounded);
    ``min_exclusive`` makes the lower bound strict (for example a length that must be > 0);
    ``special`` is ``(value, meaning)``: a value outside them that the parameter takes too,
    e.g. ``(-1.0, 'from the vehicle')``.
    """

    name: str
    default: ParamValue
    description: str
    unit: str = ''
    min_value: float | None = None
    max_value: float | None = None
    min_exclusive: bool = False
    choices: tuple[str, ...] | None = None
    read_only: bool = False
    nan_allowed: bool = False
    special: tuple[float, str] | None = None

    @property
    def kind(self) -> type:
        """The Python type of the value: bool, int, float, str or tuple (float array)."""
        return type(self.default)

    def allowed(self) -> str:
        """Human-readable description of the allowed values."""
        if self.choices is not None:
            return 'one of ' + ', '.join(repr(c) for c in self.choices)
        if self.kind is tuple:
            return ('a list of numbers (NaN allowed, no infinities)' if self.nan_allowed
                    else 'a list of finite numbers')
        if self.kind is bool:
            return 'true or false'
        if self.kind is str:
            return 'a string'
        kind = 'an integer' if self.kind is int else 'a finite number'
        within = f'{kind} in {self.interval()}'
        return within if self.special is None else f'{self.special_text()} or {within}'

    def special_text(self) -> str:
        """The special value with its meaning, e.g. ``-1 (from the vehicle)``."""
        value, meaning = self.special
        return f'{value:g} ({meaning})'

    def interval(self) -> str:
        """The interval of a number, e.g. ``[0, 10]``, ``(0, inf)`` (without
        :attr:`special`)."""
        low = '-inf' if self.min_value is None else self._bound_text(self.min_value)
        high = 'inf' if self.max_value is None else self._bound_text(self.max_value)
        left = '(' if self.min_exclusive or self.min_value is None else '['
        right = ')' if self.max_value is None else ']'
        return f'{left}{low}, {high}{right}'

    def _bound_text(self, bound: float) -> str:
        """A bound as written in :meth:`allowed`: exact for an integer parameter (2**63 - 1 is
        9223372036854775807, not 9.22337e+18), in ``%g`` form for a real one."""
        return str(int(bound)) if self.kind is int else f'{bound:g}'

    def check(self, value: Any) -> ParamValue:
        """Return ``value`` converted to this parameter's type, or raise :class:`ParameterError`."""
        converted = _convert(self, value)
        if (isinstance(converted, (int, float)) and not isinstance(converted, bool)
                and (self.special is None or converted != self.special[0])):
            too_low = self.min_value is not None and (
                converted <= self.min_value if self.min_exclusive else converted < self.min_value
            )
            too_high = self.max_value is not None and converted > self.max_value
            if too_low or too_high:
                raise ParameterError(self.name, value, 'must be ' + self.allowed())
        if self.choices is not None and converted not in self.choices:
            raise ParameterError(self.name, value, 'must be ' + self.allowed())
        return converted


def _convert(spec: ParamSpec, value: Any) -> ParamValue:
    fail = ParameterError(spec.name, value, 'must be ' + spec.allowed())
    kind = spec.kind
    if kind is bool:
        if not isinstance(value, bool):
            raise fail
        return value
    if kind is str:
        if not isinstance(value, str):
            raise fail
        return value
    if kind is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
            raise fail
        items = list(value)
        if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in items):
            raise fail
        # NaN only where declared (it marks "free" entries, e.g. a waypoint heading)
        if any(math.isinf(v) or (math.isnan(v) and not spec.nan_allowed) for v in items):
            raise fail
        return tuple(float(v) for v in items)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise fail
    if kind is int:
        if isinstance(value, float) and not value.is_integer():
            raise fail
        return int(value)
    if not math.isfinite(value):
        raise fail
    return float(value)


def param(
    default: ParamValue,
    description: str,
    *,
    unit: str = '',
    min_value: float | None = None,
    max_value: float | None = None,
    min_exclusive: bool = False,
    choices: tuple[str, ...] | None = None,
    read_only: bool = False,
    nan_allowed: bool = False,
    special: tuple[float, str] | None = None,
) -> Any:
    """Declare a leaf parameter field of a configuration dataclass (``nan_allowed``: an
    array whose entries may be NaN; ``special``: see :class:`ParamSpec`)."""
    meta = {
        'spec': ParamSpec(
            name='',
            default=default,
            description=description,
            unit=unit,
            min_value=min_value,
            max_value=max_value,
            min_exclusive=min_exclusive,
            choices=choices,
            read_only=read_only,
            nan_allowed=nan_allowed,
            special=special,
        )
    }
    return field(default=default, metadata=meta)


def group(cls: type, **overrides: Any) -> Any:
    """Declare a sub-group field; ``overrides`` change the group's defaults (e.g. per model)."""
    if overrides:
        return field(
            default_factory=lambda: cls(**overrides), metadata={'group': cls, 'defaults': overrides}
        )
    return field(default_factory=cls, metadata={'group': cls, 'defaults': {}})


def _join(prefix: str, name: str) -> str:
    return f'{prefix}.{name}' if prefix else name


def specs(
    cls: type, prefix: str = '', defaults: Mapping[str, Any] | None = None
) -> list[ParamSpec]:
    """Every leaf parameter of ``cls`` as a :class:`ParamSpec` with its full dotted name."""
    out: list[ParamSpec] = []
    defaults = defaults or {}
    for f in dataclasses.fields(cls):
        if 'spec' in f.metadata:
            spec = f.metadata['spec']
            default = defaults.get(f.name, spec.default)
            out.append(dataclasses.replace(spec, name=_join(prefix, f.name), default=default))
        elif 'group' in f.metadata:
            out.extend(specs(f.metadata['group'], _join(prefix, f.name), f.metadata['defaults']))
    return out


def from_flat(
    cls: type[ConfigT],
    values: Mapping[str, Any],
    prefix: str = '',
    defaults: Mapping[str, Any] | None = None,
) -> ConfigT:
    """Build and validate ``cls`` from ``{dotted_name: value}``; absent keys take defaults.

    Raises :class:`ParameterError` naming the full dotted path on the first invalid value.
    Unknown keys are ignored here; report them with :func:`unknown_keys`.
    """
    kwargs: dict[str, Any] = {}
    defaults = defaults or {}
    for f in dataclasses.fields(cls):
        path = _join(prefix, f.name)
        if 'spec' in f.metadata:
            spec = dataclasses.replace(f.metadata['spec'], name=path)
            if path in values:
                kwargs[f.name] = spec.check(values[path])
            elif f.name in defaults:
                kwargs[f.name] = defaults[f.name]
        elif 'group' in f.metadata:
            kwargs[f.name] = from_flat(f.metadata['group'], values, path, f.metadata['defaults'])
    try:
        return cls(**kwargs)
    except ParameterError as err:
        raise err.with_prefix(prefix) from None


def to_flat(config: Any, prefix: str = '') -> dict[str, ParamValue]:
    """The inverse of :func:`from_flat`: ``{dotted_name: value}`` of every leaf of ``config``."""
    out: dict[str, ParamValue] = {}
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if 'spec' in f.metadata:
            out[_join(prefix, f.name)] = value
        elif 'group' in f.metadata:
            out.update(to_flat(value, _join(prefix, f.name)))
    return out


def flatten(tree: Mapping[str, Any], prefix: str = '') -> dict[str, Any]:
    """Flatten a nested mapping (as loaded from YAML) into ``{dotted_name: value}``.
    :class:`ParameterError` for a name given twice, nested and dotted (``limits: {speed: 1}``
    and ``limits.speed: 2``): one would silently override the other."""
    out: dict[str, Any] = {}
    for key, value in tree.items():
        path = _join(prefix, str(key))
        leaves = flatten(value, path) if isinstance(value, Mapping) else {path: value}
        for name, leaf in leaves.items():
            if name in out:
                raise ParameterError(name, leaf, f'given twice (also as {out[name]!r}), nested '
                                     'and dotted: give it once')
            out[name] = leaf
    return out


def named_by(key: str, name: str) -> bool:
    """Whether ``key`` (a parameter's dotted name, or ``group.`` for each of a group's) names
    parameter ``name``."""
    return name == key or (key.endswith('.') and name.startswith(key))


def unknown_keys(known: Iterable[str], given: Iterable[str]) -> list[tuple[str, str | None]]:
    """Keys in ``given`` that are not in ``known``, each with the closest known name or None."""
    known_list = list(known)
    known_set = set(known_list)
    return [
        (key, next(iter(difflib.get_close_matches(str(key), known_list, n=1, cutoff=0.6)), None))
        for key in given
        if key not in known_set
    ]
