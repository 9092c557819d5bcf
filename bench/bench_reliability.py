"""Reliability figures: invalid start-up values refused, and the memory of the farthest goal.

    python bench/bench_reliability.py            # after `source env.sh`

1. Every node started with each invalid value of the reliability review's area 1 (values out of
   range, NaN, inf, wrong types, empty or equal frame names, two clock modes, missing or garbled
   params files, waypoints far outside the workspace). Refused cleanly = exit code 2, no
   traceback, at most two output lines, an ``error:`` line naming the parameter.
2. Peak memory of a planner given the farthest goal it accepts (the edge of
   ``limits.workspace_radius``, from the opposite edge) and goals beyond it (refused), measured
   as the process's peak RSS (VmHWM) against the same planner given a near goal.

The fuzz, shutdown, socket and output-safety checks are tests (``make test``), not figures.
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from wheelsim.ros.dds_domain import require_loopback_dds, reserved_domain_id

VS, LO, PL, CO = 'vehicle_sim', 'localization', 'planner', 'controller'
DIFF = 'model_params.differential.drive_actuators'
BIKE = 'model_params.bicycle.drive_actuator'
NAN, INF = math.nan, math.inf
#: (node, {parameter: invalid value}, the parameter the error line must name).
CASES = [
    *[(VS, {'step_rate': v}, 'step_rate') for v in (-100.0, 0.0, NAN, INF, 1e12, 'abc', True,
                                                    [1000.0, 2.0])],
    *[(VS, {'pub_rate': v}, 'pub_rate') for v in (-1.0, 0.0, NAN, 1e12, 2000.0)],
    *[(VS, {'clock_rate': v}, 'clock_rate') for v in (0.0, 2000.0)],
    *[(VS, {'model': v}, 'model') for v in ('tank', 42)],
    (VS, {'cmd_vel_type': 'foo'}, 'cmd_vel_type'),
    *[(VS, {'model': 'bicycle', f'{BIKE}.time_constant': v}, 'time_constant') for v in (-0.4, NAN)],
    *[(VS, {f'{DIFF}.time_constant': v}, 'time_constant') for v in (-0.4, NAN)],
    (VS, {f'{DIFF}.max_deceleration': -2.0}, 'max_deceleration'),
    (VS, {'model': 'bicycle', 'model_params.bicycle.wheel_base': 0.0}, 'wheel_base'),
    (VS, {'model_params.differential.slip_left': 1.5}, 'slip_left'),
    (VS, {'twist_reference_max_oldness': -1.0}, 'twist_reference_max_oldness'),
    (VS, {'max_time_jump': 0.0}, 'max_time_jump'),
    (VS, {'initial_pose.yaw': 100.0}, 'initial_pose.yaw'),
    (VS, {'initial_pose.x': 1e300}, 'initial_pose.x'),
    (VS, {'cmd_vel_limits.linear': 0.0}, 'cmd_vel_limits.linear'),
    (VS, {'real_time_factor': -1.0}, 'real_time_factor'),
    (VS, {'be_reference_clock': True, 'use_sim_time': True}, 'be_reference_clock'),
    (VS, {'map_frame': ''}, 'map_frame'),
    (VS, {'base_frame': ''}, 'base_frame'),
    (VS, {'map_frame': 'base_link'}, 'base_frame'),
    (VS, 'garbled', 'params file'),
    (VS, 'missing', 'params file'),
    *[(LO, {'mode': v}, 'mode') for v in ('foo', True)],
    *[(LO, {'seed': v}, 'seed') for v in (-1, 1.5, 1e23)],
    *[(LO, {'localization.odom_walk_velocity_translation': v}, 'odom_walk') for v in (-1.0, INF)],
    (LO, {'localization.map_noise_correlation_time': NAN}, 'correlation_time'),
    *[(LO, {'ekf.measurement_rate': v}, 'measurement_rate') for v in (0.0, -10.0, 1e12)],
    (LO, {'ekf.measurement_noise_translation': 0.0}, 'measurement_noise'),
    (LO, {'map_frame': ''}, 'map_frame'),
    (LO, {'odom_frame': ''}, 'odom_frame'),
    (LO, {'odom_frame': 'map'}, 'odom_frame'),
    (LO, {'base_frame': 'odom'}, 'base_frame'),
    *[(PL, {'waypoints': v}, 'waypoints') for v in ([1.0, 2.0], [INF, 0.0, 0.0],
                                                     [NAN, NAN, NAN], [1e308, -1e308, 0.0])],
    (PL, {'waypoints': ['a', 'b', 'c']}, 'waypoints'),
    *[(PL, {'path_resolution': v}, 'path_resolution') for v in (0.0, -0.05)],
    *[(PL, {'limits.max_speed': v}, 'max_speed') for v in (-1.0, NAN)],
    (PL, {'limits.max_curvature': NAN}, 'max_curvature'),
    (PL, {'limits.max_acceleration': 0.0}, 'max_acceleration'),
    (PL, {'limits.max_yaw_rate': INF}, 'max_yaw_rate'),
    (PL, {'map_frame': ''}, 'map_frame'),
    (CO, {'algorithm': 'mpc'}, 'algorithm'),
    *[(CO, {'control_rate': v}, 'control_rate') for v in (-20.0, 0.0, 1e12, NAN)],
    (CO, {'wheel_base': 0.0}, 'wheel_base'),
    (CO, {'max_steering_angle': 2.0}, 'max_steering_angle'),
    (CO, {'limits.min_linear_x': 1.0}, 'min_linear_x'),
    (CO, {'limits.max_linear_x': -1.0}, 'max_linear_x'),
    (CO, {'goal.timeout': 0.0}, 'goal.timeout'),
    (CO, {'pose_timeout': INF}, 'pose_timeout'),
    (CO, {'enable_stamped_cmd_vel': 'maybe'}, 'enable_stamped_cmd_vel'),
    (CO, {'model': 'tank'}, 'model'),
    (CO, {'pure_pursuit.min_lookahead': 5.0, 'pure_pursuit.max_lookahead': 1.0}, 'lookahead'),
    (CO, {'base_frame': ''}, 'base_frame'),
    (CO, {'base_frame': 'map'}, 'base_frame'),
]


def _yaml_value(value):
    return value if not isinstance(value, float) or math.isfinite(value) else (
        '.nan' if math.isnan(value) else ('.inf' if value > 0 else '-.inf'))


def start_up_case(node: str, values, name: str, folder: Path) -> tuple[bool, str]:
    """Start ``node`` with ``values``; (refused cleanly, its output)."""
    params = folder / f'{abs(hash((node, repr(values))))}.yaml'
    if values == 'garbled':
        params.write_text('vehicle_sim: {ros__parameters: [unclosed\n')
    elif values != 'missing':
        body = {k: ([_yaml_value(x) for x in v] if isinstance(v, list) else _yaml_value(v))
                for k, v in values.items()}
        text = yaml.safe_dump({'/**': {'ros__parameters': body}})
        params.write_text(text.replace("'.nan'", '.nan').replace("'.inf'", '.inf')
                          .replace("'-.inf'", '-.inf'))
    result = subprocess.run([sys.executable, '-m', f'wheelsim.nodes.{node}', '--ros-args',
                             '--params-file', str(params)],
                            capture_output=True, text=True, timeout=60)
    output = (result.stdout + result.stderr).strip()
    lines = output.splitlines()
    clean = (result.returncode == 2 and 'Traceback' not in output and len(lines) <= 2
             and bool(lines) and f'{node}: error:' in lines[-1]
             and (name in lines[-1] or name == 'params file'))
    return clean, output


def start_up_figure() -> None:
    with tempfile.TemporaryDirectory() as folder, ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda case: start_up_case(*case, Path(folder)), CASES))
    refused = sum(clean for clean, _ in results)
    print(f'1. invalid start-up values refused cleanly: {refused} of {len(CASES)} '
          '(exit 2, one error line naming the parameter, no traceback)')
    for (node, values, _), (clean, output) in zip(CASES, results, strict=True):
        if not clean:
            print(f'   NOT clean: {node} {values}: {output[-300:]!r}')


PLANNER_PROBE = '''
import json, math, resource, sys, time, rclpy
from rclpy.parameter import Parameter
from wheelsim.core.geometry.se2 import Pose2D
rclpy.init()
from wheelsim.nodes.planner import Planner
node = Planner(parameter_overrides=[Parameter('waypoints', value=[])])
node._pose = Pose2D(float(sys.argv[1]), 0.0, 0.0)
message = rclpy.node.Node('goal')
from geometry_msgs.msg import PoseStamped
goal = PoseStamped(); goal.header.frame_id = 'map'; goal.pose.position.x = float(sys.argv[2])
goal.pose.orientation.w = 1.0
start = time.process_time()
node._on_goal(goal)
cpu = time.process_time() - start
rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({'cpu_s': cpu, 'peak_rss_mb': rss_mb}))
'''


def memory_figure() -> None:
    import json

    def run(start_x: float, goal_x: float) -> dict:
        out = subprocess.run([sys.executable, '-c', PLANNER_PROBE, str(start_x), str(goal_x)],
                             capture_output=True, text=True, timeout=300)
        return json.loads(out.stdout.strip().splitlines()[-1])

    near = run(0.0, 5.0)
    edge = run(-999.0, 999.0)
    beyond = run(0.0, 1e7)
    print(f'2. planner peak RSS for one goal: 5 m away {near["peak_rss_mb"]:.0f} MB; the '
          f'farthest accepted (1998 m, edge to edge of workspace_radius 1000 m) '
          f'{edge["peak_rss_mb"]:.0f} MB, {edge["cpu_s"]:.2f} s CPU; 1e7 m (refused) '
          f'{beyond["peak_rss_mb"]:.0f} MB')


def main() -> None:
    require_loopback_dds()
    with reserved_domain_id() as domain_id:
        os.environ['ROS_DOMAIN_ID'] = str(domain_id)
        started = time.monotonic()
        start_up_figure()
        memory_figure()
        print(f'({time.monotonic() - started:.0f} s)')


if __name__ == '__main__':
    main()
