"""Per-sample CPU of the nodes' own work in a lock-step run, without the executor or recording.

Run after ``source env.sh``:  python bench/bench_node_work.py [--runs 4] [--baseline REV]

Each run is a fresh process that builds the nodes as ``wheelsim run`` does (on lock-step seams)
and calls their callbacks directly, each publication queued and then delivered to no one (no
subscription, no recorder): the figures are what the nodes themselves cost per 50 Hz
ground-truth sample (4 500 samples, the default scenario's 90 s), not the bag's serialization
(``bench/bench_runner.py`` times the whole loop). Up to 1d52afd publishing was replaced by a
no-op instead (and the nodes were rclpy nodes): a baseline that old needs this script of its
own commit. Thread CPU time, best of 5 passes per run:

- ``localization callback``: ``Localization._on_ground_truth`` (mode noisy, as in the default
  scenario) over a 50 Hz figure-eight (:func:`wheelsim.core.localization.scenario.figure_eight`)
  given as ``nav_msgs/Odometry`` messages, and its parts: the model's per-sample call alone
  (``advance``, or ``step`` before the outputs went into arrays; a fresh model per pass) and
  the node's ``_publish`` of the model's outputs;
- ``vehicle publish_state``: ``VehicleOutputs.publish_state`` with message objects (the
  lock-step path) for a differential robot's states;
- ``pose input``: ``MapPoses.pose`` of a ``pose`` message in the map frame (an ``initialpose``
  or a goal; the controller's and the planner's per-sample ``pose`` goes through
  ``MapPoses.planar``, inside the callback figures below, code up to 0824453 through this);
- ``controller step``: ``TrackingController.step`` (the controller node's timer work) per
  control step, replaying the inputs of a closed loop without ROS
  (:func:`wheelsim.core.tracking.simulation.run_closed_loop`, noisy localization, 20 Hz) on a
  16-waypoint figure-eight of half-width 3 m: a differential robot with feedforward (the default
  scenario's law), a car with Stanley and a car with pure pursuit;
- ``controller node step``: the same differential feedforward inputs given to a ``controller``
  node per control step: its ROS time set (a lock-step executor's work, included), then
  ``_on_pose``, ``_on_odom`` and ``_on_timer`` (the step and its two publications);
- ``controller pose+odom callbacks``, ``planner pose callback``: the nodes' ``_on_pose`` (and
  the controller's ``_on_odom``) per 50 Hz sample.

``--baseline REV`` also runs the code of REV (exported as ``bench_runner.py`` does), alternating
with this tree run by run, and prints both side by side (best over the runs). No DDS.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench_runner import alternated, baseline_tree, variant_codes

SAMPLES = 4500
PASSES = 5
FIGURES = ('localization callback', '  model step', '  node _publish', 'vehicle publish_state',
           'pose input (MapPoses.pose)', 'controller step differential ff',
           'controller node step (diff ff)', 'controller step car Stanley',
           'controller step car pure pursuit',
           'controller pose+odom callbacks', 'planner pose callback')
#: (vehicle model, tracking law) of each ``controller step`` figure.
TRACKERS = (('differential', 'feedforward'), ('bicycle', 'stanley'), ('bicycle', 'pure_pursuit'))


def best_us(action, count: int = SAMPLES) -> float:
    """Best thread CPU time over :data:`PASSES` calls of ``action`` [us per sample]."""
    times = []
    for _ in range(PASSES):
        start = time.thread_time()
        action()
        times.append(time.thread_time() - start)
    return min(times) / count * 1e6


def controller_steps(model: str, algorithm: str):
    """A function stepping a fresh controller through the recorded inputs of one closed loop,
    and the number of steps."""
    from wheelsim.core.localization.config import LocalizationConfig
    from wheelsim.core.localization.model import Localization as LocalizationModel
    from wheelsim.core.params import from_flat
    from wheelsim.core.planning.planner import plan_through
    from wheelsim.core.planning.waypoints import figure_eight as eight_waypoints
    from wheelsim.core.planning.waypoints import waypoints_from_lists
    from wheelsim.core.tracking.controller import TrackingController
    from wheelsim.core.tracking.simulation import run_closed_loop
    from wheelsim.core.vehicle.config import vehicle_config_from_params
    from wheelsim.core.vehicle.model import Vehicle
    from wheelsim.testing.configs import controller_for, planner_for

    vehicle_params = {'model': model}
    points = eight_waypoints(3.0 if model == 'differential' else 14.0)
    trajectory = plan_through(waypoints_from_lists(points), planner_for(vehicle_params))
    config = controller_for(vehicle_params, {'algorithm': algorithm, 'lead_time': 0.15})
    localization = LocalizationModel(from_flat(LocalizationConfig, {'mode': 'noisy', 'seed': 1}))
    inputs = []

    def estimate(truth, twist, t_s):
        out = localization.step(round(t_s * 1e9), tuple(truth), tuple(twist))
        seen = type(truth)(*(float(v) for v in out.map_T_base))
        inputs.append((t_s, seen, twist))
        return seen

    vehicle = Vehicle(vehicle_config_from_params(vehicle_params), 0.001, tuple(points[0]))
    run_closed_loop(vehicle, TrackingController(config), trajectory,
                    trajectory.duration_s + 30.0, estimate)

    def steps() -> None:
        controller = TrackingController(config)
        controller.follow(trajectory, 0.0)
        step = controller.step
        for now_s, pose, twist in inputs:
            step(now_s, pose, twist)

    return steps, len(inputs), config, trajectory, inputs


def controller_node_steps(config, trajectory, inputs):
    """A function driving a ``controller`` node through ``inputs`` (as recorded by
    :func:`controller_steps`): per control step the ROS time set, then ``_on_pose``,
    ``_on_odom`` and ``_on_timer``; and the node."""
    from wheelsim.core.params import to_flat
    from wheelsim.core.tracking.controller import TrackingController
    from wheelsim.nodes.controller import Controller
    from wheelsim.ros.conversions import odometry, pose_with_covariance_stamped
    from wheelsim.run.lockstep import Lockstep

    lockstep = Lockstep()
    node = lockstep.add(Controller, {'use_sim_time': True, **to_flat(config)})
    start_ns = 1_000_000_000  # as wheelsim run: ROS time 0 is "no clock yet"
    messages = []
    for t_s, pose, twist in inputs:
        stamp = start_ns + round(t_s * 1e9)
        messages.append((stamp, pose_with_covariance_stamped(stamp, 'map', pose),
                         odometry(stamp, 'odom', 'base_link', (0.0, 0.0, 0.0), tuple(twist))))
    seam, deliver = node.seam, lockstep.deliver

    def steps() -> None:
        node.tracker = TrackingController(node.config)
        node.tracker.follow(trajectory, start_ns / 1e9)
        for stamp, pose_msg, odom_msg in messages:
            seam.time_ns = stamp
            node._on_pose(pose_msg)
            node._on_odom(odom_msg)
            node._on_timer()
            deliver()

    return steps, node


def measure() -> dict[str, float]:
    """Every figure of one run, in this process [us per sample]."""
    from wheelsim.core.localization.model import Localization as LocalizationModel
    from wheelsim.core.localization.scenario import figure_eight
    from wheelsim.core.vehicle.model import VehicleState
    from wheelsim.nodes.controller import Controller
    from wheelsim.nodes.localization import Localization
    from wheelsim.nodes.planner import Planner
    from wheelsim.ros.conversions import odometry, pose_with_covariance_stamped
    from wheelsim.ros.inputs import MapPoses
    from wheelsim.ros.vehicle_outputs import VehicleOutputs
    from wheelsim.run.lockstep import Lockstep

    lockstep = Lockstep()  # lock-step seams: publishing queues in process, delivery to no one
    deliver = lockstep.deliver
    node = lockstep.add(Localization, {'use_sim_time': True, 'mode': 'noisy'})
    scenario = figure_eight(duration_s=(SAMPLES - 1) / 50.0)  # SAMPLES stamps at 50 Hz
    samples = [(int(stamp), tuple(pose.tolist()), tuple(twist.tolist()))
               for stamp, pose, twist in zip(scenario.stamps_ns, scenario.poses,
                                             scenario.twists, strict=True)]
    messages = [odometry(stamp, 'map', 'base_link', pose, twist)
                for stamp, pose, twist in samples]

    def callbacks() -> None:
        node.localization = LocalizationModel(node.config)  # the same samples each pass
        for msg in messages:
            node._on_ground_truth(msg)
            deliver()

    if hasattr(LocalizationModel, 'advance'):  # the node publishes the model's arrays
        def model_steps() -> None:
            advance = LocalizationModel(node.config).advance
            for sample in samples:
                advance(*sample)

        def publications() -> None:
            for stamp, _, _ in samples:  # the numbers of the last sample, each time
                node._publish(stamp)
                deliver()
    else:  # before: a LocalizationOutput per sample, published
        def model_steps() -> list:
            model = LocalizationModel(node.config)
            return [model.step(*sample) for sample in samples]

        outputs = model_steps()

        def publications() -> None:
            for out in outputs:
                node._publish(out)
                deliver()

    joints = ('left_wheel_joint', 'right_wheel_joint')
    vehicle = VehicleOutputs(node.seam, 'map', 'base_link', joints, serialized=False)
    states = [VehicleState(*pose, *twist, (0.1 * k, 0.2 * k), (1.0, 2.0), (), k)
              for k, (_, pose, twist) in enumerate(samples)]

    def vehicle_publications() -> None:
        for (stamp, _, _), state in zip(samples, states, strict=True):
            vehicle.publish_state(stamp, state)
            deliver()

    map_poses = MapPoses(node.seam, 'map')
    poses = [pose_with_covariance_stamped(stamp, 'map', pose) for stamp, pose, _ in samples]

    def pose_inputs() -> None:
        for msg in poses:
            map_poses.pose(msg.pose.pose, msg.header.frame_id, 'pose')

    tracker_figures = []
    for tracker in TRACKERS:
        steps, count, config, trajectory, inputs = controller_steps(*tracker)
        tracker_figures.append(best_us(steps, count))
        if tracker == TRACKERS[0]:
            node_steps, controller_node = controller_node_steps(config, trajectory, inputs)
            tracker_figures.append(best_us(node_steps, count))
    sim_time = {'use_sim_time': True}
    controller, planner = lockstep.add(Controller, sim_time), lockstep.add(Planner, sim_time)
    odometries = [odometry(stamp, 'odom', 'base_link', pose, twist)
                  for stamp, pose, twist in samples]

    def controller_inputs() -> None:
        for pose_msg, odom_msg in zip(poses, odometries, strict=True):
            controller._on_pose(pose_msg)
            controller._on_odom(odom_msg)

    def planner_inputs() -> None:
        for msg in poses:
            planner._on_pose(msg)

    figures = dict(zip(FIGURES, (best_us(callbacks), best_us(model_steps),
                                 best_us(publications), best_us(vehicle_publications),
                                 best_us(pose_inputs), *tracker_figures,
                                 best_us(controller_inputs), best_us(planner_inputs)),
                       strict=True))
    return figures


def spawn(code) -> dict[str, float]:
    """One run in a fresh process, with the package in ``code`` first on the path if given."""
    from wheelsim.ros.dds_domain import require_loopback_dds, reserved_domain_id

    require_loopback_dds()
    with reserved_domain_id() as domain_id:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
        if code is not None:
            env['PYTHONPATH'] = os.pathsep.join([str(code), env.get('PYTHONPATH', '')])
        result = subprocess.run([sys.executable, __file__, '--child'], capture_output=True,
                                text=True, check=False, env=env)
    if result.returncode != 0:
        raise SystemExit(f'run failed:\n{result.stdout}\n{result.stderr}')
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--runs', type=int, default=4, help='fresh processes (default 4)')
    parser.add_argument('--baseline', metavar='REV',
                        help='also run the code of this git revision, alternating')
    parser.add_argument('--child', action='store_true', help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure()))
        return
    load_before = os.getloadavg()[0]
    with baseline_tree(args.baseline) as old_code:
        variants = variant_codes(args.baseline, old_code)
        runs = alternated(variants, args.runs, spawn)
    print(f'{SAMPLES} samples, best of {PASSES} passes x {args.runs} runs per variant'
          f'{" (alternating)" if len(variants) > 1 else ""}, load average {load_before:.1f} '
          f'before, {os.getloadavg()[0]:.1f} after ({os.cpu_count()} CPUs)')
    names = list(runs)
    print(f'  {"us per sample (best)":30s}' + ''.join(f'{name:>24s}' for name in names)
          + ('   after/before' if len(names) > 1 else ''))
    for figure in FIGURES:
        best = [min(run[figure] for run in runs[name]) for name in names]
        ratio = f'   {best[1] / best[0]:12.2f}' if len(best) > 1 else ''
        print(f'  {figure:30s}' + ''.join(f'{value:24.2f}' for value in best) + ratio)


if __name__ == '__main__':
    main()
