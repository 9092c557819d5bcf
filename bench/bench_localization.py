"""Localization figures: CPU share of the node at 50 Hz ground truth, EKF accuracy.

Run after ``source env.sh``:  python bench/bench_localization.py [--seconds 20] [--seeds 20]

1. CPU share: the ``localization`` node runs as its own process (mode ekf, defaults); this
   process publishes a 50 Hz figure-eight ground truth for ``--seconds`` and reads the node's
   CPU time from /proc before and after (share of one core). The core's own cost per sample is
   timed in-process for comparison.
2. Accuracy on the default scenario (a 3 m figure-eight at 0.94 to 1.33 m/s for 40 s, ground
   truth at 50 Hz, default parameters), over ``--seeds`` seeds: EKF position and heading RMS
   against the RMS of the raw pose fixes it fuses, the noisy-mode map pose RMS, the odometry
   drift at the end and the mean NEES (3 when the covariance is consistent).

DDS stays on loopback (env.sh's profile) on a reserved ROS domain.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import wheelsim
from wheelsim.core.localization.config import LocalizationConfig
from wheelsim.core.localization.scenario import figure_eight, run
from wheelsim.core.params import from_flat
from wheelsim.ros.dds_domain import require_loopback_dds, reserved_domain_id
from wheelsim.testing.process_activity import cpu_s

RATE_HZ = 50.0


def node_cpu_share(seconds: float) -> tuple[float, int, int]:
    """CPU share of the localization process while fed 50 Hz ground truth; messages in/out."""
    import rclpy
    from nav_msgs.msg import Odometry

    from wheelsim.ros import qos
    from wheelsim.ros.conversions import odometry

    require_loopback_dds()
    with reserved_domain_id() as domain_id:
        env = dict(os.environ, ROS_DOMAIN_ID=str(domain_id))
        env['PYTHONPATH'] = (
            str(Path(wheelsim.__file__).resolve().parents[1])
            + os.pathsep
            + (env.get('PYTHONPATH', ''))
        )
        node = subprocess.Popen(
            [sys.executable, '-m', 'wheelsim.nodes', 'localization',
             '--ros-args', '-p', 'mode:=ekf'],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        context = rclpy.Context()
        rclpy.init(context=context, domain_id=domain_id)
        try:
            probe = rclpy.create_node('bench_probe', context=context)
            executor = rclpy.executors.SingleThreadedExecutor(context=context)
            executor.add_node(probe)
            received = []
            probe.create_subscription(Odometry, 'odom', received.append, qos.DEFAULT)
            publisher = probe.create_publisher(Odometry, 'ground_truth', qos.DEFAULT)
            deadline = time.monotonic() + 30.0
            while time.monotonic() < deadline and not (
                publisher.get_subscription_count() and probe.count_publishers('odom')
            ):
                executor.spin_once(timeout_sec=0.05)
            time.sleep(1.0)  # start-up work of the node is not part of the figure
            scenario = figure_eight(duration_s=seconds, rate_hz=RATE_HZ)
            start_cpu, start_wall = cpu_s(node.pid), time.monotonic()
            for k, (stamp, pose, twist) in enumerate(
                zip(scenario.stamps_ns, scenario.poses, scenario.twists, strict=True)
            ):
                publisher.publish(odometry(int(stamp), 'map', 'base_link', pose, twist))
                next_s = start_wall + (k + 1) / RATE_HZ
                while time.monotonic() < next_s:
                    executor.spin_once(timeout_sec=max(0.0, next_s - time.monotonic()))
            share = (cpu_s(node.pid) - start_cpu) / (time.monotonic() - start_wall)
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                executor.spin_once(timeout_sec=0.05)
            probe.destroy_node()
        finally:
            rclpy.try_shutdown(context=context)
            node.send_signal(2)
            node.wait(timeout=10)
    return share, len(scenario.stamps_ns), len(received)


def core_cost_us(mode: str) -> float:
    """Mean wall time of one ``Localization.step`` [us] on the default scenario."""
    scenario = figure_eight()
    config = from_flat(LocalizationConfig, {'mode': mode})
    start = time.perf_counter()
    run(config, scenario)
    return (time.perf_counter() - start) / len(scenario.stamps_ns) * 1e6


def rms(values: list[np.ndarray]) -> float:
    return float(np.sqrt(np.mean(np.concatenate(values))))


def accuracy(seeds: int) -> None:
    scenario = figure_eight()
    burn_in = int(2.0 * RATE_HZ)  # the EKF's first 2 s (it starts from one fix)
    ekf = [
        run(from_flat(LocalizationConfig, {'mode': 'ekf', 'seed': s}), scenario)
        for s in range(seeds)
    ]
    noisy = [
        run(from_flat(LocalizationConfig, {'mode': 'noisy', 'seed': s}), scenario)
        for s in range(seeds)
    ]
    ekf_pos = rms([np.sum(r.map_error[burn_in:, :2] ** 2, axis=1) for r in ekf])
    fix_pos = rms([np.sum(r.fix_error[:, :2] ** 2, axis=1) for r in ekf])
    ekf_yaw = rms([r.map_error[burn_in:, 2] ** 2 for r in ekf])
    fix_yaw = rms([r.fix_error[:, 2] ** 2 for r in ekf])
    noisy_pos = rms([np.sum(r.map_error[1:, :2] ** 2, axis=1) for r in noisy])
    odom_end = rms([np.sum(r.odom_error[-1:, :2] ** 2, axis=1) for r in ekf])
    odom_end_reported = float(np.sqrt(np.trace(ekf[0].odom_covariance[-1][:2, :2])))
    nees_ekf = float(np.nanmean([r.nees('map')[burn_in:] for r in ekf]))
    nees_odom = float(np.nanmean([r.nees('odom')[1:] for r in ekf]))
    distance_m = float(np.sum(np.hypot(*np.diff(scenario.poses[:, :2], axis=0).T)))
    print(f'default scenario: figure-eight, {distance_m:.1f} m in 40 s at 50 Hz, {seeds} seeds')
    print(f'  EKF position RMS            {ekf_pos * 100:6.2f} cm  (after the first 2 s)')
    print(f'  pose fix position RMS       {fix_pos * 100:6.2f} cm  (10 Hz fixes the EKF fuses)')
    print(f'  EKF / fix position RMS      {ekf_pos / fix_pos:6.2f}')
    print(
        f'  EKF heading RMS             {np.degrees(ekf_yaw):6.2f} deg (fixes '
        f'{np.degrees(fix_yaw):.2f} deg)'
    )
    print(f'  noisy-mode map pose RMS     {noisy_pos * 100:6.2f} cm  (white, per 50 Hz sample)')
    print(f'  odometry drift at the end   {odom_end:6.2f} m   (reported {odom_end_reported:.2f} m)')
    print(f'  mean NEES (3 = consistent)  EKF {nees_ekf:.2f}, odometry {nees_odom:.2f}')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--seconds', type=float, default=20.0, help='CPU measurement length')
    parser.add_argument('--seeds', type=int, default=20, help='seeds of the accuracy figures')
    args = parser.parse_args()
    share, sent, received = node_cpu_share(args.seconds)
    load = os.getloadavg()[0]
    print(
        f'localization node, mode ekf, 50 Hz ground truth for {args.seconds:g} s '
        f'(machine load average {load:.1f} on {os.cpu_count()} cores):'
    )
    print(
        f'  CPU share                   {share * 100:6.2f} % of one core '
        f'({received} of {sent} odom messages back)'
    )
    for mode in ('perfect', 'noisy', 'ekf'):
        print(f'  core step, mode {mode:8s}    {core_cost_us(mode):6.1f} us per sample')
    accuracy(args.seeds)


if __name__ == '__main__':
    main()
