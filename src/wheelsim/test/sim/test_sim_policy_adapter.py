"""The controller's ``algorithm: policy`` runs a policy of PathTrackingEnv unchanged: it hands the
policy the observation the environment gives for the same vehicle state and plan (on the path:
before its start the controller measures along the extended first segment), and takes its
action; a policy named wrongly, or one returning no action, is refused by name."""

import importlib
import math
import sys
import types
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

import wheelsim.sim as ws
from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import ParameterError
from wheelsim.core.tracking.config import ControllerConfig, PolicyConfig, with_vehicle
from wheelsim.core.tracking.controller import TRACKING, TrackingController
from wheelsim.core.tracking.policy import (
    OBSERVATION_COLUMNS,
    PolicyError,
    action_twist,
    load_policy,
)
from wheelsim.core.tracking.reference import BodyTwist
from wheelsim.core.vehicle.description import describe


class Recorder:
    """A policy that keeps what it was given and answers with ``actions``' next row."""

    def __init__(self) -> None:
        self.seen: list[np.ndarray] = []
        self.action = np.zeros(2)

    def __call__(self, observation: np.ndarray) -> np.ndarray:
        self.seen.append(np.array(observation))
        return self.action


@pytest.fixture
def policy_module(monkeypatch):
    """A module ``wheelsim_test_policies`` importable by name, with a :class:`Recorder`."""
    module = types.ModuleType('wheelsim_test_policies')
    module.recorder = Recorder()
    module.not_callable = 3
    monkeypatch.setitem(sys.modules, module.__name__, module)
    return module


def controller_for(vehicle, spec: str, **policy) -> TrackingController:
    config, _ = with_vehicle(ControllerConfig(algorithm='policy',
                                              policy=PolicyConfig(callable=spec, **policy)),
                             describe(vehicle.config))
    return TrackingController(config)


def track(observation):
    """A feedback law on the observation, to drive the vehicle off and back onto its path."""
    cross_m, heading_rad, along_m, _, _, _, preview_rad, vx_ref, _, wz_ref = observation
    return np.array([vx_ref - 0.5 * along_m,
                     wz_ref + 1.5 * preview_rad - 2.0 * cross_m - heading_rad])


@pytest.mark.parametrize('preset', ['indoor_differential', 'mecanum_omni'])
def test_the_controller_hands_the_policy_the_environments_observation(policy_module, preset):
    vehicle = ws.load_vehicle(preset)
    env = ws.PathTrackingEnv(vehicle, start_offset_m=0.2, start_yaw_rad=0.2, preview_m=0.7)
    task = env.unwrapped._task
    controller = controller_for(vehicle, 'wheelsim_test_policies:recorder',
                                preview_distance=0.7)
    assert controller.config.lead_time == task.lead_time_s > 0.0
    controller.follow(task.schedule, 0.0)
    policy_module.recorder.action = np.zeros(len(env.action_space.low))
    observation, _ = env.reset(seed=4)
    rng = np.random.default_rng(0)
    compared = 0
    for k in range(1, int(task.schedule.duration_s / 0.05) - 20):
        action = track(observation) + rng.normal(0.0, 0.3, 2)
        if vehicle.model == 'omni':
            action = np.array([action[0], rng.normal(0.0, 0.1), action[1]])
        observation, _, terminated, truncated, _ = env.step(action)
        assert not (terminated or truncated)
        x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps = task._states(slice(None))[0]
        step = controller.step(k * env.unwrapped._task.period_s, Pose2D(x_m, y_m, yaw_rad),
                               BodyTwist(vx_mps, vy_mps, wz_radps))
        assert step.status == TRACKING
        if task.s_m[0] == 0.0:  # behind the start: the env's match stops at the path's end,
            continue            # the controller's goes on along the extended first segment
        # to rounding; cross-track to 0.1 %: the controller measures the offset across the
        # heading interpolated along a segment (a factor cos(heading - segment direction)),
        # the env the distance to the segment
        seen = policy_module.recorder.seen[-1]
        np.testing.assert_allclose(seen[1:], observation[1:], rtol=0.0, atol=1e-9,
                                   err_msg=f'step {k}: {OBSERVATION_COLUMNS[1:]}')
        np.testing.assert_allclose(seen[0], observation[0], rtol=1e-3, atol=1e-9,
                                   err_msg=f'step {k}: cross_track_m')
        compared += 1
    assert compared > 500
    # the vehicle really was off its path and schedule, with a reference to follow
    seen = np.array(policy_module.recorder.seen)
    assert np.abs(seen[:, 0]).max() > 0.05 and np.abs(seen[:, 2]).max() > 0.02
    assert np.abs(seen[:, 9]).max() > 0.3


@pytest.mark.parametrize('max_lag_m', [1.0, 0.0])
def test_a_schedule_held_back_for_a_late_vehicle_is_the_one_difference(policy_module, max_lag_m):
    """Found in review: more than max_schedule_lag behind, the controller holds the schedule
    back and its observation leaves the environment's; docs/python_api.md says so, and that
    max_schedule_lag 0 gives the environment's at any lag."""
    vehicle = ws.load_vehicle('indoor_differential')
    env = ws.PathTrackingEnv(vehicle, start_offset_m=0.0, start_yaw_rad=0.0)
    task = env.unwrapped._task
    config, _ = with_vehicle(ControllerConfig(
        algorithm='policy', max_schedule_lag=max_lag_m,
        policy=PolicyConfig(callable='wheelsim_test_policies:recorder')), describe(vehicle.config))
    controller = TrackingController(config)
    controller.follow(task.schedule, 0.0)
    observation, _ = env.reset(seed=0)
    for k in range(1, 121):  # 6 s creeping at 0.15 m/s on the schedule's 0.5 m/s
        observation, *_ = env.step(np.array([0.15, 1.5 * observation[6] - 2 * observation[0]
                                             - observation[1]]))
        x_m, y_m, yaw_rad, vx_mps, vy_mps, wz_radps = task._states(slice(None))[0]
        controller.step(k * task.period_s, Pose2D(x_m, y_m, yaw_rad),
                        BodyTwist(vx_mps, vy_mps, wz_radps))
    along_m = policy_module.recorder.seen[-1][2]
    assert observation[2] < -2.0  # the environment's schedule ran on
    if max_lag_m:
        assert along_m == pytest.approx(-max_lag_m, abs=0.05)
    else:
        assert along_m == pytest.approx(observation[2], abs=1e-9)


def test_the_policys_action_is_the_command(policy_module):
    vehicle = ws.load_vehicle('indoor_differential')
    env = ws.PathTrackingEnv(vehicle)
    controller = controller_for(vehicle, 'wheelsim_test_policies:recorder')
    controller.follow(env.unwrapped._task.schedule, 0.0)
    policy_module.recorder.action = np.array([0.3, -0.4])
    # without acceleration limits the command is the action at once
    config = controller.config
    controller.config = replace(config, limits=replace(
        config.limits, max_linear_acceleration=0.0, max_angular_acceleration=0.0))
    step = controller.step(0.05, Pose2D(0.0, 0.0, 0.0), BodyTwist(0.0, 0.0, 0.0))
    assert step.command == BodyTwist(0.3, 0.0, -0.4)


@pytest.mark.parametrize('action, holonomic', [
    ([0.1], False), ([0.1, 0.2, 0.3], False), ([0.1, 0.2], True), ([np.nan, 0.0], False),
    ('fast', False), (None, False)])
def test_an_action_that_is_not_one_is_refused_naming_its_shape(action, holonomic):
    with pytest.raises(PolicyError, match='finite values'):
        action_twist(action, holonomic)


def test_actions_become_body_twists():
    assert action_twist((0.5, 0.2), False) == BodyTwist(0.5, 0.0, 0.2)
    assert action_twist(np.array([[0.5, 0.1, 0.2]]), True) == BodyTwist(0.5, 0.1, 0.2)


@pytest.mark.parametrize('spec, fragment', [
    ('', "'package.module:name'"), ('wheelsim_test_policies', "'package.module:name'"),
    ('no_such_module_here:policy', 'cannot import no_such_module_here'),
    ('wheelsim_test_policies:missing', 'has no callable missing'),
    ('wheelsim_test_policies:not_callable', 'has no callable not_callable')])
def test_a_policy_that_cannot_be_loaded_is_named(policy_module, spec, fragment):
    with pytest.raises(ParameterError, match='policy.callable') as raised:
        load_policy(spec)
    assert fragment in str(raised.value)
    with pytest.raises(ParameterError, match='policy.callable'):
        ControllerConfig(algorithm='policy', policy=PolicyConfig(callable=spec))


@pytest.mark.parametrize('source, fragment', [
    ('def f(state, t_s):\n    return 0.0, 0.0\n',  # found in review: exit 1 mid-run
     "f(state, t_s) cannot be called with the observation alone (missing a required argument: "
     "'t_s'): a policy is policy(observation)"),
    ('def f():\n    return 0.0, 0.0\n', 'f() cannot be called with the observation alone'),
    ('class F:\n    def __call__(self, observation, extra):\n        return 0.0, 0.0\n'
     'f = F()\n', 'f(observation, extra) cannot be called'),
    # found in review: the run ended with "the policy returned <coroutine ...>" and Python's
    # warning of a coroutine never awaited
    ('async def f(observation):\n    return 0.0, 0.0\n', 'f is async: a policy returns its '
     'command, not a coroutine'),
    ('class F:\n    async def __call__(self, observation):\n        return 0.0, 0.0\n'
     'f = F()\n', 'f is async'),
])
def test_a_policy_that_cannot_take_the_observation_is_refused_at_start(tmp_path, monkeypatch,
                                                                        source, fragment):
    name = 'wheelsim_signature_policy'
    (tmp_path / f'{name}.py').write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ParameterError, match='policy.callable') as raised:
        load_policy(f'{name}:f')
    assert fragment in str(raised.value), raised.value


def test_a_policy_with_optional_arguments_or_no_signature_is_loaded(tmp_path, monkeypatch):
    name = 'wheelsim_optional_policy'
    (tmp_path / f'{name}.py').write_text(
        'import math\ndef f(observation, gain=1.0, *rest, **options):\n    return 0.0, 0.0\n'
        'g = math.hypot\n')  # a built-in: Python gives no signature for some; called as is
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    assert load_policy(f'{name}:f')(np.zeros(10)) == (0.0, 0.0)
    assert load_policy(f'{name}:g') is math.hypot


@pytest.mark.parametrize('source, fragment', [
    ('def f(:\n', 'SyntaxError in {path}, line 1: invalid syntax'),
    ('raise RuntimeError("import boom")\n', 'RuntimeError: import boom'),
    ('import sys\nsys.exit(3)\n', 'SystemExit: 3'),
    ('import no_such_dependency_here\n', "ModuleNotFoundError: No module named "
                                          "'no_such_dependency_here'"),
    ('def __getattr__(name):\n    raise KeyError(name)\n', 'looking up f in'),
])
def test_a_policy_module_that_fails_to_import_is_one_parameter_error(tmp_path, monkeypatch,
                                                                     source, fragment):
    """Whatever importing the module raises (not only ImportError) names policy.callable, the
    module and the error, so the node and `wheelsim run` stop with one line and exit 2."""
    name = 'wheelsim_broken_policy'
    path = tmp_path / f'{name}.py'
    path.write_text(source)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, name, raising=False)
    with pytest.raises(ParameterError, match='policy.callable') as raised:
        load_policy(f'{name}:f')
    message = str(raised.value)
    assert f'cannot import {name}' in message or f'in {name}' in message, message
    assert fragment.format(path=path) in message and '\n' not in message, message
    assert 'PYTHONPATH' not in message, 'the module was found: its folder is on the path'


def test_a_policy_with_another_algorithm_is_an_error(policy_module):
    assert ControllerConfig(algorithm='policy', policy=PolicyConfig(
        callable='wheelsim_test_policies:recorder')).algorithm == 'policy'
    with pytest.raises(ParameterError, match='policy.callable .* algorithm policy only'):
        ControllerConfig(algorithm='stanley',
                         policy=PolicyConfig(callable='wheelsim_test_policies:recorder'))


def test_a_policy_returning_no_action_raises_policy_error(policy_module):
    vehicle = ws.load_vehicle()
    controller = controller_for(vehicle, 'wheelsim_test_policies:recorder')
    controller.follow(ws.PathTrackingEnv(vehicle).unwrapped._task.schedule, 0.0)
    policy_module.recorder.action = np.array([np.inf, 0.0])
    with pytest.raises(PolicyError, match='the policy returned'):
        controller.step(0.05, Pose2D(0.0, 0.0, 0.0), BodyTwist(0.0, 0.0, 0.0))


def test_the_example_policy_tracks_the_figure_eight_in_the_environment(monkeypatch):
    """examples/feedforward_policy.py, which the ROS tests run in the controller, in the env:
    one vehicle and a batch reach the path's end close to it."""
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[4] / 'examples'))
    policy = importlib.import_module('feedforward_policy').policy
    vehicle = ws.load_vehicle('indoor_differential')
    env = ws.PathTrackingEnv(vehicle)
    observation, _ = env.reset(seed=1)
    worst_m, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        observation, _, terminated, truncated, _ = env.step(policy(observation))
        worst_m = max(worst_m, abs(observation[0]))
    assert terminated and worst_m < 0.12, worst_m  # the start is up to 0.1 m off the path
    envs = ws.PathTrackingVectorEnv(vehicle, 8)
    observations, _ = envs.reset(seed=1)
    for _ in range(200):
        observations, *_ = envs.step(policy(observations))
    assert np.abs(observations[:, 0]).max() < 0.05
