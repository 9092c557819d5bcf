"""Launch arguments checked before any process starts, with an error naming the argument.

:func:`checked` is the action a launch file puts right after its ``DeclareLaunchArgument`` s: a
bad value fails the launch while its description is evaluated, so nothing has started. A
boolean is what launch's ``IfCondition`` takes (launch 3.4, Jazzy:
``evaluate_condition_expression``: ``true``, ``1``, ``false`` or ``0``, any case, blanks
around); a launch file reading the text itself (``.lower() == 'true'``) would take ``ture``
for false, a condition would stop the launch only once some of its processes run
(ros2/launch#747). The vehicle presets are read from the installed package when the check
runs, so that generating a launch description (``ros2 launch ... --show-args``) needs none
installed; launch's own ``DeclareLaunchArgument(choices=...)`` takes its values then, and its
error words a bad value otherwise than these do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from launch.action import Action
from launch.actions import OpaqueFunction
from launch.conditions import InvalidConditionExpressionError, evaluate_condition_expression
from launch.conditions.evaluate_condition_expression_impl import (
    VALID_FALSE_EXPRESSIONS,
    VALID_TRUE_EXPRESSIONS,
)
from launch.launch_context import LaunchContext
from launch.substitutions import LaunchConfiguration, TextSubstitution

from wheelsim.bringup.packages import command_line_value
from wheelsim.core.params_file import preset_names_in
from wheelsim.shipped import shipped_params_dir

BOOLEAN_VALUES = ', '.join([*VALID_TRUE_EXPRESSIONS, *VALID_FALSE_EXPRESSIONS])


def number(argument: str, text: str, kind: type = float) -> float | int:
    """``text`` (the value of launch argument ``argument``) as a ``kind`` (float or int);
    RuntimeError naming the argument if it is not one (the launch fails, nothing started)."""
    try:
        return kind(text)
    except ValueError:
        what = 'an integer' if kind is int else 'a number'
        raise RuntimeError(f'{argument}:={text} is invalid: must be {what}') from None


def as_given(context: LaunchContext, arguments: Sequence[str]) -> list[str]:
    """``argument:=text`` for each of ``arguments`` given a value on the ``ros2 launch`` command
    line that the launch uses (the last one, as launch takes it; not an empty one, nor a
    default, nor one an including launch file replaced; a boolean as typed, before
    :func:`checked` made it ``True`` or ``False``): where an error says a node's parameter came
    from."""
    return [f'{argument}:={text}' for argument in arguments
            if (text := command_line_value(context, argument))
            and _used(context.launch_configurations.get(argument), argument, text)]


def _used(configuration: str | None, argument: str, text: str) -> bool:
    """Whether the launch configuration ``configuration`` of ``argument`` is the typed
    ``text``, or the ``True``/``False`` :func:`checked` made of it."""
    if configuration == text:
        return True
    try:
        return configuration == str(boolean(argument, text))
    except RuntimeError:  # not a boolean
        return False


def _same(argument: str, text: str, value: str) -> bool:
    """Whether ``text`` given to ``argument`` is ``value``, or the same boolean in another
    spelling (as the including launch's boolean check takes it)."""
    if text == value:
        return True
    try:
        return boolean(argument, text) == boolean(argument, value)
    except RuntimeError:  # not booleans
        return False


def boolean(argument: str, text: str) -> bool:
    """``text`` (the value of launch argument ``argument``) as ``IfCondition`` reads it;
    RuntimeError naming the argument and the values allowed for anything else."""
    try:
        return evaluate_condition_expression(LaunchContext(), [TextSubstitution(text=text)])
    except InvalidConditionExpressionError:
        raise RuntimeError(f'{argument}:={text} is invalid: must be one of {BOOLEAN_VALUES} '
                           '(any case)') from None


def choice(argument: str, text: str, choices: Sequence[str]) -> str:
    """``text`` unless it is not one of ``choices`` (RuntimeError naming them)."""
    if text not in choices:
        allowed = ', '.join(repr(value) if not value else value for value in choices)
        raise RuntimeError(f'{argument}:={text} is invalid: must be one of {allowed}')
    return text


def log_level(argument: str, text: str) -> str:
    """``text`` unless ROS refuses it as ``--log-level`` (debug, info, warn, error, fatal,
    unset, any case: rcutils), RuntimeError naming the argument otherwise."""
    from rclpy.logging import get_logging_severity_from_string

    try:
        get_logging_severity_from_string(text)
    except RuntimeError:
        raise RuntimeError(f'{argument}:={text} is invalid: must be one of debug, info, warn, '
                           'error, fatal, unset (any case)') from None
    return text


def namespace(argument: str, text: str, outer: str | None) -> str:
    """The namespace launch argument ``argument`` given ``text`` makes inside the including
    launch's namespace ``outer`` (None: none), as launch_ros's ``PushROSNamespace`` makes it
    (``robot1`` inside none: ``/robot1``); RuntimeError naming the argument and ROS's reason
    where ROS refuses the result (``PushROSNamespace`` names neither)."""
    from launch_ros.utilities import make_namespace_absolute, prefix_namespace
    from rclpy.exceptions import InvalidNamespaceException
    from rclpy.validate_namespace import validate_namespace

    result = make_namespace_absolute(prefix_namespace(outer, text))
    try:
        validate_namespace(result)
    except InvalidNamespaceException as err:
        reason = str(err).splitlines()[0].removeprefix('Invalid namespace: ').rstrip(':')
        raise RuntimeError(f'{argument}:={text} is invalid: {reason} (the namespace '
                           f'{result!r}); nothing was started') from None
    return result


def checked(booleans: Sequence[str] = (), numbers: Mapping[str, type] | None = None,
            choices: Mapping[str, Sequence[str]] | None = None, presets: Sequence[str] = (),
            log_levels: Sequence[str] = (), namespaces: Sequence[str] = (),
            optional: Sequence[str] = (),
            replaced_by: Mapping[str, str] | None = None,
            refused: Mapping[str, str] | None = None,
            harmless: Mapping[str, Sequence[str]] | None = None) -> Action:
    """The action failing the launch on a bad value of a launch argument: ``booleans``,
    ``numbers`` (``{name: float or int}``), ``choices`` (``{name: allowed values}``),
    ``presets`` (one of wheelsim's vehicle presets: a params file with a vehicle_sim section
    in ``share/wheelsim/params``, where ``preset:=`` takes it from), ``log_levels``,
    ``namespaces`` (:func:`namespace`, inside the including launch's); those in
    ``optional`` may also be empty (as in the params file). ``replaced_by`` (``{name: other}``:
    ``other`` given makes ``name`` unused, as ``params_file:=`` does ``preset:=``): both given
    on the command line and used by the launch (:func:`as_given`) fail it, naming both, and so
    does ``other`` given empty (the nodes would run on their defaults, ``name`` unused).
    ``refused`` (``{name: why}``): arguments of an included launch file that this one sets
    itself or cannot serve; one given a value on the command line fails the launch, saying why
    (it would be overridden or break the launch without a word), unless the value is one of its
    ``harmless`` ones (``{name: values}``: what the launch gives it; a boolean in any spelling).

    Each boolean's launch configuration becomes ``True`` or ``False``, which a condition, a
    node parameter (a bool for ``1`` as well: ``use_sim_time``) and Nav2's ``PythonExpression``
    s (``not <use_composition>``: ``not false`` is a NameError) all read.
    """

    def check(context: LaunchContext) -> list[Action]:
        def value(name: str) -> str | None:
            text = LaunchConfiguration(name).perform(context)
            return None if name in optional and not text else text

        for name in booleans:
            if (text := value(name)) is not None:
                context.launch_configurations[name] = str(boolean(name, text))
        for name, kind in (numbers or {}).items():
            if (text := value(name)) is not None:
                number(name, text, kind)
        allowed_values = dict(choices or {})
        if presets:
            folder = shipped_params_dir()
            shipped = preset_names_in(folder)
            if not shipped:
                given = next((name for name in presets if value(name)), presets[0])
                raise RuntimeError(f'{given}:={value(given)} is invalid: no vehicle preset (a '
                                   f'params file with a section for vehicle_sim) in {folder}')
            allowed_values.update(dict.fromkeys(presets, shipped))
        for name, allowed in allowed_values.items():
            if (text := value(name)) is not None:
                choice(name, text, allowed)
        for name in log_levels:
            log_level(name, LaunchConfiguration(name).perform(context))
        for name in namespaces:
            namespace(name, LaunchConfiguration(name).perform(context),
                      context.launch_configurations.get('ros_namespace'))
        for name, why in (refused or {}).items():
            text = command_line_value(context, name)
            if text and not any(_same(name, text, value)
                                for value in (harmless or {}).get(name, ())):
                shown = text if text == text.strip() else repr(text)  # blanks made visible
                raise RuntimeError(f'{name}:={shown} is not taken by this launch file: {why}; '
                                   'nothing was started')
        for name, other in (replaced_by or {}).items():
            typed = command_line_value(context, other)
            if typed is not None and not typed.strip() \
                    and not (context.launch_configurations.get(other) or '').strip():
                raise RuntimeError(f'{other}:={typed!r} is empty: give one, or leave {other} '
                                   f'out for what {name} chooses; nothing was started')
            if len(given := as_given(context, [name, other])) == 2:
                raise RuntimeError(f'{" and ".join(given)}: {other} replaces what {name} '
                                   f'chooses, so {name} would be unused: give one of them')
        return []

    return OpaqueFunction(function=check)
