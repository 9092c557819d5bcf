"""Closed loop without ROS: each controller drives each vehicle model (the simulator's vehicle
core with its default actuators: 0.2 s dead time, 0.4 s drive time constant) at 20 Hz."""

import math

import numpy as np
import pytest

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.params import from_flat
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.planning.planner import plan_through, plan_to_goal, plan_waypoints
from wheelsim.core.planning.waypoints import figure_eight, waypoints_from_lists
from wheelsim.core.tracking.config import ControllerConfig
from wheelsim.core.tracking.controller import (
    GOAL_REACHED,
    TRACKING,
    TrackingController,
    trajectory_from_plan,
)
from wheelsim.core.tracking.reference import PathProgress, resume_arc_length
from wheelsim.core.tracking.simulation import run_closed_loop
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.testing.configs import FIXED_CONTROLLER, FIXED_PLANNER, controller_for, planner_for

MODELS = ('differential', 'bicycle', 'omni')
ALGORITHMS = ('feedforward', 'pure_pursuit', 'stanley')
# The default drive's lag: dead time 0.2 s plus time constant 0.4 s.
LEAD_S = 0.6
# Within the default car's steering (tan(30 deg) / 2 m = 0.29 1/m), with a margin.
PLANNER = from_flat(PlannerConfig, {**FIXED_PLANNER, 'limits.max_curvature': 0.25})
CIRCLE_RADIUS_M = 6.0


def drive(model, algorithm, trajectory, start, extra_time_s=20.0, lead_time=LEAD_S):
    """Run the loop; the controller's lead_time matches the vehicle's drive lag by default."""
    vehicle = Vehicle(vehicle_config_from_params({'model': model}), 0.001, start)
    config = controller_for({'model': model}, {'algorithm': algorithm, 'lead_time': lead_time})
    return run_closed_loop(
        vehicle, TrackingController(config), trajectory, trajectory.duration_s + extra_time_s
    )


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('model', MODELS)
@pytest.mark.parametrize('shape', ['line', 'circle'])
def test_converges_from_an_offset(model, algorithm, shape):
    """Start 0.5 m right of the path, turned 0.2 rad left: on the path within half the run."""
    if shape == 'line':
        points = [[0.0, 0.0, 0.0], [20.0, 0.0, 0.0]]
    else:
        r = CIRCLE_RADIUS_M
        points = [
            [r * math.sin(a), r * (1 - math.cos(a)), a] for a in np.linspace(0, 2 * math.pi, 17)
        ]
    trajectory = plan_through(waypoints_from_lists(points), PLANNER)
    result = drive(model, algorithm, trajectory, (0.0, -0.5, 0.2))
    assert result.status == GOAL_REACHED, result.message
    second_half = np.abs(result.cross_track_m[len(result.cross_track_m) // 2 :])
    assert second_half.max() < 0.03
    goal = trajectory.end()
    assert result.final_error_m(Pose2D(goal.x_m, goal.y_m, goal.yaw_rad)) < 0.1


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('model', MODELS)
def test_figure_eight_cross_track_error(model, algorithm):
    """RMS below 3 cm and maximum below 8 cm on a 14 m figure-eight at up to 1 m/s."""
    points = figure_eight()
    trajectory = plan_through(waypoints_from_lists(points), PLANNER)
    result = drive(model, algorithm, trajectory, tuple(points[0]))
    assert result.status == GOAL_REACHED, result.message
    assert result.rms_cross_track_m < 0.03
    assert result.max_cross_track_m < 0.08


@pytest.mark.parametrize('model', MODELS)
@pytest.mark.parametrize(
    'goal', [Pose2D(8.0, 4.0, math.pi / 2), Pose2D(-6.0, 3.0, math.pi), Pose2D(10.0, -1.0, 0.0)]
)
def test_reaches_goal_poses(model, goal):
    trajectory = plan_to_goal(PLANNER, Pose2D(0.0, 0.0, 0.0), goal)
    result = drive(model, 'feedforward', trajectory, (0.0, 0.0, 0.0))
    assert result.status == GOAL_REACHED, result.message
    assert result.final_error_m(goal) < 0.1
    assert abs(math.remainder(result.yaw_rad[-1] - goal.yaw_rad, 2 * math.pi)) < 0.2


@pytest.mark.parametrize('algorithm', ALGORITHMS)
def test_lead_time_stops_on_the_goal_despite_actuator_lag(algorithm):
    """The drive lags 0.6 s (dead time 0.2 s + time constant 0.4 s): without lead the vehicle
    passes the goal by 0.2 to 0.33 m (the schedule-following laws then back up); with that lead
    it stops on it."""
    trajectory = plan_through(waypoints_from_lists([[0.0, 0.0, 0.0], [20.0, 0.0, 0.0]]), PLANNER)
    lagging = drive('differential', algorithm, trajectory, (0.0, 0.0, 0.0), lead_time=0.0)
    led = drive('differential', algorithm, trajectory, (0.0, 0.0, 0.0), lead_time=LEAD_S)
    assert lagging.x_m.max() - 20.0 > 0.2
    assert led.x_m.max() - 20.0 < 0.06
    assert led.status == GOAL_REACHED
    assert abs(led.x_m[-1] - 20.0) < 0.1  # goal.xy_tolerance


@pytest.mark.parametrize('model', MODELS)
def test_tracks_through_localization_noise(model):
    """White pose noise of 2 cm and 0.01 rad (seeded): the true error stays near the noise."""
    rng = np.random.default_rng(7)

    def noisy(pose, _twist, _t):
        return Pose2D(*(np.array(pose) + rng.normal(0.0, [0.02, 0.02, 0.01])))

    points = figure_eight()
    trajectory = plan_through(waypoints_from_lists(points), PLANNER)
    vehicle = Vehicle(vehicle_config_from_params({'model': model}), 0.001, tuple(points[0]))
    config = controller_for({'model': model}, {'algorithm': 'feedforward'})
    result = run_closed_loop(
        vehicle, TrackingController(config), trajectory, trajectory.duration_s + 20, noisy
    )
    assert result.status == GOAL_REACHED, result.message
    assert result.rms_cross_track_m < 0.04


@pytest.mark.parametrize('algorithm', ['feedforward', 'pure_pursuit', 'stanley'])
def test_a_schedule_placed_at_the_nearest_point_drives_on_never_back(algorithm):
    """A controller taking over a plan the vehicle is already 3 m along (a restart) places the
    schedule at the vehicle's nearest point: the vehicle goes on to the goal, never backwards."""
    planner = from_flat(PlannerConfig, FIXED_PLANNER)
    trajectory = plan_to_goal(planner, Pose2D(0.0, 0.0, 0.0), Pose2D(6.0, 0.0, 0.0))
    controller = TrackingController(from_flat(ControllerConfig, {**FIXED_CONTROLLER,
                                                                  'algorithm': algorithm}))
    planned_s = controller.follow_from_nearest(trajectory, 100.0, Pose2D(3.0, 0.0, 0.0))
    assert planned_s == pytest.approx(trajectory.at_arc_length(3.0).t_s, abs=1e-3)
    vehicle = Vehicle(vehicle_config_from_params({'model': 'differential'}), 0.001,
                      (3.0, 0.0, 0.0))
    forward = []
    for k in range(1, 200):  # 10 s at 20 Hz
        state = vehicle.state()
        step = controller.step(100.0 + 0.05 * k, Pose2D(state.x_m, state.y_m, state.yaw_rad))
        command = step.command or (0.0, 0.0, 0.0)
        forward.append(command[0])
        vehicle.set_command(*command)
        vehicle.step(50)
    assert min(forward[:60]) >= 0.0  # the 3 s after taking over: onwards, not back to 0 m
    assert max(forward[:60]) > 0.3
    assert vehicle.state().x_m == pytest.approx(6.0, abs=0.25)


def test_a_figure_eight_is_resumed_on_the_branch_the_vehicle_faces_along():
    """A path that crosses itself and ends where it starts: a vehicle 2 cm from the start,
    facing along the path, resumes at its start (not at the crossing half-way, nor at the end,
    both as near: the nearest point alone picked them), one at the crossing facing the second
    branch resumes half-way."""
    trajectory = plan_through(waypoints_from_lists(figure_eight()), PLANNER)
    start = trajectory.at_arc_length(0.0)
    for x_m, y_m in ((0.0, 0.02), (0.0, -0.02), (0.02, -0.02), (-0.02, 0.0)):
        resumed = resume_arc_length(trajectory, Pose2D(x_m, y_m, start.yaw_rad))
        assert resumed == pytest.approx(0.0, abs=0.05), (x_m, y_m)
    # The crossing half-way: the point nearest to the origin around the middle of the path.
    middle = np.abs(trajectory.s_m - trajectory.length_m / 2) < trajectory.length_m / 4
    k = np.flatnonzero(middle)[np.argmin(np.hypot(trajectory.x_m, trajectory.y_m)[middle])]
    crossing = Pose2D(0.0, 0.0, float(trajectory.yaw_rad[k]))
    assert abs(math.remainder(crossing.yaw_rad - start.yaw_rad, math.tau)) > 0.5  # distinct
    assert resume_arc_length(trajectory, crossing) == pytest.approx(trajectory.s_m[k], abs=0.1)


def test_a_vehicle_put_back_at_the_start_of_a_closed_path_starts_it_again():
    """A restarted vehicle_sim puts the vehicle back at its start mid-run: the progress search,
    lost (the nearest point is far from the last one), relocates where the vehicle faces along
    the path, its start, not its end at the same place (there it was taken for the goal, and
    the vehicle never moved again)."""
    square = waypoints_from_lists([[0.0, 0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0],
                                   [0.0, 0.0]])
    trajectory = plan_through(square, PLANNER)
    end = trajectory.end()
    assert math.hypot(end.x_m, end.y_m) < 0.05  # closed: it ends where it starts
    progress = PathProgress(trajectory)
    halfway = trajectory.at_arc_length(trajectory.length_m / 2)
    assert progress.nearest(halfway.x_m, halfway.y_m, halfway.s_m).s_m == pytest.approx(
        halfway.s_m, abs=0.01)
    # Put back 4 cm beside the start, facing along the path (x, yaw 0): by position alone the
    # end's last metre is nearer (s 43.44 of 43.39 m); the heading decides.
    assert progress.nearest(0.04, -0.03, yaw_rad=0.0).s_m == pytest.approx(0.04, abs=0.01)
    assert PathProgress(trajectory).nearest(end.x_m, end.y_m, yaw_rad=end.yaw_rad).s_m == (
        pytest.approx(trajectory.length_m, abs=0.05))


def test_a_vehicle_put_back_at_the_start_mid_run_follows_the_path_again():
    """Half-way round a closed square the vehicle is put back beside the start (vehicle_sim
    restarted): the controller goes on from the start on a schedule from there. Before, the
    schedule counted the whole way back as waiting for the vehicle, more than goal.timeout at
    once, and gave up: the vehicle never moved again."""
    square = waypoints_from_lists([[0.0, 0.0, 0.0], [10.0, 0.0], [10.0, 10.0], [0.0, 10.0],
                                   [0.0, 0.0]])
    trajectory = plan_through(square, PLANNER)
    controller = TrackingController(controller_for({'model': 'differential'}, {}))
    period_s = 1.0 / controller.config.control_rate
    controller.follow(trajectory, 0.0)
    steps = round(trajectory.duration_s / 2 / period_s)
    for k in range(steps):
        point = trajectory.at_time(k * period_s)
        step = controller.step(k * period_s, Pose2D(point.x_m, point.y_m, point.yaw_rad))
        assert step.status == TRACKING, step.message
    after = [controller.step((steps + k) * period_s, Pose2D(0.04, -0.03, 0.0)) for k in range(20)]
    assert {step.status for step in after} == {TRACKING}, after[-1].message
    assert after[-1].command.vx_mps > 0.05  # off again along the first side
    assert abs(after[-1].errors.along_track_m) < 0.5


# --- reversing ----------------------------------------------------------------------------

CAR_PLANNER = from_flat(PlannerConfig, {**FIXED_PLANNER, 'model': 'bicycle',
                                        'limits.max_curvature': 0.25})


def drive_car(algorithm, trajectory):
    """The default car (2 m wheel base, 30 degree steering) with the default actuators."""
    vehicle = Vehicle(vehicle_config_from_params({'model': 'bicycle'}), 0.001, (0.0, 0.0, 0.0))
    config = controller_for({'model': 'bicycle'}, {'algorithm': algorithm})
    return run_closed_loop(vehicle, TrackingController(config), trajectory,
                           trajectory.duration_s + 20.0)


@pytest.mark.parametrize('algorithm', ALGORITHMS)
def test_a_goal_straight_behind_a_car_is_reached_by_reversing(algorithm):
    """3 m straight behind: the car backs up along the line, never drives off forwards."""
    goal = Pose2D(-3.0, 0.0, 0.0)
    trajectory = plan_to_goal(CAR_PLANNER, Pose2D(0.0, 0.0, 0.0), goal)
    result = drive_car(algorithm, trajectory)
    assert result.status == GOAL_REACHED, result.message
    assert result.x_m.max() < 0.02  # never forwards
    assert np.abs(result.y_m).max() < 0.02 and np.abs(result.yaw_rad).max() < 0.02
    assert result.final_error_m(goal) < 0.1


@pytest.mark.parametrize('algorithm', ALGORITHMS)
def test_every_tracker_follows_reverse_legs_and_cusps(algorithm):
    """3 m to the left, same heading: back, forwards, back (two cusps) within 5 cm."""
    goal = Pose2D(2.0, 3.0, 0.0)
    trajectory = plan_to_goal(CAR_PLANNER, Pose2D(0.0, 0.0, 0.0), goal)
    assert [leg.reverse for leg in trajectory.legs] == [True, False, True]
    result = drive_car(algorithm, trajectory)
    assert result.status == GOAL_REACHED, result.message
    assert result.rms_cross_track_m < 0.03
    assert result.max_cross_track_m < 0.06
    assert result.final_error_m(goal) < 0.1
    first_cusp = trajectory.legs[0].last  # it did back up to the first cusp and turn there
    cusp = (trajectory.x_m[first_cusp], trajectory.y_m[first_cusp])
    assert np.hypot(result.x_m - cusp[0], result.y_m - cusp[1]).min() < 0.1


# --- node defaults: the vehicle described once ----------------------------------------------

SQUARE = [10.0, 0.0, math.nan, 10.0, 10.0, math.nan, 0.0, 10.0, math.nan, 0.0, 0.0, math.nan]


def lagging(model):
    """vehicle_sim parameters: 0.1 s dead time and 0.15 s lag on every actuator."""
    groups = ['drive_actuator', 'steering_actuator'] if model == 'bicycle' else ['drive_actuators']
    return {'model': model, **{f'model_params.{model}.{group}.{name}': value
                               for group in groups
                               for name, value in (('dead_time', 0.1), ('time_constant', 0.15))}}


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('model', MODELS)
def test_with_only_waypoints_every_model_follows_a_square(model, algorithm):
    """Planner and controller as the nodes configure themselves from vehicle_description,
    given only the waypoints (and the algorithm): within 0.15 m of the plan, 0.25 m for a car.
    (Before, the controller's defaults, a bicycle without lead time, missed a differential
    robot's corner by 0.42 m.)"""
    vehicle = lagging(model)
    trajectory = plan_waypoints(planner_for(vehicle, {'waypoints': SQUARE}), Pose2D(0, 0, 0))
    result = run_closed_loop(
        Vehicle(vehicle_config_from_params(vehicle), 0.001, (0.0, 0.0, 0.0)),
        TrackingController(controller_for(vehicle, {'algorithm': algorithm})),
        trajectory, trajectory.duration_s + 30.0)
    assert result.status == GOAL_REACHED, result.message
    assert result.max_cross_track_m < (0.25 if model == 'bicycle' else 0.15)
    assert result.final_error_m(Pose2D(0.0, 0.0, 0.0)) < 0.1


@pytest.mark.parametrize('algorithm', ALGORITHMS)
@pytest.mark.parametrize('model', MODELS)
def test_with_node_defaults_every_model_backs_to_a_goal_straight_behind(model, algorithm):
    """A goal 3 m straight behind, same heading: every model backs up along the line and
    stops on the goal. (Before, differential and omni bases were planned a forward loop of
    1.8 m radius round to it: Stanley left it by 0.6 m, and on an omni base missed the goal.)"""
    vehicle = lagging(model)
    goal = Pose2D(-3.0, 0.0, 0.0)
    trajectory = plan_to_goal(planner_for(vehicle), Pose2D(0, 0, 0), goal)
    assert [leg.reverse for leg in trajectory.legs] == [True]
    result = run_closed_loop(
        Vehicle(vehicle_config_from_params(vehicle), 0.001, (0.0, 0.0, 0.0)),
        TrackingController(controller_for(vehicle, {'algorithm': algorithm})),
        trajectory, trajectory.duration_s + 30.0)
    assert result.status == GOAL_REACHED, result.message
    assert result.x_m.max() < 0.02  # never forwards
    assert result.max_cross_track_m < 0.15
    assert result.final_error_m(goal) < 0.1


@pytest.mark.parametrize('model', MODELS)
def test_with_node_defaults_a_plan_without_times_is_followed_as_closely(model):
    """A plan without times (Nav2's): the planner's square (2 m, 6 m for a car) given to the
    controller as poses only. It times the plan as the planner would (the drive's lag bound):
    within 0.15 m (0.25 m for a car) and at the goal. (Before, it timed the plan at the
    vehicle's full 2 m/s^2: the default differential base left it by 0.83 m and missed the
    goal, the omni base by 0.65 m.)"""
    vehicle = {'model': model}
    side_m = 6.0 if model == 'bicycle' else 2.0
    square = [side_m, 0.0, math.nan, side_m, side_m, math.nan, 0.0, side_m, math.nan,
              0.0, 0.0, math.nan]
    planned = plan_waypoints(planner_for(vehicle, {'waypoints': square}), Pose2D(0, 0, 0))
    config = controller_for(vehicle)
    untimed, timed = trajectory_from_plan(np.zeros(len(planned.x_m)), planned.x_m, planned.y_m,
                                          planned.yaw_rad, config)
    assert not timed
    result = run_closed_loop(
        Vehicle(vehicle_config_from_params(vehicle), 0.001, (0.0, 0.0, 0.0)),
        TrackingController(config), untimed, untimed.duration_s + 30.0)
    assert result.status == GOAL_REACHED, result.message
    assert result.max_cross_track_m < (0.25 if model == 'bicycle' else 0.15)
    assert result.final_error_m(Pose2D(0.0, 0.0, 0.0)) < 0.1


def test_a_closed_plan_delivered_late_is_started_not_taken_as_done():
    """The demo's loop, planned from a noisy pose estimate at the start and closed at the
    waypoint (0, 0, 0), reaches the controller 2.2 s after its first stamp (a latched plan on a
    busy machine, beyond plan_clock_tolerance). The vehicle's next estimate lies 7 cm nearer the
    path's end than its start, within a localisation error: both count as near-equal, the
    earliest wins, or the one nearest to where the plan's own schedule places now. Before, the
    end was taken: goal reached, and the vehicle never moved (CI, Kilted,
    test_demo_launch_closes_the_loop)."""
    planner = planner_for({'model': 'differential'}, {
        'waypoints': [3.0, 0.0, math.nan, 4.5, 1.5, 1.5708, 3.0, 3.0, 3.1416, 0.0, 3.0, 3.1416,
                      -1.5, 1.5, -1.5708, 0.0, 0.0, 0.0]})
    trajectory = plan_waypoints(planner, Pose2D(0.04, -0.03, 0.02))
    end = trajectory.end()
    assert (end.x_m, end.y_m) == pytest.approx((0.0, 0.0), abs=1e-9)
    estimate = Pose2D(-0.03, 0.02, -0.01)
    controller = TrackingController(controller_for({'model': 'differential'}, {}))
    assert controller.follow_from_nearest(trajectory, 100.0, estimate) < 1.0
    assert controller.follow_from_nearest(trajectory, 100.0, estimate, stamped_s=2.2) < 1.0
    assert controller.step(100.05, estimate).status == TRACKING
    # a schedule that places now at the end: the end
    late_s = trajectory.duration_s - 0.5
    assert controller.follow_from_nearest(trajectory, 100.0, estimate, stamped_s=late_s) == (
        pytest.approx(trajectory.duration_s, abs=1.0))
