"""A Python policy as the controller's law: the path-tracking observation in, a body twist out.

A policy is a callable ``policy(observation) -> action`` named ``'package.module:name'``
(imported when the configuration is checked). It is the policy of
:class:`wheelsim.sim.PathTrackingEnv`, run unchanged: the controller hands it the observation
that environment gives for the same vehicle and plan (:data:`OBSERVATION_COLUMNS`, float64,
frames and signs as below) once per control step, and publishes the action it returns, through
the controller's output limits.

- ``cross_track_m``: signed distance from the nearest path point, left > 0;
- ``heading_error_rad``: vehicle yaw minus the path's yaw at that point, in [-pi, pi);
- ``along_track_m``: arc length of that point minus the arc length scheduled for now, ahead > 0;
- ``vx_mps, vy_mps, wz_radps``: the measured body twist (odometry; zero before the first);
- ``preview_heading_rad``: the path's yaw ``preview_distance`` further along from the nearest
  point, minus the vehicle's yaw, in [-pi, pi);
- ``reference_vx_mps, reference_vy_mps, reference_wz_radps``: the planned body twist
  ``lead_time`` later on the schedule (what a feedforward law drives with).

The action is ``(vx_mps, wz_radps)`` for differential and bicycle vehicles, ``(vx_mps, vy_mps,
wz_radps)`` for omni ones; any other shape or a non-finite value is a :class:`PolicyError`.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from wheelsim.core.coroutines import is_async
from wheelsim.core.params import ParameterError
from wheelsim.core.tracking.reference import BodyTwist

#: The observation's columns (units in the names).
OBSERVATION_COLUMNS = ('cross_track_m', 'heading_error_rad', 'along_track_m', 'vx_mps', 'vy_mps',
                       'wz_radps', 'preview_heading_rad', 'reference_vx_mps', 'reference_vy_mps',
                       'reference_wz_radps')
#: The parameter naming the policy.
POLICY_PARAMETER = 'policy.callable'

Policy = Callable[[NDArray[np.float64]], Any]


class PolicyError(ValueError):
    """A policy returned something that is not an action."""


def load_policy(spec: str) -> Policy:
    """The callable ``spec`` names (``'package.module:name'``, the module importable on the
    Python path), which can be called with the observation alone (its signature, where Python
    gives one). Raises :class:`ParameterError` naming ``policy.callable`` otherwise."""
    module_name, colon, name = spec.partition(':')
    if not (colon and module_name and name):
        raise ParameterError(POLICY_PARAMETER, spec,
                             "must be 'package.module:name' of a callable taking the observation")
    try:
        module = importlib.import_module(module_name)
    except (Exception, SystemExit) as err:  # whatever importing the user's module raised
        if isinstance(err, ModuleNotFoundError) and (module_name + '.').startswith(
                f'{err.name}.'):  # the module itself (or its package) is not on the path
            raise ParameterError(POLICY_PARAMETER, spec, f'cannot import {module_name} ({err}); '
                                 'is its folder on PYTHONPATH?') from None
        raise ParameterError(POLICY_PARAMETER, spec, f'cannot import {module_name}: '
                             f'{_error_text(err)}') from None
    policy = module
    try:
        for attribute in name.split('.'):
            policy = getattr(policy, attribute, None)
    except Exception as err:
        raise ParameterError(POLICY_PARAMETER, spec, f'looking up {name} in {module_name} '
                             f'raised {_error_text(err)}') from None
    if not callable(policy):
        raise ParameterError(POLICY_PARAMETER, spec,
                             f'{module_name} has no callable {name}')
    if is_async(policy):
        raise ParameterError(POLICY_PARAMETER, spec,
                             f'{name} is async: a policy returns its command, not a coroutine')
    try:
        signature = inspect.signature(policy)
    except (TypeError, ValueError):  # a callable without one (some built-ins): called as it is
        return policy
    try:
        signature.bind(np.zeros(len(OBSERVATION_COLUMNS)))
    except TypeError as err:
        raise ParameterError(POLICY_PARAMETER, spec,
                             f'{name}{signature} cannot be called with the observation alone '
                             f'({err}): a policy is policy(observation)') from None
    return policy


def _error_text(err: BaseException) -> str:
    """``err`` in one line: its type and message, and for a syntax error the file and line."""
    if isinstance(err, SyntaxError):
        return f'{type(err).__name__} in {err.filename}, line {err.lineno}: {err.msg}'
    message = ' '.join(str(err).split())
    return f'{type(err).__name__}: {message}' if message else type(err).__name__


def path_observations(cross_track_m: ArrayLike, heading_error_rad: ArrayLike,
                      along_track_m: ArrayLike, twist: ArrayLike,
                      preview_heading_rad: ArrayLike, reference_twist: ArrayLike
                      ) -> NDArray[np.float64]:
    """(k, 10) observations in :data:`OBSERVATION_COLUMNS` order from k vehicles' errors (k,),
    measured body twists (k, 3), preview headings (k,) and reference body twists (k, 3)."""
    return np.column_stack([cross_track_m, heading_error_rad, along_track_m, twist,
                            preview_heading_rad, reference_twist]).astype(float, copy=False)


def action_twist(action: Any, holonomic: bool) -> BodyTwist:
    """The body twist of a policy's ``action``: 2 finite values ``(vx_mps, wz_radps)``, or 3
    ``(vx_mps, vy_mps, wz_radps)`` when ``holonomic`` (omni). Raises :class:`PolicyError`."""
    width = 3 if holonomic else 2
    try:
        values = np.asarray(action, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        values = np.zeros(0)
    if values.shape != (width,) or not all(math.isfinite(v) for v in values):
        expected = '(vx_mps, vy_mps, wz_radps)' if holonomic else '(vx_mps, wz_radps)'
        raise PolicyError(f'the policy returned {action!r}; an action is {width} finite values '
                          f'{expected}')
    if holonomic:
        return BodyTwist(float(values[0]), float(values[1]), float(values[2]))
    return BodyTwist(float(values[0]), 0.0, float(values[1]))
