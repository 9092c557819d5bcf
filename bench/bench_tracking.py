"""Tracking figures: cross-track error per model and algorithm on a figure-eight, time to goal.

Run after ``source env.sh``:  python bench/bench_tracking.py [--size 14] [--speed 1.0]

The control loop runs in this process without ROS (:mod:`wheelsim.core.tracking.simulation`):
the simulator's vehicle core with the reference simulator's default vehicles and actuators
(car: 2 m wheel base, 30 degree steering; differential: 1.4 m track; omni: 1.4 m x 1.2 m; drive
dead time 0.2 s, time constant 0.4 s; steering dead time 0.2 s), stepped at 1 kHz, the
controller at 20 Hz with its default gains and ``lead_time`` 0.6 s (the drive's dead time plus
time constant). ``--lead 0`` shows the controllers without it.

1. Figure-eight: a lemniscate of half-width ``--size`` m through 16 waypoints (curvature up to
   0.23 1/m), planned with speed <= ``--speed`` m/s, 0.5 m/s^2, 1 m/s^2 lateral, 1 rad/s and
   curvature <= 0.25 1/m, followed from its start. Localization ``perfect`` (the controller
   sees the true pose) and ``noisy`` (the localization core with its default noise, seed 1,
   sampled at the control rate; errors are of the true pose). Printed: RMS and maximum of the
   true cross-track error, and the time to goal against the planned duration.
2. Goals: from (0, 0, 0) to three goal poses, each model with each algorithm and perfect
   localization: time to goal (planned duration in brackets) and final position error once the
   vehicle has come to rest.
3. Node defaults: planner and controller given only the waypoints (and the algorithm), the
   rest taken from the vehicle's description as the nodes take it from vehicle_description;
   every actuator with 0.1 s dead time and 0.15 s lag; a 10 m square (corners as waypoints,
   headings free) and a goal 3 m straight behind (a car reverses). Printed: RMS and maximum of
   the true cross-track error, final distance to the goal, time to goal (planned).
"""

from __future__ import annotations

import argparse
import math

from wheelsim.core.geometry.se2 import Pose2D
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.model import Localization
from wheelsim.core.params import from_flat
from wheelsim.core.planning.config import PlannerConfig
from wheelsim.core.planning.planner import plan_through, plan_to_goal, plan_waypoints
from wheelsim.core.planning.waypoints import figure_eight, waypoints_from_lists
from wheelsim.core.tracking.controller import TrackingController
from wheelsim.core.tracking.simulation import PoseEstimator, run_closed_loop
from wheelsim.core.vehicle.config import vehicle_config_from_params
from wheelsim.core.vehicle.model import Vehicle
from wheelsim.testing.configs import FIXED_PLANNER, controller_for, planner_for

MODELS = ('differential', 'bicycle', 'omni')
ALGORITHMS = ('feedforward', 'pure_pursuit', 'stanley')
GOALS = (Pose2D(10.0, 6.0, math.pi / 2), Pose2D(-6.0, 10.0, math.pi), Pose2D(12.0, -2.0, 0.0))


def noisy_localization(seed: int = 1) -> PoseEstimator:
    """The localization core in mode noisy, fed the truth at every control step."""
    localization = Localization(from_flat(LocalizationConfig, {'mode': 'noisy', 'seed': seed}))

    def estimate(truth: Pose2D, twist, t_s: float) -> Pose2D:
        out = localization.step(round(t_s * 1e9), tuple(truth), tuple(twist))
        return Pose2D(*(float(v) for v in out.map_T_base))

    return estimate


def run(model, algorithm, trajectory, start, lead_s, estimator=None):
    vehicle = Vehicle(vehicle_config_from_params({'model': model}), 0.001, tuple(start))
    config = controller_for({'model': model}, {'algorithm': algorithm, 'lead_time': lead_s})
    controller = TrackingController(config)
    return run_closed_loop(vehicle, controller, trajectory, trajectory.duration_s + 30.0, estimator)


def figure_eight_table(planner: PlannerConfig, size_m: float, lead_s: float) -> None:
    points = figure_eight(size_m)
    trajectory = plan_through(waypoints_from_lists(points), planner)
    print(
        f'Figure-eight: {trajectory.length_m:.1f} m, planned {trajectory.duration_s:.1f} s, '
        f'peak curvature {abs(trajectory.curvature_inv_m).max():.3f} 1/m'
    )
    print(
        f'{"model":13}{"algorithm":14}{"localization":13}{"RMS [m]":>9}{"max [m]":>9}'
        f'{"to goal [s]":>13}  result'
    )
    for model in MODELS:
        for algorithm in ALGORITHMS:
            for localization in ('perfect', 'noisy'):
                estimator = noisy_localization() if localization == 'noisy' else None
                result = run(model, algorithm, trajectory, points[0], lead_s, estimator)
                print(
                    f'{model:13}{algorithm:14}{localization:13}{result.rms_cross_track_m:9.3f}'
                    f'{result.max_cross_track_m:9.3f}{result.end_time_s:13.1f}  {result.status}'
                )


def goal_table(planner: PlannerConfig, lead_s: float) -> None:
    print('\nGoals from (0, 0, 0): time to goal [s] (planned) and final position error at rest [m]')
    header = ''.join(f'{f"({g.x_m:g}, {g.y_m:g}, {g.yaw_rad:.2f})":>26}' for g in GOALS)
    print(f'{"model":13}{"algorithm":14}{header}')
    for model in MODELS:
        for algorithm in ALGORITHMS:
            cells = []
            for goal in GOALS:
                trajectory = plan_to_goal(planner, Pose2D(0.0, 0.0, 0.0), goal)
                result = run(model, algorithm, trajectory, (0.0, 0.0, 0.0), lead_s)
                mark = '' if result.status == 'goal_reached' else '!'
                cells.append(
                    f'{result.end_time_s:6.1f}{mark} ({trajectory.duration_s:5.1f}) '
                    f'{result.final_error_m(goal):6.3f}'
                )
            print(f'{model:13}{algorithm:14}' + ''.join(f'{c:>26}' for c in cells))


SQUARE = [10.0, 0.0, math.nan, 10.0, 10.0, math.nan, 0.0, 10.0, math.nan, 0.0, 0.0, math.nan]


def lagging(model: str) -> dict:
    """vehicle_sim parameters: 0.1 s dead time and 0.15 s lag on every actuator."""
    groups = ['drive_actuator', 'steering_actuator'] if model == 'bicycle' else ['drive_actuators']
    return {'model': model, **{f'model_params.{model}.{group}.{name}': value
                               for group in groups
                               for name, value in (('dead_time', 0.1), ('time_constant', 0.15))}}


def defaults_table() -> None:
    print('\nNode defaults (only waypoints given; 0.1 s dead time, 0.15 s lag on every actuator):')
    print(f'{"model":13}{"algorithm":14}{"route":9}{"RMS [m]":>9}{"max [m]":>9}{"final [m]":>11}'
          f'{"to goal [s]":>13}  result')
    for model in MODELS:
        vehicle = lagging(model)
        square = plan_waypoints(planner_for(vehicle, {'waypoints': SQUARE}), Pose2D(0, 0, 0))
        behind = plan_to_goal(planner_for(vehicle), Pose2D(0, 0, 0), Pose2D(-3.0, 0.0, 0.0))
        for algorithm in ALGORITHMS:
            for name, trajectory in (('square', square), ('behind', behind)):
                end = trajectory.end()
                result = run_closed_loop(
                    Vehicle(vehicle_config_from_params(vehicle), 0.001, (0.0, 0.0, 0.0)),
                    TrackingController(controller_for(vehicle, {'algorithm': algorithm})),
                    trajectory, trajectory.duration_s + 30.0)
                final = result.final_error_m(Pose2D(end.x_m, end.y_m, end.yaw_rad))
                print(f'{model:13}{algorithm:14}{name:9}{result.rms_cross_track_m:9.3f}'
                      f'{result.max_cross_track_m:9.3f}{final:11.3f}{result.end_time_s:7.1f} '
                      f'({trajectory.duration_s:4.1f})  {result.status}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--size', type=float, default=14.0, help='figure-eight half-width [m]')
    parser.add_argument('--speed', type=float, default=1.0, help='planned top speed [m/s]')
    parser.add_argument('--lead', type=float, default=0.6, help='controller lead_time [s]')
    args = parser.parse_args()
    planner = from_flat(
        PlannerConfig,
        {**FIXED_PLANNER, 'limits.max_curvature': 0.25, 'limits.max_speed': args.speed},
    )
    figure_eight_table(planner, args.size, args.lead)
    goal_table(planner, args.lead)
    defaults_table()


if __name__ == '__main__':
    main()
